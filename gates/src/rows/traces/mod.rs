//! The trace rows (T1 to T4), one file each, and what they share: one traced run of real tool
//! calls (made once per process, [`run_invariant`]) and its judge for each invariant; the
//! negative control's run against a daemon whose trace is broken on purpose, once, on demand.
//! It judges nothing but traces: the tools' own answers are judged by the tool gates.

pub mod t1_one_root_per_call;
pub mod t2_no_orphan_span;
pub mod t3_settle_on_every_call;
pub mod t4_no_failure_without_error;

use std::time::Duration;

use harness::{Browser, FixtureApp, McpClient, OwnedDaemon, ProxyOptions, poll};
use serde_json::{Value, json};
use tokio::sync::OnceCell;

use crate::history::{Actor, History, Op, OpType};
use crate::judge::{self, Judgement, RowOutcome};
use crate::scenarios::kit::{BOUND, control, controls_held, observe, settle};
use crate::scenarios::page::PageStack;
use crate::scenarios::{GateEnv, Ran};
use crate::trace::{self, Invariant};

/// The session the traced page connects as.
const SESSION: &str = "traced";

/// How many calls run at once in the concurrent burst.
const CONCURRENT: usize = 8;

/// How long the page-closed call waits for a signal that never comes (the tab closes first).
const ORPHANED_WAIT_MS: u64 = 15_000;

/// The history of the traced run: the agent's calls, the checker's calibration
/// ([`CALIBRATION`]) and the daemon's trace lines ([`TRACE_LOG`]), all a judge reads.
static RUN: OnceCell<History> = OnceCell::const_new();

/// The traced run against the stand-in daemon whose trace is broken.
static STAND_IN_RUN: OnceCell<History> = OnceCell::const_new();

/// The observation of the trace checker's self-check: `{"failures": [...]}` (none: calibrated).
const CALIBRATION: &str = "trace_calibration";

/// The observation of the daemon's log once the run ended: `{"calls", "roots", "spans",
/// "lines"}`, `lines` every trace line it held (parsed or not), as written.
const TRACE_LOG: &str = "trace_log";

/// The daemon environment that breaks its trace on purpose (the test-only switch the negative
/// control of T1 to T4 turns on).
pub const BROKEN_TRACE: &[(&str, &str)] =
    &[(reticle::config::env::TEST_STAND_IN_BROKEN_TRACE, "1")];

/// The traced run (made once per process) judged for `invariant`.
pub(super) async fn run_invariant(_env: &GateEnv, invariant: Invariant) -> Ran {
    judged_run(RUN.get_or_init(|| traced_run(&[])).await, invariant)
}

/// The negative control of the trace rows: the same workload against a daemon whose trace
/// misses a root, holds an orphan span, misses a settle and fails a span without an error,
/// judged for `row` (T1 to T4; any other id is inconclusive).
pub async fn stand_in_broken_trace(row: &str) -> Ran {
    let Some(invariant) = Invariant::of_row(row) else {
        return Ran {
            history: History::new(),
            judgement: Judgement::new(
                RowOutcome::Inconclusive,
                format!("{row} is not a trace row"),
            ),
        };
    };
    judged_run(
        STAND_IN_RUN.get_or_init(|| traced_run(BROKEN_TRACE)).await,
        invariant,
    )
}

/// A traced run judged for `invariant`.
fn judged_run(history: &History, invariant: Invariant) -> Ran {
    Ran {
        history: history.clone(),
        judgement: judge(&history.ops(), invariant),
    }
}

/// The judge of the trace row for `invariant`, over the traced run's history alone.
pub(super) fn judge(ops: &[Op], invariant: Invariant) -> Judgement {
    settle(|| judge_invariant(ops, invariant))
}

