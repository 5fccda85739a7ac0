//! The bridge through real Chromium and our SDK (`sdk/`), served by the harness's `FixtureApp`:
//! a page becomes a session and is drivable (snapshot, query, act, state_read, console and
//! network events); two tabs are two sessions and closing one leaves the other drivable; a tab
//! closed mid-command resolves it as `observation_lost` (H4.3); a stale ref is refused by name
//! (H5.5); a sandboxed iframe still starts a session (H5.4); an outage warns once in the page
//! console, backs off, and none of that noise reaches the console events (H5.1, H5.2); an
//! offline overflow arrives as a gap marker before the backlog (H5.3).
//!
//! The pages are written inline by each test (they load `/sdk/reticle.js`), so these gates do
//! not depend on the fixture app's own markup. Each test launches its own Chromium: under
//! nextest every test is its own process.

use std::time::Duration;

use harness::{BridgeClient, Browser, FixtureApp, OwnedDaemon, poll};
use serde_json::{Value, json};

const BOUND: Duration = Duration::from_secs(20);

/// A page that loads our SDK and connects with the query's port, token and session.
const PAGE: &str = r#"<!doctype html>
<html><head><title>Bridge gate</title></head>
<body>
  <h1>Bridge gate</h1>
  <button id="inc" onclick="window.clicks=(window.clicks||0)+1; this.textContent='Clicked ' + window.clicks">Click me</button>
  <div id="slot"><button id="target">Replace me</button></div>
  <label>Email <input id="email" placeholder="you@example.test"></label>
  <script type="module">
    import * as reticle from '/sdk/reticle.js';
    const q = new URLSearchParams(location.search);
    window.__reticle = reticle;
    reticle.registerStore('cart', () => ({ items: 2, total: 9.5 }));
    window.__connected = reticle.connect({
      port: Number(q.get('port')), token: q.get('token') || undefined,
      session: q.get('session') || undefined, present: false,
    });
  </script>
</body></html>"#;

struct Rig {
    daemon: OwnedDaemon,
    app: FixtureApp,
    browser: Browser,
    client: BridgeClient,
}

impl Rig {
    async fn start() -> Self {
        Self::with(OwnedDaemon::start().await).await
    }

    async fn with(daemon: OwnedDaemon) -> Self {
        let app = FixtureApp::start().await;
        app.page("/gate.html", PAGE);
        let browser = Browser::launch().await.expect("chromium launches");
        let client = BridgeClient::new(daemon.port());
        Self {
            daemon,
            app,
            browser,
            client,
        }
    }

    fn url(&self, session: &str) -> String {
        self.app.url(&format!(
            "/gate.html?port={}&token={}&session={session}",
            self.daemon.port(),
            self.daemon.token()
        ))
    }

    async fn wait_session(&self, id: &str) {
        poll::until(&format!("session {id} connected"), BOUND, async || {
            self.client.session(id).await.map(|_| ())
        })
        .await;
    }

    async fn command(&self, session: &str, name: &str, args: Value) -> Value {
        self.client.command(Some(session), name, args, None).await
    }
}

fn ok_result(answer: &Value) -> &Value {
    assert_eq!(answer["outcome"], "answered", "{answer}");
    assert_eq!(answer["ok"], true, "{answer}");
    &answer["result"]
}

