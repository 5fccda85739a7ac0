//! H5.3: an outage that overflows the SDK's offline queue: the agent reads a gap marker before
//! the backlog, every signal is delivered or counted, and a verdict over the gap is `unknown`.
//! Its scenario (also run on the stand-in SDK of its control), judge and the judge's unit test.

use harness::{McpClient, ProxyOptions, SdkRig};
use serde_json::{Value, json};

use super::{open_live, outage};
use crate::controls::StandIn;
use crate::fault;
use crate::history::{History, Op, OpType};
use crate::judge::{Judgement, RowOutcome, text};
use crate::rows::RowGate;
use crate::scenarios::fault_segments::first_segment;
use crate::scenarios::kit::{control, could_not_start, judged, observe, settle};
use crate::scenarios::{GateEnv, Ran, traced};

/// A claim that is false in any window of the fixture page (nothing ever sends this signal).
const NEVER_SENT: &str = "gate.never-sent";

/// Asks for a verdict over `session`'s window (from the start of its life in the current daemon)
/// the way an agent does: `reticle_assert` through `reticle mcp`, recorded as the client call
/// `tools/call`. A fresh agent per daemon life: a proxy held open across the outage could start
/// its own daemon on the rig's port while it is down.
async fn verdict_over(history: &History, rig: &SdkRig, session: &str) -> Value {
    let options = ProxyOptions::new(rig.port(), rig.state_dir());
    let Ok(agent) = McpClient::start_recording(options, history.clone()).await else {
        return Value::Null;
    };
    let answer = agent
        .call_tool(
            "reticle_assert",
            json!({"sessionId": session, "predicate": {"kind": "signal", "name": NEVER_SENT}, "timeout_ms": 300}),
        )
        .await;
    agent.close().await;
    answer.map_or(Value::Null, |a| a["structuredContent"].clone())
}

/// Whether a verdict is the honest one over a window with a transport gap.
fn unknown_for_the_gap(verdict: &Value) -> bool {
    verdict["verified"] == "unknown"
        && verdict["reason"] == "unclean_capture"
        && verdict["lost"]
            .as_array()
            .is_some_and(|l| l.iter().any(|x| x == "transport_gap"))
}

/// H5.3: more events than the offline queue holds. While the daemon is down the page emits 700
/// signals (the queue holds 500); once back, the agent must read a gap marker before the
/// replayed backlog, and every signal must be either delivered or counted in the marker; and a
/// verdict over that window (a claim false in what was seen) must be `unknown`
/// (`unclean_capture`, `transport_gap`), never `no`. Control: a first outage with 100 signals
/// delivers all 100 and no marker (so a marker means overflow, not "there was an outage"), and
/// the same claim over that intact window is `no` (so the verdict can say no).
pub async fn offline_overflow_marks_the_gap(env: &GateEnv) -> Ran {
    offline_overflow_on(env, SdkRig::launch_with(traced::TRACED).await).await
}

/// H5.3's scenario on a given rig (the control runs it on a stand-in SDK), its tool call made by
/// `env`'s agent.
pub async fn offline_overflow_on(env: &GateEnv, rig: Result<SdkRig, String>) -> Ran {
    const QUEUE: u64 = 500;
    const EMITTED: u64 = 700;
    let history = History::new();
    let fault = fault::OVERFLOW_OFFLINE_QUEUE;
    let mut rig = match rig {
        Ok(rig) => rig,
        Err(why) => return could_not_start(history, fault, &why),
    };
    let tab = match open_live(&history, &rig, "overflow").await {
        Ok(tab) => tab,
        Err(why) => return could_not_start(history, fault, &why),
    };
    let small = outage(&history, &mut rig, &tab, "overflow", "within", 100, None).await;
    let (held, detail) = match &small {
        Ok(replay) => (
            replay.complete && replay.markers.is_empty() && replay.delivered == 100,
            replay.json(100),
        ),
        Err(why) => (false, json!({ "message": why })),
    };
    control(
        &history,
        "an outage within the queue delivers everything and marks no gap",
        held,
        detail,
    );
    let intact = verdict_over(&history, &rig, "overflow").await;
    control(
        &history,
        "a false claim over a window that lost nothing is no",
        intact["verified"] == "no",
        intact,
    );
    if let Err(why) = outage(
        &history,
        &mut rig,
        &tab,
        "overflow",
        "offline",
        EMITTED,
        Some(fault),
    )
    .await
    {
        observe(
            &history,
            "outage",
            json!({ "message": why, "queue": QUEUE }),
        );
    } else {
        verdict_over(&history, &rig, "overflow").await;
    }
    traced::call_on_rig_then_check_trace(env, &history, &rig).await;
    judged(history, judge_overflow)
}

