//! The bridge's first auth tier, at the upgrade: which `Origin` may open a socket. Loopback web
//! origins are allowed; so is anything on `RETICLE_ALLOWED_ORIGINS`, compared verbatim (opaque
//! origins such as `tauri://localhost` and `file://` stay as written, never collapsed to
//! `null`); a missing Origin, or `null`, only when the daemon has a token (which the hello must
//! then carry). This module judges; the caller refuses.

use crate::plane::host_is_loopback;

/// Why an origin was let in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OriginPass {
    /// An `http(s)` origin on a loopback host.
    Loopback,
    /// Listed in `RETICLE_ALLOWED_ORIGINS`.
    Listed,
    /// No Origin (or `null`): let in because the hello must carry the token.
    Anonymous,
}

/// The allow-list, as configured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedOrigins(Vec<String>);

impl AllowedOrigins {
    /// Parses a comma-separated list; entries are trimmed and a trailing `/` dropped, nothing
    /// else is changed.
    pub fn parse(raw: &str) -> Self {
        Self(
            raw.split(',')
                .map(normal)
                .filter(|entry| !entry.is_empty())
                .collect(),
        )
    }

    /// Whether `origin` is listed (ASCII case-insensitive, verbatim otherwise).
    pub fn contains(&self, origin: &str) -> bool {
        let origin = normal(origin);
        self.0
            .iter()
            .any(|entry| entry.eq_ignore_ascii_case(&origin))
    }

    pub fn entries(&self) -> &[String] {
        &self.0
    }
}

fn normal(entry: &str) -> String {
    let trimmed = entry.trim();
    // `file://` is itself an origin; only a slash past the scheme's own is dropped.
    match trimmed.strip_suffix('/') {
        Some(rest) if !rest.ends_with(':') && !rest.ends_with(":/") => rest.to_string(),
        _ => trimmed.to_string(),
    }
}

/// Judges an upgrade's Origin header; `Err` carries the sentence the refusal gives.
pub fn judge(
    origin: Option<&str>,
    allowed: &AllowedOrigins,
    token_configured: bool,
) -> Result<OriginPass, String> {
    let origin = origin.map(str::trim).filter(|o| !o.is_empty());
    if let Some(origin) = origin
        && allowed.contains(origin)
    {
        return Ok(OriginPass::Listed);
    }
    match origin {
        None | Some("null") => {
            if token_configured {
                Ok(OriginPass::Anonymous)
            } else {
                Err(format!(
                    "a page with {} is served only with a pairing token, and this daemon has none",
                    if origin.is_some() {
                        "Origin: null"
                    } else {
                        "no Origin"
                    }
                ))
            }
        }
        Some(origin) if is_loopback_web_origin(origin) => Ok(OriginPass::Loopback),
        Some(origin) => Err(format!(
            "origin {} is not loopback and not in RETICLE_ALLOWED_ORIGINS",
            crate::wire::messages::clip(origin, 200)
        )),
    }
}

/// `http://` or `https://` with a loopback host (`localhost`, `*.localhost`, `127.0.0.0/8`,
/// `[::1]`), any port.
pub fn is_loopback_web_origin(origin: &str) -> bool {
    let lower = origin.to_ascii_lowercase();
    let Some(authority) = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))
    else {
        return false;
    };
    let authority = authority.split('/').next().unwrap_or("");
    if authority.contains('@') {
        return false;
    }
    let name = if authority.starts_with('[') {
        authority
    } else {
        authority
            .rsplit_once(':')
            .map_or(authority, |(name, _)| name)
    };
    host_is_loopback(authority) || name.ends_with(".localhost")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_origins_pass_and_foreign_ones_do_not() {
        let none = AllowedOrigins::default();
        for origin in [
            "http://localhost:5173",
            "http://127.0.0.1:4400",
            "https://LOCALHOST",
            "http://[::1]:3000",
            "http://app.localhost:8080",
        ] {
            assert_eq!(
                judge(Some(origin), &none, true),
                Ok(OriginPass::Loopback),
                "{origin}"
            );
        }
        for origin in [
            "http://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1.evil.example",
            "http://user@evil.example",
            "tauri://localhost",
            "file://",
            "ws://localhost:1",
        ] {
            assert!(judge(Some(origin), &none, true).is_err(), "{origin}");
        }
    }

    #[test]
    fn opaque_origins_pass_only_when_listed_verbatim() {
        let listed = AllowedOrigins::parse(" tauri://localhost , file://, http://dev.test:3000/ ");
        assert_eq!(
            listed.entries(),
            ["tauri://localhost", "file://", "http://dev.test:3000"]
        );
        for origin in ["tauri://localhost", "file://", "http://dev.test:3000"] {
            assert_eq!(
                judge(Some(origin), &listed, true),
                Ok(OriginPass::Listed),
                "{origin}"
            );
        }
        assert!(judge(Some("tauri://other"), &listed, true).is_err());
    }

    #[test]
    fn a_missing_or_null_origin_needs_a_token() {
        let none = AllowedOrigins::default();
        assert_eq!(judge(None, &none, true), Ok(OriginPass::Anonymous));
        assert_eq!(judge(Some("null"), &none, true), Ok(OriginPass::Anonymous));
        assert!(judge(None, &none, false).is_err());
        assert!(judge(Some("null"), &none, false).is_err());
    }
}
