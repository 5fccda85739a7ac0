//! The agent's side of the actor: each stdin line is classified and either answered here at once
//! (`initialize`, `logging/setLevel`, `ping` while disconnected, a duplicate id, garbage), booked
//! as a call owed an answer, or forwarded; stdin closing starts the drain that ends the proxy. It
//! must not talk to the worker except through the sending half ([`super::outbound`]).

use std::process::ExitCode;

use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::Supervisor;
use crate::mcp::jsonrpc::{self, INVALID_REQUEST, Kind};
use crate::mcp::protocol;
use crate::proxy::calls::{Call, CallState, LinkLoss};
use crate::proxy::events;

impl Supervisor {
    pub(super) fn on_client_bytes(&mut self, bytes: &[u8]) {
        let Ok(text) = std::str::from_utf8(bytes) else {
            let answer = jsonrpc::error_response(
                &Value::Null,
                jsonrpc::PARSE_ERROR,
                "parse error: the message is not UTF-8",
                None,
            );
            return self.answer_locally(&Value::Null, "garbage", answer);
        };
        if text.trim().is_empty() {
            return;
        }
        let message = match jsonrpc::parse(text) {
            Ok(message) => message,
            Err(invalid) => {
                let id = invalid.id.clone();
                return self.answer_locally(&id, "garbage", invalid.response());
            }
        };
        match message.kind.clone() {
            Kind::Request { id, method } => self.on_request(id, method, message.object),
            Kind::Notification { method } => self.on_notification(&method, message.object),
            Kind::Response { .. } => self.forward_uncounted(message.object, "response"),
        }
    }

    fn on_request(&mut self, id: Value, method: String, object: Map<String, Value>) {
        self.in_hand = Some((id.clone(), None));
        if self.settings.panic_method.as_deref() == Some(method.as_str()) {
            panic!(
                "test fault hook {} fired while handling '{method}'",
                crate::config::env::TEST_PANIC_METHOD
            );
        }
        if self.book.seq_of(&id).is_some() {
            let reason = format!(
                "invalid request: id {id} is already used by a call still in flight; give every request its own id"
            );
            let answer = jsonrpc::error_response(&id, INVALID_REQUEST, &reason, None);
            return self.answer_locally(&id, "duplicate_id", answer);
        }
        match method.as_str() {
            "initialize" => return self.on_initialize(id, object),
            "logging/setLevel" => return self.on_set_level(&id, &object),
            "ping" if !self.connected() => {
                let answer = jsonrpc::result_response(&id, json!({}));
                return self.answer_locally(&id, "ping", answer);
            }
            "tools/list" if self.ready() && list_params_taken(&object) => {
                if let Some(result) = self
                    .link
                    .catalogue()
                    .and_then(|now| self.catalogue.list_of(now))
                {
                    let line = jsonrpc::result_line(&id, result);
                    return self.answer_locally_line(&id, "catalogue_cache", line);
                }
            }
            _ => {}
        }
        let seq = self.next_seq();
        self.in_hand = Some((id.clone(), Some(seq)));
        self.book.insert(
            seq,
            Call {
                client_id: id,
                method,
                object,
                state: CallState::Queued,
                deadline: Instant::now() + self.settings.queue_wait,
            },
        );
        if self.ready() {
            self.send_call(seq);
        } else {
            self.demand();
        }
    }

    /// Answered here, at once, whatever the daemon's state: the handshake describes Reticle, and
    /// it is replayed into every daemon session before anything else reaches it.
    fn on_initialize(&mut self, id: Value, object: Map<String, Value>) {
        let asked = object
            .get("params")
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Err(problem) = protocol::read_initialize(object.get("params")) {
            let answer = jsonrpc::error_response(&id, jsonrpc::INVALID_PARAMS, &problem, None);
            return self.answer_locally(&id, "initialize_refused", answer);
        }
        let answer = jsonrpc::result_response(&id, protocol::initialize_result(asked.as_deref()));
        self.answer_locally(&id, "initialize", answer);
        self.host.opened();
        if self.replay.initialize_received(object) {
            self.replay_handshake();
        }
    }

    fn on_notification(&mut self, method: &str, mut object: Map<String, Value>) {
        match method {
            "notifications/initialized" => {
                if let Some(note) = self.replay.initialized_received(object) {
                    self.forward_uncounted(note, "notification");
                }
            }
            "notifications/cancelled" => {
                // MCP: a cancelled request is never answered. The call leaves the book here, so
                // no answer (the daemon's, or -32001 at a loss or at exit) reaches the agent.
                let target = object
                    .get("params")
                    .and_then(|p| p.get("requestId"))
                    .cloned()
                    .and_then(|id| self.book.seq_of(&id));
                let Some(seq) = target else { return };
                let epoch = self.epoch();
                let at_daemon = epoch.is_some()
                    && matches!(self.book.get(seq).map(|c| c.state), Some(CallState::Sent { epoch: e, .. }) if Some(e) == epoch);
                if at_daemon {
                    if let Some(Value::Object(params)) = object.get_mut("params") {
                        params.insert("requestId".into(), json!(seq));
                    }
                    self.forward_uncounted(object, "notification");
                }
                if let Some(call) = self.book.take(seq) {
                    self.log.event(
                        events::CALL_CANCELLED,
                        json!({ "seq": seq, "id": call.client_id, "forwarded": at_daemon }),
                    );
                }
            }
            _ => self.forward_uncounted(object, "notification"),
        }
    }

    pub(super) fn on_stdin_closed(&mut self) {
        let owed = self.book.len();
        self.log.event(
            events::STDIN_CLOSED,
            json!({ "owed": owed, "drainMs": self.settings.drain.as_millis() as u64 }),
        );
        if owed == 0 {
            self.exit(ExitCode::SUCCESS, 0);
        } else {
            self.drain_until = Some(Instant::now() + self.settings.drain);
        }
    }

    /// The drain bound ran out: every call still owed is answered -32001 and the proxy exits.
    pub(super) fn finish_drain(&mut self) {
        self.drain_until = None;
        let owed = self.book.all();
        let mut ids = Vec::new();
        for seq in &owed {
            if let Some(call) = self.book.take(*seq) {
                let sent = matches!(call.state, CallState::Sent { .. });
                let loss = LinkLoss::owed_at_exit(self.port, sent, self.settings.drain);
                ids.push(call.client_id.clone());
                self.emit(loss.answer(&call.client_id, self.port));
            }
        }
        self.log.event(
            events::UNANSWERED_AT_EXIT,
            json!({
                "port": self.port,
                "ids": ids,
                "note": "each was answered -32001 on stdout (delivered only if the agent still reads it)",
                "stdoutBroken": self.out.is_broken(),
            }),
        );
        self.exit(ExitCode::FAILURE, owed.len());
    }

    pub(super) fn exit(&mut self, code: ExitCode, owed: usize) {
        self.log.event(
            events::PROXY_EXIT,
            json!({ "port": self.port, "owedAtExit": owed, "state": self.link.state.word() }),
        );
        self.finished = Some(code);
    }
}

/// Whether the daemon would answer this `tools/list` with its whole list: no params, or an
/// object (it reads no field of them); anything else goes to the daemon for its refusal.
fn list_params_taken(object: &Map<String, Value>) -> bool {
    object.get("params").is_none_or(Value::is_object)
}
