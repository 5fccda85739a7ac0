//! H5.1: with the daemon gone, our SDK reconnects on its backoff schedule and keeps its own
//! console noise from the agent; once the daemon is back both pages are drivable. Its scenario
//! (also run on the stand-in SDK of its control), judge and the unit test of that judge.

use std::time::Duration;

use harness::{SdkRig, poll};
use serde_json::{Value, json};

use super::{BACK_BOUND, attempts, count, gate_record, open_live, read_events, saw_close};
use crate::controls::StandIn;
use crate::fault;
use crate::history::{Actor, History, Op, OpType};
use crate::judge::{Judgement, RowOutcome, one_line, text};
use crate::rows::RowGate;
use crate::scenarios::fault_segments::first_segment;
use crate::scenarios::kit::{BOUND, control, could_not_start, judged, observe, settle, worst};
use crate::scenarios::page_kit;
use crate::scenarios::{GateEnv, Ran, traced};

/// The SDK's tag on its own console lines.
const SDK_TAG: &str = "[reticle]";

/// H5.1: the daemon goes away mid-session. Two tabs with our SDK watch it retry: the delays each
/// page's SDK chose must grow and must differ between the pages (jitter), and no socket may open
/// sooner than its delay said (the page's instrumented `WebSocket` measures every gap, which
/// load can only lengthen, so the schedule is judged on the SDK's exact numbers and checked
/// against the page's clock); once the daemon is back on its port both pages must be drivable. The SDK's own console warnings must never reach the
/// agent as console events. Controls: the SDK did speak in the page console during the outage
/// (so there was noise to leak) and the app's own warning during the outage did reach the agent
/// (so the console channel works).
pub async fn reconnect_backs_off_quietly(env: &GateEnv) -> Ran {
    backs_off_quietly_on(env, SdkRig::launch_with(traced::TRACED).await).await
}

/// H5.1's scenario and judge on `rig` (whose pages load our SDK, or the stand-in SDK of the
/// row's negative control), its tool call made by `env`'s agent.
pub async fn backs_off_quietly_on(env: &GateEnv, rig: Result<SdkRig, String>) -> Ran {
    let history = History::new();
    let mut rig = match rig {
        Ok(rig) => rig,
        Err(why) => return could_not_start(history, fault::STOP_DAEMON, &why),
    };
    let sessions = ["backoff-a", "backoff-b"];
    let mut tabs = Vec::new();
    for session in sessions {
        match open_live(&history, &rig, session).await {
            Ok(tab) => tabs.push(tab),
            Err(why) => return could_not_start(history, fault::STOP_DAEMON, &why),
        }
    }
    let mut before = Vec::new();
    for tab in &tabs {
        let record = gate_record(tab).await;
        before.push((count(&record, "opens"), count(&record, "closes")));
    }
    let stopped = rig.stop_daemon(BOUND).await;
    let mut noticed = true;
    for (tab, (_, closes)) in tabs.iter().zip(&before) {
        noticed &= saw_close(tab, *closes).await;
    }
    history.fault(
        fault::STOP_DAEMON,
        stopped && noticed,
        json!({ "port": rig.port(), "daemonStopped": stopped, "pagesSawTheClose": noticed }),
    );
    let _ = tabs[0]
        .eval::<Value>("console.warn('app warning during the outage'); true")
        .await;
    for ((tab, session), (opens, closes)) in tabs.iter().zip(sessions).zip(&before) {
        let record = poll::within(Duration::from_secs(30), async || {
            let record = gate_record(tab).await;
            (count(&record, "opens") >= opens + 5).then_some(record)
        })
        .await
        .unwrap_or_else(|| json!({ "opens": [], "closes": [] }));
        let visibility: Value = tab
            .eval("document.visibilityState")
            .await
            .unwrap_or(Value::Null);
        observe(
            &history,
            "reconnect_attempts",
            attempts(session, &record, *opens, *closes, visibility),
        );
    }
    let sdk_spoke = !tabs[0].console_matching("warning", SDK_TAG).is_empty();
    control(
        &history,
        "the SDK warned in the page console during the outage (noise that could leak)",
        sdk_spoke,
        json!({ "console": tabs[0].console().iter().map(|l| format!("{}: {}", l.level, l.text)).collect::<Vec<_>>() }),
    );
    let back = rig.restart_daemon().await;
    control(
        &history,
        "the daemon comes back on its port",
        back.is_ok(),
        json!({ "message": back.err() }),
    );
    for session in sessions {
        page_kit::session_appears(&history, &rig.client, session, BACK_BOUND).await;
        page_kit::query_buttons(&history, &rig.client, session).await;
    }
    let back = poll::within(BOUND, async || {
        let lines = tabs[0].console_matching("warning", "is back");
        (!lines.is_empty()).then_some(lines)
    })
    .await
    .unwrap_or_default();
    observe(
        &history,
        "back_warnings",
        json!({ "session": sessions[0], "lines": back.iter().map(|l| l.text.clone()).collect::<Vec<_>>() }),
    );
    let arrived = poll::within(BOUND, async || {
        let read = rig.client.try_events(sessions[0], None).await.ok()?;
        read["events"]
            .as_array()?
            .iter()
            .any(|e| e.to_string().contains("app warning during the outage"))
            .then_some(())
    })
    .await
    .is_some();
    control(
        &history,
        "the app's own console warning during the outage reached the agent",
        arrived,
        json!({}),
    );
    let mut console = Vec::new();
    for session in sessions {
        for event in read_events(&history, &rig, session).await {
            if event["type"].as_str().unwrap_or("").starts_with("console.") {
                console.push(event.to_string());
            }
        }
    }
    observe(&history, "console_events", json!({ "events": console }));
    traced::call_on_rig_then_check_trace(env, &history, &rig).await;
    judged(history, judge_backoff)
}

