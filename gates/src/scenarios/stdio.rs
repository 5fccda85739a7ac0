//! Hop 1 scenarios (agent ↔ `reticle mcp` over stdio): each provokes one row against the real
//! proxy, records the fault and every call in a history, and judges it. Calls go through a real
//! MCP client ([`Agent`]) or, for what no client would send and for counting answers, line by
//! line ([`RawAgent`]). Every judge first checks that every call was answered exactly once: a
//! hang or a double answer is silent whatever else happened. Every judge reads its history
//! alone: what the proxy's log, its stdout or the harness's look at it said is recorded there
//! first.

use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

use harness::ports::{holders, listeners, pid_alive};
use harness::{OwnedDaemon, Stage, marker, poll};
use serde_json::{Value, json};
use toxics::ToxicSpec;
use toxics::toxic::ResetPeer;

use super::agent::{RawAgent, events};
use super::agent_kit::{
    answered_once_after_fault, call_under_fault, judge_surfacing, judge_survival,
    judge_survival_then, last_observed, mark_call_under_fault, record_served_again, served_again,
    serves, warm_agent,
};
use super::kit::{BOUND, judged, observe, unestablished};
use super::proxied::ProxiedDaemon;
use super::{GateEnv, Ran, proxy_options};
use crate::fault;
use crate::history::{Actor, History, Op, OpType};
use crate::judge::{self, Judgement, RowOutcome, one_line};
use reticle::proxy::events as proxy_events;

/// H1.1: the `lsof -ti tcp:PORT | xargs kill -9` recipe, run for real mid-session, kills every
/// process with a socket on the port (the daemon and the worker). The supervisor owns stdio and
/// holds no socket, so the very next calls must succeed through a new worker and daemon.
pub async fn lsof_recipe_mid_session(env: &GateEnv) -> Ran {
    let history = History::new();
    let Stage { state, port, _reap } = Stage::default();
    let options = proxy_options(env, port, state.path());
    let agent = match warm_agent(&history, options, fault::LSOF_KILL_RECIPE, judge_survival).await {
        Ok(agent) => agent,
        Err(ran) => return ran,
    };
    // The gate itself must hold no socket on the port, or the recipe would kill it too.
    let me = std::process::id();
    let Some(held) = poll::within(BOUND, async || {
        let held = holders(port);
        held.iter().all(|h| h.pid != me).then_some(held)
    })
    .await
    else {
        agent.close().await;
        return unestablished(
            history,
            fault::LSOF_KILL_RECIPE,
            "the gate still held a socket on the port, so running the recipe would kill it",
            judge_survival,
        );
    };
    let victims: BTreeSet<u32> = held.iter().map(|h| h.pid).collect();
    let daemon = listeners(port).first().map(|h| h.pid);
    let supervisor = agent.pid();
    observe(
        &history,
        "port_holders",
        json!({ "port": port, "pids": victims, "daemon": daemon, "supervisor": supervisor,
                "supervisorHoldsASocket": victims.contains(&supervisor) }),
    );
    let recipe = format!("lsof -ti tcp:{port} | xargs kill -9");
    let mut shell = Command::new("sh");
    shell.args(["-c", &recipe]);
    marker::mark(&mut shell);
    let ran = shell.status();
    let dead = poll::within(BOUND, async || {
        victims.iter().all(|pid| !pid_alive(*pid)).then_some(())
    })
    .await
    .is_some();
    history.fault(
        fault::LSOF_KILL_RECIPE,
        matches!(ran, Ok(s) if s.success()) && dead && daemon.is_some(),
        json!({ "recipe": recipe, "killed": victims, "daemon": daemon,
                "ran": ran.map(|s| s.code()).map_err(|e| e.to_string()) }),
    );
    for _ in 0..4 {
        let _ = agent.call("reticle_sessions", json!({})).await;
    }
    supervisor_alive(&history, supervisor);
    agent.close().await;
    judged(history, judge_lsof_recipe)
}

