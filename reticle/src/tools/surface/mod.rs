//! The surface agents see: every tool name ([`names`]), each tool's argument type ([`args`],
//! schemas made lean by `lean_schema`) and the reference's spellings it accepts ([`aliases`]),
//! what a tool declares ([`registration`]) and the catalogue a daemon advertises
//! ([`catalogue`]). A leaf of `tools`: it must not import a family, the chokepoint or the registry.

pub mod aliases;
pub mod args;
pub mod catalogue;
mod lean_schema;
pub mod names;
pub mod registration;