/// Judges H5.1's history.
pub fn judge_backoff(ops: &[Op]) -> Judgement {
    settle(|| {
        let segment = &first_segment(ops, fault::STOP_DAEMON)?;
        let runs: Vec<&Op> = segment
            .after
            .iter()
            .filter(|o| o.actor == Actor::Harness && o.f == "reconnect_attempts")
            .copied()
            .collect();
        let mut parts = Vec::new();
        let mut schedules = Vec::new();
        for run in &runs {
            let session = run.value["session"].as_str().unwrap_or("?");
            let gaps: Vec<u64> = run.value["gapsMs"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_u64).collect())
                .unwrap_or_default();
            let delays: Vec<u64> = run.value["reportedDelaysMs"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_u64).collect())
                .unwrap_or_default();
            if gaps.len() < 5 || delays.len() != gaps.len() {
                return Err(Judgement::new(
                    RowOutcome::Inconclusive,
                    format!(
                        "{session} made only {} reconnect attempts with a known delay in the window",
                        gaps.len().min(delays.len())
                    ),
                ));
            }
            // The schedule is what the SDK chose (exact, whatever the machine's load); what the
            // page measured only has to be no shorter, since load can only lengthen a wait.
            let shown = delays
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            let early = gaps
                .iter()
                .zip(&delays)
                .find(|(gap, delay)| gap.saturating_add(5) < **delay);
            let (first, last) = (delays[0], delays[delays.len() - 1]);
            parts.push(if let Some((gap, delay)) = early {
                Judgement::new(
                    RowOutcome::Silent,
                    format!(
                        "{session} reconnected after {gap} ms though it reported waiting {delay} ms"
                    ),
                )
            } else if last >= first.saturating_mul(4) && last >= 1000 {
                Judgement::new(RowOutcome::Survived, format!("{session} waited {shown} ms"))
            } else {
                Judgement::new(
                    RowOutcome::Silent,
                    format!("{session} did not back off: it waited {shown} ms"),
                )
            });
            schedules.push(run.value["reportedDelaysMs"].clone());
        }
        if schedules.len() < 2 {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                "fewer than two pages were watched, so jitter cannot be told",
            ));
        }
        parts.push(if schedules.windows(2).any(|w| w[0] != w[1]) {
            Judgement::new(RowOutcome::Survived, "jittered (the pages' delays differ)")
        } else {
            Judgement::new(
                RowOutcome::Silent,
                format!(
                    "both pages retried on the identical schedule {}: no jitter",
                    schedules[0]
                ),
            )
        });
        let console: Vec<String> = segment
            .observed("console_events")
            .and_then(|o| o.value["events"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|e| e.as_str().map(str::to_string))
            .collect();
        let leaked: Vec<&String> = console.iter().filter(|e| e.contains(SDK_TAG)).collect();
        parts.push(match leaked.first() {
            None => Judgement::new(
                RowOutcome::Survived,
                format!("none of the {} console events is the SDK's", console.len()),
            ),
            Some(line) => Judgement::new(
                RowOutcome::Silent,
                format!(
                    "{} of the SDK's own lines reached the agent as console events: {}",
                    leaked.len(),
                    one_line(line)
                ),
            ),
        });
        let calls = segment.completions("command");
        parts.push(match calls.iter().find(|o| o.op_type != OpType::Ok) {
            None if calls.len() >= 2 => {
                Judgement::new(RowOutcome::Survived, "both pages drivable after the outage")
            }
            None => Judgement::new(
                RowOutcome::Silent,
                "the pages were not driven after the outage",
            ),
            Some(op) => Judgement::new(
                if op.op_type == OpType::Fail {
                    RowOutcome::Surfaced
                } else {
                    RowOutcome::Silent
                },
                format!("after the outage: {}", one_line(&text(&op.value))),
            ),
        });
        Ok(worst(parts))
    })
}