/// The first element of a query result.
fn first_ref(answer: &Value) -> String {
    let elements = ok_result(answer)["elements"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    elements
        .first()
        .and_then(|e| e["ref"].as_str())
        .unwrap_or_else(|| panic!("no element in {answer}"))
        .to_string()
}

#[tokio::test]
async fn a_page_with_our_sdk_is_a_drivable_session_with_console_and_network_events() {
    let rig = Rig::start().await;
    let tab = rig.browser.open(&rig.url("drive")).await.unwrap();
    rig.wait_session("drive").await;
    let status = rig.client.status().await;
    assert_eq!(status["sessions"][0]["title"], "Bridge gate", "{status}");

    let snapshot = rig
        .command("drive", "snapshot", json!({"mode": "interactive"}))
        .await;
    let tree = ok_result(&snapshot)["tree"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        tree.contains("Click me") && tree.contains("ref=e"),
        "{tree}"
    );

    let query = rig
        .command(
            "drive",
            "query",
            json!({"role": "button", "name": "Click me"}),
        )
        .await;
    let button = first_ref(&query);
    let act = rig
        .command("drive", "act", json!({"ref": button, "action": "click"}))
        .await;
    ok_result(&act);
    let clicks: u32 = tab.eval("window.clicks || 0").await.unwrap();
    assert_eq!(clicks, 1);

    let state = rig
        .command(
            "drive",
            "state_read",
            json!({"store": "cart", "path": "total"}),
        )
        .await;
    assert_eq!(ok_result(&state)["value"], 9.5, "{state}");

    tab.eval::<Value>(
        "console.error('checkout failed', 42); fetch('/api/health').then(r => r.status)",
    )
    .await
    .unwrap();
    let events = poll::until("console.error and net.request events", BOUND, async || {
        let read = rig.client.events("drive", None).await;
        let events = read["events"].as_array()?.clone();
        let console = events.iter().any(|e| {
            e["type"] == "console.error" && e["data"].to_string().contains("checkout failed")
        });
        let network = events.iter().any(|e| {
            e["type"] == "net.request"
                && e["data"]["url"]
                    .as_str()
                    .unwrap_or("")
                    .contains("/api/health")
        });
        (console && network).then_some(events)
    })
    .await;
    let request = events.iter().find(|e| e["type"] == "net.request").unwrap();
    assert_eq!(request["data"]["status"], 200, "{request}");
    // The harness reads the page's own console too.
    assert!(
        !tab.console_matching("error", "checkout failed").is_empty(),
        "{:?}",
        tab.console()
    );
}

#[tokio::test]
async fn two_tabs_are_two_sessions_and_closing_one_leaves_the_other_drivable() {
    let rig = Rig::start().await;
    let first = rig.browser.open(&rig.url("tab-a")).await.unwrap();
    let _second = rig.browser.open(&rig.url("tab-b")).await.unwrap();
    rig.wait_session("tab-a").await;
    rig.wait_session("tab-b").await;
    assert_eq!(rig.client.status().await["sessionCount"], 2);
    first.close().await.unwrap();
    poll::until("tab-a gone", BOUND, async || {
        rig.client.session("tab-a").await.is_none().then_some(())
    })
    .await;
    let query = rig
        .command("tab-b", "query", json!({"role": "button"}))
        .await;
    assert!(!first_ref(&query).is_empty());
    assert_eq!(rig.client.status().await["sessionCount"], 1);
}

/// H4.3 with a real tab: closed while a command is in flight.
#[tokio::test]
async fn h4_3_a_tab_closed_mid_command_is_observation_lost_never_a_failure() {
    let rig = Rig::start().await;
    let tab = rig.browser.open(&rig.url("closing")).await.unwrap();
    rig.wait_session("closing").await;
    // Frozen, the page cannot answer: the command stays in flight until the tab closes.
    tab.background().await.unwrap();
    let client = rig.client.clone();
    let pending = tokio::spawn(async move {
        client
            .command(
                Some("closing"),
                "snapshot",
                json!({}),
                Some(Duration::from_secs(60)),
            )
            .await
    });
    poll::until("the command in flight", BOUND, async || {
        let session = rig.client.session("closing").await?;
        (session["pendingCommands"] == 1).then_some(())
    })
    .await;
    tab.close().await.unwrap();
    let outcome = pending.await.unwrap();
    assert_eq!(outcome["outcome"], "observation_lost", "{outcome}");
    assert!(outcome.get("ok").is_none(), "{outcome}");
}

/// H5.5: a ref whose element was replaced, or whose page reloaded, is refused by name.
#[tokio::test]
async fn h5_5_a_stale_ref_is_refused_by_name_never_clicked_through() {
    let rig = Rig::start().await;
    let tab = rig.browser.open(&rig.url("refs")).await.unwrap();
    rig.wait_session("refs").await;
    let stale = first_ref(
        &rig.command(
            "refs",
            "query",
            json!({"role": "button", "name": "Replace me"}),
        )
        .await,
    );
    // Re-render: the same markup, a new element.
    tab.eval::<Value>(
        "document.getElementById('slot').innerHTML = \
         '<button id=\"target\" onclick=\"window.hit=true\">Replace me</button>'; true",
    )
    .await
    .unwrap();
    let refused = rig
        .command("refs", "act", json!({"ref": stale, "action": "click"}))
        .await;
    assert_eq!(refused["outcome"], "answered", "{refused}");
    assert_eq!(
        refused["ok"], false,
        "a stale ref must be refused: {refused}"
    );
    assert!(
        refused["error"].as_str().unwrap_or("").contains(&stale),
        "the refusal names the ref: {refused}"
    );
    let hit: bool = tab.eval("window.hit === true").await.unwrap();
    assert!(!hit, "the new occupant was never clicked");
    // Control: a fresh ref to the new element clicks it.
    let fresh = first_ref(
        &rig.command(
            "refs",
            "query",
            json!({"role": "button", "name": "Replace me"}),
        )
        .await,
    );
    assert_ne!(fresh, stale, "refs are never reused");
    ok_result(
        &rig.command("refs", "act", json!({"ref": fresh, "action": "click"}))
            .await,
    );
    let hit: bool = tab.eval("window.hit === true").await.unwrap();
    assert!(hit);
    // Across a reload, an old ref is refused too.
    tab.reload().await.unwrap();
    poll::until("the reloaded page answers", BOUND, async || {
        let answer = rig
            .command("refs", "query", json!({"role": "button"}))
            .await;
        (answer["ok"] == true).then_some(())
    })
    .await;
    let after_reload = rig
        .command("refs", "act", json!({"ref": fresh, "action": "click"}))
        .await;
    assert_eq!(after_reload["ok"], false, "{after_reload}");
}

/// H5.4: the SDK inside `<iframe sandbox="allow-scripts">` (opaque origin, throwing storage)
/// still starts a session, with the token.
#[tokio::test]
async fn h5_4_a_sandboxed_iframe_still_starts_a_session() {
    let rig = Rig::start().await;
    let inner = r#"<!doctype html><title>framed</title><button>In the frame</button>
<script type="module">
  const q = new URLSearchParams(location.search);
  const reticle = await import(q.get('sdk'));
  window.__connected = reticle.connect({ port: Number(q.get('port')), token: q.get('token'), session: 'framed', present: false });
</script>"#;
    rig.app.page("/framed.html", inner);
    let outer = format!(
        r#"<!doctype html><title>outer</title>
<iframe sandbox="allow-scripts" src="/framed.html?port={port}&token={token}&sdk={sdk}"></iframe>"#,
        port = rig.daemon.port(),
        token = rig.daemon.token(),
        sdk = rig.app.url("/sdk/reticle.js"),
    );
    rig.app.page("/outer.html", outer);
    let _tab = rig.browser.open(&rig.app.url("/outer.html")).await.unwrap();
    rig.wait_session("framed").await;
    let query = rig
        .command(
            "framed",
            "query",
            json!({"role": "button", "name": "In the frame"}),
        )
        .await;
    assert!(!first_ref(&query).is_empty());
    // Control: the same frame without a token is refused (an opaque origin needs one).
    let bare = format!(
        r#"<!doctype html><title>outer</title>
<iframe sandbox="allow-scripts" src="/framed.html?port={port}&token=&sdk={sdk}"></iframe>"#,
        port = rig.daemon.port(),
        sdk = rig.app.url("/sdk/reticle.js"),
    );
    rig.app.page("/bare.html", bare);
    let _bare = rig.browser.open(&rig.app.url("/bare.html")).await.unwrap();
    poll::until("the tokenless frame refused", BOUND, async || {
        let refused = rig.client.status().await["refused"].as_array()?.clone();
        refused
            .iter()
            .any(|r| r["kind"] == "auth_failed")
            .then_some(())
    })
    .await;
}

/// H5.1, H5.2, H5.3: the daemon goes away mid-session and comes back on the same port.
#[tokio::test]
async fn h5_1_2_3_an_outage_warns_once_backs_off_keeps_noise_out_and_marks_the_gap() {
    let state = tempfile::tempdir().unwrap();
    let daemon = OwnedDaemon::builder().state_dir(state.path()).start().await;
    let port = daemon.port();
    let rig = Rig::with(daemon).await;
    let tab = rig.browser.open(&rig.url("outage")).await.unwrap();
    rig.wait_session("outage").await;
    // The SDK counts a socket established once a frame arrives on it: a command does that.
    ok_result(
        &rig.command("outage", "query", json!({"role": "button"}))
            .await,
    );

    let Rig {
        daemon,
        app,
        browser,
        ..
    } = rig;
    daemon.shutdown().await;
    poll::until(
        "one 'lost' warning in the page console",
        BOUND,
        async || {
            (!tab
                .console_matching("warning", "lost the connection")
                .is_empty())
            .then_some(())
        },
    )
    .await;
    // H5.1: the retry delay grows while the daemon is away.
    let mut delays = Vec::new();
    poll::until(
        "the retry delay to grow",
        Duration::from_secs(30),
        async || {
            let status: Value = tab.eval("window.__reticle.status()").await.ok()?;
            let delay = status["transport"]["lastDelayMs"].as_u64()?;
            delays.push(delay);
            (delays.len() > 1 && delay > delays[0] && delay > 250).then_some(())
        },
    )
    .await;
    // H5.3: more events than the queue holds while offline.
    tab.eval::<Value>(
        "for (let i = 0; i < 700; i++) window.__reticle.signal('offline', { i }); true",
    )
    .await
    .unwrap();

    let back = OwnedDaemon::builder()
        .state_dir(state.path())
        .port(port)
        .start()
        .await;
    let client = BridgeClient::new(back.port());
    poll::until(
        "the page back as a session",
        Duration::from_secs(60),
        async || client.session("outage").await.map(|_| ()),
    )
    .await;
    poll::until("one 'back' warning", BOUND, async || {
        (!tab.console_matching("warning", "is back").is_empty()).then_some(())
    })
    .await;
    assert_eq!(
        tab.console_matching("warning", "lost the connection").len(),
        1,
        "{:?}",
        tab.console()
    );
    let events = poll::until("the gap marker and the backlog", BOUND, async || {
        let read = client.events("outage", None).await;
        let events = read["events"].as_array()?.clone();
        let signals = events.iter().filter(|e| e["type"] == "signal").count();
        (signals >= 400 && events.iter().any(|e| e["type"] == "transport.overflow"))
            .then_some(events)
    })
    .await;
    let gap = events
        .iter()
        .position(|e| e["type"] == "transport.overflow")
        .unwrap();
    let first_signal = events.iter().position(|e| e["type"] == "signal").unwrap();
    assert!(
        gap < first_signal,
        "the gap marker precedes the replayed backlog"
    );
    assert!(
        events[gap]["data"]["dropped"].as_u64().unwrap() >= 200,
        "{}",
        events[gap]
    );
    // H5.1: the SDK's own warnings never arrive as the app's console events.
    tab.eval::<Value>("console.warn('app warning after the outage'); true")
        .await
        .unwrap();
    let console_events = poll::until("the app's own warning as an event", BOUND, async || {
        let read = client.events("outage", None).await;
        let console: Vec<Value> = read["events"]
            .as_array()?
            .iter()
            .filter(|e| e["type"].as_str().unwrap_or("").starts_with("console."))
            .cloned()
            .collect();
        console
            .iter()
            .any(|e| e.to_string().contains("app warning after the outage"))
            .then_some(console)
    })
    .await;
    for event in &console_events {
        let text = event.to_string();
        assert!(
            !text.contains("[reticle]") && !text.contains("Reticle daemon"),
            "{text}"
        );
    }
    drop((app, browser));
}
