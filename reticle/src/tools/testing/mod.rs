//! Tools that exist only when a test asks for them (`RETICLE_TEST_CATALOGUE`). They must not
//! import the chokepoint, the registry or another family.

pub mod test_echo;
pub mod test_sleep;
