//! The tool catalogue and the one chokepoint every tool call goes through, [`run_tool`].
//!
//! # Layout
//! - [`catalogue`]: which tools this daemon advertises, with a version and a content hash that
//!   `/status` and every MCP stream report (the proxy compares them to spot a changed
//!   catalogue).
//! - `sessions`: `reticle_sessions`, answered from what the daemon knows.
//! - `testing`: tools that exist only when a test asks for them (`RETICLE_TEST_CATALOGUE`).
//!
//! The tool-layer issue grows this room (families, surfaces, verdicts); everything it adds
//! must still pass through [`run_tool`]. This room runs tools; it must not know transports.

pub mod catalogue;
mod sessions;
mod testing;

use std::sync::Arc;

use rmcp::model::CallToolResult;
use serde_json::{Map, Value};

pub use catalogue::{Catalogue, ToolKind};

use crate::bridge::Bridge;
use crate::daemon::Activity;
use crate::http::DaemonInfo;

/// What a tool can read about the daemon it runs in.
#[derive(Debug, Clone)]
pub struct ToolContext {
    pub info: Arc<DaemonInfo>,
    pub activity: Activity,
    /// The connected pages.
    pub bridge: Bridge,
}

/// Why a call never reached a tool: answered as JSON-RPC -32602 by the caller.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolRefusal {
    #[error("unknown tool '{0}': tools/list names every tool this daemon has")]
    Unknown(String),
    #[error("{tool}: {problem}; nothing was run")]
    BadArguments { tool: String, problem: String },
}

/// Runs one tool call: the only way any path reaches a tool.
pub async fn run_tool(
    ctx: &ToolContext,
    catalogue: &Catalogue,
    name: &str,
    arguments: Map<String, Value>,
) -> Result<CallToolResult, ToolRefusal> {
    let kind = catalogue
        .find(name)
        .ok_or_else(|| ToolRefusal::Unknown(name.to_string()))?;
    let bad = |problem: String| ToolRefusal::BadArguments {
        tool: name.to_string(),
        problem,
    };
    let mut result = match kind {
        ToolKind::Sessions => sessions::run(ctx, &arguments).map_err(bad)?,
        ToolKind::TestSleep => testing::sleep(&arguments).await.map_err(bad)?,
        ToolKind::TestEcho => testing::echo(arguments),
    };
    // Every protocol version Reticle speaks predates the result-type field.
    result.result_type = None;
    Ok(result)
}

/// Refuses any argument not in `known`, naming them (an ignored argument is a silent failure).
fn refuse_unknown(arguments: &Map<String, Value>, known: &[&str]) -> Result<(), String> {
    let unknown: Vec<&str> = arguments
        .keys()
        .map(String::as_str)
        .filter(|k| !known.contains(k))
        .collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "unknown parameter(s) {}; accepted: {}",
            unknown.join(", "),
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        ))
    }
}
