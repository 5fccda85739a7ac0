//! The book of calls the proxy owes an answer, and the sentences it answers them with when the
//! daemon cannot. A call is `Queued` (never sent: it did not run) or `Sent` on one daemon session
//! (it may have run). Every request enters the book once and leaves it once, by whichever answer
//! comes first; a late answer for a call no longer in the book is dropped, never delivered twice.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::time::Instant;

use crate::mcp::jsonrpc::{self, LostPopulation, Ran, TRANSPORT_LOST, TransportLostData};

/// Where a call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallState {
    /// Waiting for a daemon session; never sent.
    Queued,
    /// Handed to the worker for the daemon session `epoch`; `posting` once the worker said its
    /// POST is leaving (before that, a lost worker or stream means it never ran).
    Sent { epoch: u64, posting: bool },
}

/// One request the agent is owed an answer to.
#[derive(Debug, Clone)]
pub struct Call {
    /// The agent's id, echoed in the answer.
    pub client_id: Value,
    pub method: String,
    /// The request object as the agent sent it (re-sent under the proxy's id).
    pub object: Map<String, Value>,
    pub state: CallState,
    /// When an unsent call stops waiting and is answered -32001.
    pub deadline: Instant,
}

/// Calls by proxy id (ids are handed out in arrival order, so iteration is arrival order).
#[derive(Debug, Default)]
pub struct Book {
    calls: BTreeMap<u64, Call>,
    by_client: HashMap<String, u64>,
}

impl Book {
    pub fn insert(&mut self, seq: u64, call: Call) {
        self.by_client.insert(jsonrpc::id_key(&call.client_id), seq);
        self.calls.insert(seq, call);
    }

    /// Takes a call out: the caller now owns its one answer.
    pub fn take(&mut self, seq: u64) -> Option<Call> {
        let call = self.calls.remove(&seq)?;
        self.by_client.remove(&jsonrpc::id_key(&call.client_id));
        Some(call)
    }

    pub fn get(&self, seq: u64) -> Option<&Call> {
        self.calls.get(&seq)
    }

    pub fn get_mut(&mut self, seq: u64) -> Option<&mut Call> {
        self.calls.get_mut(&seq)
    }

    /// The proxy id of a call the agent named by its own id.
    pub fn seq_of(&self, client_id: &Value) -> Option<u64> {
        self.by_client.get(&jsonrpc::id_key(client_id)).copied()
    }

    pub fn len(&self) -> usize {
        self.calls.len()
    }

    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Proxy ids of calls in a state, in arrival order.
    pub fn in_state(&self, wanted: CallState) -> Vec<u64> {
        self.calls
            .iter()
            .filter(|(_, c)| c.state == wanted)
            .map(|(s, _)| *s)
            .collect()
    }

    /// Proxy ids of calls handed over for session `epoch`.
    pub fn sent_on(&self, epoch: u64) -> Vec<u64> {
        self.calls
            .iter()
            .filter(|(_, c)| matches!(c.state, CallState::Sent { epoch: e, .. } if e == epoch))
            .map(|(s, _)| *s)
            .collect()
    }

    /// Proxy ids of unsent calls.
    pub fn queued(&self) -> Vec<u64> {
        self.in_state(CallState::Queued)
    }

    /// Proxy ids of every call, in arrival order.
    pub fn all(&self) -> Vec<u64> {
        self.calls.keys().copied().collect()
    }

    /// The earliest deadline of an unsent call.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.calls
            .values()
            .filter(|c| c.state == CallState::Queued)
            .map(|c| c.deadline)
            .min()
    }
}

/// A -32001 answer: what happened, whether the call ran, and what to do.
#[derive(Debug, Clone)]
pub struct LinkLoss {
    pub population: LostPopulation,
    pub ran: Ran,
    pub message: String,
    pub reason: String,
}

impl LinkLoss {
    /// Sent, then the stream dropped (`reason`: sse_ended, daemon_shutdown, ...).
    pub fn in_flight(port: u16, reason: &str, detail: &str) -> Self {
        let what = describe_drop(reason, detail);
        Self {
            population: LostPopulation::InFlightLost,
            ran: Ran::Unknown,
            message: format!(
                "the link to the Reticle daemon on port {port} dropped ({what}) after this call was sent and before its answer came back, so it may or may not have run. \
Reticle is reconnecting by itself. Retry it; if it changes the app and is not safe to repeat, check the app's state first."
            ),
            reason: reason.to_string(),
        }
    }

