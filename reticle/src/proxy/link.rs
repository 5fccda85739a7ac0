//! The pipe protocol between the supervisor (which owns the agent's stdio) and its worker (which
//! owns every socket on the daemon's port): one line per message each way, a tagged JSON object
//! or, for the two that carry an MCP message, raw so an answer is never escaped and unescaped.
//!
//! The worker keeps no protocol state; the supervisor decides everything. It must not interpret
//! the MCP messages it carries.

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

/// The head of a raw [`LinkCommand::Post`] line: `post <epoch> <seq> <body>`, the message
/// verbatim (one line of compact JSON) to the line's end. A message holding a line break goes
/// as JSON instead; so does a [`Report::Message`], `message <epoch> <data>`.
const POST_HEAD: &str = "post ";
/// The head of a raw [`Report::Message`] line.
const MESSAGE_HEAD: &str = "message ";

/// `command` as one line (without its newline).
pub fn command_line(command: &LinkCommand) -> serde_json::Result<String> {
    match command {
        LinkCommand::Post { epoch, seq, body } if single_line(body) => {
            Ok(format!("{POST_HEAD}{epoch} {seq} {body}"))
        }
        _ => serde_json::to_string(command),
    }
}

/// The command a line (without its newline) carries.
pub fn read_command(line: &str) -> Result<LinkCommand, String> {
    if let Some(raw) = line.strip_prefix(POST_HEAD) {
        let (epoch, rest) = number_then(raw)?;
        let (seq, body) = number_then(rest)?;
        return Ok(LinkCommand::Post {
            epoch,
            seq,
            body: body.to_string(),
        });
    }
    serde_json::from_str(line).map_err(|err| err.to_string())
}

/// `report` as one line (without its newline).
pub fn report_line(report: &Report) -> serde_json::Result<String> {
    match report {
        Report::Message { epoch, data } if single_line(data) => {
            Ok(format!("{MESSAGE_HEAD}{epoch} {data}"))
        }
        _ => serde_json::to_string(report),
    }
}

/// The report a line (without its newline) carries.
pub fn read_report(line: &str) -> Result<Report, String> {
    if let Some(raw) = line.strip_prefix(MESSAGE_HEAD) {
        let (epoch, data) = number_then(raw)?;
        return Ok(Report::Message {
            epoch,
            data: data.to_string(),
        });
    }
    serde_json::from_str(line).map_err(|err| err.to_string())
}

fn single_line(text: &str) -> bool {
    !text.contains(['\n', '\r'])
}

/// A number, a space, and the rest.
fn number_then(text: &str) -> Result<(u64, &str), String> {
    let (number, rest) = text
        .split_once(' ')
        .ok_or_else(|| format!("a raw line ended early: {text:.80}"))?;
    let number = number
        .parse()
        .map_err(|_| format!("a raw line named no number: {number:.20}"))?;
    Ok((number, rest))
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

    #[test]
    fn messages_travel_raw_and_a_multi_line_one_as_json() {
        let body = r#"{"jsonrpc":"2.0","id":4,"params":{"text":"a \"b\"\n"}}"#;
        let post = LinkCommand::Post {
            epoch: 3,
            seq: 9,
            body: body.into(),
        };
        let line = command_line(&post).unwrap();
        assert_eq!(line, format!("post 3 9 {body}"));
        assert_eq!(read_command(&line).unwrap(), post);
        let message = Report::Message {
            epoch: 12,
            data: body.into(),
        };
        let line = report_line(&message).unwrap();
        assert_eq!(line, format!("message 12 {body}"));
        assert_eq!(read_report(&line).unwrap(), message);
        let broken = Report::Message {
            epoch: 1,
            data: "{\n}".into(),
        };
        let line = report_line(&broken).unwrap();
        assert!(line.starts_with('{') && !line.contains('\n'), "{line}");
        assert_eq!(read_report(&line).unwrap(), broken);
        let connect = LinkCommand::Connect {
            attempt: 1,
            spawn: true,
            agent: "a".into(),
        };
        assert_eq!(
            read_command(&command_line(&connect).unwrap()).unwrap(),
            connect
        );
        assert!(read_command("post 3 x {}").is_err());
        assert!(read_report("message 3").is_err());
    }
}
