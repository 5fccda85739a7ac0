//! Traces from real tool calls: a daemon with `RETICLE_TRACE=1`, driven through the whole stack
//! with calls that succeed, are refused and fail (a red verdict, a page that is gone), has
//! exactly one root per call, no orphan, the settle hook on every call and no failure without an
//! error (the gate's trace checker, T1 to T4, finds nothing). And `reticle_run` is the same
//! path: its result carries the same decorations as a direct call, and its target's spans are
//! the direct call's spans, one level down. The negative control: a daemon whose trace is broken
//! on purpose (the test-only stand-in switch) is scored silent on every trace row.

mod common;
mod support;

use std::collections::BTreeSet;

use gates::trace::{Span, check, parse};
use harness::poll;
use serde_json::{Value, json};
use support::tools::{BOUND, ToolRig};

/// The spans of each call, by call id, in the order their roots closed.
fn calls(spans: &[Span]) -> Vec<Vec<Span>> {
    let mut order: Vec<String> = Vec::new();
    for s in spans.iter().filter(|s| s.depth == 0) {
        order.push(s.call_id.clone());
    }
    order
        .iter()
        .map(|id| spans.iter().filter(|s| &s.call_id == id).cloned().collect())
        .collect()
}

/// The spans under (and including) `root`, as (name, depth below root).
fn subtree(spans: &[Span], root: &Span) -> BTreeSet<(String, u64)> {
    let mut ids = vec![root.id.clone()];
    let mut out = BTreeSet::new();
    out.insert((root.span.clone(), 0));
    let mut grew = true;
    while grew {
        grew = false;
        for s in spans {
            if let Some(parent) = &s.parent
                && ids.contains(parent)
                && !ids.contains(&s.id)
            {
                ids.push(s.id.clone());
                out.insert((s.span.clone(), s.depth - root.depth));
                grew = true;
            }
        }
    }
    out
}

#[tokio::test]
async fn real_tool_calls_leave_traces_with_no_violation_and_run_is_the_same_path() {
    let rig = ToolRig::start(&[("RETICLE_TRACE", "1")]).await;
    let tab = rig.open("traced").await;
    let log_spans = || parse(&rig.daemon_log());
    let before = log_spans().iter().filter(|s| s.depth == 0).count();

    // Succeed.
    let direct = rig
        .ok("reticle_query", json!({"testid": "login-submit"}))
        .await;
    let via_run = rig
        .ok(
            "reticle_run",
            json!({"tool": "reticle_query", "args": {"testid": "login-submit"}}),
        )
        .await;
    rig.ok(
        "reticle_act",
        json!({"target": {"testid": "counter-increment"}, "action": "click"}),
    )
    .await;
    rig.ok(
        "reticle_assert",
        json!({"predicate": {"kind": "signal", "name": "counter.changed"}, "timeout_ms": 5000}),
    )
    .await;
    // Refused: bad arguments, a stale ref, an unknown tool through run, a member called directly.
    rig.refused("reticle_query", json!({"testid": 7})).await;
    rig.refused("reticle_act", json!({"ref": "e999999", "action": "click"}))
        .await;
    rig.refused("reticle_run", json!({"tool": "reticle_nope"}))
        .await;
    rig.refused(
        "reticle_run",
        json!({"tool": "reticle_yield", "args": {"sessionId": "nobody"}}),
    )
    .await;
    // Fail: a red verdict, and a page that went away.
    let red = rig
        .ok(
            "reticle_act_and_wait",
            json!({"target": {"testid": "counter-increment"}, "action": "click",
                   "until": {"kind": "signal", "name": "never"}, "timeout_ms": 300}),
        )
        .await;
    assert_eq!(red["verified"], "no");
    tab.close().await.unwrap();
    poll::until("the page gone", BOUND, async || {
        (rig.call("reticle_sessions", json!({})).await["count"] == 0).then_some(())
    })
    .await;
    rig.refused("reticle_snapshot", json!({})).await;

    // The same decorations on both paths (run adds only the name of its target).
    let keys = |v: &Value| -> BTreeSet<String> { v.as_object().unwrap().keys().cloned().collect() };
    let mut run_keys = keys(&via_run);
    assert!(run_keys.remove("tool"), "{via_run}");
    assert_eq!(keys(&direct), run_keys);
    assert_eq!(direct["session"]["id"], via_run["session"]["id"]);
    assert_eq!(direct["elements"][0]["ref"], via_run["elements"][0]["ref"]);

    // Every call closed its root (the log is written as spans close).
    // query, run, act, assert, four refusals, act_and_wait, at least one sessions poll, snapshot.
    let made = 11;
    let spans = poll::until("every call's root in the log", BOUND, async || {
        let spans = log_spans();
        let roots = spans.iter().filter(|s| s.depth == 0).count();
        (roots - before >= made).then_some(spans)
    })
    .await;
    let report = check(&spans);
    assert!(report.violations.is_empty(), "{:#?}", report.violations);
    assert!(report.calls >= made, "{report:?}");
    assert!(
        spans.iter().any(|s| !s.ok && s.error.is_some()),
        "refusals are traced as failures"
    );

    // reticle_run: its target's spans are the direct call's, one level down.
    let by_call = calls(&spans);
    let direct_spans = &by_call[before];
    let run_spans = &by_call[before + 1];
    let direct_root = direct_spans.iter().find(|s| s.depth == 0).unwrap();
    let inner_root = run_spans
        .iter()
        .find(|s| s.span == "tool.handler" && s.depth == 1)
        .unwrap_or_else(|| panic!("run's target has its own tool.handler: {run_spans:#?}"));
    let direct_tree = subtree(direct_spans, direct_root);
    assert!(
        direct_tree.contains(&("browser.command".to_string(), 1)),
        "{direct_tree:?}"
    );
    assert!(
        direct_tree.contains(&("session.resolve".to_string(), 1)),
        "{direct_tree:?}"
    );
    assert!(
        direct_tree.contains(&("settle".to_string(), 1)),
        "{direct_tree:?}"
    );
    assert_eq!(
        direct_tree,
        subtree(run_spans, inner_root),
        "{run_spans:#?}"
    );
}

