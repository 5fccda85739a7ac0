//! The trace check of a daemon a fault scenario ran (`RETICLE_TRACE=1`): what the checker found
//! in its log once no call is left half-written, recorded as one harness observation
//! ([`TRACE_UNDER_FAULTS`]), and the two ways it changes a row's verdict (a broken invariant is
//! silent; no span after tool calls proves nothing). It reads and records; the row's own judge
//! is elsewhere.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::history::{Actor, History, Op, OpType};
use crate::judge::{Judgement, RowOutcome};
use crate::trace;

/// The harness observation of what the trace checker found in the log of a daemon a fault
/// scenario ran (traced, `RETICLE_TRACE=1`): `{"spans", "calls", "violations"}`, and
/// `"toolCalls"` when the scenario made tool calls to it so that it has spans to check
/// ([`record_trace_after_tool_calls`]).
pub const TRACE_UNDER_FAULTS: &str = "trace_under_faults";

/// How long the check waits for the spans still open to close (they are written as they close,
/// so a call still finishing looks, until then, like an orphan).
const TRACE_SETTLE: Duration = Duration::from_secs(5);

/// Checks T1 to T4 on the traced daemon log at `log` once no call is left half-written
/// (bounded), and records what was found as [`TRACE_UNDER_FAULTS`], for
/// [`judge_trace_under_faults`].
pub async fn record_trace_under_faults(history: &History, log: &Path) {
    record(history, checked_trace(log).await);
}

/// [`record_trace_under_faults`] after the scenario made `tool_calls` tool calls to the daemon
/// (through a real agent), so a trace with no span proves nothing
/// ([`unless_the_trace_was_empty`]).
pub async fn record_trace_after_tool_calls(history: &History, log: &Path, tool_calls: usize) {
    let mut found = checked_trace(log).await;
    found["toolCalls"] = json!(tool_calls);
    record(history, found);
}

/// What the trace checker finds in the log at `log` once no call is left half-written
/// (bounded): `{"spans", "calls", "violations"}`.
async fn checked_trace(log: &Path) -> Value {
    let read = || std::fs::read_to_string(log).unwrap_or_default();
    let settled = harness::poll::within(TRACE_SETTLE, async || {
        let text = read();
        trace::check_log(&text)
            .violations
            .is_empty()
            .then_some(text)
    })
    .await
    .unwrap_or_else(read);
    let report = trace::check_log(&settled);
    json!({ "spans": report.spans, "calls": report.calls, "violations": report.violations })
}

/// `verdict`, unless it passes (survived or surfaced) while a trace checked after tool calls
/// went through its daemon held no span: the trace check then proved nothing, and the row is
/// inconclusive. A red verdict stands.
pub(crate) fn unless_the_trace_was_empty(ops: &[Op], verdict: Judgement) -> Judgement {
    if !matches!(verdict.outcome, RowOutcome::Survived | RowOutcome::Surfaced) {
        return verdict;
    }
    let empty = ops.iter().find(|o| {
        o.actor == Actor::Harness
            && o.f == TRACE_UNDER_FAULTS
            && o.value["toolCalls"].as_u64().unwrap_or(0) > 0
            && o.value["spans"].as_u64().unwrap_or(0) == 0
    });
    match empty {
        None => verdict,
        Some(found) => Judgement::new(
            RowOutcome::Inconclusive,
            format!(
                "the daemon's trace held no span after {} tool call(s) went through it, so T1 to T4 were not checked under the fault ({} {})",
                found.value["toolCalls"],
                verdict.outcome.word(),
                verdict.evidence
            ),
        ),
    }
}

/// Silent when the trace of a daemon a fault scenario ran, checked as it ended
/// ([`TRACE_UNDER_FAULTS`]), broke T1 to T4: a call the fault left without its
/// root, an orphan span, a missing settle or a failure without an error is hidden from the agent.
pub fn judge_trace_under_faults(ops: &[Op]) -> Option<Judgement> {
    let (found, violations) = ops
        .iter()
        .filter(|o| o.actor == Actor::Harness && o.f == TRACE_UNDER_FAULTS)
        .find_map(|o| {
            let violations = o.value["violations"].as_array()?;
            (!violations.is_empty()).then_some((o, violations))
        })?;
    let first = &violations[0];
    Some(Judgement::new(
        RowOutcome::Silent,
        format!(
            "the daemon's trace broke {} under the row's fault ({} violation(s) over {} spans); first: call {}: {}",
            first["invariant"].as_str().unwrap_or("?"),
            violations.len(),
            found.value["spans"],
            first["call_id"].as_str().unwrap_or("?"),
            first["detail"].as_str().unwrap_or("?")
        ),
    ))
}

/// Records what the trace checker found as the harness observation [`TRACE_UNDER_FAULTS`].
fn record(history: &History, found: Value) {
    history.record(Actor::Harness, OpType::Info, TRACE_UNDER_FAULTS, found);
}
