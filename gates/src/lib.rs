//! The gate framework: the fragility inventory as data, the scenarios that provoke each row,
//! the history of every operation, the checkers that judge it and the scorecard.
//!
//! Gates treat the product as a black box: they start the real binary and speak its real
//! interfaces through `harness`, sharing wire types but never calling product internals.
