//! Settings a daemon or proxy cannot use are refused by name, with exit 2, wherever they are
//! read: never a panic, never a quiet fall back to a default, never a log that is named as the
//! place to look but holds nothing. Each case runs the real binary with one bad variable; each
//! has a control with the same variable set well.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Stdio;

use harness::cli;
use harness::mcp_client::{ProxyOptions, RawMcp};
use serde_json::json;

/// `reticle <args>` in `state` with one variable set (to bytes, which need not be UTF-8).
async fn run_with_var(state: &Path, args: &[&str], name: &str, value: &[u8]) -> cli::Ran {
    let mut command = cli::command(state, args);
    command.env(name, OsStr::from_bytes(value));
    cli::run_command(command).await
}

/// A detached daemon on `port` with one variable set starts; it is stopped again at once.
async fn starts_and_stops(state: &Path, port: &str, name: &str, value: &[u8]) {
    let started = run_with_var(state, &["serve", "--port", port], name, value).await;
    assert!(started.ok(), "{started:?}");
    assert!(cli::run(state, &["stop", "--port", port]).await.ok());
}

fn refused_by_name(ran: &cli::Ran, name: &str) {
    assert_eq!(ran.code, Some(2), "{ran:?}");
    assert!(ran.stderr.contains(name), "{ran:?}");
    assert!(!ran.stderr.contains("panicked"), "{ran:?}");
}

#[tokio::test]
async fn a_zero_heartbeat_is_refused_before_the_daemon_starts() {
    let state = tempfile::tempdir().unwrap();
    let port = harness::free_port().to_string();
    let args = ["serve", "--foreground", "--port", &port];
    let ran = run_with_var(state.path(), &args, "RETICLE_HEARTBEAT_MS", b"0").await;
    refused_by_name(&ran, "RETICLE_HEARTBEAT_MS");
    assert!(ran.stderr.contains("at least 1"), "{ran:?}");
    // Control: one millisecond is a heartbeat, and the detached daemon starts.
    starts_and_stops(state.path(), &port, "RETICLE_HEARTBEAT_MS", b"1").await;
}

