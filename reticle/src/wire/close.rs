//! Why the bridge closes a socket: each [`CloseReason`] has its WebSocket close code and a reason that
//! fits the 123-byte limit. The bridge decides when; this module only names and encodes.

use std::fmt;

use super::limits::{MAX_CLOSE_REASON_BYTES, PROTOCOL_VERSION};

/// The refusal kinds (`/status`'s `refused[].kind`) a reader tells causes apart by.
pub mod refused_kind {
    /// The page's pairing token was missing or wrong.
    pub const AUTH_FAILED: &str = "auth_failed";
    /// The upgrade's Origin is not one the daemon admits (refused before any socket).
    pub const ORIGIN_REFUSED: &str = "origin_refused";
    /// The page's SDK speaks another protocol version.
    pub const VERSION_MISMATCH: &str = "version_mismatch";
}

/// Close codes the bridge sends (RFC 6455 §7.4.1).
pub mod code {
    /// The daemon is shutting down.
    pub const GOING_AWAY: u16 = 1001;
    /// A policy refusal: bad message, wrong version, failed auth, late hello, replaced socket.
    pub const POLICY: u16 = 1008;
    /// A frame or message over the size limit.
    pub const TOO_BIG: u16 = 1009;
    /// A capacity refusal: too many sessions or pending handshakes; try again later.
    pub const TRY_AGAIN_LATER: u16 = 1013;
    /// Every code above, for readers that must know them all (the SDK drift test).
    pub const ALL: &[u16] = &[GOING_AWAY, POLICY, TOO_BIG, TRY_AGAIN_LATER];
}

/// How the reason of a [`CloseReason::SessionInUse`] refusal starts: the SDK reads it to pick a
/// session id of its own (`sdk/src/protocol.js` holds the same words).
pub const SESSION_IN_USE: &str = "session in use";

/// Every reason the bridge ends a socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloseReason {
    /// More than [`super::limits::MAX_PENDING_HANDSHAKES`] sockets awaited their hello.
    TooManyHandshakes,
    /// [`super::limits::MAX_SESSIONS`] sessions were connected and this hello named a new id.
    SessionLimit,
    /// The hello named a project past the daemon's cap on projects served
    /// ([`crate::config::MAX_SERVED_PROJECTS`]); carries the cap.
    ProjectLimit(usize),
    /// No hello within [`super::limits::HELLO_TIMEOUT`].
    HelloTimeout,
    /// The first frame parsed but was not a hello.
    HelloFirst,
    /// A second hello on one socket naming a different session.
    SecondHello,
    /// A page sent a message kind only the daemon sends.
    WrongDirection,
    /// A frame that is not JSON, or not a protocol 1 message; the detail says which part.
    Invalid(String),
    /// A hello for another protocol version; carries the page's version as it sent it.
    VersionMismatch { page: String },
    /// The hello's token was missing or wrong; carries the sentence saying which.
    AuthFailed(String),
    /// A frame over [`super::limits::MAX_FRAME_BYTES`].
    TooBig,
    /// A newer socket said hello with this socket's session id, and this one did not answer
    /// a ping within [`super::limits::LIVENESS_BOUND`] (a dead socket is replaced).
    Replaced,
    /// A hello named a session another open socket carries and that socket answered a ping:
    /// two documents (a same-origin iframe, a duplicated tab, a popup) share one id. The
    /// newcomer is refused; its reason starts with [`SESSION_IN_USE`]. Carries the id.
    SessionInUse(String),
    /// The daemon is shutting down.
    ShuttingDown,
}

impl CloseReason {
    /// The close code.
    pub fn code(&self) -> u16 {
        match self {
            CloseReason::TooManyHandshakes | CloseReason::SessionLimit => code::TRY_AGAIN_LATER,
            CloseReason::TooBig => code::TOO_BIG,
            CloseReason::ShuttingDown => code::GOING_AWAY,
            CloseReason::HelloTimeout
            | CloseReason::HelloFirst
            | CloseReason::SecondHello
            | CloseReason::WrongDirection
            | CloseReason::Invalid(_)
            | CloseReason::VersionMismatch { .. }
            | CloseReason::AuthFailed(_)
            | CloseReason::Replaced
            | CloseReason::SessionInUse(_)
            | CloseReason::ProjectLimit(_) => code::POLICY,
        }
    }