/// H1.1's judge: every call after the recipe survived, and the supervisor lived (both as the
/// history recorded them: the fault's killed pids, the harness's last look at the supervisor).
pub fn judge_lsof_recipe(ops: &[Op]) -> Judgement {
    judge_survival_then(ops, |survived| {
        let Some(seen) = observed_value(ops, SUPERVISOR) else {
            return Judgement::new(
                RowOutcome::Inconclusive,
                "the supervisor was never looked at after the recipe",
            );
        };
        if seen["alive"] != true {
            return Judgement::new(RowOutcome::Silent, "the supervisor died with the recipe");
        }
        let killed: Vec<u64> = judge::established_fault(ops)
            .ok()
            .and_then(|f| f.value["killed"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_u64)
            .collect();
        Judgement::new(
            RowOutcome::Survived,
            format!(
                "{survived} (killed pids {killed:?}; the supervisor, pid {}, held no socket)",
                seen["pid"]
            ),
        )
    })
}

/// H1.2: a panic inside request handling (the test-only hook `RETICLE_TEST_PANIC_METHOD`, here
/// on `ping`) is caught: that request is answered -32603 and the next calls succeed.
pub async fn panic_in_request_handling(env: &GateEnv) -> Ran {
    let history = History::new();
    let Stage { state, port, _reap } = Stage::default();
    let options = proxy_options(env, port, state.path())
        .env(reticle::config::env::TEST_PANIC_METHOD, "ping")
        // The panic is the fault: its message is enough on the gate's stderr.
        .env("RUST_BACKTRACE", "0");
    let agent = match warm_agent(&history, options.clone(), fault::PANIC_HOOK, judge_survival).await
    {
        Ok(agent) => agent,
        Err(ran) => return ran,
    };
    let panicked = agent.ping().await;
    let logged = poll::within(Duration::from_secs(5), async || {
        let n = events(&options, proxy_events::PROXY_PANIC).len();
        (n >= 1).then_some(n)
    })
    .await
    .unwrap_or(0);
    history.fault(
        fault::PANIC_HOOK,
        logged >= 1,
        json!({ "method": "ping", "logged": logged, "answer": panicked.as_ref().err().map(|f| f.message()) }),
    );
    let _ = agent.call("reticle_sessions", json!({})).await;
    let _ = agent.ping().await;
    let _ = agent.call("reticle_sessions", json!({})).await;
    supervisor_alive(&history, agent.pid());
    agent.close().await;
    judged(history, judge_panic_in_request_handling)
}

/// H1.2's judge: every call after the panic survived, the panicking ping (the history's first)
/// was answered -32603, and the proxy lived (as the harness last saw it).
pub fn judge_panic_in_request_handling(ops: &[Op]) -> Judgement {
    judge_survival_then(ops, |survived| {
        let code = ops
            .iter()
            .find(|o| o.actor == Actor::Client && o.f == "ping" && o.op_type != OpType::Invoke)
            .and_then(|o| o.value["code"].as_i64());
        let alive = observed_value(ops, SUPERVISOR).is_some_and(|seen| seen["alive"] == true);
        if code != Some(reticle::mcp::jsonrpc::INTERNAL_ERROR.into()) || !alive {
            return Judgement::new(
                RowOutcome::Silent,
                format!("the panicking ping was answered {code:?}; the proxy alive: {alive}"),
            );
        }
        Judgement::new(
            RowOutcome::Survived,
            format!("the panicking ping was answered -32603 and logged; {survived}"),
        )
    })
}

/// H1.3: the port wedged (every connection accepted, then reset at its first byte: `reset_peer`
/// both ways on the fault proxy the proxy takes for the daemon) past a reconnect budget of 2.
/// The proxy goes dormant and never exits, answers `ping`, refuses a call naming the port, and
/// serves again once the wedge goes.
pub async fn wedge_past_the_budget(env: &GateEnv) -> Ran {
    let history = History::new();
    let (_state, link, options) = match ProxiedDaemon::start_for(
        env,
        &history,
        OwnedDaemon::builder(),
        fault::WEDGE_PORT,
        judge_survival,
    )
    .await
    {
        Ok(opened) => opened,
        Err(ran) => return ran,
    };
    let options = options.env(reticle::config::env::RECONNECT_ATTEMPTS, "2");
    let agent = match warm_agent(&history, options.clone(), fault::WEDGE_PORT, judge_survival).await
    {
        Ok(agent) => agent,
        Err(ran) => return ran,
    };
    let wedge = [
        ToxicSpec::new(ResetPeer { timeout: 0 }).upstream(),
        ToxicSpec::new(ResetPeer { timeout: 0 }),
    ];
    let (wedged, detail) = link.cut(&wedge).await;
    history.fault(fault::WEDGE_PORT, wedged, detail);
    // The dormant line is written just after the budget line: wait for both (a proxy that never
    // goes dormant costs the whole bound), then read what is there.
    let budget = || {
        let spent = events(&options, proxy_events::CONNECTION_LOST)
            .into_iter()
            .find(|e| e["stage"] == "budget_spent");
        let dormant = events(&options, proxy_events::STATE)
            .iter()
            .any(|e| e["to"] == "dormant");
        (spent, dormant)
    };
    poll::within(Duration::from_secs(60), async || {
        let (spent, dormant) = budget();
        (spent.is_some() && dormant).then_some(())
    })
    .await;
    let (spent, dormant) = budget();
    observe(
        &history,
        BUDGET,
        json!({ "spent": spent.is_some(), "dormant": dormant, "alive": pid_alive(agent.pid()), "event": spent }),
    );
    let _ = agent.ping().await;
    mark_call_under_fault(&history);
    let _ = agent.call("reticle_sessions", json!({})).await;
    link.heal(&history).await;
    record_served_again(&history, serves(&agent).await);
    supervisor_alive(&history, agent.pid());
    agent.close().await;
    link.close(&history).await;
    judged(history, judge_wedge)
}

/// The observation of the reconnect budget once the wedge went on, as the proxy's log said it:
/// `{"spent", "dormant", "alive", "event"}`.
const BUDGET: &str = "budget";

/// H1.3's judge, from the history alone: the budget as the proxy's log said it and the proxy's
/// liveness (observed), the marked call in the wedge refused naming the port the wedge was put
/// on, and the link served again once it went (observed). A scenario that stopped before the
/// wedge is judged by the survival judge.
pub fn judge_wedge(ops: &[Op]) -> Judgement {
    let Some(budget) = observed_value(ops, BUDGET) else {
        return judge_survival(ops);
    };
    let wedge = match answered_once_after_fault(ops).and_then(|()| judge::established_fault(ops)) {
        Ok(wedge) => wedge,
        Err(unproven) => return unproven,
    };
    if budget["spent"] != true {
        return Judgement::new(
            RowOutcome::Inconclusive,
            "the reconnect budget was never spent, so the row's condition was not reached",
        );
    }
    let alive = observed_value(ops, SUPERVISOR).is_some_and(|seen| seen["alive"] == true);
    if budget["alive"] != true || !alive {
        return Judgement::new(
            RowOutcome::Silent,
            "the proxy exited once its budget was spent",
        );
    }
    if budget["dormant"] != true {
        return Judgement::new(
            RowOutcome::Silent,
            "the budget was spent but the proxy never said it went dormant",
        );
    }
    let port = wedge.value["port"].to_string();
    let refused = match call_under_fault(ops, "tools/call").flatten() {
        Some(call) => judge::answer_names(ops, call, &[&port]),
        None => Judgement::new(RowOutcome::Inconclusive, "no call was made in the wedge"),
    };
    if refused.outcome != RowOutcome::Surfaced {
        return refused;
    }
    if !served_again(ops) {
        return Judgement::new(
            RowOutcome::Silent,
            "the proxy never served a call again after the wedge went",
        );
    }
    Judgement::new(
        RowOutcome::Survived,
        format!(
            "budget of 2 spent, dormant and alive; the call in the wedge was refused naming port {port}; served again once it went (nemesis: {})",
            wedge.value["nemesis"].as_str().unwrap_or("?")
        ),
    )
}

/// H1.4: stdin closed with six calls in flight at the daemon: three that end inside the 5 s
/// drain and three that cannot. Every id must be answered exactly once before exit (results for
/// the first three, -32001 `owed_at_exit` for the rest, which the log lists), and the exit code
/// must say calls were still owed. Control: an idle proxy whose stdin closes exits 0 at once.
pub async fn stdin_closed_with_calls_in_flight(env: &GateEnv) -> Ran {
    let history = History::new();
    let Stage { state, port, _reap } = Stage::default();
    let options = proxy_options(env, port, state.path())
        .env(reticle::config::env::TEST_CATALOGUE, "+reticle_test_sleep");
    let mut raw = RawAgent::start(&history, options.clone());
    if raw.initialize(BOUND).await.is_none() {
        return unestablished(
            history,
            fault::CLOSE_STDIN,
            "initialize was not answered",
            judge_surfacing,
        );
    }
    let warm = raw.call_until_served(BOUND).await;
    let mut short = Vec::new();
    let mut long = Vec::new();
    if warm {
        for _ in 0..3 {
            short.push(
                raw.send(
                    "tools/call",
                    json!({"name": "reticle_test_sleep", "arguments": {"ms": 2000}}),
                )
                .await,
            );
            long.push(
                raw.send(
                    "tools/call",
                    json!({"name": "reticle_test_sleep", "arguments": {"ms": 120_000}}),
                )
                .await,
            );
        }
    }
    let in_flight = if warm {
        poll::within(BOUND, async || {
            let status = reticle::probe::fetch_status(port, Duration::from_millis(500)).await?;
            (status.calls_in_flight >= 6).then_some(status.calls_in_flight)
        })
        .await
    } else {
        None
    };
    raw.close_stdin();
    history.fault(
        fault::CLOSE_STDIN,
        in_flight.is_some(),
        json!({ "callsInFlightAtTheDaemon": in_flight, "ending": short, "endless": long }),
    );
    let exit = raw.wait_exit(BOUND).await;
    raw.settle();
    let code = exit.and_then(|s| s.code());
    let logged: Vec<Value> = events(&options, proxy_events::UNANSWERED_AT_EXIT)
        .first()
        .and_then(|e| e["ids"].as_array().cloned())
        .unwrap_or_default();
    observe(
        &history,
        PROXY_EXIT,
        json!({ "exited": exit.is_some(), "code": code, "loggedUnanswered": logged }),
    );

    // Control: nothing in flight, and closing stdin ends the proxy at once with 0.
    let mut idle = RawAgent::start(&History::new(), options);
    idle.initialize(BOUND).await;
    idle.close_stdin();
    let idle_code = idle.wait_exit(BOUND).await.and_then(|s| s.code());
    observe(&history, IDLE_EXIT, json!({ "code": idle_code }));
    judged(history, judge_stdin_closed)
}

/// The observation of how the proxy exited: `{"exited", "code", "loggedUnanswered"}`.
const PROXY_EXIT: &str = "proxy_exit";

/// The observation of the idle control's exit: `{"code"}`.
const IDLE_EXIT: &str = "control_idle_exit";

/// H1.4's judge: read from the history alone (the fault's ending and endless call ids, the
/// proxy's exit and the ids its log listed, the idle control's exit code).
pub fn judge_stdin_closed(ops: &[Op]) -> Judgement {
    if let Err(unproven) = answered_once_after_fault(ops) {
        return unproven;
    }
    let proxy_exit = observed_value(ops, PROXY_EXIT)
        .cloned()
        .unwrap_or(Value::Null);
    let code = proxy_exit["code"].as_i64();
    let idle_code = observed_value(ops, IDLE_EXIT).and_then(|v| v["code"].as_i64());
    let logged: Vec<Value> = proxy_exit["loggedUnanswered"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let ids = |key: &str| -> Vec<Value> {
        judge::established_fault(ops)
            .ok()
            .and_then(|f| f.value[key].as_array().cloned())
            .unwrap_or_default()
    };
    let (short, long) = (ids("ending"), ids("endless"));
    if proxy_exit["exited"] != true {
        return Judgement::new(
            RowOutcome::Silent,
            "the proxy never exited after stdin closed",
        );
    }
    if idle_code != Some(0) {
        return Judgement::new(
            RowOutcome::Inconclusive,
            format!("the idle control exited {idle_code:?}, so the exit code proves nothing"),
        );
    }
    let answer = |id: &Value| {
        ops.iter().find(|o| {
            o.actor == Actor::Client && o.op_type != OpType::Invoke && judge::call_id(o) == Some(id)
        })
    };
    for id in &short {
        match answer(id) {
            Some(op) if op.op_type == OpType::Ok => {}
            other => {
                return Judgement::new(
                    RowOutcome::Silent,
                    format!(
                        "call {id} should have finished inside the drain: {:?}",
                        other.map(|o| one_line(&judge::text(&o.value)))
                    ),
                );
            }
        }
    }
    for id in &long {
        match answer(id) {
            Some(op) if op.value["population"] == "owed_at_exit" && logged.contains(id) => {}
            other => {
                return Judgement::new(
                    RowOutcome::Silent,
                    format!(
                        "call {id}, still owed at exit, was not answered -32001 owed_at_exit and logged: {:?} (logged {logged:?})",
                        other.map(|o| one_line(&judge::text(&o.value)))
                    ),
                );
            }
        }
    }
    if code != Some(1) {
        return Judgement::new(
            RowOutcome::Silent,
            format!("the proxy exited {code:?} although calls were still owed"),
        );
    }
    Judgement::new(
        RowOutcome::Surfaced,
        "stdin closed with 6 calls in flight: 3 finished in the drain, 3 answered -32001 owed_at_exit and logged; exit 1 (idle control: exit 0)",
    )
}

/// The observation of the supervisor's liveness: `{"pid", "alive"}`.
const SUPERVISOR: &str = "supervisor";

/// Whether the supervisor (pid `pid`) is alive, recorded as the observation [`SUPERVISOR`].
fn supervisor_alive(history: &History, pid: u32) -> bool {
    let alive = pid_alive(pid);
    observe(history, SUPERVISOR, json!({ "pid": pid, "alive": alive }));
    alive
}

/// The value of the harness's last observation `f`.
fn observed_value<'a>(ops: &'a [Op], f: &str) -> Option<&'a Value> {
    last_observed(ops, f).map(|o| &o.value)
}

