//! The one shape of "not done": `{ok:false, reason, recovery}`, plus whatever facts help the
//! agent (the sessions to choose from, the field at fault). A refusal never carries a stack
//! trace, panic text or an internal path: its sentences are written here and in the handlers.

use serde_json::{Map, Value, json};

use super::bounds::clip;
use crate::flow::store::Unloaded;
use crate::store::workspace::StoreError;

/// A structured refusal.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// What was not done and why, in one sentence.
    pub reason: String,
    /// What to do next.
    pub recovery: String,
    /// Extra facts (`sessions`, `field`, `accepts`, ...).
    pub extra: Map<String, Value>,
}

impl Refusal {
    pub fn new(reason: impl Into<String>, recovery: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            recovery: recovery.into(),
            extra: Map::new(),
        }
    }

    /// Adds a fact.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.extra.insert(key.to_string(), value.into());
        self
    }

    /// The arguments did not fit the tool's schema.
    pub fn bad_arguments(tool: &str, problem: &str) -> Self {
        Self::new(
            format!("{tool}: {problem}; nothing was run"),
            format!(
                "fix the arguments and call again; reticle_tools {{\"names\":[\"{tool}\"]}} lists the parameters {tool} accepts"
            ),
        )
    }

    /// A family action on a saved item (a flow, a baseline) called without its `name`.
    pub fn missing_name(family: &str, action: &str, item: &str) -> Self {
        Self::new(
            format!("{family} {action} needs `name`, the {item}'s name; nothing was run"),
            format!("call {family} {{\"action\":\"list\"}} for the saved {item}s' names"),
        )
    }

    /// `{ok:false, reason, recovery, ...extra}`.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("ok".into(), json!(false));
        map.insert("reason".into(), json!(self.reason));
        map.insert("recovery".into(), json!(self.recovery));
        for (k, v) in &self.extra {
            map.insert(k.clone(), v.clone());
        }
        Value::Object(map)
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.reason, self.recovery)
    }
}

/// Why a call was not answered with a tool result: answered as JSON-RPC -32602 by the caller,
/// with the structured refusal as the error's data.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolRefusal {
    #[error("unknown tool '{0}': tools/list names every tool this daemon advertises")]
    Unknown(String),
}

impl ToolRefusal {
    /// The structured refusal for the error's `data`.
    pub fn data(&self) -> Value {
        match self {
            ToolRefusal::Unknown(name) => Refusal::new(
                format!("unknown tool '{}'; nothing was run", clip(name, 80)),
                "call tools/list or reticle_tools for the tools this daemon has",
            )
            .to_value(),
        }
    }
}

/// A workspace error as a refusal: the error names the file and the fix.
pub fn store_refusal(err: StoreError) -> Refusal {
    Refusal::new(err.to_string(), err.recovery())
}

impl From<Unloaded> for Refusal {
    fn from(unloaded: Unloaded) -> Self {
        let refusal = Refusal::new(unloaded.reason, unloaded.recovery);
        match unloaded.saved {
            Some(saved) => refusal.with("saved", saved),
            None => refusal,
        }
    }
}
