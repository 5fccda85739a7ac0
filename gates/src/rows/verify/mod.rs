//! The verify row (V1): `reticle verify`'s honesty when its browser dies. One file per row; the
//! rig it drives verify with is [`crate::scenarios::verify_rig`].

pub mod v1_browser_death_is_never_green;
