//! Zero install, end to end, on an app no one here wrote: a pristine `create-vite` React app,
//! scaffolded by its own tool at test time and never wired (no SDK, no `reticle init`), served
//! by its own dev server. An agent built on the official MCP TypeScript client starts `reticle
//! mcp --drive <the app>`; every step is asserted: the session is listed driven, with the
//! injected SDK; query; act_and_wait `yes` and a consequence that never comes not `yes`; acts
//! are real input; record, save the recording as a flow, replay it `yes`. Needs the npm registry;
//! a scaffold that fails is a failure, never a skip.

mod support;

use harness::{ReapPort, free_port};
use serde_json::{Value, json};
use support::scaffold::{DevServer, DevTool, Project};
use support::ts_agent::Agent;

/// The counter button's label in the template, with the count that follows it (`count is`).
fn counter_label(project: &Project) -> String {
    let app = std::fs::read_to_string(project.dir.join("src/App.jsx")).unwrap_or_default();
    let at = app
        .to_lowercase()
        .find("count is")
        .expect("the template's counter button says `count is`");
    app[at..at + "count is".len()].to_string()
}

fn elements(found: &Value) -> usize {
    found["elements"].as_array().map(Vec::len).unwrap_or(0)
}

#[tokio::test]
async fn a_pristine_create_vite_react_app_is_driven_with_no_sdk_in_it() {
    let project = Project::new();
    project.create_vite("react");
    let label = counter_label(&project);
    let server = DevServer::start(&project, DevTool::Vite);
    assert!(
        server.serving().await,
        "the dev server serves {}",
        server.url
    );
    let port = free_port();
    let _reap = ReapPort(port);
    let state = project.state.path().to_path_buf();
    let mut agent = Agent::start(&project.dir, &state, port, &["--drive", &server.url]).await;

    let counter = json!({"role": "button", "name": format!("{label} 0")});
    let found = agent
        .ok(
            "reticle_query",
            json!({"by": "role", "value": "button", "name": format!("{label} 0")}),
        )
        .await
        .expect("the first call finds the driven page");
    assert_eq!(elements(&found), 1, "{found}");
    let listed = agent.ok("reticle_sessions", json!({})).await.unwrap();
    let entry = &listed["sessions"][0];
    assert_eq!(listed["count"], 1, "{listed}");
    assert_eq!(entry["driven"], "launched", "{listed}");
    assert_eq!(entry["sdk"], "injected", "{listed}");

    let yes = agent
        .ok(
            "reticle_act_and_wait",
            json!({"target": counter, "action": "click",
                   "until": {"kind": "text", "contains": format!("{label} 1")}}),
        )
        .await
        .unwrap();
    assert_eq!(yes["verified"], "yes", "{yes}");
    assert_eq!(yes["act"]["inputMode"], "real", "{yes}");
    let not = agent
        .ok(
            "reticle_act_and_wait",
            json!({"target": {"role": "button", "name": format!("{label} 1")}, "action": "click",
                   "until": {"kind": "text", "contains": format!("{label} 99")}, "timeout_ms": 500}),
        )
        .await
        .unwrap();
    assert_ne!(not["verified"], "yes", "{not}");

    // Record a click from a fresh page, save it as a flow, replay it.
    let reloaded = agent.ok("reticle_refresh", json!({})).await.unwrap();
    assert_eq!(reloaded["confirmed"], true, "{reloaded}");
    let started = agent
        .ok("reticle_record", json!({"action": "start"}))
        .await
        .unwrap();
    assert!(started.get("startPath").is_some(), "{started}");
    let recorded = agent
        .ok(
            "reticle_act_and_wait",
            json!({"target": counter, "action": "click",
                   "until": {"kind": "text", "contains": format!("{label} 1")}}),
        )
        .await
        .unwrap();
    assert_eq!(recorded["verified"], "yes", "{recorded}");
    let stopped = agent
        .ok("reticle_record", json!({"action": "stop"}))
        .await
        .unwrap();
    assert_eq!(
        stopped["steps"].as_array().map(Vec::len),
        Some(1),
        "{stopped}"
    );
    let saved = agent
        .ok(
            "reticle_flow_save",
            json!({"name": "count", "startPath": "/", "overwrite": true, "steps": stopped["steps"]}),
        )
        .await
        .unwrap();
    assert!(
        project.dir.join(".reticle/flows/count.json").is_file(),
        "{saved}"
    );
    let replayed = agent
        .ok("reticle_flow_replay", json!({"name": "count"}))
        .await
        .unwrap();
    assert_eq!(replayed["verified"], "yes", "{replayed}");
    agent.close().await;
}
