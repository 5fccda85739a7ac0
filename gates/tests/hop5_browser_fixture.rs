//! The fixture app (`apps/e2e/`) served by the harness's `FixtureApp` and driven through the
//! bridge in Chromium: the page and its sandboxed iframe are two sessions; a login against the
//! fixture API with the fault set to `error` shows up as a 500 `net.request` event, and with
//! the fault cleared as a 200 (the control).

use std::time::Duration;

use harness::{BridgeClient, Browser, FixtureApp, OwnedDaemon, poll};
use serde_json::{Value, json};

const BOUND: Duration = Duration::from_secs(20);

fn first_ref(answer: &Value) -> String {
    assert_eq!(answer["ok"], true, "{answer}");
    answer["result"]["elements"][0]["ref"]
        .as_str()
        .unwrap_or_else(|| panic!("no element: {answer}"))
        .to_string()
}

async fn set_fault(app: &FixtureApp, mode: &str) {
    let answer: Value = reqwest::Client::new()
        .post(app.url("/api/fault"))
        .json(&json!({ "mode": mode }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["mode"], mode);
}

async fn login(client: &BridgeClient, session: &str) {
    for (testid, value) in [("login-user", "ann"), ("login-password", "pw")] {
        let field = first_ref(
            &client
                .command(Some(session), "query", json!({"testid": testid}), None)
                .await,
        );
        let fill = client
            .command(
                Some(session),
                "act",
                json!({"ref": field, "action": "fill", "args": {"value": value}}),
                None,
            )
            .await;
        assert_eq!(fill["ok"], true, "{fill}");
    }
    let submit = first_ref(
        &client
            .command(
                Some(session),
                "query",
                json!({"testid": "login-submit"}),
                None,
            )
            .await,
    );
    let click = client
        .command(
            Some(session),
            "act",
            json!({"ref": submit, "action": "click"}),
            None,
        )
        .await;
    assert_eq!(click["ok"], true, "{click}");
}

async fn login_status(client: &BridgeClient, session: &str, status: u64) {
    poll::until(
        &format!("a /api/login net.request with status {status}"),
        BOUND,
        async || {
            let read = client.events(session, None).await;
            read["events"]
                .as_array()?
                .iter()
                .any(|e| {
                    e["type"] == "net.request"
                        && e["data"]["url"]
                            .as_str()
                            .unwrap_or("")
                            .contains("/api/login")
                        && e["data"]["status"] == status
                })
                .then_some(())
        },
    )
    .await;
}

#[tokio::test]
async fn the_fixture_app_and_its_iframe_connect_and_a_failing_login_is_observed() {
    let daemon = OwnedDaemon::start().await;
    let client = BridgeClient::new(daemon.port());
    let app = FixtureApp::start().await;
    let browser = Browser::launch().await.expect("chromium launches");
    let url = app.url(&format!(
        "/?reticlePort={}&reticleToken={}&session=fx",
        daemon.port(),
        daemon.token()
    ));
    let tab = browser.open(&url).await.unwrap();
    for id in ["fx", "fx-frame"] {
        let listed = poll::within(BOUND, async || client.session(id).await.map(|_| ())).await;
        if listed.is_none() {
            // Say what the page and the daemon saw, so a failure names its cause.
            let page: Result<Value, _> = tab
                .eval("({ url: location.href, ready: document.readyState, frames: frames.length })")
                .await;
            panic!(
                "session {id} was not listed within {BOUND:?}; the page: {page:?}; the daemon's status: {}",
                client.status().await
            );
        }
    }
    set_fault(&app, "error").await;
    login(&client, "fx").await;
    login_status(&client, "fx", 500).await;
    // Control: the same login with the fault cleared answers 200.
    set_fault(&app, "ok").await;
    login(&client, "fx").await;
    login_status(&client, "fx", 200).await;
}
