//! The daemon's side of the actor: what the worker reports (sessions, messages, POST outcomes)
//! and the worker's own death. Answers are matched to owed calls by proxy id and delivered under
//! the agent's id exactly once; the replayed handshake's answer is swallowed. A successful answer
//! is forwarded as the daemon wrote its result (read as raw JSON, never built into a value and
//! written again); anything else is read whole. It must not read the agent's stdin.

use std::sync::Arc;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::Supervisor;
use crate::mcp::jsonrpc;
use crate::proxy::calls::{CallState, LinkLoss};
use crate::proxy::events;
use crate::proxy::link::Report;
use crate::proxy::replay::ReplayAnswer;

/// A successful answer, and nothing else (a message with any other member is read whole): its
/// proxy id and its result as the daemon encoded it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Succeeded<'a> {
    #[serde(rename = "jsonrpc")]
    _version: IgnoredAny,
    id: u64,
    #[serde(borrow)]
    result: &'a RawValue,
}

/// An answer as the actor delivers it.
enum Answer<'a> {
    /// A success: its result's JSON text, forwarded as it is.
    Result(&'a str),
    /// Anything else (an error, extra members): the whole object.
    Whole(Map<String, Value>),
}

impl Supervisor {
    pub(super) fn on_report(&mut self, report: Report) {
        match report {
            Report::Connected {
                epoch,
                session,
                instance,
                catalogue,
                spawned,
            } => self.on_connected(epoch, session, instance, catalogue, spawned),
            Report::Unreachable {
                attempt,
                presence,
                obstacle,
                definitive,
            } => self.on_unreachable(attempt, Some(presence), obstacle, definitive),
            Report::Message { epoch, data } => self.on_daemon_message(epoch, &data),
            Report::Retiring { epoch } => {
                if self.epoch() == Some(epoch) {
                    self.link.retiring = true;
                }
            }
            Report::Dropped {
                epoch,
                reason,
                detail,
            } => {
                if self.epoch() == Some(epoch) {
                    self.on_dropped(&reason, &detail);
                }
            }
            Report::Posting { epoch, seq } => {
                if let Some(call) = self.book.get_mut(seq)
                    && call.state
                        == (CallState::Sent {
                            epoch,
                            posting: false,
                        })
                {
                    call.state = CallState::Sent {
                        epoch,
                        posting: true,
                    };
                }
            }
            Report::PostFailed {
                epoch,
                seq,
                reason,
                reached,
                retryable,
            } => self.on_post_failed(epoch, seq, &reason, reached, retryable),
            Report::Log { event, fields } => self.log.event(&event, fields),
            Report::Beat => {}
        }
    }

    fn on_post_failed(
        &mut self,
        epoch: u64,
        seq: u64,
        reason: &str,
        reached: Option<bool>,
        retryable: bool,
    ) {
        if self.replay.is_awaited(seq) {
            // The replayed handshake may never have reached this session, so no call can be sent
            // there: the session is given up like a dropped stream, and a new one opened, where
            // the handshake is replayed again. No call was sent on it since the replay (they wait
            // for its answer), so no call's fate is in doubt here.
            if self.epoch() == Some(epoch) {
                self.log.event(
                    events::REPLAY_FAILED,
                    json!({ "reason": reason, "reached": reached }),
                );
                self.on_dropped("replay_failed", reason);
            }
            return;
        }
        let Some(call) = self.book.get_mut(seq) else {
            return;
        };
        if !matches!(call.state, CallState::Sent { epoch: e, .. } if e == epoch) {
            return;
        }
        if retryable {
            // It never reached the daemon (no connection, or its session was gone): it waits
            // for the next session, within the deadline it got on arrival.
            call.state = CallState::Queued;
            self.log.event(
                events::CALL_REQUEUED,
                json!({ "id": call.client_id, "method": call.method, "reason": reason }),
            );
            match self.epoch() {
                Some(current) if current != epoch => self.send_call(seq),
                Some(_) => {}
                None => self.demand(),
            }
            return;
        }
        if let Some(call) = self.book.take(seq) {
            let loss = LinkLoss::post_failed(self.port, reason, reached);
            self.answer_call(
                &call,
                loss.population.as_str(),
                loss.answer(&call.client_id, self.port),
            );
        }
    }