/// The row's outcome: inconclusive unless the checker is calibrated, the controls held and
/// every call was answered; silent when the invariant is broken (a hidden failure); survived
/// otherwise. Everything it reads is in the history: the calibration, the agent's calls and the
/// daemon's trace lines, which it checks again here.
fn judge_invariant(ops: &[Op], invariant: Invariant) -> Result<Judgement, Judgement> {
    let observed = |f: &str| {
        ops.iter()
            .rfind(|o| o.actor == Actor::Harness && o.f == f)
            .map(|o| &o.value)
    };
    let strings = |value: Option<&Value>, key: &str| -> Vec<String> {
        value
            .and_then(|v| v[key].as_array())
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    let calibration = strings(observed(CALIBRATION), "failures");
    if !calibration.is_empty() {
        return Err(Judgement::new(
            RowOutcome::Inconclusive,
            format!(
                "the trace checker failed its self-check, so it proves nothing: {}",
                calibration.join("; ")
            ),
        ));
    }
    controls_held(ops)?;
    let log = strings(observed(TRACE_LOG), "lines").join("\n");
    let spans = trace::parse(&log);
    let report = trace::check_log(&log);
    let roots = trace::roots_by_rpc_id(&spans);
    let calls = tool_calls(ops);
    if let Some(lost) = calls.iter().find(|o| o.op_type == OpType::Info) {
        return Err(Judgement::new(
            RowOutcome::Inconclusive,
            format!(
                "a call's transport died, so the run proves nothing: {}",
                crate::judge::one_line(&lost.value.to_string())
            ),
        ));
    }
    if spans.is_empty() {
        return Err(Judgement::new(
            RowOutcome::Inconclusive,
            format!(
                "the daemon traced no span for the agent's {} calls: the run proves nothing",
                calls.len()
            ),
        ));
    }
    let broken = report.of(invariant);
    if let Some(first) = broken.first() {
        return Ok(Judgement::new(
            RowOutcome::Silent,
            format!(
                "{} violation(s) of {invariant:?} over {} calls; first: call {}: {}",
                broken.len(),
                report.calls,
                first.call_id,
                first.detail
            ),
        ));
    }
    if invariant == Invariant::T1
        && let Some((id, found)) = calls
            .iter()
            .map(|c| judge::call_id(c).map(Value::to_string).unwrap_or_default())
            .map(|id| {
                let found = roots.get(&id).copied().unwrap_or(0);
                (id, found)
            })
            .find(|(_, found)| *found != 1)
    {
        return Ok(Judgement::new(
            RowOutcome::Silent,
            format!(
                "the agent's call {id} is carried by {found} roots (expected exactly one) over {} calls and {} traced roots",
                calls.len(),
                report.calls
            ),
        ));
    }
    let rooted = if invariant == Invariant::T1 {
        format!(
            ", every one of the agent's {} calls matched by its id to exactly one root",
            calls.len()
        )
    } else {
        String::new()
    };
    Ok(Judgement::new(
        RowOutcome::Survived,
        format!(
            "0 violations of {invariant:?} over {} traced calls ({} spans){rooted}",
            report.calls,
            spans.len()
        ),
    ))
}

/// The agent's completed tool calls.
fn tool_calls(ops: &[Op]) -> Vec<&Op> {
    ops.iter()
        .filter(|o| o.actor == Actor::Client && o.f == "tools/call" && o.op_type != OpType::Invoke)
        .collect()
}

/// The workload against a traced daemon started with `daemon_env` added: a daemon with
/// `RETICLE_TRACE=1`, the fixture app in Chromium and one held-open agent on `reticle mcp` make
/// calls that succeed, are refused (bad arguments, a stale ref, an unknown tool, a page that is
/// gone), fail (a red verdict, a page closed mid-wait), go through `reticle_run`, and run eight
/// at a time. The calibrated checker ([`crate::trace`]) reads the daemon's log; T1 also matches
/// every call the agent made, by its JSON-RPC id, to exactly one root carrying that id, which
/// only the history and the trace together can tell.
async fn traced_run(daemon_env: &[(&str, &str)]) -> History {
    let history = History::new();
    observe(
        &history,
        CALIBRATION,
        json!({ "failures": trace::self_check() }),
    );
    let project = tempfile::tempdir();
    let started = match &project {
        Ok(project) => start(&history, project.path(), daemon_env).await,
        Err(e) => Err(format!("no private project dir: {e}")),
    };
    match started {
        Ok(stack) => {
            workload(&history, &stack).await;
            let daemon = stack.daemon;
            stack.client.close().await;
            collected(&history, &daemon).await;
            daemon.shutdown().await;
        }
        Err(why) => control(&history, "the traced stack starts", false, json!(why)),
    }
    history
}

/// The whole stack an agent uses, traced.
struct Stack {
    daemon: OwnedDaemon,
    app: FixtureApp,
    browser: Browser,
    client: McpClient,
}

async fn start(
    history: &History,
    project: &std::path::Path,
    daemon_env: &[(&str, &str)],
) -> Result<Stack, String> {
    let builder = OwnedDaemon::builder()
        .env(reticle::config::env::TRACE, "1")
        .env(
            reticle::config::env::PROJECT_DIR,
            project.to_string_lossy().to_string(),
        );
    let PageStack {
        daemon,
        app,
        browser,
    } = PageStack::start(builder, daemon_env).await?;
    let client = McpClient::start_recording(
        ProxyOptions::new(daemon.port(), daemon.state_dir()),
        history.clone(),
    )
    .await
    .map_err(|e| format!("reticle mcp did not start: {}", e.message()))?;
    Ok(Stack {
        daemon,
        app,
        browser,
        client,
    })
}

/// A call's structured content (`Null` when the call itself failed: the history has why).
async fn call(stack: &Stack, tool: &str, mut args: Value) -> Value {
    if let Some(map) = args.as_object_mut()
        && !matches!(
            tool,
            "reticle_sessions" | "reticle_tools" | "reticle_feedback"
        )
        && !map.contains_key("sessionId")
    {
        map.insert("sessionId".into(), json!(SESSION));
    }
    match stack.client.call_tool(tool, args).await {
        Ok(result) => result["structuredContent"].clone(),
        Err(_) => Value::Null,
    }
}

async fn listed(stack: &Stack) -> bool {
    call(stack, "reticle_sessions", json!({})).await["sessions"]
        .as_array()
        .is_some_and(|s| s.iter().any(|s| s["sessionId"] == SESSION))
}

async fn workload(history: &History, stack: &Stack) {
    let url = stack.app.url(&format!(
        "/?reticlePort={}&reticleToken={}&session={SESSION}",
        stack.daemon.port(),
        stack.daemon.token()
    ));
    let tab = match stack.browser.open(&url).await {
        Ok(tab) => tab,
        Err(e) => {
            return control(
                history,
                "the fixture page opens",
                false,
                json!(e.to_string()),
            );
        }
    };
    let connected = poll::within(BOUND, async || listed(stack).await.then_some(())).await;
    control(
        history,
        "the page connects as a session",
        connected.is_some(),
        json!({ "session": SESSION }),
    );
    if connected.is_none() {
        return;
    }

    // Calls that succeed, directly and through reticle_run.
    call(stack, "reticle_query", json!({"testid": "login-user"})).await;
    call(
        stack,
        "reticle_run",
        json!({"tool": "reticle_query", "args": {"testid": "login-submit"}}),
    )
    .await;
    call(
        stack,
        "reticle_act",
        json!({"target": {"testid": "counter-increment"}, "action": "click"}),
    )
    .await;
    let proved = call(
        stack,
        "reticle_assert",
        json!({"predicate": {"kind": "signal", "name": "counter.changed"}, "timeout_ms": 5000}),
    )
    .await;
    control(
        history,
        "a true assertion is proved",
        proved["verified"] == "yes",
        proved.clone(),
    );

    // Refusals: bad arguments, an unknown tool (directly and through run), a member called as
    // itself, a stale ref (its element re-rendered away).
    call(stack, "reticle_query", json!({"testid": 7})).await;
    call(stack, "reticle_nope", json!({})).await;
    call(stack, "reticle_run", json!({"tool": "reticle_nope"})).await;
    call(stack, "reticle_yield", json!({})).await;
    let held = call(stack, "reticle_query", json!({"testid": "rerender-target"})).await;
    call(
        stack,
        "reticle_act",
        json!({"target": {"testid": "rerender"}, "action": "click"}),
    )
    .await;
    let stale = call(
        stack,
        "reticle_act",
        json!({"ref": held["elements"][0]["ref"], "action": "click"}),
    )
    .await;
    control(
        history,
        "a stale ref is refused",
        stale["ok"] == false,
        stale.clone(),
    );

    // A red verdict.
    let red = call(
        stack,
        "reticle_act_and_wait",
        json!({"target": {"testid": "counter-increment"}, "action": "click",
               "until": {"kind": "signal", "name": "never"}, "timeout_ms": 300}),
    )
    .await;
    control(
        history,
        "a false expectation is a red verdict",
        red["verified"] == "no",
        red.clone(),
    );

    // Eight at once.
    let burst = (0..CONCURRENT).map(|_| call(stack, "reticle_query", json!({"role": "button"})));
    futures_util::future::join_all(burst).await;

    // A page closed while a call waits on it: the call must end, traced, with its settle.
    let counter = async || {
        call(
            stack,
            "reticle_state",
            json!({"store": "app", "path": "counter"}),
        )
        .await["value"]
            .as_u64()
    };
    let before = counter().await;
    let waiting = call(
        stack,
        "reticle_act_and_wait",
        json!({"target": {"testid": "counter-increment"}, "action": "click",
               "until": {"kind": "signal", "name": "never"}, "timeout_ms": ORPHANED_WAIT_MS}),
    );
    let close = async {
        // Close once the click has reached the page, so the call is mid-wait.
        let clicked = poll::within(BOUND, async || (counter().await > before).then_some(())).await;
        let closed = tab.close().await;
        observe(
            history,
            "close_tab",
            json!({ "afterClick": clicked.is_some(), "closed": closed.is_ok() }),
        );
    };
    let (lost, ()) = tokio::join!(waiting, close);
    control(
        history,
        "a page closed mid-wait ends the call as unknown",
        lost["verified"] == "unknown",
        lost.clone(),
    );
    // With no page left: a refusal.
    poll::within(BOUND, async || (!listed(stack).await).then_some(())).await;
    call(stack, "reticle_snapshot", json!({})).await;
}

/// Waits until the daemon has logged a root for every call the agent made (spans are logged as
/// they close), then checks the spans.
async fn collected(history: &History, daemon: &OwnedDaemon) {
    let made = tool_calls(&history.ops()).len();
    let read = || std::fs::read_to_string(daemon.log_path()).unwrap_or_default();
    let roots = |log: &str| trace::parse(log).iter().filter(|s| s.depth == 0).count();
    let log = poll::within(Duration::from_secs(10), async || {
        let log = read();
        (roots(&log) >= made).then_some(log)
    })
    .await
    .unwrap_or_else(read);
    observe(
        history,
        TRACE_LOG,
        json!({ "calls": made, "roots": roots(&log), "spans": trace::parse(&log).len(),
                "lines": trace::trace_lines(&log) }),
    );
}

#[cfg(test)]
pub(super) mod test_history {
    //! The histories the judges' unit tests build: the agent's calls and the daemon's spans.
    use super::*;
    pub(in crate::rows::traces) use crate::trace::Span;
    pub(in crate::rows::traces) use reticle::wire::trace::span::{
        BROWSER_COMMAND, SETTLE, TOOL_HANDLER,
    };

    pub(in crate::rows::traces) fn span(
        name: &str,
        id: &str,
        parent: Option<&str>,
        depth: u64,
        call: &str,
    ) -> Span {
        Span {
            span: name.into(),
            id: id.into(),
            parent: parent.map(str::to_string),
            depth,
            call_id: call.into(),
            ok: true,
            error: None,
            rpc_id: None,
        }
    }

    /// A run in which the agent made `answered` calls and the daemon traced `spans` (and wrote
    /// the lines `torn` that do not parse).
    pub(in crate::rows::traces) fn run_with(
        answered: &[OpType],
        spans: &[Span],
        torn: &[&str],
    ) -> Vec<Op> {
        let history = History::new();
        for (id, op) in answered.iter().enumerate() {
            history.invoke("tools/call", json!({ "id": id }));
            history.complete(*op, "tools/call", json!({ "id": id }));
        }
        let mut lines: Vec<String> = spans.iter().map(line).collect();
        lines.extend(torn.iter().map(|l| l.to_string()));
        observe(&history, TRACE_LOG, json!({ "lines": lines }));
        history.ops()
    }

    pub(in crate::rows::traces) fn run(answered: &[OpType], spans: &[Span]) -> Vec<Op> {
        run_with(answered, spans, &[])
    }

    /// The trace line the daemon writes for `span`.
    pub(in crate::rows::traces) fn line(span: &Span) -> String {
        use reticle::wire::trace::{TRACE_EVENT, key};
        let mut line = json!({ "event": TRACE_EVENT, key::SPAN: span.span, key::ID: span.id,
            key::DEPTH: span.depth, key::CALL_ID: span.call_id, key::OK: span.ok });
        for (name, value) in [
            (key::PARENT, &span.parent),
            (key::ERROR, &span.error),
            (key::RPC_ID, &span.rpc_id),
        ] {
            if let Some(value) = value {
                line[name] = json!(value);
            }
        }
        line.to_string()
    }

    /// A call's root and settle, the root carrying the JSON-RPC id `rpc_id`.
    pub(in crate::rows::traces) fn traced_call(call: &str, rpc_id: usize) -> Vec<Span> {
        let root = Span {
            rpc_id: Some(rpc_id.to_string()),
            ..span(TOOL_HANDLER, &format!("{call}r"), None, 0, call)
        };
        vec![
            root,
            span(
                SETTLE,
                &format!("{call}s"),
                Some(&format!("{call}r")),
                1,
                call,
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    //! The shared judge: no span proves nothing, a torn line is a violation, a dead transport or
    //! an uncalibrated checker proves nothing.
    use super::test_history::*;
    use super::*;

    #[test]
    fn no_span_at_all_proves_nothing_and_a_torn_trace_line_is_a_violation() {
        let untraced = run(&[OpType::Ok], &[]);
        for invariant in [Invariant::T2, Invariant::T3, Invariant::T4] {
            let judged = settle(|| judge_invariant(&untraced, invariant));
            assert_eq!(
                judged.outcome,
                RowOutcome::Inconclusive,
                "{}",
                judged.evidence
            );
        }
        let torn = r#"{"event":"trace","span":"tool.handler","id":"s1""#;
        let spans = run_with(&[], &traced_call("c1", 0), &[torn]);
        for invariant in [Invariant::T2, Invariant::T3, Invariant::T4] {
            let judged = settle(|| judge_invariant(&spans, invariant));
            assert_eq!(judged.outcome, RowOutcome::Silent, "{}", judged.evidence);
        }
    }

    #[test]
    fn a_broken_invariant_is_silent_and_a_dead_transport_or_uncalibrated_checker_proves_nothing() {
        let mut orphaned = traced_call("c1", 0);
        orphaned.push(span(BROWSER_COMMAND, "b", Some("never-closed"), 1, "c1"));
        let judged = settle(|| judge_invariant(&run(&[OpType::Ok], &orphaned), Invariant::T2));
        assert_eq!(judged.outcome, RowOutcome::Silent, "{}", judged.evidence);

        let lost = run(&[OpType::Info], &traced_call("c1", 0));
        assert_eq!(
            settle(|| judge_invariant(&lost, Invariant::T1)).outcome,
            RowOutcome::Inconclusive
        );
        let uncalibrated = run(&[OpType::Ok], &traced_call("c1", 0));
        let calibration = History::new();
        observe(
            &calibration,
            CALIBRATION,
            json!({ "failures": ["a hung call passed"] }),
        );
        let uncalibrated = [calibration.ops(), uncalibrated].concat();
        assert_eq!(
            settle(|| judge_invariant(&uncalibrated, Invariant::T3)).outcome,
            RowOutcome::Inconclusive
        );
    }
}
