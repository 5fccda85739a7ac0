//! The history: every operation a gate performs, appended in order and timestamped (Jepsen's
//! model). Clients `invoke` and then complete with `ok`, `fail` or `info` (unknown); the nemesis
//! records the faults it is about to inject (so a call made after that is known to have been made
//! under the fault) and then whether they took; the harness records process events.
//! Recording is all this module does; judging is [`crate::judge`]'s job.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `f` of the nemesis invoke recorded before a fault is applied ([`History::applying`]).
pub const APPLYING: &str = "applying";

/// Who performed an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    /// A client of the product (an agent, a user at the CLI, a page).
    Client,
    /// The fault injector.
    Nemesis,
    /// The harness itself (processes started and ended).
    Harness,
}

/// What kind of operation it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpType {
    /// A call begins.
    Invoke,
    /// It definitely happened (or, for a fault, it definitely took).
    Ok,
    /// It definitely did not happen, and said so.
    Fail,
    /// Unknown: no answer within the bound, or a fact recorded for the record.
    Info,
}

/// One operation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Op {
    pub index: usize,
    /// Milliseconds since the history began.
    pub at_ms: f64,
    pub actor: Actor,
    #[serde(rename = "type")]
    pub op_type: OpType,
    /// What was done (`serve`, `tools/call`, `squat_port`, ...).
    pub f: String,
    pub value: Value,
}

impl Op {
    /// Whether this completion is an answer the client received: a result (`ok`), an error that
    /// says the call did not happen (`fail`), or an error that leaves open whether it ran (`info`
    /// carrying the JSON-RPC `code` it was answered with). An `info` without a code records that
    /// no answer came at all (a bound ran out, the session died).
    pub fn is_answer(&self) -> bool {
        match self.op_type {
            OpType::Ok | OpType::Fail => true,
            OpType::Info => self.value.get("code").is_some_and(Value::is_i64),
            OpType::Invoke => false,
        }
    }
}

/// An append-only, shareable history.
#[derive(Debug, Clone)]
pub struct History {
    start: Instant,
    ops: Arc<Mutex<Vec<Op>>>,
}

impl Default for History {
    fn default() -> Self {
        Self::new()
    }
}

impl History {
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
            ops: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Appends an operation and returns its index.
    pub fn record(&self, actor: Actor, op_type: OpType, f: &str, value: Value) -> usize {
        let mut ops = self.ops.lock().expect("history lock");
        let index = ops.len();
        ops.push(Op {
            index,
            at_ms: self.start.elapsed().as_secs_f64() * 1000.0,
            actor,
            op_type,
            f: f.to_string(),
            value,
        });
        index
    }

    /// A client call begins.
    pub fn invoke(&self, f: &str, value: Value) -> usize {
        self.record(Actor::Client, OpType::Invoke, f, value)
    }

    /// A client call completes.
    pub fn complete(&self, op_type: OpType, f: &str, value: Value) -> usize {
        self.record(Actor::Client, op_type, f, value)
    }

    /// The nemesis is about to inject the fault `f`: recorded (as the nemesis invoke
    /// [`APPLYING`], naming `f` as its `fault`) before it is applied, so every call invoked after
    /// this op was invoked while the fault was being applied or on. Its completion is
    /// [`Self::fault`].
    pub fn applying(&self, f: &str, mut value: Value) -> usize {
        if let Value::Object(fields) = &mut value {
            fields.insert("fault".to_string(), Value::from(f));
        }
        self.record(Actor::Nemesis, OpType::Invoke, APPLYING, value)
    }

    /// The nemesis injected a fault; `established` says whether the harness could confirm it.
    pub fn fault(&self, f: &str, established: bool, detail: Value) -> usize {
        let op_type = if established {
            OpType::Ok
        } else {
            OpType::Fail
        };
        self.record(Actor::Nemesis, op_type, f, detail)
    }

    /// A snapshot of every operation so far.
    pub fn ops(&self) -> Vec<Op> {
        self.ops.lock().expect("history lock").clone()
    }

    /// Every client invoke with an `id` in its value that no later completion (ok, fail or
    /// info, same actor, same `id`) answers.
    pub fn unanswered(&self) -> Vec<Op> {
        let ops = self.ops();
        ops.iter()
            .filter(|op| op.op_type == OpType::Invoke && !op.value["id"].is_null())
            .filter(|invoke| {
                !ops.iter().any(|done| {
                    done.index > invoke.index
                        && done.actor == invoke.actor
                        && done.op_type != OpType::Invoke
                        && done.value["id"] == invoke.value["id"]
                })
            })
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reticle::mcp::jsonrpc::TRANSPORT_LOST;
    use serde_json::json;

    #[test]
    fn ops_are_indexed_in_order_with_monotonic_time() {
        let history = History::new();
        history.fault("squat_port", true, json!({"port": 1}));
        history.invoke("serve", json!({}));
        history.complete(OpType::Fail, "serve", json!({"code": 1}));
        let ops = history.ops();
        assert_eq!(ops.iter().map(|o| o.index).collect::<Vec<_>>(), [0, 1, 2]);
        assert!(ops.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));
        assert_eq!(ops[0].actor, Actor::Nemesis);
    }

    #[test]
    fn an_unknown_outcome_is_an_answer_only_when_an_error_code_came_with_it() {
        let history = History::new();
        history.complete(OpType::Ok, "tools/call", json!({"id": 1}));
        history.complete(OpType::Fail, "tools/call", json!({"id": 2, "code": -32602}));
        history.complete(
            OpType::Info,
            "tools/call",
            json!({"id": 3, "code": TRANSPORT_LOST}),
        );
        history.complete(
            OpType::Info,
            "tools/call",
            json!({"id": 4, "timeout": true}),
        );
        history.complete(
            OpType::Info,
            "tools/call",
            json!({"id": 5, "code": TRANSPORT_LOST.to_string()}),
        );
        history.invoke("tools/call", json!({"id": 6, "code": TRANSPORT_LOST}));
        let answered: Vec<bool> = history.ops().iter().map(Op::is_answer).collect();
        assert_eq!(answered, [true, true, true, false, false, false]);
    }

    #[test]
    fn an_invoke_without_a_completion_of_its_id_is_unanswered() {
        let history = History::new();
        history.invoke("tools/call", json!({"id": 1}));
        history.invoke("tools/call", json!({"id": 2}));
        history.complete(
            OpType::Info,
            "tools/call",
            json!({"id": 2, "timeout": true}),
        );
        let open: Vec<Value> = history
            .unanswered()
            .into_iter()
            .map(|op| op.value["id"].clone())
            .collect();
        assert_eq!(open, [json!(1)]);
        history.complete(OpType::Ok, "tools/call", json!({"id": 1}));
        assert!(history.unanswered().is_empty());
    }
}
