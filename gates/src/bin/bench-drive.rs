//! `bench-drive`: benchmark of the browser Reticle drives (issue 31): launch to first session
//! listed on a page with no SDK (zero install), split as the launch answer reports it (browser,
//! page load, session), over five fresh daemons; and a real-input click against a synthetic one
//! on the same page. It measures and prints Markdown; it must not judge a row.
//!
//! Run with `RETICLE_BIN=target/release/reticle target/release/bench-drive`.

use std::time::Instant;

use harness::{Browser, FixtureApp, McpClient, OwnedDaemon, ProxyOptions};
use serde_json::{Value, json};

const LAUNCHES: usize = 5;
const CLICKS: usize = 30;

const PAGE: &str = r#"<!doctype html><title>Bench</title>
<button data-testid="add" onclick="window.n=(window.n||0)+1">Add</button>
<script type="module">
  const q = new URLSearchParams(location.search);
  if (q.get('port')) {
    const reticle = await import('/sdk/reticle.js');
    reticle.connect({ port: Number(q.get('port')), token: q.get('token'), session: 'person', present: false });
  }
</script>"#;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

async fn stack() -> (OwnedDaemon, FixtureApp, McpClient, tempfile::TempDir) {
    let tmp = tempfile::tempdir().expect("a temporary dir");
    let daemon = OwnedDaemon::builder()
        .env("TMPDIR", tmp.path().to_string_lossy().to_string())
        .start()
        .await;
    let app = FixtureApp::start().await;
    app.page("/bench.html", PAGE);
    let client = McpClient::start(ProxyOptions::new(daemon.port(), daemon.state_dir()))
        .await
        .expect("reticle mcp starts");
    (daemon, app, client, tmp)
}

async fn structured(client: &McpClient, tool: &str, args: Value) -> Value {
    let result = client
        .call_tool(tool, args.clone())
        .await
        .expect("answered");
    assert_ne!(result["isError"], true, "{tool} {args}: {result}");
    result["structuredContent"].clone()
}

#[tokio::main]
async fn main() {
    let mut whole = Vec::new();
    let (mut browser, mut load, mut session) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..LAUNCHES {
        let (daemon, app, client, _tmp) = stack().await;
        let url = app.url("/bench.html");
        let started = Instant::now();
        let opened = structured(
            &client,
            "reticle_session",
            json!({"action": "launch", "url": url}),
        )
        .await;
        whole.push(started.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(opened["sdk"], "injected", "{opened}");
        let took = &opened["tookMs"];
        browser.push(took["browser"].as_f64().unwrap_or(0.0));
        load.push(took["load"].as_f64().unwrap_or(0.0));
        session.push(took["session"].as_f64().unwrap_or(0.0));
        client.close().await;
        drop(daemon);
    }
    println!(
        "| launch → first session listed, zero install (ms, {LAUNCHES} fresh daemons) | median | all |"
    );
    println!("| --- | --- | --- |");
    for (what, v) in [
        ("whole call (agent's view)", &whole),
        ("Chromium launched (the launcher verify uses)", &browser),
        ("tab opened and page parsed", &load),
        (
            "session up after load (Reticle's share: grace, SDK import, hello)",
            &session,
        ),
    ] {
        let all: Vec<String> = v.iter().map(|x| format!("{x:.0}")).collect();
        println!("| {what} | {:.0} | {} |", median(v.clone()), all.join(", "));
    }

    let (daemon, app, client, _tmp) = stack().await;
    let opened = structured(
        &client,
        "reticle_session",
        json!({"action": "launch", "url": app.url("/bench.html")}),
    )
    .await;
    let driven = opened["sessionId"].as_str().unwrap().to_string();
    let person = Browser::launch().await.expect("chromium launches");
    let _tab = person
        .open_in_window(&app.url(&format!(
            "/bench.html?port={}&token={}",
            daemon.port(),
            daemon.token()
        )))
        .await
        .expect("the person's tab opens");
    let listed = harness::poll::within(std::time::Duration::from_secs(10), async || {
        let sessions = structured(&client, "reticle_sessions", json!({})).await;
        sessions["sessions"]
            .as_array()?
            .iter()
            .any(|e| e["sessionId"] == "person")
            .then_some(())
    })
    .await;
    assert!(listed.is_some(), "the person's tab connected");
    let mut rounds = Vec::new();
    for (label, id) in [
        ("real (driven tab)", driven.as_str()),
        ("synthetic (a person's tab)", "person"),
    ] {
        let args = json!({"sessionId": id, "target": {"testid": "add"}, "action": "click"});
        let mut times = Vec::new();
        let mut mode = Value::Null;
        for _ in 0..CLICKS {
            let started = Instant::now();
            let acted = structured(&client, "reticle_act", args.clone()).await;
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            mode = acted["inputMode"].clone();
        }
        rounds.push((label, mode, median(times)));
    }
    println!();
    println!("| `reticle_act` click, {CLICKS} each | inputMode | p50 ms |");
    println!("| --- | --- | --- |");
    for (label, mode, p50) in &rounds {
        println!("| {label} | {mode} | {p50:.1} |");
    }
    println!("| real / synthetic | | {:.2}× |", rounds[0].2 / rounds[1].2);
    client.close().await;
}
