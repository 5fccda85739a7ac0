//! Authentication material: the pairing token and its constant-time comparison.

pub mod token;

pub use token::{PairingToken, TokenError};
