//! `reticle mcp` hands its process over to `reticle-mcp`, the small executable beside it that
//! holds only the proxy (so an agent's proxy maps a few MiB of code, not all of Reticle's). Seen
//! from outside, through `/proc/<pid>/exe`: the agent's process and its worker run `reticle-mcp`
//! and serve; the controls run the proxy inside `reticle` (`RETICLE_MCP_IN_PROCESS=1`, or no
//! `reticle-mcp` beside it) and still serve; a `reticle-mcp` from another build hands back to
//! `reticle`; a `reticle-mcp` with no `reticle` beside it names the missing file in its answer.

mod support;

use std::path::{Path, PathBuf};

use harness::mcp_client::worker_of;
use harness::{McpClient, ProxyOptions, RawMcp, Stage, poll};
use reticle::config::{env, executables};
use serde_json::json;
use support::BOUND;

/// The executable `pid` runs.
fn exe_of(pid: u32) -> PathBuf {
    std::fs::read_link(format!("/proc/{pid}/exe")).expect("the process is alive")
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `reticle` and `reticle-mcp` of the build under test, linked (or copied) into a fresh
/// directory: `which` of them only.
fn lone_install(which: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a private install dir");
    let built = harness::binaries::reticle();
    for name in which {
        let from = built.with_file_name(name);
        let to = dir.path().join(name);
        if std::fs::hard_link(&from, &to).is_err() {
            std::fs::copy(&from, &to).expect("copy the binary");
        }
    }
    dir
}

/// Serves a call, then reports the executables of the supervisor and its worker.
async fn serving_executables(options: ProxyOptions) -> (PathBuf, PathBuf) {
    let client = McpClient::start(options).await.expect("the proxy starts");
    client
        .call_until_ok("reticle_sessions", json!({}), BOUND)
        .await;
    let pid = client.pid();
    let worker = poll::until("the worker to be listed", BOUND, async || worker_of(pid)).await;
    let found = (exe_of(pid), exe_of(worker));
    client.close().await;
    found
}

#[tokio::test]
async fn reticle_mcp_runs_as_the_proxy_executable_and_serves() {
    let stage = Stage::default();
    let (supervisor, worker) =
        serving_executables(ProxyOptions::new(stage.port, stage.state.path())).await;
    assert_eq!(file_name(&supervisor), executables::PROXY);
    assert_eq!(file_name(&worker), executables::PROXY);
}

/// The control: asked to stay in process, the proxy runs inside `reticle`, and serves alike.
#[tokio::test]
async fn in_process_the_proxy_runs_inside_reticle_and_serves() {
    let stage = Stage::default();
    let options = ProxyOptions::new(stage.port, stage.state.path()).env(env::MCP_IN_PROCESS, "1");
    let (supervisor, worker) = serving_executables(options).await;
    assert_eq!(file_name(&supervisor), executables::MAIN);
    assert_eq!(file_name(&worker), executables::MAIN);
}

#[tokio::test]
async fn a_reticle_with_no_proxy_executable_beside_it_serves_in_its_own_process() {
    let stage = Stage::default();
    let install = lone_install(&[executables::MAIN]);
    let options = ProxyOptions::new(stage.port, stage.state.path())
        .program(install.path().join(executables::MAIN));
    let (supervisor, _) = serving_executables(options).await;
    assert_eq!(supervisor, install.path().join(executables::MAIN));
}

/// A `reticle-mcp` told it was handed over by another build hands the process back to the
/// `reticle` beside it, which serves in process.
#[tokio::test]
async fn a_proxy_executable_from_another_build_hands_back_to_reticle() {
    let stage = Stage::default();
    let proxy = harness::binaries::reticle().with_file_name(executables::PROXY);
    let args: Vec<String> = [
        "mcp",
        "--port",
        &stage.port.to_string(),
        "--handed-over-by",
        "0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let options = ProxyOptions::new(stage.port, stage.state.path())
        .program(proxy)
        .args(&args);
    let mut raw = RawMcp::start(options);
    raw.initialize().await;
    let pid = raw.pid();
    assert_eq!(file_name(&exe_of(pid)), executables::MAIN);
    raw.close_stdin();
    raw.wait_exit(BOUND)
        .await
        .expect("the proxy exits when stdin closes");
}

/// A `reticle-mcp` alone cannot start a daemon: the call's answer names the file it needs.
#[tokio::test]
async fn a_proxy_executable_alone_names_the_missing_reticle() {
    let stage = Stage::default();
    let install = lone_install(&[executables::PROXY]);
    let options = ProxyOptions::new(stage.port, stage.state.path())
        .program(install.path().join(executables::PROXY));
    let client = McpClient::start(options).await.expect("the proxy starts");
    let failure = client
        .call_tool("reticle_sessions", json!({}))
        .await
        .expect_err("no daemon can start");
    let missing = install.path().join(executables::MAIN);
    assert!(
        failure.message().contains(&missing.display().to_string())
            || format!("{failure:?}").contains(&missing.display().to_string()),
        "{failure:?}"
    );
    client.close().await;
}
