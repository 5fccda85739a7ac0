//! Verdicts when evidence goes missing, through the real stack: closing the tab during
//! act_and_wait is `unknown`/`observation_lost`; an SDK gap (the page's connection dropped,
//! events overflowed its offline queue, a gap marker came back) inside the window is
//! `unknown`/`unclean_capture` with `transport_gap`, for assert and for act_and_wait; a window
//! the session's ring buffer evicted from is `unknown`/`unclean_capture` with `buffer_loss`; a
//! stale ref is refused, never clicked through. Each has its control.

mod support;

use std::time::Duration;

use harness::{BridgeClient, poll};
use serde_json::{Value, json};
use support::tools::{BOUND, ToolRig};

/// A page with our SDK whose WebSocket can be dropped from the page (a network blip).
const GAP_PAGE: &str = r#"<!doctype html>
<html><head><title>Gap gate</title></head>
<body>
  <button id="go" data-testid="go">Go</button>
  <script type="module">
    const Native = window.WebSocket;
    window.__sockets = [];
    window.WebSocket = class extends Native {
      constructor(url, protocols) { super(url, protocols); window.__sockets.push(this); }
    };
    window.__blip = () => window.__sockets[window.__sockets.length - 1].close(4000, 'blip');
    const reticle = await import('/sdk/reticle.js');
    window.__reticle = reticle;
    document.getElementById('go').addEventListener('click', () => {
      window.__clicked = true;
      reticle.signal('clicked', {});
    });
    const q = new URLSearchParams(location.search);
    reticle.connect({ port: Number(q.get('port')), token: q.get('token'), session: q.get('session'), present: false });
  </script>
</body></html>"#;

/// Drops the page's socket and emits more events than its offline queue holds.
const BLIP_AND_OVERFLOW: &str = "window.__blip(); for (let i = 0; i < 700; i++) window.__reticle.signal('offline', { i }); \
     window.__reticle.signal('after-blip', {}); true";

fn gap_url(rig: &ToolRig, session: &str) -> String {
    rig.app.page("/gap.html", GAP_PAGE);
    rig.app.url(&format!(
        "/gap.html?port={}&token={}&session={session}",
        rig.daemon.port(),
        rig.daemon.token()
    ))
}

fn life_of(cursor: &Value) -> u64 {
    cursor
        .as_str()
        .and_then(|c| c.split(':').next())
        .and_then(|l| l.parse().ok())
        .unwrap_or_else(|| panic!("a cursor, got {cursor}"))
}

/// Waits until the page is back under a new life and its backlog (with the gap marker) is in.
async fn wait_back(rig: &ToolRig, session: &str, old_life: u64) -> u64 {
    let life = poll::until("the page back under a new life", BOUND, async || {
        let entry = rig.wait_session(session).await;
        let life = life_of(&entry["head"]);
        (life != old_life).then_some(life)
    })
    .await;
    poll::until("the backlog after the gap marker", BOUND, async || {
        let read = rig
            .ok(
                "reticle_observe",
                json!({"since": format!("{life}:0"), "filters": ["signal", "transport.overflow"], "limit": 2000}),
            )
            .await;
        (read["summary"]["signal"].as_u64().unwrap_or(0) >= 300
            && read["summary"]["transport.overflow"].as_u64().unwrap_or(0) >= 1)
            .then_some(())
    })
    .await;
    life
}

#[tokio::test]
async fn an_sdk_gap_inside_the_window_is_unknown_unclean_capture_never_no() {
    let rig = ToolRig::start(&[]).await;
    let url = gap_url(&rig, "gap");
    let tab = rig.open_at(&url, "gap").await;
    let act = rig
        .ok(
            "reticle_act",
            json!({"target": {"testid": "go"}, "action": "click"}),
        )
        .await;
    let since = act["since"].as_str().unwrap().to_string();
    tab.eval::<Value>(BLIP_AND_OVERFLOW).await.unwrap();
    let life = wait_back(&rig, "gap", life_of(&act["since"])).await;

    // The window from before the blip spans the gap: neither pass nor fail can be trusted.
    let across = rig
        .ok(
            "reticle_assert",
            json!({"predicate": {"kind": "signal", "name": "after-blip"}, "since": since}),
        )
        .await;
    assert_eq!(across["verified"], "unknown", "{across}");
    assert_eq!(across["reason"], "unclean_capture", "{across}");
    assert!(
        across["lost"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l == "transport_gap"),
        "{across}"
    );
    // Even a claim that is false in what was seen is not blamed on the app.
    let absent = rig
        .ok(
            "reticle_assert",
            json!({"predicate": {"kind": "signal", "name": "never-sent"}, "since": since}),
        )
        .await;
    assert_eq!(absent["verified"], "unknown", "{absent}");

    // Control: a window opened after the gap is clean, and the same kind of claim is proved.
    let clean_from = rig.wait_session("gap").await["head"].clone();
    assert_eq!(life_of(&clean_from), life);
    tab.eval::<Value>("window.__reticle.signal('later', {}); true")
        .await
        .unwrap();
    let clean = rig
        .ok(
            "reticle_assert",
            json!({"predicate": {"kind": "signal", "name": "later"}, "since": clean_from, "timeout_ms": 5000}),
        )
        .await;
    assert_eq!(
        (clean["verified"].as_str(), clean["reason"].as_str()),
        (Some("yes"), Some("proved")),
        "{clean}"
    );
}

