//! H5.2: the daemon stopped: the page console carries one warning naming it, and only one while
//! the SDK keeps retrying. Its scenario, judge and the unit test of that judge.

use std::time::Duration;

use harness::{SdkRig, poll};
use serde_json::{Value, json};

use super::{count, gate_record, open_live, saw_close};
use crate::fault;
use crate::history::{History, Op, OpType};
use crate::judge::{Judgement, RowOutcome, one_line};
use crate::rows::RowGate;
use crate::scenarios::fault_segments::first_segment;
use crate::scenarios::fault_trace;
use crate::scenarios::kit::{BOUND, control, could_not_start, judged, observe, settle};
use crate::scenarios::{GateEnv, Ran, traced};

/// H5.2: connect, then stop the daemon. The page console (what the app's developer reads) must
/// carry one warning naming the daemon it lost, and only one while the SDK keeps retrying.
/// Control: there was no such warning before the outage.
pub async fn outage_warns_once(env: &GateEnv) -> Ran {
    let history = History::new();
    let mut rig = match SdkRig::launch_with(traced::TRACED).await {
        Ok(rig) => rig,
        Err(why) => return could_not_start(history, fault::STOP_DAEMON, &why),
    };
    let tab = match open_live(&history, &rig, "outage-warn").await {
        Ok(tab) => tab,
        Err(why) => return could_not_start(history, fault::STOP_DAEMON, &why),
    };
    let early = tab.console_matching("warning", "lost the connection");
    control(
        &history,
        "no lost-connection warning before the outage",
        early.is_empty(),
        json!({ "lines": early.iter().map(|l| l.text.clone()).collect::<Vec<_>>() }),
    );
    let record = gate_record(&tab).await;
    let (opens, closes) = (count(&record, "opens"), count(&record, "closes"));
    // The daemon stays down through the outage: its tool call is made before, and its trace,
    // across the stop, checked at the end.
    let log = match rig.daemon() {
        Some(daemon) => Some(traced::call_through_an_agent(env, &history, daemon).await),
        None => None,
    };
    let stopped = rig.stop_daemon(BOUND).await;
    let noticed = saw_close(&tab, closes).await;
    history.fault(
        fault::STOP_DAEMON,
        stopped && noticed,
        json!({ "port": rig.port(), "daemonStopped": stopped, "pageSawTheClose": noticed }),
    );
    history.invoke("console", json!({ "level": "warning" }));
    // Three failed reconnects: time enough for a warning repeated per attempt to show.
    let retried = poll::within(Duration::from_secs(30), async || {
        let n = count(&gate_record(&tab).await, "opens");
        (n >= opens + 3).then_some(n - opens)
    })
    .await
    .unwrap_or(0);
    observe(
        &history,
        "reconnect_attempts",
        json!({ "attempts": retried }),
    );
    let lines: Vec<String> = tab
        .console_matching("warning", "lost the connection")
        .into_iter()
        .map(|l| l.text)
        .collect();
    history.complete(
        if lines.is_empty() {
            OpType::Info
        } else {
            OpType::Fail
        },
        "console",
        json!({
            "message": lines.first().cloned().unwrap_or_else(|| "no warning".into()),
            "lines": lines,
            "daemon": format!("ws://127.0.0.1:{}/reticle", rig.port()),
        }),
    );
    if let Some((log, calls)) = log {
        fault_trace::record_trace_after_tool_calls(&history, &log, calls).await;
    }
    judged(history, judge_outage_warning)
}

/// Judges H5.2's history.
pub fn judge_outage_warning(ops: &[Op]) -> Judgement {
    settle(|| {
        let segment = &first_segment(ops, fault::STOP_DAEMON)?;
        let attempts = segment
            .observed("reconnect_attempts")
            .and_then(|o| o.value["attempts"].as_u64())
            .unwrap_or(0);
        if attempts < 3 {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                format!(
                    "the page made only {attempts} reconnect attempts, too few to tell once from every time"
                ),
            ));
        }
        let Some(console) = segment.completion("console") else {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                "the page console was never read",
            ));
        };
        let daemon = console.value["daemon"].as_str().unwrap_or("");
        let lines: Vec<&str> = console.value["lines"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        Ok(match lines.as_slice() {
            [] => Judgement::new(
                RowOutcome::Silent,
                format!("the page console said nothing through {attempts} failed reconnects"),
            ),
            [line] if line.contains(daemon) => Judgement::new(
                RowOutcome::Surfaced,
                format!(
                    "warned once through {attempts} failed reconnects: {}",
                    one_line(line)
                ),
            ),
            [line] => Judgement::new(
                RowOutcome::Silent,
                format!(
                    "the warning does not name the daemon ({daemon}): {}",
                    one_line(line)
                ),
            ),
            many => Judgement::new(
                RowOutcome::Silent,
                format!(
                    "warned {} times in one outage (retry noise, not a warning)",
                    many.len()
                ),
            ),
        })
    })
}

/// H5.2 in the row table.
pub const H5_2: RowGate = RowGate {
    id: "H5.2",
    file: file!(),
    scenario: |env| Box::pin(outage_warns_once(env)),
    judge: judge_outage_warning,
    controls: &[],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warning_per_retry_is_not_a_warning_once() {
        let run = |lines: Value| {
            let h = History::new();
            h.fault(fault::STOP_DAEMON, true, json!({}));
            observe(&h, "reconnect_attempts", json!({"attempts": 3}));
            h.complete(
                OpType::Fail,
                "console",
                json!({"lines": lines, "daemon": "ws://127.0.0.1:9/reticle"}),
            );
            judge_outage_warning(&h.ops()).outcome
        };
        let line =
            "[reticle] lost the connection to the Reticle daemon at ws://127.0.0.1:9/reticle";
        assert_eq!(run(json!([line])), RowOutcome::Surfaced);
        assert_eq!(run(json!([line, line])), RowOutcome::Silent);
        assert_eq!(run(json!([])), RowOutcome::Silent);
    }
}
