//! The handshake the proxy replays into every daemon session: the agent's first `initialize` and
//! its `notifications/initialized`, kept once and posted first on each new session, and whether
//! the current session may be sent calls yet. A state machine without I/O: the supervisor tells it
//! what happened (a session opened, the agent spoke, the daemon answered) and it says what to post
//! and whether calls may go; it must not send, log or answer anything itself.

use serde_json::{Map, Value, json};

/// The current daemon session, as far as the handshake goes. Every session starts `Bare` and
/// ends in `NoSession`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionHandshake {
    /// No daemon session is open: nothing is posted, calls wait.
    NoSession,
    /// No handshake has been posted on it (none was known when it opened): calls may go.
    Bare,
    /// The handshake was posted under the proxy id `seq` and is not answered yet: calls wait, so
    /// none can reach a session the handshake never reached. `noted`: the agent's
    /// `notifications/initialized` was posted after it.
    Replaying { seq: u64, noted: bool },
    /// The daemon accepted the handshake: calls may go.
    Confirmed { noted: bool },
    /// The daemon refused it: calls wait (and are answered -32001, did not run, at their
    /// deadline) rather than reach a session that refused the handshake.
    Refused { noted: bool },
}

/// What to post first on a session: the handshake under its proxy id, then the note if known.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayPosts {
    pub initialize: Map<String, Value>,
    pub initialized: Option<Map<String, Value>>,
}

/// What the daemon's answer to a replayed handshake was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayAnswer {
    /// A result: the session is ready, the queue may be flushed.
    Confirmed,
    /// An error: the session stays unready.
    Refused,
}

/// The kept handshake and the current session's progress through it.
#[derive(Debug, Clone)]
pub struct HandshakeReplay {
    /// The agent's first `initialize` request (its id is replaced by the proxy's on each replay).
    initialize: Option<Map<String, Value>>,
    /// The agent's latest `notifications/initialized`.
    initialized: Option<Map<String, Value>>,
    session: SessionHandshake,
}

impl Default for HandshakeReplay {
    fn default() -> Self {
        Self {
            initialize: None,
            initialized: None,
            session: SessionHandshake::NoSession,
        }
    }
}

impl HandshakeReplay {
    pub fn session(&self) -> SessionHandshake {
        self.session
    }

    /// A new daemon session opened: it starts `Bare`. Returns whether a handshake is known and
    /// must be replayed now (see [`Self::replay`]); if not, calls may go at once.
    pub fn session_opened(&mut self) -> bool {
        self.session = SessionHandshake::Bare;
        self.initialize.is_some()
    }

    /// The open session ended (dropped, or given up).
    pub fn session_closed(&mut self) {
        self.session = SessionHandshake::NoSession;
    }

    /// The agent sent `initialize` (already answered by the proxy): the first one is kept.
    /// Returns whether an open session has had no handshake and must be replayed now.
    pub fn initialize_received(&mut self, object: Map<String, Value>) -> bool {
        if self.initialize.is_none() {
            self.initialize = Some(object);
        }
        self.session == SessionHandshake::Bare
    }

    /// The agent sent `notifications/initialized`: kept (the latest wins). Returns it when it
    /// must be posted on the open session now: the handshake went there and the note not yet.
    pub fn initialized_received(
        &mut self,
        object: Map<String, Value>,
    ) -> Option<Map<String, Value>> {
        self.initialized = Some(object);
        let noted = match &mut self.session {
            SessionHandshake::NoSession | SessionHandshake::Bare => return None,
            SessionHandshake::Replaying { noted, .. }
            | SessionHandshake::Confirmed { noted }
            | SessionHandshake::Refused { noted } => noted,
        };
        if *noted {
            return None;
        }
        *noted = true;
        self.initialized.clone()
    }

    /// Replays the handshake into the open session under the proxy id `seq`: what to post, in
    /// order. `None` while no `initialize` is known.
    pub fn replay(&mut self, seq: u64) -> Option<ReplayPosts> {
        let mut initialize = self.initialize.clone()?;
        initialize.insert("id".into(), json!(seq));
        self.session = SessionHandshake::Replaying {
            seq,
            noted: self.initialized.is_some(),
        };
        Some(ReplayPosts {
            initialize,
            initialized: self.initialized.clone(),
        })
    }

    /// Whether `seq` names the replayed handshake still awaiting its answer on this session.
    pub fn is_awaited(&self, seq: u64) -> bool {
        matches!(self.session, SessionHandshake::Replaying { seq: s, .. } if s == seq)
    }

