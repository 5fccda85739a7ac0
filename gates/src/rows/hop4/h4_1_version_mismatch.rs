//! H4.1: a page speaking another protocol version is refused naming both versions, listed by
//! `reticle status`, and our SDK warns once and backs off. Its scenario and judges.

use harness::wire_page::{self};
use harness::{SdkRig, WirePage, cli, poll};
use serde_json::{Value, json};

use super::{ORIGIN, Wording, admitted_or_closed, hello_call, judge_policy_refusal};
use crate::fault;
use crate::history::{History, Op, OpType};
use crate::judge::{Judgement, RowOutcome, one_line, text};
use crate::rows::RowGate;
use crate::scenarios::fault_segments::{Segment, established};
use crate::scenarios::kit;
use crate::scenarios::kit::{
    BOUND, control, controls_held, could_not_start, judged, settle, worst,
};
use crate::scenarios::{GateEnv, Ran, traced};

/// H4.1: a page speaking another protocol version. A raw page's hello at version 2 must be closed
/// 1008 with a reason naming both versions and be listed by `reticle status`; our SDK in
/// Chromium, its hello rewritten to version 2 on the wire, must warn once in the page console and
/// back off (not give up, not hammer). Control: the same hello at version 1 becomes a session.
pub async fn version_mismatch(env: &GateEnv) -> Ran {
    let history = History::new();
    let rig = match SdkRig::launch_with(traced::TRACED).await {
        Ok(rig) => rig,
        Err(why) => return could_not_start(history, fault::HELLO_OTHER_VERSION, &why),
    };
    let port = rig.port();

    let mut hello = wire_page::hello("skewed-page", Some(rig.token()));
    hello["protocolVersion"] = json!(2);
    hello["url"] = json!("http://localhost:5173/checkout");
    let mut page = match WirePage::open(port, ORIGIN).await {
        Ok(page) => page,
        Err(err) => return could_not_start(history, fault::HELLO_OTHER_VERSION, &err.to_string()),
    };
    history.fault(
        fault::HELLO_OTHER_VERSION,
        true,
        json!({ "session": "skewed-page", "protocolVersion": 2, "daemonSpeaks": 1 }),
    );
    hello_call(&history, &rig.client, &mut page, &hello).await;
    history.invoke("bridge_status", json!({}));
    match rig.client.try_status().await {
        Ok(status) => history.complete(OpType::Ok, "bridge_status", status),
        Err(why) => history.complete(OpType::Info, "bridge_status", json!({ "message": why })),
    };
    let port_arg = port.to_string();
    history.invoke("status", json!({ "args": ["status", "--port", &port_arg] }));
    let said = cli::run_with(
        &env.reticle,
        rig.state_dir(),
        &["status", "--port", &port_arg],
    )
    .await;
    kit::complete_cli(&history, "status", &said);

    // Our SDK in a real page, its hello rewritten to version 2 by the page's instrumented socket.
    history.invoke("sdk_connect", json!({ "session": "skewed-sdk", "skew": 2 }));
    let tab = match rig
        .browser
        .open(&rig.url_with("skewed-sdk", "&skew=2"))
        .await
    {
        Ok(tab) => tab,
        Err(err) => {
            history.fault(
                fault::SDK_HELLO_OTHER_VERSION,
                false,
                json!({ "reason": err.to_string() }),
            );
            return judged(history, judge_version_mismatch);
        }
    };
    // The fault took once a version 2 hello left the page; what the daemon and the SDK do with
    // it is what is judged.
    let rewritten = poll::within(BOUND, async || {
        let gate: Value = tab.eval("window.__gate").await.ok()?;
        (gate["rewritten"].as_u64()? >= 1).then_some(gate)
    })
    .await;
    history.fault(
        fault::SDK_HELLO_OTHER_VERSION,
        rewritten.is_some(),
        json!({ "gate": rewritten }),
    );
    let warned = poll::within(BOUND, async || {
        let lines = tab.console_matching("warning", "refused this page");
        (!lines.is_empty()).then_some(lines)
    })
    .await
    .unwrap_or_default();
    let status: Value = tab
        .eval("window.__reticle.status()")
        .await
        .unwrap_or(Value::Null);
    let lines: Vec<&str> = warned.iter().map(|l| l.text.as_str()).collect();
    history.complete(
        if lines.is_empty() {
            OpType::Info
        } else {
            OpType::Fail
        },
        "sdk_connect",
        json!({ "message": lines.first().copied().unwrap_or("no warning"), "warnings": lines, "status": status }),
    );

    // Control: the same page at version 1 becomes a session.
    hello["protocolVersion"] = json!(1);
    let admitted = match WirePage::open(port, ORIGIN).await {
        Ok(mut page) => {
            page.send_json(&hello).await;
            admitted_or_closed(&rig.client, &mut page, "skewed-page").await
        }
        Err(err) => (OpType::Info, json!({ "message": err.to_string() })),
    };
    control(
        &history,
        "the same hello at version 1 becomes a session",
        admitted.0 == OpType::Ok,
        admitted.1,
    );
    traced::call_on_rig_then_check_trace(env, &history, &rig).await;
    judged(history, judge_version_mismatch)
}

