//! Hop 5 scenarios: our SDK (`sdk/`) in real Chromium, served by the fixture app, against a real
//! daemon that the scenario stops and brings back on the same port. Each records the fault, every
//! client call (bridge commands, event reads, the page console a user reads) and what the harness
//! observed in the page through its instrumented `WebSocket` (see [`harness::sdk_rig`]), then
//! judges the history. Controls run inside the scenario; one that misbehaves makes the row
//! inconclusive. Each daemon is traced, served a tool call through an agent after its fault and
//! its trace checked ([`super::traced`]).

use std::time::Duration;

use harness::browser::Tab;
use harness::{McpClient, ProxyOptions, SdkRig, poll};
use serde_json::{Value, json};

use super::fault_segments::{established, first_segment};
use super::kit::{BOUND, control, controls_held, could_not_start, judged, observe, settle, worst};
use super::{GateEnv, Ran, traced};
use super::{fault_trace, page_kit};
use crate::fault;
use crate::history::{Actor, History, Op, OpType};
use crate::judge::{Judgement, RowOutcome, one_line, text};

/// The SDK's tag on its own console lines.
const SDK_TAG: &str = "[reticle]";

/// How long a page gets to come back after the daemon does (its backoff may be seconds).
const BACK_BOUND: Duration = Duration::from_secs(45);

/// The page's instrumentation record (`window.__gate`), or null.
async fn gate_record(tab: &Tab) -> Value {
    tab.eval("window.__gate").await.unwrap_or(Value::Null)
}

fn count(record: &Value, key: &str) -> usize {
    record[key].as_array().map(Vec::len).unwrap_or(0)
}

/// Whether the page saw a socket close beyond the `closes` it had seen (the outage reached it).
async fn saw_close(tab: &Tab, closes: usize) -> bool {
    poll::within(BOUND, async || {
        (count(&gate_record(tab).await, "closes") > closes).then_some(())
    })
    .await
    .is_some()
}

/// Opens the gate page as `session`, waits for its session and runs one command on it (the SDK
/// counts a socket established once a frame arrives). Records both calls and the control.
async fn open_live(history: &History, rig: &SdkRig, session: &str) -> Result<Tab, String> {
    let tab = rig
        .browser
        .open_in_window(&rig.url(session))
        .await
        .map_err(|e| format!("the tab did not open: {e}"))?;
    page_kit::session_appears(history, &rig.client, session, BOUND).await;
    let (op, answer) = page_kit::query_buttons(history, &rig.client, session).await;
    control(
        history,
        &format!("{session} answers a command before the outage"),
        op == OpType::Ok,
        answer,
    );
    Ok(tab)
}

/// Reads every event of `session` as the client call `events`; `Err` when the daemon did not
/// answer.
async fn read_events(history: &History, rig: &SdkRig, session: &str) -> Vec<Value> {
    history.invoke("events", json!({ "session": session }));
    match rig.client.try_events(session, None).await {
        Ok(read) => {
            let events = read["events"].as_array().cloned().unwrap_or_default();
            history.complete(
                OpType::Ok,
                "events",
                json!({ "session": session, "count": events.len(), "evicted": read["evicted"] }),
            );
            events
        }
        Err(why) => {
            history.complete(OpType::Info, "events", json!({ "message": why }));
            Vec::new()
        }
    }
}

// ------------------------------------------------------------------------------------------
// H5.1

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

