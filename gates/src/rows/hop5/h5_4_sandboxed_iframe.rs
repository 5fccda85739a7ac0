//! H5.4: our SDK in a sandboxed iframe, where `sessionStorage` throws, still starts a session
//! that answers a command. Its page, scenario and judge.

use harness::{SdkRig, poll};
use serde_json::json;

use crate::fault;
use crate::history::{History, Op, OpType};
use crate::judge::{Judgement, RowOutcome, one_line, text};
use crate::rows::RowGate;
use crate::scenarios::fault_segments::first_segment;
use crate::scenarios::kit::{BOUND, could_not_start, judged, settle};
use crate::scenarios::page_kit;
use crate::scenarios::{GateEnv, Ran, traced};

/// The sandboxed frame: it probes `sessionStorage` itself (so the harness knows the fault is
/// real, not just what the SDK says), tells its parent, then loads the SDK and connects.
pub const FRAMED: &str = r#"<!doctype html><title>framed</title><button>In the frame</button>
<script type="module">
  const q = new URLSearchParams(location.search);
  let probe;
  try { window.sessionStorage.getItem('reticle-gate-probe'); probe = 'readable'; }
  catch (e) { probe = 'threw ' + (e && e.name ? e.name : String(e)); }
  parent.postMessage({ type: 'gate-storage-probe', probe }, '*');
  const reticle = await import(q.get('sdk'));
  window.__connected = reticle.connect({ port: Number(q.get('port')), token: q.get('token'), session: 'framed', present: false });
</script>"#;

/// H5.4: our SDK inside `<iframe sandbox="allow-scripts">`, where reading `sessionStorage`
/// throws, must still start a session that answers a command. The fault is established by the
/// frame's own probe, reported to the parent page and read by the harness.
pub async fn sandboxed_iframe_starts(env: &GateEnv) -> Ran {
    let history = History::new();
    let fault = fault::STORAGE_THROWS_IN_SANDBOXED_FRAME;
    let rig = match SdkRig::launch_with(traced::TRACED).await {
        Ok(rig) => rig,
        Err(why) => return could_not_start(history, fault, &why),
    };
    rig.app.page("/framed.html", FRAMED);
    let outer = format!(
        r#"<!doctype html><title>outer</title>
<script>window.__probe = null; addEventListener('message', (e) => {{ if (e.data && e.data.type === 'gate-storage-probe') window.__probe = e.data.probe; }});</script>
<iframe sandbox="allow-scripts" src="/framed.html?port={port}&token={token}&sdk={sdk}"></iframe>"#,
        port = rig.port(),
        token = rig.token(),
        sdk = rig.app.url("/sdk/reticle.js"),
    );
    rig.app.page("/outer.html", outer);
    let tab = match rig.browser.open(&rig.app.url("/outer.html")).await {
        Ok(tab) => tab,
        Err(err) => return could_not_start(history, fault, &err.to_string()),
    };
    let probe = poll::within(BOUND, async || {
        tab.eval::<Option<String>>("window.__probe")
            .await
            .ok()
            .flatten()
    })
    .await;
    history.fault(
        fault,
        probe.as_deref().is_some_and(|p| p.starts_with("threw")),
        json!({ "probe": probe }),
    );
    if page_kit::session_appears(&history, &rig.client, "framed", BOUND).await {
        page_kit::command(
            &history,
            &rig.client,
            "framed",
            "query",
            json!({"role": "button", "name": "In the frame"}),
        )
        .await;
    }
    traced::call_on_rig_then_check_trace(env, &history, &rig).await;
    judged(history, judge_sandboxed_frame)
}

/// Judges H5.4's history.
pub fn judge_sandboxed_frame(ops: &[Op]) -> Judgement {
    settle(|| {
        let segment = &first_segment(ops, fault::STORAGE_THROWS_IN_SANDBOXED_FRAME)?;
        let probe = segment.fault.value["probe"].as_str().unwrap_or("?");
        match segment.completion("hello") {
            Some(op) if op.op_type == OpType::Ok => {}
            other => {
                return Ok(Judgement::new(
                    RowOutcome::Silent,
                    format!(
                        "no session from the sandboxed frame (sessionStorage {probe}): {}",
                        one_line(&other.map(|o| text(&o.value)).unwrap_or_default())
                    ),
                ));
            }
        }
        let command = segment.completion("command");
        Ok(match command {
            Some(op)
                if op.op_type == OpType::Ok
                    && op.value["result"]["elements"]
                        .as_array()
                        .is_some_and(|e| !e.is_empty()) =>
            {
                Judgement::new(
                    RowOutcome::Survived,
                    format!(
                        "sessionStorage {probe} in the frame; its session started and found its button"
                    ),
                )
            }
            Some(op) => Judgement::new(
                if op.op_type == OpType::Fail {
                    RowOutcome::Surfaced
                } else {
                    RowOutcome::Silent
                },
                format!(
                    "the frame's session did not answer: {}",
                    one_line(&text(&op.value))
                ),
            ),
            None => Judgement::new(RowOutcome::Silent, "the frame's session was never driven"),
        })
    })
}

/// H5.4 in the row table.
pub const H5_4: RowGate = RowGate {
    id: "H5.4",
    file: file!(),
    scenario: |env| Box::pin(sandboxed_iframe_starts(env)),
    judge: judge_sandboxed_frame,
    controls: &[],
};
