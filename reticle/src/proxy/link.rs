//! The pipe protocol between the supervisor (which owns the agent's stdio) and its worker (which
//! owns every socket on the daemon's port): one JSON object per line each way. The worker keeps
//! no protocol state; the supervisor decides everything.

use serde::{Deserialize, Serialize};

use crate::probe::PresenceKind;
use crate::wire::CatalogueSummary;

/// Supervisor → worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum LinkCommand {
    /// Make one attempt to reach a daemon and open a stream. `spawn`: start a daemon if the port
    /// is free. The attempt's id becomes the session's epoch. `agent`: the agent id the stream
    /// names (the supervisor's, the same for every stream it ever opens).
    Connect {
        attempt: u64,
        spawn: bool,
        agent: String,
    },
    /// POST one message on the session `epoch`. `seq` names it in a failure report.
    Post { epoch: u64, seq: u64, body: String },
}

/// Worker → supervisor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ev", rename_all = "snake_case")]
pub enum Report {
    /// A stream is open and its endpoint frame was usable: session `epoch` (= the attempt id).
    Connected {
        epoch: u64,
        session: String,
        instance: String,
        catalogue: Option<CatalogueSummary>,
        /// The pid of a daemon this attempt started, if it started one.
        spawned: Option<u32>,
    },
    /// The attempt failed. `presence`: what held the port; `obstacle` a sentence;
    /// `definitive` when retrying soon cannot help (a squatter, a daemon that cannot start).
    Unreachable {
        attempt: u64,
        presence: PresenceKind,
        obstacle: String,
        definitive: bool,
    },
    /// One `message` frame's data, verbatim.
    Message { epoch: u64, data: String },
    /// The daemon announced a planned shutdown on this stream.
    Retiring { epoch: u64 },
    /// The stream ended. Reported after every POST of the session has finished or been
    /// abandoned, so each call's fate is already known.
    Dropped {
        epoch: u64,
        reason: String,
        detail: String,
    },
    /// The worker is about to POST `seq`: written before the request leaves, so a call without
    /// this report when the worker dies never reached the daemon.
    Posting { epoch: u64, seq: u64 },
    /// A POST failed. `reached: Some(false)` when the daemon certainly did not take it (an HTTP
    /// refusal, no connection), `None` when it cannot be known (a reset mid-request).
    /// `retryable` when it never left this machine's side (no connection could be made, or its
    /// session was already gone): its call did not run and may be sent again.
    PostFailed {
        epoch: u64,
        seq: u64,
        reason: String,
        reached: Option<bool>,
        retryable: bool,
    },
    /// A line for the proxy log (the supervisor is its only writer).
    Log {
        event: String,
        fields: serde_json::Value,
    },
    /// The worker is alive (sent every [`BEAT_EVERY`]).
    Beat,
}

/// How often the worker says it is alive.
pub const BEAT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_as_tagged_lines() {
        let command = LinkCommand::Post {
            epoch: 3,
            seq: 9,
            body: "{\"a\":\"b\\n\"}".into(),
        };
        let line = serde_json::to_string(&command).unwrap();
        assert!(line.starts_with("{\"op\":\"post\""), "{line}");
        assert!(!line.contains('\n'));
        assert_eq!(serde_json::from_str::<LinkCommand>(&line).unwrap(), command);
        let report = Report::Dropped {
            epoch: 3,
            reason: "sse_ended".into(),
            detail: String::new(),
        };
        let line = serde_json::to_string(&report).unwrap();
        assert_eq!(serde_json::from_str::<Report>(&line).unwrap(), report);
    }
}
