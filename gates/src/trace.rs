//! The trace checker: reads `RETICLE_TRACE` lines from a daemon log and checks the invariants on
//! every call. T1: exactly one root span (`tool.handler`, depth 0) per call, and one root per
//! JSON-RPC id of the agent's calls ([`roots_by_rpc_id`]). T2: no orphan span (its parent never
//! closed: the hung-call signature). T3: the `settle` span closed on every call. T4: no span with
//! `ok:false` and no error. Pure over text; a trace line that does not parse is a violation
//! ([`check_log`]), never dropped.

use std::collections::{BTreeMap, HashSet};

use reticle::wire::trace::{TRACE_EVENT, key, span};
use serde::Serialize;
use serde_json::Value;

/// One closed span.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub span: String,
    pub id: String,
    pub parent: Option<String>,
    pub depth: u64,
    pub call_id: String,
    pub ok: bool,
    pub error: Option<String>,
    /// On a root: the JSON-RPC id its call arrived with, as JSON text (the agent's own id when
    /// `reticle mcp` forwarded the call).
    pub rpc_id: Option<String>,
}

/// Which invariant a violation breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Invariant {
    T1,
    T2,
    T3,
    T4,
}

impl Invariant {
    /// The invariant an inventory row id (`T1` to `T4`) names.
    pub fn of_row(row: &str) -> Option<Self> {
        [Self::T1, Self::T2, Self::T3, Self::T4]
            .into_iter()
            .find(|i| format!("{i:?}") == row)
    }
}

/// One broken invariant, with the call it concerns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub invariant: Invariant,
    pub call_id: String,
    pub detail: String,
}

/// What the checker found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TraceReport {
    pub calls: usize,
    pub spans: usize,
    pub violations: Vec<Violation>,
}

impl TraceReport {
    /// Violations of one invariant.
    pub fn of(&self, invariant: Invariant) -> Vec<&Violation> {
        self.violations
            .iter()
            .filter(|v| v.invariant == invariant)
            .collect()
    }
}

/// Parses every trace line in `text`; anything else is skipped. A trace line is `{"t", "event":
/// "trace", "span", "id", "parent", "depth", "callId", "ok", "ms", "error"?, "rpcId"?}`, every
/// name from [`reticle::wire::trace`].
pub fn parse(text: &str) -> Vec<Span> {
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line.trim()).ok())
        .filter(|v| v["event"] == TRACE_EVENT)
        .filter_map(|v| {
            let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
            Some(Span {
                span: s(key::SPAN)?,
                id: s(key::ID)?,
                parent: s(key::PARENT),
                depth: v.get(key::DEPTH).and_then(Value::as_u64)?,
                call_id: s(key::CALL_ID)?,
                ok: v.get(key::OK).and_then(Value::as_bool)?,
                error: s(key::ERROR),
                rpc_id: s(key::RPC_ID),
            })
        })
        .collect()
}

/// The lines of `text` that are trace lines (a JSON object whose `event` is the trace event, or
/// a line that names it and is not JSON) but do not parse into a [`Span`]: a torn or malformed
/// trace line hides a span, so it is never dropped.
pub fn unparsable(text: &str) -> Vec<String> {
    let named = format!("\"event\":\"{TRACE_EVENT}\"");
    text.lines()
        .map(str::trim)
        .filter(|line| match serde_json::from_str::<Value>(line) {
            Ok(v) => v["event"] == TRACE_EVENT && parse(line).is_empty(),
            Err(_) => line.contains(&named),
        })
        .map(str::to_string)
        .collect()
}

/// The lines of `text` that are trace lines, parsed or not ([`parse`] and [`unparsable`] read
/// them alone as they read the whole log): what a history keeps of a daemon's trace.
pub fn trace_lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|line| !parse(line).is_empty() || !unparsable(line).is_empty())
        .collect()
}

/// Checks T1 to T4 over a whole daemon log: [`check`] over its spans, and every
/// [`unparsable`] trace line a violation of each invariant (it could have broken any).
pub fn check_log(text: &str) -> TraceReport {
    let mut report = check(&parse(text));
    for line in unparsable(text) {
        for invariant in [Invariant::T1, Invariant::T2, Invariant::T3, Invariant::T4] {
            report.violations.push(Violation {
                invariant,
                call_id: "?".into(),
                detail: format!(
                    "an unparsable trace line: {}",
                    line.chars().take(200).collect::<String>()
                ),
            });
        }
    }
    report
}