    fn on_daemon_message(&mut self, epoch: u64, data: &str) {
        if self.epoch() != Some(epoch) {
            self.log
                .event(events::STALE_MESSAGE, json!({ "epoch": epoch }));
            return;
        }
        if let Ok(succeeded) = serde_json::from_str::<Succeeded>(data) {
            return self.on_answer(succeeded.id, Answer::Result(succeeded.result.get()));
        }
        let Ok(Value::Object(object)) = serde_json::from_str::<Value>(data) else {
            self.log
                .event(events::DAEMON_GARBAGE, json!({ "data": truncate(data) }));
            return;
        };
        let is_response = !object.contains_key("method") && object.contains_key("id");
        if !is_response {
            if object.get("method").and_then(Value::as_str)
                == Some("notifications/tools/list_changed")
            {
                self.catalogue.forget_tools();
            }
            let object = Value::Object(object);
            // The daemon's messages reach the host at the level the agent set here.
            if crate::mcp::logging::level_of(&object).is_some_and(|level| !self.host.wants(level)) {
                return;
            }
            return self.emit(object);
        }
        let Some(seq) = object.get("id").and_then(Value::as_u64) else {
            self.log
                .event(events::UNMATCHED_ANSWER, json!({ "data": truncate(data) }));
            return;
        };
        self.on_answer(seq, Answer::Whole(object));
    }

    /// The daemon's answer to the proxy's call `seq`: swallowed when it answers the replayed
    /// handshake, dropped when the call was already answered, else delivered under the agent's id.
    fn on_answer(&mut self, seq: u64, answer: Answer<'_>) {
        let error = match &answer {
            Answer::Result(_) => None,
            Answer::Whole(object) => object.get("error").cloned(),
        };
        match self.replay.answered(seq, error.is_some()) {
            // The session stays unready: its calls wait, and are answered -32001 (did not run)
            // at their deadline, rather than reach a session that refused the handshake.
            Some(ReplayAnswer::Refused) => {
                return self
                    .log
                    .event(events::REPLAY_REFUSED, json!({ "error": error }));
            }
            Some(ReplayAnswer::Confirmed) => return self.send_queued(),
            None => {}
        }
        let Some(call) = self.book.take(seq) else {
            self.log.event(
                events::LATE_ANSWER_DROPPED,
                json!({ "seq": seq, "note": "this call was already answered; it is never answered twice" }),
            );
            return;
        };
        if call.method == "tools/list"
            && let super::LinkState::Connected {
                catalogue: Some(catalogue),
                ..
            } = &self.link.state
        {
            let result = match &answer {
                Answer::Result(text) => Some(Arc::from(*text)),
                Answer::Whole(object) => object.get("result").map(|r| Arc::from(r.to_string())),
            };
            if let Some(result) = result {
                self.catalogue.remember_list(catalogue.clone(), result);
            }
        }
        match answer {
            Answer::Result(result) => {
                self.emit_line(jsonrpc::result_line(&call.client_id, result));
            }
            Answer::Whole(mut object) => {
                object.insert("id".into(), call.client_id);
                self.emit(Value::Object(object));
            }
        }
    }

    pub(super) fn on_worker_gone(&mut self, status: String) {
        let Some(ended) = self.workers.ended() else {
            return;
        };
        self.log.event(
            events::LINK_PROCESS_EXITED,
            json!({ "workerPid": ended.pid, "status": status, "livedMs": ended.lived.as_millis() as u64 }),
        );
        if self.connected() {
            self.on_dropped("link_process_died", &status);
        } else if let Some(attempt) = self.attempt_id() {
            self.on_unreachable(
                attempt,
                None,
                format!(
                    "the process holding the daemon link died during a connect attempt ({status})"
                ),
                false,
            );
        }
    }
}

fn truncate(text: &str) -> String {
    text.chars().take(200).collect()
}