#[tokio::test]
async fn a_zero_idle_check_is_refused_and_a_set_one_is_used() {
    let state = tempfile::tempdir().unwrap();
    let port = harness::free_port().to_string();
    let args = ["serve", "--foreground", "--port", &port];
    let ran = run_with_var(state.path(), &args, "RETICLE_IDLE_CHECK_MS", b"0").await;
    refused_by_name(&ran, "RETICLE_IDLE_CHECK_MS");
    // Control: a set cadence starts the daemon, which says the cadence it watches at.
    let daemon = harness::OwnedDaemon::builder()
        .env("RETICLE_IDLE_CHECK_MS", "75")
        .start()
        .await;
    let log = std::fs::read_to_string(daemon.log_path()).unwrap();
    assert!(log.contains(r#""idleCheckMs":75"#), "{log}");
}

#[tokio::test]
async fn a_worker_thread_count_that_is_not_one_or_more_is_refused_and_logged() {
    let state = tempfile::tempdir().unwrap();
    let port = harness::free_port().to_string();
    let foreground = ["serve", "--foreground", "--port", &port];
    for bad in [&b"0"[..], b"abc"] {
        let ran = run_with_var(state.path(), &foreground, "TOKIO_WORKER_THREADS", bad).await;
        refused_by_name(&ran, "TOKIO_WORKER_THREADS");
    }
    // The refusal is in the log a spawner names as the place to look.
    let log = std::fs::read_to_string(state.path().join(format!("daemon-{port}.log"))).unwrap();
    assert_eq!(log.matches("TOKIO_WORKER_THREADS").count(), 2, "{log}");
    assert!(log.contains("daemon_start_failed"), "{log}");
    // Detached, it is refused before anything is spawned.
    let detached = ["serve", "--port", &port];
    let ran = run_with_var(state.path(), &detached, "TOKIO_WORKER_THREADS", b"0").await;
    refused_by_name(&ran, "TOKIO_WORKER_THREADS");
    // Control: two threads is a count.
    starts_and_stops(state.path(), &port, "TOKIO_WORKER_THREADS", b"2").await;
}

#[tokio::test]
async fn a_variable_that_is_not_utf8_is_refused_not_taken_for_unset() {
    let state = tempfile::tempdir().unwrap();
    let ran = run_with_var(state.path(), &["status"], "RETICLE_PORT", b"\xff").await;
    refused_by_name(&ran, "RETICLE_PORT");
    assert!(ran.stderr.contains("not valid UTF-8"), "{ran:?}");
    assert!(
        !ran.stdout.contains("4400"),
        "fell back to the default port: {ran:?}"
    );
    let port = harness::free_port().to_string();
    let args = ["serve", "--foreground", "--port", &port];
    let ran = run_with_var(state.path(), &args, "RETICLE_IDLE_SHUTDOWN_MS", b"\xff").await;
    refused_by_name(&ran, "RETICLE_IDLE_SHUTDOWN_MS");
    // Control: the same port as text is read.
    let ran = run_with_var(state.path(), &["status"], "RETICLE_PORT", port.as_bytes()).await;
    assert!(ran.stdout.contains(&port), "{ran:?}");
}

#[tokio::test]
async fn a_host_that_127_0_0_1_cannot_reach_is_refused_at_once() {
    let state = tempfile::tempdir().unwrap();
    let port = harness::free_port().to_string();
    for host in ["::1", "127.0.0.2"] {
        let args = ["serve", "--port", &port];
        let ran = run_with_var(state.path(), &args, "RETICLE_HOST", host.as_bytes()).await;
        refused_by_name(&ran, "RETICLE_HOST");
        assert!(ran.stderr.contains(host), "{ran:?}");
    }
    // Control: loopback itself is a host.
    starts_and_stops(state.path(), &port, "RETICLE_HOST", b"127.0.0.1").await;
}

/// `reticle <args>` with stderr on a pipe whose reader is gone; its exit code (`None`: a
/// signal ended it), bounded.
async fn exit_code_with_stderr_unread(
    state: &Path,
    args: &[&str],
    var: (&str, &str),
) -> Option<i32> {
    let (reader, writer) = nix::unistd::pipe().unwrap();
    drop(reader);
    let mut command = cli::command(state, args);
    command
        .env(var.0, var.1)
        .stdout(Stdio::null())
        .stderr(Stdio::from(writer));
    let mut child = tokio::process::Command::from(command)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let status = tokio::time::timeout(harness::cli::cli_bound(), child.wait())
        .await
        .expect("it exits")
        .unwrap();
    status.code()
}

#[tokio::test]
async fn the_proxy_refusing_a_setting_to_a_stderr_nobody_reads_exits_2_not_panicking() {
    let state = tempfile::tempdir().unwrap();
    let port = harness::free_port().to_string();
    for (program, args) in [
        ("reticle mcp", vec!["mcp", "--port", &port]),
        ("reticle mcp-worker", vec!["mcp-worker", "--port", &port]),
    ] {
        let code =
            exit_code_with_stderr_unread(state.path(), &args, ("RETICLE_DRAIN_MS", "abc")).await;
        assert_eq!(code, Some(2), "{program} with its stderr unread");
    }
    // Control: with stderr read, the same refusal says why.
    let mut command = cli::command(state.path(), &["mcp", "--port", &port]);
    command.env("RETICLE_DRAIN_MS", "abc");
    let ran = cli::run_command(command).await;
    refused_by_name(&ran, "RETICLE_DRAIN_MS");
}

#[tokio::test]
async fn a_daemon_the_proxy_could_not_start_is_named_with_its_reason() {
    let state = tempfile::tempdir().unwrap();
    let port = harness::free_port();
    let options = ProxyOptions::new(port, state.path()).env("RETICLE_HEARTBEAT_MS", "not-a-number");
    let answer = RawMcp::call_once(options, "reticle_sessions", json!({}), cli::cli_bound()).await;
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
    let said = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(said.contains("RETICLE_HEARTBEAT_MS"), "{answer}");
    assert!(said.contains("not-a-number"), "{answer}");
}