/// Checks T1 to T4 over `spans`.
pub fn check(spans: &[Span]) -> TraceReport {
    let closed: HashSet<&str> = spans.iter().map(|s| s.id.as_str()).collect();
    let mut calls: BTreeMap<&str, Vec<&Span>> = BTreeMap::new();
    for span in spans {
        calls.entry(span.call_id.as_str()).or_default().push(span);
    }
    let mut violations = Vec::new();
    for (call_id, group) in &calls {
        let roots = group
            .iter()
            .filter(|s| s.span == span::TOOL_HANDLER && s.depth == 0)
            .count();
        if roots != 1 {
            violations.push(Violation {
                invariant: Invariant::T1,
                call_id: call_id.to_string(),
                detail: format!(
                    "{roots} `{}` roots at depth 0 (expected exactly one)",
                    span::TOOL_HANDLER
                ),
            });
        }
        if roots > 0 && !group.iter().any(|s| s.span == span::SETTLE) {
            violations.push(Violation {
                invariant: Invariant::T3,
                call_id: call_id.to_string(),
                detail: "the settle hook never closed for this call".into(),
            });
        }
    }
    for span in spans {
        if let Some(parent) = &span.parent
            && !closed.contains(parent.as_str())
        {
            violations.push(Violation {
                invariant: Invariant::T2,
                call_id: span.call_id.clone(),
                detail: format!(
                    "`{}` ({}) closed under parent {parent}, which never closed",
                    span.span, span.id
                ),
            });
        }
        if !span.ok && span.error.as_deref().is_none_or(str::is_empty) {
            violations.push(Violation {
                invariant: Invariant::T4,
                call_id: span.call_id.clone(),
                detail: format!("`{}` ({}) failed with no error", span.span, span.id),
            });
        }
    }
    violations.sort_by(|a, b| (a.invariant, &a.call_id).cmp(&(b.invariant, &b.call_id)));
    TraceReport {
        calls: calls.len(),
        spans: spans.len(),
        violations,
    }
}

/// How many roots carry each JSON-RPC id: what matches an agent's call to its root (T1 by call
/// id: each call the agent made must find exactly one).
pub fn roots_by_rpc_id(spans: &[Span]) -> BTreeMap<String, usize> {
    let mut roots = BTreeMap::new();
    for span in spans
        .iter()
        .filter(|s| s.span == span::TOOL_HANDLER && s.depth == 0)
    {
        if let Some(rpc_id) = &span.rpc_id {
            *roots.entry(rpc_id.clone()).or_default() += 1;
        }
    }
    roots
}

/// Calibration: a healthy trace must pass and each fault shape must fire its invariant.
/// Returns the failures of the calibration (empty when the checker is sound).
pub fn self_check() -> Vec<String> {
    let line = |span: &str,
                id: &str,
                parent: Option<&str>,
                depth: u64,
                call: &str,
                ok: bool,
                error: Option<&str>| {
        let mut v = serde_json::json!({
            "t": "2026-01-01T00:00:00Z", "event": TRACE_EVENT, key::SPAN: span, key::ID: id,
            key::PARENT: parent, key::DEPTH: depth, key::CALL_ID: call, key::OK: ok, key::MS: 1,
        });
        if let Some(e) = error {
            v[key::ERROR] = e.into();
        }
        v.to_string()
    };
    let healthy = [
        line(span::BROWSER_COMMAND, "s2", Some("s1"), 1, "c1", true, None),
        line(span::SETTLE, "s3", Some("s1"), 1, "c1", true, None),
        line(span::TOOL_HANDLER, "s1", None, 0, "c1", true, None),
        line(span::SETTLE, "s5", Some("s4"), 1, "c2", true, None),
        line(
            span::TOOL_HANDLER,
            "s4",
            None,
            0,
            "c2",
            false,
            Some("no session"),
        ),
        "not json".to_string(),
        r#"{"event":"daemon_alive"}"#.to_string(),
    ]
    .join("\n");
    let shapes: [(&str, Vec<String>, Invariant); 4] = [
        (
            "hung call",
            vec![line(
                span::BROWSER_COMMAND,
                "s9",
                Some("s8"),
                1,
                "c9",
                true,
                None,
            )],
            Invariant::T2,
        ),
        (
            "double root",
            vec![
                line(span::SETTLE, "s7", Some("s6"), 1, "c7", true, None),
                line(span::TOOL_HANDLER, "s6", None, 0, "c7", true, None),
                line(span::TOOL_HANDLER, "s6b", None, 0, "c7", true, None),
            ],
            Invariant::T1,
        ),
        (
            "missing settle",
            vec![line(span::TOOL_HANDLER, "s5", None, 0, "c5", true, None)],
            Invariant::T3,
        ),
        (
            "failure without error",
            vec![
                line(span::SETTLE, "s4b", Some("s4"), 1, "c4", true, None),
                line(span::TOOL_HANDLER, "s4", None, 0, "c4", false, None),
            ],
            Invariant::T4,
        ),
    ];
    let mut failures = Vec::new();
    let report = check(&parse(&healthy));
    if !report.violations.is_empty() || report.calls != 2 || report.spans != 5 {
        failures.push(format!("the healthy trace was not clean: {report:?}"));
    }
    let torn = format!("{}\n{{\"event\":\"{TRACE_EVENT}\",\"span\":", healthy);
    if check_log(&torn).of(Invariant::T2).is_empty() {
        failures.push("a torn trace line was not counted as a violation".into());
    }
    for (name, lines, expected) in shapes {
        let report = check(&parse(&lines.join("\n")));
        if report.of(expected).is_empty() {
            failures.push(format!(
                "the {name} shape did not fire {expected:?}: {report:?}"
            ));
        }
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_healthy_passes_and_every_fault_shape_fires() {
        assert_eq!(self_check(), Vec::<String>::new());
    }
}
