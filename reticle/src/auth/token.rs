//! The pairing token: `RETICLE_TOKEN` when set, else a 48-hex-character secret provisioned once
//! in the state dir (file mode 0600). This module reads, creates and compares tokens; it must not
//! decide which requests need one (that is the HTTP guard's job).

use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use subtle::ConstantTimeEq;

use crate::config::env;

/// The file name of the provisioned token inside the state dir.
pub const TOKEN_FILE: &str = "pairing-token";
/// Tokens longer than this are refused outright.
pub const MAX_TOKEN_LEN: usize = crate::wire::limits::MAX_TOKEN_CHARS;
const TOKEN_BYTES: usize = 24;

/// A token that requests may present.
#[derive(Clone)]
pub struct PairingToken(String);

impl std::fmt::Debug for PairingToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PairingToken(..)")
    }
}

/// Why no token could be had.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("{name} is longer than {MAX_TOKEN_LEN} characters", name = env::TOKEN)]
    TooLong,
    #[error("cannot read or create the pairing token in {dir}: {source}")]
    Io {
        dir: String,
        #[source]
        source: std::io::Error,
    },
}

impl PairingToken {
    /// `RETICLE_TOKEN` if set and non-empty, else the token file in `state_dir`, created if absent.
    pub fn load_or_provision(state_dir: &Path) -> Result<Self, TokenError> {
        if let Ok(raw) = std::env::var(env::TOKEN)
            && !raw.is_empty()
        {
            return Self::from_value(raw);
        }
        let path = state_dir.join(TOKEN_FILE);
        let io_err = |source| TokenError::Io {
            dir: state_dir.display().to_string(),
            source,
        };
        match fs::read_to_string(&path) {
            Ok(text) if !text.trim().is_empty() => {
                return Self::from_value(text.trim().to_string());
            }
            Ok(_) => {}
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => return Err(io_err(err)),
        }
        let token = fresh_token_hex().map_err(io_err)?;
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&path)
            .map_err(io_err)?;
        file.write_all(token.as_bytes()).map_err(io_err)?;
        Ok(Self(token))
    }

    /// Wraps a given value, refusing an oversized one.
    pub fn from_value(value: String) -> Result<Self, TokenError> {
        if value.len() > MAX_TOKEN_LEN {
            return Err(TokenError::TooLong);
        }
        Ok(Self(value))
    }

    /// Constant-time comparison with a presented value.
    pub fn matches(&self, presented: &str) -> bool {
        let ours = self.0.as_bytes();
        let theirs = presented.as_bytes();
        ours.len() == theirs.len() && bool::from(ours.ct_eq(theirs))
    }

    /// The secret itself, for the places that must hand it to a page or a client.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

fn fresh_token_hex() -> std::io::Result<String> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(std::io::Error::other)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn provisions_once_with_private_mode_and_matches_exactly() {
        let dir = tempfile::tempdir().unwrap();
        // SAFETY-free: tests in this module do not set RETICLE_TOKEN.
        let first = PairingToken::load_or_provision(dir.path()).unwrap();
        let second = PairingToken::load_or_provision(dir.path()).unwrap();
        assert_eq!(first.expose().len(), 48);
        assert!(first.expose().chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(first.expose(), second.expose());
        let mode = fs::metadata(dir.path().join(TOKEN_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(first.matches(first.expose()));
        assert!(!first.matches(&first.expose()[1..]));
        assert!(!first.matches(""));
    }

    #[test]
    fn refuses_oversized_token() {
        assert!(PairingToken::from_value("x".repeat(MAX_TOKEN_LEN + 1)).is_err());
    }
}
