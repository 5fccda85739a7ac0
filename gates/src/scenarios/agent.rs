//! The agent's side of the hop 1 and 2 scenarios: `reticle mcp` driven as an agent drives it,
//! every call and answer recorded in the gate's [`History`]. [`Agent`] is a real MCP client (one
//! session held open); [`RawAgent`] is the same process line by line, for what no client sends
//! and for counting answers exactly once.

// Calls are `invoke` ops carrying `{"id": ..}`. An answer is classified as the harness's own
// client classifies it ([`harness::mcp_client::completion_of_error`] and `completion_of_result`):
// `ok` (a result), `fail` (a tool result that says `isError`: the refusal's `reason`; or a
// JSON-RPC error saying the call did not happen: `code`, `message`, and for a -32001 its
// `population` and `ran: "no"`) or `info` carrying the same fields (a -32001 whose call may have
// run: the outcome is unknown, though the answer came). An `info` with no `code` means no answer
// came within the bound, or the session itself died. rmcp drops an answer for an id it no longer
// waits on, which is why exactly-once is checked on the raw stream.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use harness::mcp_client::{completion_of_error, completion_of_result};
use harness::{McpClient, McpFailure, ProxyOptions, RawMcp, poll};
use serde_json::{Value, json};

use super::kit::observe;
use crate::history::{History, OpType};
use reticle::mcp::jsonrpc::TransportLostData;

/// How long one call may go unanswered before the history says so.
pub const CALL_BOUND: Duration = Duration::from_secs(20);

/// What a call came to, as the gate records it.
pub type Answer = Result<Value, McpFailure>;

/// A real MCP client on `reticle mcp`, recording into a gate history.
pub struct Agent {
    client: McpClient,
    history: History,
    next: AtomicU64,
}

impl Agent {
    /// Starts the proxy and completes the handshake (recorded as `initialize`).
    pub async fn start(history: &History, options: ProxyOptions) -> Result<Self, String> {
        history.invoke("initialize", json!({ "id": 0 }));
        match McpClient::start(options).await {
            Ok(client) => {
                history.complete(OpType::Ok, "initialize", json!({ "id": 0 }));
                Ok(Self {
                    client,
                    history: history.clone(),
                    next: AtomicU64::new(1),
                })
            }
            Err(failure) => {
                history.complete(OpType::Info, "initialize", failed(0, &failure));
                Err(format!(
                    "initialize was not answered: {}",
                    failure.message()
                ))
            }
        }
    }

    /// `tools/call`, bounded by [`CALL_BOUND`].
    pub async fn call(&self, tool: &str, arguments: Value) -> Answer {
        self.call_within(tool, arguments, CALL_BOUND).await
    }

    /// `tools/call`, bounded by `bound`.
    pub async fn call_within(&self, tool: &str, arguments: Value, bound: Duration) -> Answer {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        self.history.invoke(
            "tools/call",
            json!({ "id": id, "tool": tool, "arguments": arguments }),
        );
        let answer = tokio::time::timeout(bound, self.client.call_tool(tool, arguments))
            .await
            .unwrap_or(Err(McpFailure::Timeout));
        self.record("tools/call", id, &answer);
        answer
    }

    /// `tools/list`; the tool names on success.
    pub async fn list_tools(&self) -> Result<Vec<String>, McpFailure> {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        self.history.invoke("tools/list", json!({ "id": id }));
        let answer = tokio::time::timeout(CALL_BOUND, self.client.list_tools())
            .await
            .unwrap_or(Err(McpFailure::Timeout));
        self.record("tools/list", id, &answer.clone().map(|names| json!(names)));
        answer
    }

    /// `ping`.
    pub async fn ping(&self) -> Answer {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        self.history.invoke("ping", json!({ "id": id }));
        let answer = tokio::time::timeout(CALL_BOUND, self.client.ping())
            .await
            .unwrap_or(Err(McpFailure::Timeout))
            .map(|()| json!({}));
        self.record("ping", id, &answer);
        answer
    }

    /// Calls `tool` until one call succeeds (each attempt recorded), within `bound`.
    pub async fn call_until_ok(
        &self,
        tool: &str,
        arguments: Value,
        bound: Duration,
    ) -> Option<Value> {
        poll::within(bound, async || {
            self.call(tool, arguments.clone()).await.ok()
        })
        .await
    }

    fn record(&self, f: &str, id: u64, answer: &Answer) {
        match answer {
            Ok(result) => {
                let (op_type, recorded) = completion_of_result(json!(id), result);
                self.history.complete(op_type, f, recorded)
            }
            Err(failure @ McpFailure::Rpc { code, data, .. }) => self.history.complete(
                completion_of_error(*code, data.as_ref()),
                f,
                failed(id, failure),
            ),
            Err(other) => self.history.complete(OpType::Info, f, failed(id, other)),
        };
    }

    /// The supervisor's pid.
    pub fn pid(&self) -> u32 {
        self.client.pid()
    }

    pub fn options(&self) -> &ProxyOptions {
        self.client.options()
    }

    /// Ends the session (closes the proxy's stdin).
    pub async fn close(self) {
        self.client.close().await;
    }
}

