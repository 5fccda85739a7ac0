//! Why no session appeared for a page `reticle verify` opened: the likely cause, told apart by
//! what the daemon saw in the meantime (a refused handshake and its kind, a page that connected
//! under another id, or nothing at all), and the check that confirms it.
//!
//! This module explains; it must not wait, probe or launch anything.

use std::time::Duration;

use crate::wire::close::refused_kind::{AUTH_FAILED, ORIGIN_REFUSED, VERSION_MISMATCH};
use crate::wire::{RefusedPage, SessionSummary};

/// What verify expected and what the daemon saw while it waited.
pub struct Waited<'a> {
    pub url: &'a str,
    pub session: &'a str,
    pub port: u16,
    pub bound: Duration,
    /// Handshakes the daemon refused since the run began.
    pub refused: &'a [RefusedPage],
    /// Sessions that connected since the run began under an id verify did not ask for.
    pub strangers: &'a [SessionSummary],
}

/// The sentence: no session within the bound, the likely cause, and the check.
pub fn no_session(waited: &Waited<'_>) -> String {
    let head = format!(
        "no Reticle session appeared for {} within {} ms (expected session '{}' on port {})",
        waited.url,
        waited.bound.as_millis(),
        waited.session,
        waited.port
    );
    let check = format!(
        "check: `reticle status --port {}` lists the handshakes the daemon refused and the pages connected",
        waited.port
    );
    let cause = match waited.refused.last() {
        Some(page) => {
            let why = match page.kind.as_str() {
                AUTH_FAILED => "the token differs: the page presented no pairing token or another one than this daemon's (RETICLE_TOKEN, or `pairing-token` in the state dir)"
                    .to_string(),
                ORIGIN_REFUSED => format!(
                    "the Origin was refused: the page's origin ({}) is not one the daemon admits (a loopback origin, or one listed in RETICLE_ALLOWED_ORIGINS)",
                    page.origin.as_deref().unwrap_or("none")
                ),
                VERSION_MISMATCH => "the app's SDK speaks another protocol version than this daemon: load the SDK the daemon serves (/sdk/reticle.js)".to_string(),
                other => format!("the daemon refused the page's handshake ({other})"),
            };
            format!(
                "likely cause: {why}; the daemon refused it: \"{}\"",
                page.reason
            )
        }
        None => match waited.strangers.first() {
            Some(other) => format!(
                "likely cause: a page at {} connected as '{}' without the session verify asked for in the URL (`__reticle_session`), which the daemon adopts whatever id the app passes to connect(): the app drops that URL parameter before its SDK connects (a redirect, or a router replacing the URL), or a live page already holds the id; keep the parameter until connect() runs",
                other.url, other.id
            ),
            None => "likely cause: the app does not load the Reticle SDK at this URL, or its SDK connects to another port; a token that differs or a refused Origin would have shown as a refused handshake, and the daemon saw none".to_string(),
        },
    };
    format!("{head}; {cause}; {check}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(kind: &str) -> RefusedPage {
        RefusedPage {
            at: "t".into(),
            code: 1008,
            kind: kind.into(),
            reason: "r".into(),
            session_id: None,
            url: None,
            origin: Some("http://evil.test".into()),
        }
    }

    #[test]
    fn each_cause_the_daemon_can_tell_apart_is_named() {
        let waited = |refused: &[RefusedPage]| {
            no_session(&Waited {
                url: "http://127.0.0.1:1/",
                session: "s",
                port: 9,
                bound: Duration::from_millis(5),
                refused,
                strangers: &[],
            })
        };
        assert!(waited(&[refused(AUTH_FAILED)]).contains("the token differs"));
        assert!(waited(&[refused(ORIGIN_REFUSED)]).contains("http://evil.test"));
        let silent = waited(&[]);
        assert!(silent.contains("does not load the Reticle SDK"), "{silent}");
        assert!(silent.contains("reticle status --port 9"), "{silent}");
    }
}