    /// A short stable word for logs and `/status`.
    pub fn word(&self) -> &'static str {
        match self {
            CloseReason::TooManyHandshakes => "too_many_handshakes",
            CloseReason::SessionLimit => "session_limit",
            CloseReason::ProjectLimit(_) => "project_limit",
            CloseReason::HelloTimeout => "hello_timeout",
            CloseReason::HelloFirst => "hello_first",
            CloseReason::SecondHello => "second_hello",
            CloseReason::WrongDirection => "wrong_direction",
            CloseReason::Invalid(_) => "invalid_message",
            CloseReason::VersionMismatch { .. } => refused_kind::VERSION_MISMATCH,
            CloseReason::AuthFailed(_) => refused_kind::AUTH_FAILED,
            CloseReason::TooBig => "too_big",
            CloseReason::Replaced => "replaced",
            CloseReason::SessionInUse(_) => "session_in_use",
            CloseReason::ShuttingDown => "shutting_down",
        }
    }

    /// The close reason, cut at a character boundary to fit [`MAX_CLOSE_REASON_BYTES`].
    pub fn reason(&self) -> String {
        fit_reason(&self.to_string())
    }
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseReason::TooManyHandshakes => {
                f.write_str("too many pending handshakes; retry later")
            }
            CloseReason::SessionLimit => {
                f.write_str("session limit reached; close a tab and retry")
            }
            CloseReason::ProjectLimit(cap) => write!(
                f,
                "project limit: this daemon has served {cap} projects, its cap; restart it (`reticle stop`) to serve another"
            ),
            CloseReason::HelloTimeout => f.write_str("hello timeout: no hello within 5 s"),
            CloseReason::HelloFirst => {
                f.write_str("invalid message: the first frame must be a hello")
            }
            CloseReason::SecondHello => {
                f.write_str("hello already received on this socket for another session")
            }
            CloseReason::WrongDirection => {
                f.write_str("invalid message: pages may not send commands")
            }
            CloseReason::Invalid(detail) => write!(f, "invalid message: {detail}"),
            CloseReason::VersionMismatch { page } => write!(
                f,
                "protocol version mismatch: page speaks {page}, daemon speaks {PROTOCOL_VERSION}"
            ),
            CloseReason::AuthFailed(sentence) => write!(f, "authentication failed: {sentence}"),
            CloseReason::TooBig => f.write_str("message too big: over 1 MiB"),
            CloseReason::Replaced => f.write_str("session replaced by a newer connection"),
            CloseReason::SessionInUse(id) => write!(
                f,
                "{SESSION_IN_USE}: another open page carries it; connect with another id ({id})"
            ),
            CloseReason::ShuttingDown => f.write_str("daemon shutting down"),
        }
    }
}

/// Cuts `text` to at most [`MAX_CLOSE_REASON_BYTES`] bytes at a character boundary.
pub fn fit_reason(text: &str) -> String {
    fit_bytes(text, MAX_CLOSE_REASON_BYTES)
}

/// Cuts `text` to at most `max` bytes at a character boundary.
pub fn fit_bytes(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_fits_the_close_frame_even_with_long_details() {
        let long = "é".repeat(500);
        let all = [
            CloseReason::TooManyHandshakes,
            CloseReason::SessionLimit,
            CloseReason::ProjectLimit(64),
            CloseReason::HelloTimeout,
            CloseReason::HelloFirst,
            CloseReason::SecondHello,
            CloseReason::WrongDirection,
            CloseReason::Invalid(long.clone()),
            CloseReason::VersionMismatch { page: long.clone() },
            CloseReason::AuthFailed(long.clone()),
            CloseReason::SessionInUse(long),
            CloseReason::TooBig,
            CloseReason::Replaced,
            CloseReason::ShuttingDown,
        ];
        for refusal in all {
            let reason = refusal.reason();
            assert!(reason.len() <= MAX_CLOSE_REASON_BYTES, "{refusal:?}");
            assert!(!reason.is_empty());
        }
    }

    #[test]
    fn a_session_in_use_refusal_starts_with_its_words_whatever_the_id() {
        let reason = CloseReason::SessionInUse("x".repeat(128)).reason();
        assert!(reason.starts_with(SESSION_IN_USE), "{reason}");
        assert_eq!(CloseReason::SessionInUse("x".into()).code(), 1008);
    }

    #[test]
    fn a_version_mismatch_names_both_versions() {
        let reason = CloseReason::VersionMismatch { page: "2".into() }.reason();
        assert!(reason.contains("page speaks 2"), "{reason}");
        assert!(reason.contains("daemon speaks 1"), "{reason}");
        assert_eq!(
            CloseReason::VersionMismatch { page: "2".into() }.code(),
            1008
        );
    }
}