/// The recorded value of a failed call.
fn failed(id: u64, failure: &McpFailure) -> Value {
    match failure {
        McpFailure::Rpc {
            code,
            message,
            data,
        } => {
            let lost = data.as_ref().and_then(TransportLostData::read);
            json!({
                "id": id,
                "code": code,
                "message": message,
                "population": lost.as_ref().map(|l| l.population),
                "ran": lost.as_ref().map(|l| l.ran),
            })
        }
        McpFailure::Transport(text) => {
            json!({ "id": id, "message": format!("the session failed: {text}") })
        }
        McpFailure::Timeout => json!({ "id": id, "message": "no answer within the bound" }),
    }
}

/// `reticle mcp` driven line by line, recording into a gate history.
pub struct RawAgent {
    raw: RawMcp,
    history: History,
    /// The method of every request sent, by its id's JSON text.
    sent: HashMap<String, String>,
    /// How many answers have been recorded, by id.
    recorded: HashMap<String, usize>,
    /// The last request id used (this agent numbers its own requests).
    last_id: u64,
}

impl RawAgent {
    /// Starts the proxy; nothing is sent yet.
    pub fn start(history: &History, options: ProxyOptions) -> Self {
        Self {
            raw: RawMcp::start(options),
            history: history.clone(),
            sent: HashMap::new(),
            recorded: HashMap::new(),
            last_id: 0,
        }
    }

    /// `initialize` then `notifications/initialized`; the answer, if one came within `bound`.
    pub async fn initialize(&mut self, bound: Duration) -> Option<Value> {
        let answer = self
            .call(
                "initialize",
                json!({ "protocolVersion": harness::mcp_client::PROTOCOL, "capabilities": {}, "clientInfo": { "name": "reticle-gate", "version": "1" } }),
                bound,
            )
            .await;
        if answer.is_some() {
            let _ = self
                .raw
                .try_write_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
                .await;
        }
        answer
    }

    /// Sends a request (recorded as its invoke); its id. A proxy that cannot take it (dead)
    /// is recorded too, and the request then goes unanswered, as it would for an agent.
    pub async fn send(&mut self, method: &str, params: Value) -> Value {
        self.last_id += 1;
        let id = json!(self.last_id);
        self.sent.insert(id.to_string(), method.to_string());
        self.history
            .invoke(method, json!({ "id": id, "params": params }));
        let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        if let Err(err) = self.raw.try_write_line(&line.to_string()).await {
            observe(
                &self.history,
                "stdin_refused",
                json!({ "id": id, "error": err.to_string() }),
            );
        }
        id
    }

    /// Records a request the caller writes itself (a raw line carrying `id`) as an invoke.
    pub fn expect_answer(&mut self, method: &str, id: Value) {
        self.sent.insert(id.to_string(), method.to_string());
        self.history.invoke(method, json!({ "id": id }));
    }

    /// Waits (bounded) for the first answer to `id` and records it; an `info` op when none came.
    pub async fn answer(&mut self, id: &Value, bound: Duration) -> Option<Value> {
        let method = self.sent.get(&id.to_string()).cloned().unwrap_or_default();
        let answer = self.raw.answer(id, bound).await;
        match &answer {
            Some(answer) => {
                let already = self.recorded.entry(id.to_string()).or_default();
                if *already == 0 {
                    *already = 1;
                    let (op, value) = answer_op(answer);
                    self.history.complete(op, &method, value);
                }
            }
            None => {
                self.history.complete(
                    OpType::Info,
                    &method,
                    json!({ "id": id, "message": format!("no answer within {} ms", bound.as_millis()) }),
                );
            }
        }
        answer
    }

    /// Sends a request and waits for its answer.
    pub async fn call(&mut self, method: &str, params: Value, bound: Duration) -> Option<Value> {
        let id = self.send(method, params).await;
        self.answer(&id, bound).await
    }

    /// `tools/call` of `reticle_sessions`, the call every warm-up and recovery check makes.
    pub async fn call_sessions(&mut self, bound: Duration) -> Option<Value> {
        self.call(
            "tools/call",
            json!({ "name": "reticle_sessions", "arguments": {} }),
            bound,
        )
        .await
    }

    /// Calls `reticle_sessions` until one call is served (each attempt recorded, fifty at
    /// most); stops at the first call left unanswered within `bound`. Whether one was served.
    pub async fn call_until_served(&mut self, bound: Duration) -> bool {
        for _ in 0..50 {
            match self.call_sessions(bound).await {
                Some(answer) if answer.get("result").is_some() => return true,
                Some(_) => continue,
                None => return false,
            }
        }
        false
    }

    /// The warm raw opening: the handshake answered, then [`Self::call_until_served`].
    pub async fn warm(&mut self, bound: Duration) -> bool {
        self.initialize(bound).await.is_some() && self.call_until_served(bound).await
    }

    /// Writes a raw line; false when the proxy would not take it.
    pub async fn write_line(&mut self, line: &str) -> bool {
        self.raw.try_write_line(line).await.is_ok()
    }