    /// Never sent: waited `waited` for a daemon, or waking one failed at once.
    pub fn never_sent(port: u16, obstacle: &str, waited: Option<Duration>) -> Self {
        let when = match waited {
            Some(waited) => format!(
                "no Reticle daemon could be reached on port {port} within {} ms",
                waited.as_millis()
            ),
            None => format!("Reticle could not reach or start a daemon on port {port}"),
        };
        Self {
            population: LostPopulation::NeverSent,
            ran: Ran::No,
            message: format!(
                "this call was never sent and did not run: {when} ({obstacle}). \
Retry it: the next call starts a daemon if the port is free. If it keeps failing, `reticle doctor --port {port}` names every obstacle."
            ),
            reason: obstacle.to_string(),
        }
    }

    /// The POST carrying it failed while the stream stayed up.
    pub fn post_failed(port: u16, reason: &str, reached: Option<bool>) -> Self {
        let ran = if reached == Some(false) {
            Ran::No
        } else {
            Ran::Unknown
        };
        let whether = if ran == Ran::No {
            "It did not run."
        } else {
            "It may not have reached the daemon; if it changes the app and is not safe to repeat, check the app's state before retrying."
        };
        Self {
            population: LostPopulation::PostFailed,
            ran,
            message: format!(
                "the daemon on port {port} did not take this call: {reason}. The link itself is still up. {whether} Retry it."
            ),
            reason: reason.to_string(),
        }
    }

    /// Still owed when the agent closed stdin and the drain bound ran out.
    pub fn owed_at_exit(port: u16, sent: bool, drain: Duration) -> Self {
        Self {
            population: LostPopulation::OwedAtExit,
            ran: if sent { Ran::Unknown } else { Ran::No },
            message: format!(
                "stdin closed and this call was still unanswered after {} ms, so `reticle mcp` (port {port}) is exiting without its answer; {}",
                drain.as_millis(),
                if sent {
                    "it may or may not have run"
                } else {
                    "it was never sent and did not run"
                }
            ),
            reason: "stdin_closed".into(),
        }
    }

    /// The JSON-RPC error answer for `id`.
    pub fn answer(&self, id: &Value, port: u16) -> Value {
        jsonrpc::error_response(
            id,
            TRANSPORT_LOST,
            &self.message,
            serde_json::to_value(TransportLostData {
                population: self.population,
                ran: self.ran,
                reason: self.reason.clone(),
                port,
            })
            .ok(),
        )
    }
}

/// Words for a drop reason.
fn describe_drop(reason: &str, detail: &str) -> String {
    let what = match reason {
        "sse_ended" => "the daemon closed the stream",
        "daemon_shutdown" => "the daemon announced it was shutting down",
        "sse_error" => "the stream broke",
        "sse_stalled" => "the stream went silent",
        "link_process_died" => "the process holding the link was killed",
        "replay_failed" => "the handshake could not be replayed into the daemon's new session",
        other => other,
    };
    if detail.is_empty() {
        what.to_string()
    } else {
        format!("{what}: {detail}")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(id: Value, state: CallState) -> Call {
        Call {
            client_id: id,
            method: "tools/call".into(),
            object: Map::new(),
            state,
            deadline: Instant::now(),
        }
    }

    #[test]
    fn a_call_leaves_the_book_once() {
        let mut book = Book::default();
        book.insert(1, call(json!("a"), CallState::Queued));
        book.insert(
            2,
            call(
                json!(1),
                CallState::Sent {
                    epoch: 7,
                    posting: true,
                },
            ),
        );
        assert_eq!(book.seq_of(&json!("a")), Some(1));
        assert_eq!(book.queued(), vec![1]);
        assert_eq!(book.sent_on(7), vec![2]);
        assert!(book.take(2).is_some());
        assert!(book.take(2).is_none(), "a second answer finds nothing");
        assert_eq!(book.seq_of(&json!(1)), None);
        assert_eq!(book.len(), 1);
    }

    #[test]
    fn every_loss_says_what_happened_whether_it_ran_and_what_to_do() {
        let cases = [
            (LinkLoss::in_flight(4400, "sse_ended", ""), "unknown"),
            (
                LinkLoss::never_sent(4400, "port 4400 is held by pid 9 (nc)", None),
                "no",
            ),
            (
                LinkLoss::never_sent(4400, "x", Some(Duration::from_secs(20))),
                "no",
            ),
            (LinkLoss::post_failed(4400, "HTTP 404", Some(false)), "no"),
            (LinkLoss::post_failed(4400, "reset", None), "unknown"),
        ];
        for (loss, ran) in cases {
            let answer = loss.answer(&json!(5), 4400);
            assert_eq!(answer["id"], 5);
            assert_eq!(answer["error"]["code"], TRANSPORT_LOST);
            assert_eq!(answer["error"]["data"]["ran"], ran);
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(
                message.contains("4400") && message.contains("Retry"),
                "{message}"
            );
        }
        let squatter = LinkLoss::never_sent(4400, "port 4400 is held by pid 9 (nc)", None);
        assert!(squatter.message.contains("pid 9"));
    }
}
