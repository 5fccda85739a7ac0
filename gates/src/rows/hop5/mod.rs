//! Hop 5 rows (our SDK in real Chromium against a real daemon the scenario stops and brings
//! back), one file each, and what they share: the page's gate record, live tabs, event reads and
//! the outage itself ([`outage`]). H5.6, the compatibility matrix, is its own file; H5.7 and
//! H5.8, the browser Reticle drives, share `driven`. Controls run
//! inside each scenario; each daemon is traced and its trace checked after a tool call.

pub mod driven;
pub mod h5_1_reconnect_backoff;
pub mod h5_2_outage_warns_once;
pub mod h5_3_offline_overflow;
pub mod h5_4_sandboxed_iframe;
pub mod h5_5_stale_ref;
pub mod h5_6_published_sdk;
pub mod h5_7_driven_browser_killed;
pub mod h5_8_driven_tab_hangs;

use std::time::Duration;

use harness::browser::Tab;
use harness::{SdkRig, poll};
use serde_json::{Value, json};

use crate::history::{History, OpType};
use crate::scenarios::kit::{BOUND, control};
use crate::scenarios::page_kit;

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