    /// Records every answer on stdout not yet recorded: answers to requests that were never
    /// awaited, and every answer past the first for an id (a double answer), so the
    /// exactly-once checker sees the whole stream.
    pub fn settle(&mut self) {
        let mut seen: HashMap<String, usize> = HashMap::new();
        for answer in self.raw.received() {
            let Some(id) = answer.get("id").filter(|id| !id.is_null()) else {
                continue;
            };
            if answer.get("result").is_none() && answer.get("error").is_none() {
                continue;
            }
            let key = id.to_string();
            let Some(method) = self.sent.get(&key).cloned() else {
                continue;
            };
            let count = seen.entry(key.clone()).or_default();
            *count += 1;
            let recorded = self.recorded.entry(key).or_default();
            if *count > *recorded {
                *recorded = *count;
                let (op, value) = answer_op(&answer);
                self.history.complete(op, &method, value);
            }
        }
    }

    /// Everything read from stdout so far.
    pub fn received(&self) -> Vec<Value> {
        self.raw.received()
    }

    /// Closes stdin (the agent going away).
    pub fn close_stdin(&mut self) {
        self.raw.close_stdin();
    }

    /// Waits (bounded) for the proxy to exit and its stdout to be read to the end.
    pub async fn wait_exit(&mut self, bound: Duration) -> Option<std::process::ExitStatus> {
        self.raw.wait_exit(bound).await
    }

    pub fn pid(&self) -> u32 {
        self.raw.pid()
    }

    pub fn options(&self) -> &ProxyOptions {
        self.raw.options()
    }
}

/// How a raw answer is recorded.
fn answer_op(answer: &Value) -> (OpType, Value) {
    let id = answer["id"].clone();
    match answer.get("error") {
        Some(error) => (
            completion_of_error(
                error["code"].as_i64().unwrap_or(0) as i32,
                error.get("data"),
            ),
            {
                let lost = error.get("data").and_then(TransportLostData::read);
                json!({
                    "id": id,
                    "code": error["code"],
                    "message": error["message"],
                    "population": lost.as_ref().map(|l| l.population),
                    "ran": lost.as_ref().map(|l| l.ran),
                })
            },
        ),
        None => completion_of_result(id, &answer["result"]),
    }
}

/// Proxy log events named `event`.
pub fn events(options: &ProxyOptions, event: &str) -> Vec<Value> {
    options
        .log_events()
        .into_iter()
        .filter(|e| e["event"] == event)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use reticle::mcp::jsonrpc::TRANSPORT_LOST;

    fn lost(ran: &str) -> Value {
        json!({ "jsonrpc": "2.0", "id": 3, "error": { "code": TRANSPORT_LOST, "message": "the link dropped",
                "data": { "population": "in_flight_lost", "ran": ran, "reason": "stream_reset", "port": 4400 } } })
    }

    #[test]
    fn a_raw_answer_is_recorded_as_the_harness_client_records_it() {
        let (op, value) = answer_op(&lost("unknown"));
        assert_eq!(op, OpType::Info, "it may have run: the outcome is unknown");
        assert_eq!(value["code"], -32001);
        assert_eq!(value["ran"], "unknown");
        assert_eq!(answer_op(&lost("no")).0, OpType::Fail);
        let refused = json!({ "id": 4, "error": { "code": -32602, "message": "unknown tool" } });
        assert_eq!(answer_op(&refused).0, OpType::Fail);
        let served = json!({ "id": 5, "result": {} });
        assert_eq!(answer_op(&served).0, OpType::Ok);
    }

    #[test]
    fn a_refusal_after_the_fault_is_a_failure_to_the_survival_judge() {
        let refusal = json!({ "jsonrpc": "2.0", "id": 2, "result": { "isError": true,
            "content": [{ "type": "text", "text": "{}" }],
            "structuredContent": { "ok": false, "reason": "daemon_unreachable", "recovery": "retry" } } });
        let (op, value) = answer_op(&refusal);
        assert_eq!(op, OpType::Fail);
        assert_eq!(value["reason"], "daemon_unreachable");
        let history = History::new();
        history.invoke("tools/call", json!({ "id": 1 }));
        history.complete(OpType::Ok, "tools/call", json!({ "id": 1, "result": {} }));
        history.fault("daemon_killed", true, json!({}));
        history.invoke("tools/call", json!({ "id": 2 }));
        history.complete(op, "tools/call", value);
        let verdict = super::super::agent_kit::judge_survival(&history.ops());
        assert_eq!(
            verdict.outcome,
            crate::judge::RowOutcome::Surfaced,
            "{verdict:?}"
        );
        assert!(
            verdict.evidence.contains("daemon_unreachable"),
            "{verdict:?}"
        );
    }

    #[test]
    fn an_unknown_outcome_is_still_recorded_as_an_answer_and_a_timeout_is_not() {
        let history = History::new();
        let (op, value) = answer_op(&lost("unknown"));
        history.complete(op, "tools/call", value);
        history.complete(OpType::Info, "tools/call", failed(4, &McpFailure::Timeout));
        let ops = history.ops();
        assert!(ops[0].is_answer());
        assert!(!ops[1].is_answer());
    }
}