/// H1.5: garbage on stdin (not JSON, a half object, 200 KB and 5 MB lines, a batch, a request
/// without a method, a blank line, control bytes) is answered per JSON-RPC or ignored, a valid
/// 200 KB request among it is served, and `tools/list` still answers afterwards.
pub async fn garbage_on_stdin(env: &GateEnv) -> Ran {
    let history = History::new();
    let Stage { state, port, _reap } = Stage::default();
    let mut raw = RawAgent::start(&history, proxy_options(env, port, state.path()));
    let listed = |answer: &Option<Value>| {
        answer.as_ref().is_some_and(|a| {
            a["result"]["tools"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t["name"] == "reticle_sessions"))
        })
    };
    let control = if raw.initialize(BOUND).await.is_some() {
        raw.call("tools/list", json!({}), BOUND).await
    } else {
        None
    };
    if !listed(&control) {
        return unestablished(
            history,
            fault::GARBAGE,
            "tools/list was not served before the garbage",
            judge_survival,
        );
    }
    let big_ping = format!(
        r#"{{"jsonrpc":"2.0","id":78,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "y".repeat(200 * 1024)
    );
    let lines: Vec<(&str, String)> = vec![
        ("not JSON", "this is not json".into()),
        (
            "half an object",
            r#"{"jsonrpc":"2.0","id":77,"method":"tools/li"#.into(),
        ),
        ("a 200 KB non-JSON line", "x".repeat(200 * 1024)),
        ("a valid 200 KB ping", big_ping),
        ("a 5 MB line", "z".repeat(5 * 1024 * 1024)),
        ("a batch", "[]".into()),
        (
            "a request without a method",
            r#"{"jsonrpc":"2.0","id":79}"#.into(),
        ),
        ("a blank line", String::new()),
        ("control bytes", "\u{1}\u{2}\u{3}".into()),
    ];
    for (what, line) in &lines {
        if *what == "a valid 200 KB ping" {
            raw.expect_answer("ping", json!(78));
        }
        let ok = raw.write_line(line).await;
        history.fault(
            fault::GARBAGE,
            ok,
            json!({ "line": what, "bytes": line.len() }),
        );
        if !ok {
            break;
        }
    }
    let after = raw.call("tools/list", json!({}), BOUND).await;
    raw.answer(&json!(78), BOUND).await;
    raw.settle();
    let errors: Vec<(i64, Value)> = raw
        .received()
        .iter()
        .filter_map(|v| Some((v["error"]["code"].as_i64()?, v["id"].clone())))
        .collect();
    observe(
        &history,
        GARBAGE_ANSWERS,
        json!({ "errors": errors, "alive": pid_alive(raw.pid()), "lines": lines.len(), "listedAfter": listed(&after) }),
    );
    judged(history, judge_garbage)
}

