//! H1.2: a panic inside request handling is answered -32603 and the next calls succeed. Its
//! scenario and judge.

use std::time::Duration;

use harness::{Stage, poll};
use reticle::proxy::events as proxy_events;
use serde_json::json;

use super::{SUPERVISOR, observed_value, supervisor_alive};
use crate::controls::StandIn;
use crate::fault;
use crate::history::{Actor, History, Op, OpType};
use crate::judge::{Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::agent::events;
use crate::scenarios::agent_kit::{judge_survival, judge_survival_then, warm_agent};
use crate::scenarios::kit::judged;
use crate::scenarios::{GateEnv, Ran, proxy_options};

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

/// H1.2 in the row table.
pub const H1_2: RowGate = RowGate {
    id: "H1.2",
    file: file!(),
    scenario: |env| Box::pin(panic_in_request_handling(env)),
    judge: judge_panic_in_request_handling,
    controls: &[StandIn::ToolsRefuseAfterWarmUp],
};