/// Judges H5.3's history.
pub fn judge_overflow(ops: &[Op]) -> Judgement {
    settle(|| {
        let segment = &first_segment(ops, fault::OVERFLOW_OFFLINE_QUEUE)?;
        let Some(read) = segment.completion("events") else {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                format!(
                    "the page's replay could not be read: {}",
                    segment
                        .observed("outage")
                        .map(|o| text(&o.value))
                        .unwrap_or_default()
                ),
            ));
        };
        if read.op_type != OpType::Ok {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                "the page's after-replay sentinel never arrived, so the replay was not complete",
            ));
        }
        let v = &read.value;
        let emitted = v["emitted"].as_u64().unwrap_or(0);
        let delivered = v["delivered"].as_u64().unwrap_or(0);
        let lost = emitted.saturating_sub(delivered);
        let markers: Vec<(u64, u64)> = v["markers"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|m| {
                        (
                            m["at"].as_u64().unwrap_or(0),
                            m["dropped"].as_u64().unwrap_or(0),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let dropped: u64 = markers.iter().map(|(_, d)| d).sum();
        let first_signal = v["firstSignalAt"].as_u64();
        Ok(if lost == 0 {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                format!("all {emitted} signals were delivered: the queue never overflowed"),
            ));
        } else if markers.is_empty() {
            Judgement::new(
                RowOutcome::Silent,
                format!("{lost} of {emitted} signals were lost with no gap marker"),
            )
        } else if dropped < lost {
            Judgement::new(
                RowOutcome::Silent,
                format!(
                    "the gap marker counts {dropped} dropped but {lost} of {emitted} signals were lost"
                ),
            )
        } else if first_signal.is_some_and(|s| markers[0].0 > s) {
            Judgement::new(
                RowOutcome::Silent,
                "the gap marker came after the replayed backlog it should precede",
            )
        } else {
            let verdict = segment
                .completion("tools/call")
                .map(|c| c.value["result"]["structuredContent"].clone());
            match verdict {
                None => {
                    return Err(Judgement::new(
                        RowOutcome::Inconclusive,
                        "the marker arrived but no verdict over the window was answered",
                    ));
                }
                Some(v) if unknown_for_the_gap(&v) => Judgement::new(
                    RowOutcome::Surfaced,
                    format!(
                        "a gap marker (dropped {dropped}) precedes the replayed backlog; {delivered} delivered + {dropped} counted >= {emitted} emitted; a verdict over the window is unknown (unclean_capture, transport_gap)"
                    ),
                ),
                Some(v) => Judgement::new(
                    RowOutcome::Silent,
                    format!(
                        "the gap was marked but a verdict over the window was {} ({}): the loss was not carried into the verdict",
                        v["verified"], v["reason"]
                    ),
                ),
            }
        })
    })
}

/// H5.3 in the row table.
pub const H5_3: RowGate = RowGate {
    id: "H5.3",
    file: file!(),
    scenario: |env| Box::pin(offline_overflow_marks_the_gap(env)),
    judge: judge_overflow,
    controls: &[StandIn::SdkWithoutGapMarker],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overflow_must_be_counted_and_marked_before_the_backlog() {
        let run = |markers: Value, delivered: u64, first: u64| {
            let h = History::new();
            h.fault(fault::OVERFLOW_OFFLINE_QUEUE, true, json!({}));
            h.invoke("events", json!({}));
            h.complete(
                OpType::Ok,
                "events",
                json!({"emitted": 700, "delivered": delivered, "markers": markers, "firstSignalAt": first}),
            );
            h.invoke("tools/call", json!({}));
            h.complete(
                OpType::Ok,
                "tools/call",
                json!({"result": {"structuredContent": {"verified": "unknown", "reason": "unclean_capture", "lost": ["transport_gap"]}}}),
            );
            judge_overflow(&h.ops()).outcome
        };
        assert_eq!(
            run(json!([{"at": 3, "dropped": 200}]), 500, 4),
            RowOutcome::Surfaced
        );
        assert_eq!(run(json!([]), 500, 4), RowOutcome::Silent);
        assert_eq!(
            run(json!([{"at": 3, "dropped": 150}]), 500, 4),
            RowOutcome::Silent
        );
        assert_eq!(
            run(json!([{"at": 600, "dropped": 200}]), 500, 4),
            RowOutcome::Silent
        );
        assert_eq!(run(json!([]), 700, 4), RowOutcome::Inconclusive);
        // A marked gap whose verdict still blames the app is silent.
        let h = History::new();
        h.fault(fault::OVERFLOW_OFFLINE_QUEUE, true, json!({}));
        h.complete(
            OpType::Ok,
            "events",
            json!({"emitted": 700, "delivered": 500, "markers": [{"at": 3, "dropped": 200}], "firstSignalAt": 4}),
        );
        h.complete(
            OpType::Ok,
            "tools/call",
            json!({"result": {"structuredContent": {"verified": "no", "reason": "assertion_failed"}}}),
        );
        assert_eq!(judge_overflow(&h.ops()).outcome, RowOutcome::Silent);
    }
}
