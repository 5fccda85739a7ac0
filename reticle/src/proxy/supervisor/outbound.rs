//! What the actor sends: calls and the replayed handshake to the daemon (as worker commands, on
//! the open session only), and answers to the agent (each logged when the proxy wrote it itself).
//! Every answer to the agent leaves through [`Supervisor::emit`], which also ends a drain once
//! nothing is owed. A `tools/call` goes out under the proxy's id with the agent's own in its
//! `_meta` (for the daemon's trace). It decides nothing about which answer a call gets.

use std::process::ExitCode;

use serde_json::{Map, Value, json};

use super::Supervisor;
use crate::mcp::jsonrpc;
use crate::proxy::calls::{Call, CallState, LinkLoss};
use crate::proxy::events;
use crate::proxy::link::LinkCommand;
use crate::wire::trace::CLIENT_ID_META;

impl Supervisor {
    /// The next proxy id (calls, attempts and uncounted posts share one sequence).
    pub(super) fn next_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Sends every queued call, in arrival order, on the current session.
    pub(super) fn send_queued(&mut self) {
        for seq in self.book.queued() {
            self.send_call(seq);
        }
    }

    pub(super) fn send_call(&mut self, seq: u64) {
        let Some(epoch) = self.epoch() else { return };
        let Some(call) = self.book.get_mut(seq) else {
            return;
        };
        call.state = CallState::Sent {
            epoch,
            posting: false,
        };
        let mut object = call.object.clone();
        object.insert("id".into(), json!(seq));
        if call.method == "tools/call" {
            forward_client_id(&mut object, &call.client_id);
        }
        let body = Value::Object(object).to_string();
        self.workers.command(LinkCommand::Post { epoch, seq, body });
    }

    /// Posts the kept handshake (and note) first on the open session.
    pub(super) fn replay_handshake(&mut self) {
        let Some(epoch) = self.epoch() else { return };
        let seq = self.next_seq();
        let Some(posts) = self.replay.replay(seq) else {
            return;
        };
        self.workers.command(LinkCommand::Post {
            epoch,
            seq,
            body: Value::Object(posts.initialize).to_string(),
        });
        if let Some(note) = posts.initialized {
            self.forward_uncounted(note, "notification");
        }
    }

    /// Forwards a message that needs no answer from the daemon (a notification, or the agent's
    /// answer to a daemon request); dropped (and logged) while no session is open.
    pub(super) fn forward_uncounted(&mut self, object: Map<String, Value>, what: &str) {
        match self.epoch() {
            Some(epoch) => {
                let seq = self.next_seq();
                self.workers.command(LinkCommand::Post {
                    epoch,
                    seq,
                    body: Value::Object(object).to_string(),
                });
            }
            None => self.log.event(
                events::DROPPED_WHILE_DISCONNECTED,
                json!({ "kind": what, "method": object.get("method") }),
            ),
        }
    }

    /// Answers a call that was never sent: from the catalogue cache when it is a `tools/list`
    /// the cache can answer, else with `loss`.
    pub(super) fn answer_unsent(&mut self, seq: u64, loss: &LinkLoss) {
        let Some(call) = self.book.take(seq) else {
            return;
        };
        if call.method == "tools/list"
            && let Some(result) = self.catalogue.cached_list()
            && let Ok(result) = serde_json::from_str::<Value>(result)
            && result.get("tools").is_some_and(Value::is_array)
        {
            let answer = jsonrpc::result_response(&call.client_id, result);
            return self.answer_call(&call, "catalogue_cache", answer);
        }
        let how = loss.population.as_str();
        self.answer_call(&call, how, loss.answer(&call.client_id, self.port));
    }

    pub(super) fn answer_call(&mut self, call: &Call, how: &str, answer: Value) {
        self.log.event(
            events::ANSWERED_BY_PROXY,
            json!({ "id": call.client_id, "method": call.method, "how": how, "error": answer.get("error") }),
        );
        self.emit(answer);
    }

    pub(super) fn answer_locally(&mut self, id: &Value, how: &str, answer: Value) {
        self.log.event(
            events::ANSWERED_BY_PROXY,
            json!({ "id": id, "how": how, "error": answer.get("error") }),
        );
        self.in_hand = None;
        self.emit(answer);
    }

    /// [`Self::answer_locally`] for an answer already encoded as a line of JSON.
    pub(super) fn answer_locally_line(&mut self, id: &Value, how: &str, line: String) {
        self.log
            .event(events::ANSWERED_BY_PROXY, json!({ "id": id, "how": how }));
        self.in_hand = None;
        self.emit_line(line);
    }

    pub(super) fn emit(&mut self, message: Value) {
        self.emit_line(message.to_string());
    }

    /// [`Self::emit`] for an answer already encoded as a line of JSON.
    pub(super) fn emit_line(&mut self, line: String) {
        self.out.write_line(line);
        if self.drain_until.is_some() && self.book.is_empty() {
            self.exit(ExitCode::SUCCESS, 0);
        }
    }
}

/// Puts the agent's own id of a `tools/call` in its params' `_meta` (the call goes out under the
/// proxy's id), so the daemon's trace can name the agent's call.
fn forward_client_id(object: &mut Map<String, Value>, client_id: &Value) {
    if let Some(Value::Object(params)) = object.get_mut("params") {
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(CLIENT_ID_META.into(), client_id.clone());
        }
    }
}
