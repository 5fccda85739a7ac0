//! Hop 2, one daemon for agents of several projects: each agent's workspace is its own
//! project's. The first agent's `reticle mcp` (started in project A) starts the daemon; a second
//! agent started in project B on the same port saves a flow, and it lands in B's `.reticle/`,
//! listed by B and never by A; `reticle_sessions` names each agent's own workspace. Control: a
//! `reticle mcp` that names no project on its stream (as before) saves into A's workspace, the
//! silent mix-up this guards against.

use std::path::Path;

use harness::{McpClient, ProxyOptions, free_port};
use reticle::config::env;
use serde_json::{Value, json};

/// An agent's `reticle mcp` on `port`, started for the project at `project`.
async fn agent(port: u16, state: &Path, project: &Path, extra: &[(&str, &str)]) -> McpClient {
    let mut options =
        ProxyOptions::new(port, state).env(env::PROJECT_DIR, project.display().to_string());
    for (key, value) in extra {
        options = options.env(key, *value);
    }
    McpClient::start(options).await.expect("reticle mcp starts")
}

/// A flow that needs no page to be saved: one click and the signal it must bring.
fn flow(name: &str) -> Value {
    gates::scenarios::verify_rig::click_flow(name, "go", "done", 2000)
}

async fn save(agent: &McpClient, name: &str) -> Value {
    let saved = agent
        .call_tool(
            "reticle_run",
            json!({"tool": "reticle_flow_save", "args": flow(name)}),
        )
        .await
        .expect("the call is answered");
    assert_ne!(saved["isError"], true, "{saved}");
    saved["structuredContent"].clone()
}

/// The names `agent` lists as saved.
async fn listed(agent: &McpClient) -> Vec<String> {
    let answer = agent
        .call_tool(
            "reticle_run",
            json!({"tool": "reticle_flow", "args": {"action": "list"}}),
        )
        .await
        .expect("the call is answered");
    answer["structuredContent"]["flows"]
        .as_array()
        .map(|flows| {
            flows
                .iter()
                .filter_map(|f| f["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

async fn workspace_of(agent: &McpClient) -> String {
    let answer = agent
        .call_tool("reticle_sessions", json!({}))
        .await
        .expect("the call is answered");
    answer["structuredContent"]["workspace"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn saved_in(project: &Path, name: &str) -> bool {
    project
        .join(".reticle/flows")
        .join(format!("{name}.json"))
        .is_file()
}

#[tokio::test]
async fn each_agent_saves_and_lists_flows_in_its_own_projects_workspace() {
    let state = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let (a_dir, b_dir, c_dir) = (
        a.path().canonicalize().unwrap(),
        b.path().canonicalize().unwrap(),
        c.path().canonicalize().unwrap(),
    );
    let port = free_port();
    // A's agent starts the daemon; B's joins it.
    let first = agent(port, state.path(), &a_dir, &[]).await;
    save(&first, "a-flow").await;
    let second = agent(port, state.path(), &b_dir, &[]).await;
    save(&second, "b-flow").await;

    assert!(
        saved_in(&b_dir, "b-flow"),
        "B's flow is not in B's workspace"
    );
    assert!(
        !saved_in(&a_dir, "b-flow"),
        "B's flow went to A's workspace"
    );
    assert_eq!(listed(&first).await, ["a-flow"]);
    assert_eq!(listed(&second).await, ["b-flow"]);
    assert_eq!(
        workspace_of(&second).await,
        b_dir.join(".reticle").display().to_string()
    );
    assert_eq!(
        workspace_of(&first).await,
        a_dir.join(".reticle").display().to_string()
    );

    // Control: an agent whose `reticle mcp` names no project lands in the daemon's (A's).
    let unnamed = agent(
        port,
        state.path(),
        &c_dir,
        &[(env::TEST_STAND_IN_PROXY_NAMES_NO_PROJECT, "1")],
    )
    .await;
    save(&unnamed, "c-flow").await;
    assert!(
        saved_in(&a_dir, "c-flow") && !saved_in(&c_dir, "c-flow"),
        "the control's flow did not land in the first project"
    );

    for client in [first, second, unnamed] {
        client.close().await;
    }
    let stopped = harness::cli::run(state.path(), &["stop", "--port", &port.to_string()]).await;
    assert!(stopped.ok(), "{}", stopped.said());
}