/// Judges H4.1's history.
pub fn judge_version_mismatch(ops: &[Op]) -> Judgement {
    settle(|| {
        controls_held(ops)?;
        let wire = established(ops, fault::HELLO_OTHER_VERSION)?;
        let sdk = established(ops, fault::SDK_HELLO_OTHER_VERSION)?;
        let mut parts = Vec::new();
        parts.push(judge_policy_refusal(
            wire[0].completion("hello"),
            &["page speaks 2", "daemon speaks 1"],
            Wording {
                unnamed: "without naming both versions",
                admitted: "a page speaking version 2 was admitted as a session",
                neither: "the version 2 hello",
            },
        ));
        parts.push(match wire[0].completion("status") {
            Some(op)
                if op.op_type == OpType::Ok
                    && op.value["stdout"].as_str().is_some_and(|s| {
                        s.contains("refused skewed-page") && s.contains("version_mismatch")
                    }) =>
            {
                Judgement::new(
                    RowOutcome::Surfaced,
                    "`reticle status` lists the refused page",
                )
            }
            other => Judgement::new(
                RowOutcome::Silent,
                format!(
                    "`reticle status` does not list the refused page: {}",
                    one_line(&other.map(|o| text(&o.value)).unwrap_or_default())
                ),
            ),
        });
        parts.push(judge_sdk_refusal(&sdk[0]));
        Ok(worst(parts))
    })
}

/// The SDK half of H4.1: one warning naming the versions, and a retry scheduled well later.
fn judge_sdk_refusal(segment: &Segment<'_>) -> Judgement {
    let Some(op) = segment.completion("sdk_connect") else {
        return Judgement::new(RowOutcome::Silent, "the SDK page never finished connecting");
    };
    let warnings: Vec<&str> = op.value["warnings"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let state = op.value["status"]["state"].as_str().unwrap_or("");
    let delay = op.value["status"]["transport"]["lastDelayMs"]
        .as_u64()
        .unwrap_or(0);
    match warnings.as_slice() {
        [] => Judgement::new(
            RowOutcome::Silent,
            "the SDK never told the page console it was refused",
        ),
        [one] if !one.contains("page speaks 2") => Judgement::new(
            RowOutcome::Silent,
            format!(
                "the SDK's warning does not name the versions: {}",
                one_line(one)
            ),
        ),
        [_] if state == "stopped" => Judgement::new(
            RowOutcome::Silent,
            "the SDK gave up for good after the refusal (terminal)",
        ),
        [_] if delay < 10_000 => Judgement::new(
            RowOutcome::Silent,
            format!("the SDK retries the refused hello after only {delay} ms"),
        ),
        [_] => Judgement::new(
            RowOutcome::Surfaced,
            format!(
                "the SDK warned once and retries in {:.1} s",
                delay as f64 / 1000.0
            ),
        ),
        many => Judgement::new(
            RowOutcome::Silent,
            format!("the SDK warned {} times for one refusal", many.len()),
        ),
    }
}

/// H4.1 in the row table.
pub const H4_1: RowGate = RowGate {
    id: "H4.1",
    file: file!(),
    scenario: |env| Box::pin(version_mismatch(env)),
    judge: judge_version_mismatch,
    controls: &[],
};