/// The gate's rows T1 to T4: one traced run (shared within this process) judged four ways.
#[tokio::test]
async fn the_gate_scores_every_trace_invariant_at_its_target() {
    let runs = [
        ("T1", common::row_meets_target("T1").await),
        ("T2", common::row_meets_target("T2").await),
        ("T3", common::row_meets_target("T3").await),
        ("T4", common::row_meets_target("T4").await),
    ];
    for (row, ran) in &runs {
        rejudged_alike_and_an_edit_differs(row, ran);
    }
}

/// A trace row's judge reads the history alone (the calibration, the agent's calls and the
/// daemon's trace lines recorded in it): the live run's history judged again offline, as
/// `reticle gate analyze` does, gives the live judgement; with its first trace line torn in
/// the history (its closing brace cut), the row is silent.
fn rejudged_alike_and_an_edit_differs(row: &str, ran: &gates::scenarios::Ran) {
    let mut ops = common::rejudged_alike(row, ran);
    let log = ops
        .iter_mut()
        .rfind(|o| o.f == "trace_log")
        .expect("the run recorded the daemon's trace");
    let lines = log.value["lines"].as_array_mut().expect("its trace lines");
    let first = lines[0].as_str().unwrap_or_default().to_string();
    lines[0] = serde_json::json!(first[..first.len() - 1]);
    let edited = gates::analyze::judge_history(row, &ops).expect("every trace row is re-judged");
    assert_eq!(
        edited.outcome,
        gates::judge::RowOutcome::Silent,
        "{row}: a torn trace line in the history: {edited:?}"
    );
}

/// The trace rows' negative control: the same workload against a daemon whose trace misses a
/// root, holds an orphan, misses a settle and fails a span without an error.
#[tokio::test]
async fn the_broken_trace_stand_in_is_scored_silent_on_every_trace_row() {
    for row in gates::controls::TRACE_ROWS {
        let control = gates::controls::stand_in_broken_trace(row).await;
        assert_eq!(
            control.outcome,
            gates::judge::RowOutcome::Silent,
            "{control:?}"
        );
    }
}