/// The reconnect attempts of one page after the outage began: the gap before each new socket
/// (from the close of the live one) and the delay the SDK reported for it.
fn attempts(
    session: &str,
    record: &Value,
    opens: usize,
    closes: usize,
    visibility: Value,
) -> Value {
    let empty = Vec::new();
    let open_list = record["opens"].as_array().unwrap_or(&empty);
    let close_list = record["closes"].as_array().unwrap_or(&empty);
    let lost_at = close_list.get(closes).and_then(|c| c["t"].as_f64());
    let mut previous = lost_at;
    let mut gaps = Vec::new();
    let mut reported = Vec::new();
    for open in open_list.iter().skip(opens) {
        let t = open["t"].as_f64().unwrap_or(0.0);
        if let Some(p) = previous {
            gaps.push((t - p).round() as u64);
        }
        previous = Some(t);
        reported.push(open["delayMs"].clone());
    }
    json!({ "session": session, "gapsMs": gaps, "reportedDelaysMs": reported, "visibility": visibility })
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

// ------------------------------------------------------------------------------------------
// H5.2

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

// ------------------------------------------------------------------------------------------
// H5.3

/// What an agent reads after an outage in which the page emitted `emitted` signals named `name`.
struct Replay {
    /// Signals of the batch that arrived.
    delivered: u64,
    /// Gap markers: (position in the stream, `dropped`).
    markers: Vec<(usize, u64)>,
    /// Position of the first signal of the batch.
    first_signal: Option<usize>,
    /// The batch's own numbering (`data.i`) of the signals that arrived, in arrival order.
    numbers: Vec<u64>,
    /// Whether the page's after-replay sentinel arrived (so the replay was complete).
    complete: bool,
}

impl Replay {
    fn json(&self, emitted: u64) -> Value {
        json!({
            "emitted": emitted,
            "delivered": self.delivered,
            "markers": self.markers.iter().map(|(at, dropped)| json!({ "at": at, "dropped": dropped })).collect::<Vec<_>>(),
            "firstSignalAt": self.first_signal,
            "firstNumber": self.numbers.first(),
            "lastNumber": self.numbers.last(),
            "inOrder": self.numbers.windows(2).all(|w| w[0] < w[1]),
            "complete": self.complete,
        })
    }
}

/// One outage: stop the daemon, wait until the page saw its socket close, emit `emitted` signals
/// named `name` while offline, bring the daemon back, wait for the page, and read what arrived
/// (up to a sentinel the page emits once back, so the replay is complete). `Err` says which step
/// could not be established.
async fn outage(
    history: &History,
    rig: &mut SdkRig,
    tab: &Tab,
    session: &str,
    name: &str,
    emitted: u64,
    fault: Option<&str>,
) -> Result<Replay, String> {
    let closes = count(&gate_record(tab).await, "closes");
    let stopped = rig.stop_daemon(BOUND).await;
    let offline = saw_close(tab, closes).await;
    let script = format!(
        "(() => {{ let n = 0; for (let i = 0; i < {emitted}; i++) {{ if (window.__reticle.signal('{name}', {{ i }}).ok !== false) n++; }} return n; }})()"
    );
    let took: u64 = tab.eval(&script).await.unwrap_or(0);
    let established = stopped && offline && took == emitted;
    let detail = json!({ "signals": emitted, "name": name, "accepted": took, "daemonStopped": stopped, "pageOffline": offline });
    if let Some(fault) = fault {
        history.fault(fault, established, detail.clone());
    }
    if !established {
        return Err(format!("the outage could not be established: {detail}"));
    }
    rig.restart_daemon().await?;
    if !page_kit::session_appears(history, &rig.client, session, BACK_BOUND).await {
        return Err("the page did not come back after the outage".into());
    }
    page_kit::query_buttons(history, &rig.client, session).await;
    let sentinel = format!("{name}-replayed");
    let _ = tab
        .eval::<Value>(&format!(
            "window.__reticle.signal('{sentinel}', {{}}); true"
        ))
        .await;
    history.invoke("events", json!({ "session": session }));
    let read = poll::within(BOUND, async || {
        let read = rig.client.try_events(session, None).await.ok()?;
        let events = read["events"].as_array()?.clone();
        events
            .iter()
            .any(|e| e["type"] == "signal" && e["data"]["name"] == sentinel.as_str())
            .then_some(events)
    })
    .await;
    let complete = read.is_some();
    let events = match read {
        Some(events) => events,
        None => rig
            .client
            .try_events(session, None)
            .await
            .ok()
            .and_then(|r| r["events"].as_array().cloned())
            .unwrap_or_default(),
    };
    let mut replay = Replay {
        delivered: 0,
        markers: Vec::new(),
        first_signal: None,
        numbers: Vec::new(),
        complete,
    };
    for (at, event) in events.iter().enumerate() {
        if event["type"] == reticle::wire::KnownEventType::TransportOverflow.as_str() {
            replay
                .markers
                .push((at, event["data"]["dropped"].as_u64().unwrap_or(0)));
        } else if event["type"] == "signal" && event["data"]["name"] == name {
            replay.delivered += 1;
            replay.first_signal.get_or_insert(at);
            if let Some(i) = event["data"]["data"]["i"].as_u64() {
                replay.numbers.push(i);
            }
        }
    }
    history.complete(
        if complete { OpType::Ok } else { OpType::Info },
        "events",
        replay.json(emitted),
    );
    Ok(replay)
}

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

// ------------------------------------------------------------------------------------------
// H5.4

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

// ------------------------------------------------------------------------------------------
// H5.5

const TARGET: &str = "document.querySelector('[data-testid=\"rerender-target\"]')";
const CLICKS: &str = "document.querySelector('[data-testid=\"rerender-clicks\"]').textContent";

/// Queries the fixture app's re-rendering target and returns its ref.
async fn target_ref(history: &History, rig: &SdkRig, session: &str) -> Option<String> {
    let (_, answer) = page_kit::command(
        history,
        &rig.client,
        session,
        "query",
        json!({"testid": "rerender-target"}),
    )
    .await;
    answer["result"]["elements"][0]["ref"]
        .as_str()
        .map(str::to_string)
}

/// Clicks `stale` through the bridge and records the target's click count as the page shows it.
async fn act_on(history: &History, rig: &SdkRig, tab: &Tab, session: &str, stale: &str) {
    page_kit::command(
        history,
        &rig.client,
        session,
        "act",
        json!({"ref": stale, "action": "click"}),
    )
    .await;
    let clicks: String = tab.eval(CLICKS).await.unwrap_or_default();
    observe(history, "clicks", json!({ "text": clicks }));
}

/// H5.5: a ref held across a re-render and across a reload, on the fixture app (`apps/e2e/`,
/// whose "Re-render the target" button replaces the target with a new element of the same shape).
/// Acting on the stale ref must be refused naming the ref, and the new occupant must not be
/// clicked (its click count, read from the page, stays 0). Control: a fresh ref to the new element
/// clicks it (count 1), so "not clicked" means refused, not broken.
pub async fn stale_ref_is_refused(env: &GateEnv) -> Ran {
    let history = History::new();
    let session = "refs";
    let rig = match SdkRig::launch_with(traced::TRACED).await {
        Ok(rig) => rig,
        Err(why) => return could_not_start(history, fault::RERENDER, &why),
    };
    let tab = match rig.browser.open(&rig.fixture_url(session)).await {
        Ok(tab) => tab,
        Err(err) => return could_not_start(history, fault::RERENDER, &err.to_string()),
    };
    page_kit::session_appears(&history, &rig.client, session, BOUND).await;
    let Some(stale) = target_ref(&history, &rig, session).await else {
        return could_not_start(history, fault::RERENDER, "the target could not be queried");
    };
    let rendered: String = tab
        .eval(&format!(
            "document.querySelector('[data-testid=\"rerender\"]').click(); {TARGET}.textContent"
        ))
        .await
        .unwrap_or_default();
    history.fault(
        fault::RERENDER,
        rendered.contains("render 2"),
        json!({ "heldRef": stale, "target": rendered }),
    );
    act_on(&history, &rig, &tab, session, &stale).await;

    let fresh = target_ref(&history, &rig, session).await;
    let (op, _) = page_kit::command(
        &history,
        &rig.client,
        session,
        "act",
        json!({"ref": fresh, "action": "click"}),
    )
    .await;
    let clicks: String = tab.eval(CLICKS).await.unwrap_or_default();
    control(
        &history,
        "a fresh ref to the new element clicks it",
        op == OpType::Ok && fresh.as_deref() != Some(stale.as_str()) && clicks.ends_with(": 1"),
        json!({ "fresh": fresh, "stale": stale, "clicks": clicks }),
    );
    let Some(held) = fresh else {
        return judged(history, judge_stale_refs);
    };

    let _ = tab
        .eval::<Value>("window.__beforeReload = true; true")
        .await;
    let reloaded = tab.reload().await.is_ok()
        && poll::within(BOUND, async || {
            let fresh_page = tab
                .eval::<bool>("window.__beforeReload === undefined")
                .await
                .ok()?;
            let answer = rig
                .client
                .try_command(
                    Some(session),
                    "query",
                    json!({"testid": "rerender-target"}),
                    None,
                )
                .await
                .ok()?;
            (fresh_page && answer["ok"] == true).then_some(())
        })
        .await
        .is_some();
    history.fault(fault::RELOAD, reloaded, json!({ "heldRef": held }));
    act_on(&history, &rig, &tab, session, &held).await;
    traced::call_on_rig_then_check_trace(env, &history, &rig).await;
    judged(history, judge_stale_refs)
}

/// Judges H5.5's history.
pub fn judge_stale_refs(ops: &[Op]) -> Judgement {
    settle(|| {
        controls_held(ops)?;
        let mut parts = Vec::new();
        for fault in [fault::RERENDER, fault::RELOAD] {
            for segment in established(ops, fault)? {
                let held = segment.fault.value["heldRef"].as_str().unwrap_or("?");
                let clicks = segment
                    .observed("clicks")
                    .and_then(|o| o.value["text"].as_str())
                    .unwrap_or("");
                let clicked = !clicks.ends_with(": 0");
                parts.push(match segment.completions("command").first() {
                    Some(op) if op.op_type == OpType::Ok => Judgement::new(
                        RowOutcome::Silent,
                        format!("after the {fault}, {held} clicked through ({clicks})"),
                    ),
                    _ if clicked => Judgement::new(
                        RowOutcome::Silent,
                        format!("after the {fault}, the new occupant was clicked ({clicks})"),
                    ),
                    Some(op) if op.op_type == OpType::Fail => {
                        let said = one_line(&text(&op.value));
                        if said.contains(held) {
                            Judgement::new(
                                RowOutcome::Surfaced,
                                format!("after the {fault}: \"{said}\""),
                            )
                        } else {
                            Judgement::new(
                                RowOutcome::Silent,
                                format!("after the {fault}, refused without naming {held}: {said}"),
                            )
                        }
                    }
                    other => Judgement::new(
                        RowOutcome::Silent,
                        format!(
                            "after the {fault}, acting on {held} got no definite answer: {}",
                            one_line(&other.map(|o| text(&o.value)).unwrap_or_default())
                        ),
                    ),
                });
            }
        }
        Ok(worst(parts))
    })
}

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
