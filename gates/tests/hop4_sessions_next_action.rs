//! `reticle_sessions` with no page connected answers a structured `next_action`, chosen from
//! what the daemon can see, through the real proxy: no page ever (`run_init`), a page whose SDK
//! speaks another protocol (`reload_tab`), a page that went away while its loopback dev server
//! still listens (`open_app`) and after it stopped (`start_dev_server`), and no page ever in a
//! project whose app is wired (`reload_tab`: its tab opened before the daemon; control: the same
//! project unwired is told to run `reticle init --write`).

use std::time::Duration;

use harness::wire_page::{self, WirePage};
use harness::{McpClient, OwnedDaemon, ProxyOptions, poll};
use serde_json::{Value, json};

const ORIGIN: Option<&str> = Some("http://localhost:5173");
const BOUND: Duration = Duration::from_secs(20);

async fn next_action(client: &McpClient) -> Value {
    let answer = client
        .call_tool("reticle_sessions", json!({}))
        .await
        .unwrap();
    answer["structuredContent"]["next_action"].clone()
}

/// Polls until the sessions answer's `next_action.action` is `action`; the object.
async fn advised(client: &McpClient, action: &str) -> Value {
    poll::until(&format!("next_action {action}"), BOUND, async || {
        let next = next_action(client).await;
        (next["action"] == action).then_some(next)
    })
    .await
}

/// A raw page at `url` that connects as `session` and then goes away.
async fn page_that_went_away(daemon: &OwnedDaemon, client: &McpClient, session: &str, url: &str) {
    let page = WirePage::open(daemon.port(), ORIGIN).await.unwrap();
    let mut hello = wire_page::hello(session, Some(&daemon.token()));
    hello["url"] = json!(url);
    assert!(page.send_json(&hello).await);
    poll::until("the page listed", BOUND, async || {
        let listed = client.call_tool("reticle_sessions", json!({})).await.ok()?;
        (listed["structuredContent"]["count"] == 1).then_some(())
    })
    .await;
    page.close().await;
}

/// An owned daemon and an agent on the real proxy to it.
async fn daemon_and_agent() -> (OwnedDaemon, McpClient) {
    let daemon = OwnedDaemon::start().await;
    let client = McpClient::start(ProxyOptions::new(daemon.port(), daemon.state_dir()))
        .await
        .unwrap();
    (daemon, client)
}

#[tokio::test]
async fn no_page_ever_advises_init_and_an_old_protocol_advises_a_reload() {
    let (daemon, client) = daemon_and_agent().await;
    let never = advised(&client, "run_init").await;
    assert_eq!(never["command"], "reticle init --write", "{never}");

    let mut page = WirePage::open(daemon.port(), ORIGIN).await.unwrap();
    let mut hello = wire_page::hello("old-sdk", Some(&daemon.token()));
    hello["protocolVersion"] = json!(2);
    hello["url"] = json!("http://localhost:5173/checkout");
    assert!(page.send_json(&hello).await);
    assert!(
        page.closed(BOUND).await.is_some(),
        "the old protocol is refused"
    );
    let reload = advised(&client, "reload_tab").await;
    assert_eq!(reload["url"], "http://localhost:5173/checkout", "{reload}");
    assert!(reload["instruction"].as_str().unwrap().contains("reload"));
}

#[tokio::test]
async fn a_page_that_went_away_advises_by_whether_its_dev_server_listens() {
    let (daemon, client) = daemon_and_agent().await;
    let dev_server = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://127.0.0.1:{}/app",
        dev_server.local_addr().unwrap().port()
    );
    page_that_went_away(&daemon, &client, "went-away", &url).await;
    let open = advised(&client, "open_app").await;
    assert_eq!(open["url"], url.as_str(), "{open}");

    drop(dev_server);
    let start = advised(&client, "start_dev_server").await;
    assert_eq!(start["url"], url.as_str(), "{start}");
}

/// A Vite project under a temporary dir: its entry wired by the real `reticle init --write`
/// when `wired`.
async fn vite_project(wired: bool, port: u16) -> tempfile::TempDir {
    let project = tempfile::tempdir().unwrap();
    let dir = project.path();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("package.json"),
        r#"{"devDependencies":{"vite":"8"}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("index.html"),
        "<html><body><script type=\"module\" src=\"/src/main.js\"></script></body></html>",
    )
    .unwrap();
    std::fs::write(dir.join("src/main.js"), "console.log('app');\n").unwrap();
    if wired {
        let state = tempfile::tempdir().unwrap();
        let ran = harness::cli::run(
            state.path(),
            &[
                "init",
                "--dir",
                dir.to_str().unwrap(),
                "--port",
                &port.to_string(),
                "--client",
                "claude",
                "--write",
            ],
        )
        .await;
        assert!(ran.ok(), "{}", ran.said());
    }
    project
}

#[tokio::test]
async fn no_page_ever_in_a_wired_project_advises_reloading_the_tab_not_init() {
    for wired in [true, false] {
        let port = harness::free_port();
        let project = vite_project(wired, port).await;
        let daemon = OwnedDaemon::builder()
            .port(port)
            .env(
                reticle::config::env::PROJECT_DIR,
                project.path().display().to_string(),
            )
            .try_start()
            .await
            .unwrap();
        let client = McpClient::start(ProxyOptions::new(daemon.port(), daemon.state_dir()))
            .await
            .unwrap();
        if wired {
            let reload = advised(&client, "reload_tab").await;
            let said = reload["instruction"].as_str().unwrap();
            assert!(said.starts_with("reload the app's tab"), "{reload}");
            assert!(said.contains("src/main.js"), "{reload}");
            assert!(!said.contains("reticle init"), "{reload}");
        } else {
            // Control: the same project unwired is told to wire it.
            let init = advised(&client, "run_init").await;
            assert_eq!(init["command"], "reticle init --write", "{init}");
            assert!(
                init["instruction"]
                    .as_str()
                    .unwrap()
                    .contains("src/main.js"),
                "{init}"
            );
        }
        client.close().await;
    }
}
