//! The pairing token: `RETICLE_TOKEN` when set, else a 48-hex-character secret provisioned once
//! in the state dir (linked into place so racing provisioners share one; mode 0600; never read
//! through a link; a file readable by others is tightened, and the caller told). A token is 1 to
//! 512 visible ASCII characters; anything else is an error naming the fix, never a daemon without
//! a token. It reads, creates, checks and compares tokens; it must not decide which requests
//! need one (the HTTP guard does).

use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use subtle::ConstantTimeEq;

use crate::config::env;
use crate::store::private;

/// The file name of the provisioned token inside the state dir.
pub const TOKEN_FILE: &str = "pairing-token";
/// Tokens longer than this are refused outright.
pub const MAX_TOKEN_LEN: usize = crate::wire::limits::MAX_TOKEN_CHARS;
const TOKEN_BYTES: usize = 24;
/// The sentence every refusal of a token value ends with.
const WHAT_A_TOKEN_IS: &str = "a token is 1 to 512 visible ASCII characters (no spaces)";

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
    #[error("{name} {why}: set it to a secret ({WHAT_A_TOKEN_IS}), or unset it so the daemon uses its token file", name = env::TOKEN)]
    BadVariable { why: String },
    #[error("the pairing token file {path} {why}: delete it (the next start provisions a fresh one), or write a token into it ({WHAT_A_TOKEN_IS})", path = path.display())]
    BadFile { path: PathBuf, why: String },
    #[error("cannot read or create the pairing token {path}: {source}", path = path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Where a loaded token came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// `RETICLE_TOKEN`.
    Environment,
    /// The token file, read as it was.
    File,
    /// The token file, created by this call.
    Created,
    /// The token file, which was readable by others (the mode it had) and is now 0600.
    Tightened(u32),
}

/// A loaded token and where it came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub token: PairingToken,
    pub source: TokenSource,
}

impl PairingToken {
    /// `RETICLE_TOKEN` if set (it must then hold a valid token), else the token file in
    /// `state_dir`, created if absent.
    pub fn load_or_provision(state_dir: &Path) -> Result<Loaded, TokenError> {
        match std::env::var(env::TOKEN) {
            Ok(raw) => {
                let token = Self::from_value(raw)
                    .map_err(|why| TokenError::BadVariable { why: why.into() })?;
                return Ok(Loaded {
                    token,
                    source: TokenSource::Environment,
                });
            }
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(TokenError::BadVariable {
                    why: "is not valid UTF-8".into(),
                });
            }
            Err(std::env::VarError::NotPresent) => {}
        }
        let path = state_dir.join(TOKEN_FILE);
        if let Some(loaded) = read_file(&path)? {
            return Ok(loaded);
        }
        let fresh = fresh_token_hex().map_err(|source| TokenError::Io {
            path: path.clone(),
            source,
        })?;
        match private::create_once(&path, fresh.as_bytes()) {
            Ok(true) => Ok(Loaded {
                token: Self(fresh),
                source: TokenSource::Created,
            }),
            // Another provisioner won the race: use its token.
            Ok(false) => read_file(&path)?.ok_or_else(|| TokenError::Io {
                path: path.clone(),
                source: std::io::Error::other("it vanished while it was being provisioned"),
            }),
            Err(source) => Err(TokenError::Io { path, source }),
        }
    }

    /// Wraps a given value, refusing one that is not a token (the reason, as a phrase).
    pub fn from_value(value: String) -> Result<Self, &'static str> {
        if value.is_empty() {
            return Err("is empty");
        }
        if value.len() > MAX_TOKEN_LEN {
            return Err("is longer than 512 characters");
        }
        if !value.bytes().all(|b| b.is_ascii_graphic()) {
            return Err("holds spaces, control or non-ASCII characters");
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

/// The token in the file at `path`; `None` when there is no file.
fn read_file(path: &Path) -> Result<Option<Loaded>, TokenError> {
    let io_err = |source| TokenError::Io {
        path: path.to_path_buf(),
        source,
    };
    let bad = |why: String| TokenError::BadFile {
        path: path.to_path_buf(),
        why,
    };
    let file = match private::open_read(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(io_err(err)),
    };
    let meta = file.metadata().map_err(io_err)?;
    if !meta.is_file() {
        return Err(bad("is not a regular file".into()));
    }
    if meta.uid() != private::effective_uid() {
        return Err(bad(format!("belongs to uid {}, not to you", meta.uid())));
    }
    let tightened = private::tighten(&file).map_err(io_err)?;
    let mut bytes = Vec::new();
    // One byte past the largest token with its line end is enough to know it is too long.
    (&file)
        .take(MAX_TOKEN_LEN as u64 + 3)
        .read_to_end(&mut bytes)
        .map_err(io_err)?;
    let text = String::from_utf8(bytes).map_err(|_| bad("is not text".into()))?;
    let value = text.strip_suffix('\n').unwrap_or(&text);
    let value = value.strip_suffix('\r').unwrap_or(value);
    let token = PairingToken::from_value(value.to_string()).map_err(|why| bad(why.into()))?;
    let source = match tightened {
        Some(mode) => TokenSource::Tightened(mode),
        None => TokenSource::File,
    };
    Ok(Some(Loaded { token, source }))
}

fn fresh_token_hex() -> std::io::Result<String> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(std::io::Error::other)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn provisions_once_with_private_mode_and_matches_exactly() {
        let dir = tempfile::tempdir().unwrap();
        // SAFETY-free: tests in this module do not set RETICLE_TOKEN.
        let first = PairingToken::load_or_provision(dir.path()).unwrap().token;
        let second = PairingToken::load_or_provision(dir.path()).unwrap().token;
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

    // Tests in this module do not set RETICLE_TOKEN; the daemon-level gates (S2) cover it.

    #[test]
    fn a_bad_file_is_an_error_naming_it() {
        for content in ["a".repeat(600), "two words\n".into(), String::new()] {
            let dir = tempfile::tempdir().unwrap();
            fs::write(dir.path().join(TOKEN_FILE), &content).unwrap();
            let err = PairingToken::load_or_provision(dir.path()).unwrap_err();
            assert!(matches!(err, TokenError::BadFile { .. }), "{err}");
            assert!(err.to_string().contains(TOKEN_FILE), "{err}");
            assert!(err.to_string().contains("delete it"), "{err}");
        }
    }

    #[test]
    fn a_readable_file_is_tightened_and_said_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(TOKEN_FILE);
        fs::write(&path, "0123456789abcdef\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let loaded = PairingToken::load_or_provision(dir.path()).unwrap();
        assert_eq!(loaded.source, TokenSource::Tightened(0o644));
        assert_eq!(loaded.token.expose(), "0123456789abcdef");
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    /// Probe for the provisioning race (red before the exclusive create: the threads each wrote
    /// their own token and some disagreed with the file).
    #[test]
    fn racing_provisioners_end_with_one_token() {
        for _ in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            let tokens: Vec<String> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..8)
                    .map(|_| {
                        scope.spawn(|| {
                            PairingToken::load_or_provision(dir.path())
                                .unwrap()
                                .token
                                .expose()
                                .to_string()
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let on_disk = fs::read_to_string(dir.path().join(TOKEN_FILE)).unwrap();
            assert!(
                tokens.iter().all(|t| *t == on_disk),
                "{tokens:?} vs {on_disk}"
            );
        }
    }
}