    /// The daemon answered message `seq`; `refused` when the answer is an error. `None` when
    /// `seq` is not the awaited replay (the answer belongs to a call).
    pub fn answered(&mut self, seq: u64, refused: bool) -> Option<ReplayAnswer> {
        let SessionHandshake::Replaying { noted, .. } = self.session else {
            return None;
        };
        if !self.is_awaited(seq) {
            return None;
        }
        if refused {
            self.session = SessionHandshake::Refused { noted };
            Some(ReplayAnswer::Refused)
        } else {
            self.session = SessionHandshake::Confirmed { noted };
            Some(ReplayAnswer::Confirmed)
        }
    }

    /// Whether the current session may be sent calls.
    pub fn accepts_calls(&self) -> bool {
        matches!(
            self.session,
            SessionHandshake::Bare | SessionHandshake::Confirmed { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!("a test object"),
        }
    }

    fn initialize() -> Map<String, Value> {
        object(json!({ "jsonrpc": "2.0", "id": "agent-1", "method": "initialize" }))
    }

    fn note() -> Map<String, Value> {
        object(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
    }

    #[test]
    fn without_a_handshake_a_session_takes_calls_at_once() {
        let mut replay = HandshakeReplay::default();
        assert!(!replay.accepts_calls(), "no session yet");
        assert!(!replay.session_opened(), "nothing to replay");
        assert!(replay.accepts_calls());
        assert_eq!(replay.replay(5), None);
        assert_eq!(
            replay.initialized_received(note()),
            None,
            "no handshake went there"
        );
    }

    #[test]
    fn a_replay_holds_calls_until_the_daemon_confirms_it() {
        let mut replay = HandshakeReplay::default();
        assert!(!replay.initialize_received(initialize()), "no session yet");
        assert!(replay.session_opened());
        let posts = replay.replay(7).expect("a handshake is known");
        assert_eq!(posts.initialize["id"], 7, "replayed under the proxy's id");
        assert_eq!(posts.initialize["method"], "initialize");
        assert_eq!(posts.initialized, None);
        assert!(!replay.accepts_calls());
        assert!(replay.is_awaited(7));
        assert_eq!(
            replay.answered(8, false),
            None,
            "another id is a call's answer"
        );
        assert_eq!(replay.answered(7, false), Some(ReplayAnswer::Confirmed));
        assert!(replay.accepts_calls());
        assert!(!replay.is_awaited(7));
        assert_eq!(replay.answered(7, false), None, "answered once");
        replay.session_closed();
        assert!(!replay.accepts_calls());
    }

    #[test]
    fn a_refused_replay_keeps_the_session_unready() {
        let mut replay = HandshakeReplay::default();
        replay.initialize_received(initialize());
        replay.session_opened();
        replay.replay(3);
        assert_eq!(replay.answered(3, true), Some(ReplayAnswer::Refused));
        assert!(!replay.accepts_calls());
        assert_eq!(replay.session(), SessionHandshake::Refused { noted: false });
    }

    #[test]
    fn the_note_follows_the_handshake_once_per_session() {
        let mut replay = HandshakeReplay::default();
        assert!(
            !replay.initialize_received(initialize()),
            "no session to replay into"
        );
        assert_eq!(
            replay.initialized_received(note()),
            None,
            "held until a session has had the handshake"
        );
        replay.session_opened();
        let posts = replay.replay(1).unwrap();
        assert_eq!(posts.initialized, Some(note()), "replayed right after it");
        assert_eq!(replay.initialized_received(note()), None, "already posted");

        replay.session_closed();
        assert!(!replay.is_awaited(1), "a closed session awaits nothing");
        assert_eq!(replay.initialized_received(note()), None, "no session");
        replay.session_opened();
        assert_eq!(replay.session(), SessionHandshake::Bare);
        replay.replay(2);
        assert_eq!(
            replay.session(),
            SessionHandshake::Replaying {
                seq: 2,
                noted: true
            }
        );
    }

    #[test]
    fn a_late_initialize_is_replayed_into_a_bare_session_and_the_first_one_is_kept() {
        let mut replay = HandshakeReplay::default();
        replay.session_opened();
        assert!(
            replay.initialize_received(initialize()),
            "the bare session needs it"
        );
        replay.replay(4);
        let mut second = initialize();
        second.insert("id".into(), json!("agent-2"));
        second.insert("params".into(), json!({ "second": true }));
        assert!(
            !replay.initialize_received(second),
            "this session already had it"
        );
        assert_eq!(
            replay.initialized_received(note()),
            Some(note()),
            "the note goes after the handshake that went"
        );
        replay.session_opened();
        let posts = replay.replay(9).unwrap();
        assert_eq!(
            posts.initialize.get("params"),
            None,
            "the first initialize is replayed"
        );
    }
}