/// The observation of what the proxy answered to the garbage, as counted on its stdout:
/// `{"errors": [[code, id]...], "alive", "lines", "listedAfter"}`.
const GARBAGE_ANSWERS: &str = "garbage_answers";

/// H1.5's judge, from the history alone: every garbage line taken (its fault recorded
/// established), the proxy alive, the errors it answered as counted, and `tools/list` listing
/// after (observed). A scenario that stopped before the garbage is judged by the survival judge.
pub fn judge_garbage(ops: &[Op]) -> Judgement {
    let Some(answers) = observed_value(ops, GARBAGE_ANSWERS) else {
        return judge_survival(ops);
    };
    if let Err(hang) = judge::exactly_once(ops) {
        return hang;
    }
    let total = answers["lines"].as_u64().unwrap_or(0);
    let written = ops
        .iter()
        .filter(|o| o.actor == Actor::Nemesis && o.f == fault::GARBAGE && o.op_type == OpType::Ok)
        .count() as u64;
    if written < total || answers["alive"] != true {
        return Judgement::new(
            RowOutcome::Silent,
            format!("the proxy died in the garbage ({written} of {total} lines taken)"),
        );
    }
    if answers["listedAfter"] != true {
        return Judgement::new(
            RowOutcome::Silent,
            "tools/list did not answer after the garbage",
        );
    }
    let errors: Vec<(i64, Value)> = answers["errors"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|pair| Some((pair[0].as_i64()?, pair[1].clone())))
        .collect();
    let count = |code: i64| errors.iter().filter(|(c, _)| *c == code).count();
    let echoed = errors.iter().any(|(_, id)| id == 79);
    if count(-32700) != 4 || count(-32600) != 3 || !echoed {
        return Judgement::new(
            RowOutcome::Silent,
            format!(
                "garbage was not answered per JSON-RPC: {} × -32700 (want 4), {} × -32600 (want 3), id 79 echoed: {echoed}",
                count(-32700),
                count(-32600)
            ),
        );
    }
    Judgement::new(
        RowOutcome::Survived,
        format!(
            "{total} garbage lines: 4 × -32700, 3 × -32600 (a readable id echoed), the rest ignored; the 200 KB ping and tools/list answered"
        ),
    )
}
