//! The nemesis: specified faults for every hop of Reticle.
//!
//! It will own a TCP fault proxy that speaks Toxiproxy's REST API and toxic vocabulary, and the
//! non-TCP fault kinds (stdio, process, browser). It must not know anything about what the
//! product does with the bytes it disturbs.