/// H5.1 in the row table.
pub const H5_1: RowGate = RowGate {
    id: "H5.1",
    file: file!(),
    scenario: |env| Box::pin(reconnect_backs_off_quietly(env)),
    judge: judge_backoff,
    controls: &[StandIn::SdkWithoutBackoff],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_schedule_or_leaked_noise_is_silent() {
        let run = |gaps: [u64; 5], other: [u64; 5], console: Value| {
            let h = History::new();
            h.fault(fault::STOP_DAEMON, true, json!({}));
            for (session, g) in [("a", gaps), ("b", other)] {
                observe(
                    &h,
                    "reconnect_attempts",
                    json!({"session": session, "gapsMs": g, "reportedDelaysMs": g, "visibility": "visible"}),
                );
            }
            h.complete(OpType::Ok, "command", json!({}));
            h.complete(OpType::Ok, "command", json!({}));
            observe(&h, "console_events", json!({"events": console}));
            judge_backoff(&h.ops()).outcome
        };
        let growing = [200, 400, 900, 1700, 3500];
        let other = [150, 450, 800, 1900, 3100];
        assert_eq!(run(growing, other, json!([])), RowOutcome::Survived);
        assert_eq!(run([1000; 5], [1000; 5], json!([])), RowOutcome::Silent);
        // A page that reconnects sooner than the delay it reports is caught by what it measured.
        let h = History::new();
        h.fault(fault::STOP_DAEMON, true, json!({}));
        for session in ["a", "b"] {
            observe(
                &h,
                "reconnect_attempts",
                json!({"session": session, "gapsMs": [1000, 1000, 1000, 1000, 1000], "reportedDelaysMs": growing}),
            );
        }
        assert_eq!(judge_backoff(&h.ops()).outcome, RowOutcome::Silent);
        assert_eq!(run(growing, growing, json!([])), RowOutcome::Silent);
        assert_eq!(
            run(
                growing,
                other,
                json!(["{\"data\":\"[reticle] lost the connection\"}"])
            ),
            RowOutcome::Silent
        );
    }
}