#[tokio::test]
async fn an_sdk_gap_during_act_and_wait_is_unknown_unclean_capture() {
    let rig = ToolRig::start(&[]).await;
    let url = gap_url(&rig, "gapwait");
    let tab = rig.open_at(&url, "gapwait").await;
    let bridge = BridgeClient::new(rig.daemon.port());
    let client = &rig.client;
    let call = client.call_tool(
        "reticle_act_and_wait",
        json!({"target": {"testid": "go"}, "action": "click",
               "until": {"kind": "signal", "name": "after-blip"}, "timeout_ms": 20000}),
    );
    let drive = async {
        // The click happened and its result reached the daemon; the wait is on.
        poll::until("the click", BOUND, async || {
            tab.eval::<bool>("window.__clicked === true")
                .await
                .ok()?
                .then_some(())
        })
        .await;
        poll::until("the act answered", BOUND, async || {
            let session = bridge.session("gapwait").await?;
            (session["pendingCommands"] == 0).then_some(())
        })
        .await;
        tab.eval::<Value>(BLIP_AND_OVERFLOW).await.unwrap();
    };
    let (result, ()) = tokio::join!(call, drive);
    let verdict = result.unwrap()["structuredContent"].clone();
    assert_eq!(verdict["verified"], "unknown", "{verdict}");
    assert_eq!(verdict["reason"], "unclean_capture", "{verdict}");
    assert!(
        verdict["lost"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l == "transport_gap"),
        "{verdict}"
    );
    assert!(
        verdict["capsuleSaved"].is_string(),
        "an unknown is red: {verdict}"
    );
}

/// More events than a session's ring buffer keeps (2,000), emitted at once by the page.
const FLOOD_PAST_THE_RING: &str = "for (let i = 0; i < 2600; i++) window.__reticle.signal('flood', { i }); window.__reticle.signal('flood-done', {}); true";

#[tokio::test]
async fn a_window_the_ring_buffer_evicted_is_unknown_buffer_loss_never_no() {
    let rig = ToolRig::start(&[]).await;
    let url = gap_url(&rig, "ring");
    let tab = rig.open_at(&url, "ring").await;
    let before = rig
        .ok(
            "reticle_act",
            json!({"target": {"testid": "go"}, "action": "click"}),
        )
        .await;
    let since = before["since"].as_str().unwrap().to_string();

    // Control: a window that lost nothing, and a claim that is false in it, is `no`.
    let clean = rig
        .ok(
            "reticle_assert",
            json!({"predicate": {"kind": "signal", "name": "never-sent"}, "since": since, "timeout_ms": 300}),
        )
        .await;
    assert_eq!(clean["verified"], "no", "{clean}");

    tab.eval::<Value>(FLOOD_PAST_THE_RING).await.unwrap();
    poll::until("the flood in the buffer", BOUND, async || {
        let read = rig
            .ok(
                "reticle_observe",
                json!({"since": since, "filters": ["signal"]}),
            )
            .await;
        read.to_string().contains("flood-done").then_some(())
    })
    .await;
    // The same claim over the same window, now partly evicted: nobody can say.
    let evicted = rig
        .ok(
            "reticle_assert",
            json!({"predicate": {"kind": "signal", "name": "never-sent"}, "since": since, "timeout_ms": 300}),
        )
        .await;
    assert_eq!(evicted["verified"], "unknown", "{evicted}");
    assert_eq!(evicted["reason"], "unclean_capture", "{evicted}");
    assert!(
        evicted["lost"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l == "buffer_loss"),
        "{evicted}"
    );
}

