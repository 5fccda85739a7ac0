//! The history of a run: every operation the client invoked, how each completed, and what the
//! nemesis did, in order, with times. Checkers judge it after the run; nothing here judges.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;
use serde_json::Value;

/// What an entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// A request was sent.
    Invoke,
    /// It completed with a result.
    Ok,
    /// It completed with an error (a JSON-RPC error, or a transport failure).
    Error,
    /// No completion within the client's bound: its outcome is unknown.
    Timeout,
    /// Anything else worth knowing: a notification, a fault injected, a raw line written.
    Info,
}

/// One entry.
#[derive(Debug, Clone, Serialize)]
pub struct Op {
    /// Position in the history.
    pub index: usize,
    /// Milliseconds since the history began.
    pub at_ms: f64,
    /// Who did it: `client`, `raw`, `nemesis`, ...
    pub process: String,
    pub kind: OpKind,
    /// The operation: a method name, or a fault's name.
    pub f: String,
    /// The JSON-RPC id, when there is one.
    pub id: Option<Value>,
    pub value: Value,
}

/// An append-only, shareable history.
#[derive(Debug, Clone)]
pub struct History {
    ops: Arc<Mutex<Vec<Op>>>,
    start: Instant,
}

impl Default for History {
    fn default() -> Self {
        Self::new()
    }
}

impl History {
    pub fn new() -> Self {
        Self {
            ops: Arc::new(Mutex::new(Vec::new())),
            start: Instant::now(),
        }
    }

    /// Appends one entry; returns its index.
    pub fn record(
        &self,
        process: &str,
        kind: OpKind,
        f: &str,
        id: Option<Value>,
        value: Value,
    ) -> usize {
        let mut ops = self.ops.lock().unwrap_or_else(|p| p.into_inner());
        let index = ops.len();
        ops.push(Op {
            index,
            at_ms: self.start.elapsed().as_secs_f64() * 1000.0,
            process: process.to_string(),
            kind,
            f: f.to_string(),
            id,
            value,
        });
        index
    }

    /// A copy of every entry so far.
    pub fn ops(&self) -> Vec<Op> {
        self.ops.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Entries of one kind and operation.
    pub fn of(&self, kind: OpKind, f: &str) -> Vec<Op> {
        self.ops()
            .into_iter()
            .filter(|op| op.kind == kind && op.f == f)
            .collect()
    }

    /// Every invoke that has no completion after it (ok, error or timeout with the same id).
    pub fn unanswered(&self) -> Vec<Op> {
        let ops = self.ops();
        ops.iter()
            .filter(|op| op.kind == OpKind::Invoke)
            .filter(|invoke| {
                !ops.iter().any(|done| {
                    matches!(done.kind, OpKind::Ok | OpKind::Error | OpKind::Timeout)
                        && done.process == invoke.process
                        && done.id == invoke.id
                        && done.index > invoke.index
                })
            })
            .cloned()
            .collect()
    }
}
