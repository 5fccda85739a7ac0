//! The leases family: `reticle_lease`, and the refusal a call on a session another agent leased
//! gets. The book itself is the leaf `tools::lease_book`. It must not import the chokepoint,
//! the registry or another family.

pub mod lease;