#[tokio::test]
async fn closing_the_tab_during_act_and_wait_is_unknown_observation_lost() {
    let rig = ToolRig::start(&[]).await;
    let tab = rig.open("closing").await;
    let call = rig.client.call_tool(
        "reticle_act_and_wait",
        json!({"sessionId": "closing", "target": {"testid": "counter-increment"}, "action": "click",
               "until": {"kind": "signal", "name": "never-happens"}, "timeout_ms": 30000}),
    );
    let close = async {
        poll::until("the click", BOUND, async || {
            let text: String = tab
                .eval("document.querySelector('[data-testid=counter-value]').textContent")
                .await
                .ok()?;
            (text == "Count: 1").then_some(())
        })
        .await;
        tab.close().await.unwrap();
    };
    let (result, ()) = tokio::join!(call, close);
    let verdict = result.unwrap()["structuredContent"].clone();
    assert_eq!(verdict["verified"], "unknown", "{verdict}");
    assert_eq!(verdict["reason"], "observation_lost", "{verdict}");
    assert_eq!(
        verdict["timedOut"], false,
        "it ended on the loss, not the bound: {verdict}"
    );
    // Control: the same call on an open tab whose claim never comes true is a plain no.
    let _tab = rig.open("open").await;
    let no = rig
        .ok(
            "reticle_act_and_wait",
            json!({"sessionId": "open", "target": {"testid": "counter-increment"}, "action": "click",
                   "until": {"kind": "signal", "name": "never-happens"}, "timeout_ms": 500}),
        )
        .await;
    assert_eq!(
        (no["verified"].as_str(), no["reason"].as_str()),
        (Some("no"), Some("assertion_failed")),
        "{no}"
    );
}

#[tokio::test]
async fn a_stale_ref_is_refused_never_clicked_through() {
    let rig = ToolRig::start(&[]).await;
    let tab = rig.open("stale").await;
    let stale = rig.first_ref(json!({"testid": "rerender-target"})).await;
    rig.ok(
        "reticle_act",
        json!({"target": {"testid": "rerender"}, "action": "click"}),
    )
    .await;
    let refused = rig
        .refused("reticle_act", json!({"ref": stale, "action": "click"}))
        .await;
    assert!(
        refused["reason"].as_str().unwrap().contains(&stale),
        "{refused}"
    );
    assert!(
        refused["recovery"].as_str().unwrap().contains("fresh ref"),
        "{refused}"
    );
    let waited = rig
        .refused(
            "reticle_act_and_wait",
            json!({"ref": stale, "action": "click", "until": {"kind": "settled"}}),
        )
        .await;
    assert!(
        waited.get("verified").is_none(),
        "no verdict on a refused act: {waited}"
    );
    let clicks: String = tab
        .eval("document.querySelector('[data-testid=rerender-clicks]').textContent")
        .await
        .unwrap();
    assert_eq!(
        clicks, "Target clicks: 0",
        "the new occupant was never clicked"
    );
    // Control: a fresh ref clicks it.
    let fresh = rig.first_ref(json!({"testid": "rerender-target"})).await;
    assert_ne!(fresh, stale);
    rig.ok("reticle_act", json!({"ref": fresh, "action": "click"}))
        .await;
    let clicks: String = tab
        .eval("document.querySelector('[data-testid=rerender-clicks]').textContent")
        .await
        .unwrap();
    assert_eq!(clicks, "Target clicks: 1");
    let _ = Duration::ZERO;
}

/// The sequencing hazard: the proxy may start the daemon before the app's tab dials it. A call
/// that arrives while the daemon is young and no page is connected waits for the first page
/// instead of failing; once the daemon is past that window, the same call is refused at once
/// with the sessions listed (the control).
#[tokio::test]
async fn the_first_call_after_start_waits_for_the_first_page() {
    let rig = ToolRig::start(&[("RETICLE_FIRST_SESSION_WAIT_MS", "60000")]).await;
    let url = gap_url(&rig, "early");
    let call = rig
        .client
        .call_tool("reticle_query", json!({"testid": "go"}));
    let open = async {
        poll::until("the call waiting in the daemon", BOUND, async || {
            let status = rig.daemon.status().await?;
            (status.tool_calls?.in_flight == 1).then_some(())
        })
        .await;
        rig.browser.open(&url).await.unwrap()
    };
    let (answer, _tab) = tokio::join!(call, open);
    let answer = answer.unwrap();
    assert_ne!(answer["isError"], true, "{answer}");
    assert_eq!(answer["structuredContent"]["count"], 1, "{answer}");
    let status = rig.daemon.status().await.unwrap().tool_calls.unwrap();
    assert_eq!((status.in_flight, status.started), (0, status.settled));

    // Control: a daemon past its first-page window refuses at once, listing no sessions.
    let late = ToolRig::start(&[("RETICLE_FIRST_SESSION_WAIT_MS", "0")]).await;
    let refused = late.refused("reticle_query", json!({"testid": "go"})).await;
    assert_eq!(refused["sessions"], json!([]), "{refused}");
    assert!(
        refused["recovery"]
            .as_str()
            .unwrap()
            .contains("ws://127.0.0.1"),
        "{refused}"
    );
}
