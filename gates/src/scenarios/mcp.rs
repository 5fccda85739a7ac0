//! Hop 1 and 2 scenarios (and H3.3, which needs an attached MCP client): each drives `reticle
//! mcp` through a real MCP client (`harness::McpClient`, rmcp over stdio) that records every
//! call in the history, injects its fault as the nemesis, and judges the calls after it. The
//! finer promises (and the rows that need a link relay) are in `gates/tests/mcp_*.rs`.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use harness::ports::{holders, listeners, pid_alive};
use harness::{McpClient, OwnedDaemon, ProxyOptions, free_port, marker, poll};
use serde_json::json;

use super::{GateEnv, Ran};
use crate::history::History;
use crate::judge::{self, Judgement, RowOutcome};

const BOUND: Duration = Duration::from_secs(20);
const CALL: &str = "tools/call";

fn options(env: &GateEnv, port: u16, state: &Path) -> ProxyOptions {
    ProxyOptions::new(port, state).binary(&env.reticle)
}

async fn start(options: ProxyOptions, history: &History) -> Result<McpClient, Ran> {
    McpClient::start_recording(options, history.clone())
        .await
        .map_err(|failure| Ran {
            history: history.clone(),
            judgement: Judgement::new(
                RowOutcome::Silent,
                format!(
                    "the MCP handshake with reticle mcp failed: {}",
                    failure.message()
                ),
            ),
        })
}

fn judged(history: History, judge: impl FnOnce(&[crate::history::Op]) -> Judgement) -> Ran {
    let judgement = judge(&history.ops());
    Ran { history, judgement }
}

/// Calls `reticle_sessions` until one succeeds (before any fault), within the bound.
async fn warm(client: &McpClient) -> bool {
    poll::within(BOUND, async || {
        client.call_tool("reticle_sessions", json!({})).await.ok()
    })
    .await
    .is_some()
}

/// Ends, when dropped, the daemons this gate's proxies started on the port.
struct Reap(u16);

impl Drop for Reap {
    fn drop(&mut self) {
        marker::end_marked_listeners(self.0);
    }
}

/// H1.1: `lsof -ti tcp:PORT | xargs kill -9` mid-session; the next calls must succeed.
pub async fn lsof_kill_recipe(env: &GateEnv) -> Ran {
    let history = History::new();
    let state = tempfile::tempdir().expect("state dir");
    let port = free_port();
    let _reap = Reap(port);
    let client = match start(options(env, port, state.path()), &history).await {
        Ok(client) => client,
        Err(ran) => return ran,
    };
    if !warm(&client).await {
        history.fault(
            "lsof_kill_recipe",
            false,
            json!({ "reason": "no call succeeded before the fault" }),
        );
        return judged(history, |ops| judge::must_survive(ops, CALL));
    }
    let me = std::process::id();
    let quiet = poll::within(BOUND, async || {
        holders(port).iter().all(|h| h.pid != me).then_some(())
    })
    .await;
    let victims: Vec<u32> = holders(port).iter().map(|h| h.pid).collect();
    let ran = quiet.is_some()
        && Command::new("sh")
            .args(["-c", &format!("lsof -ti tcp:{port} | xargs kill -9")])
            .status()
            .is_ok_and(|s| s.success());
    let gone = poll::within(BOUND, async || {
        victims.iter().all(|pid| !pid_alive(*pid)).then_some(())
    })
    .await
    .is_some();
    history.fault(
        "lsof_kill_recipe",
        ran && gone && !victims.is_empty() && pid_alive(client.pid()),
        json!({ "port": port, "killed": victims, "proxy": client.pid() }),
    );
    for _ in 0..3 {
        let _ = client.call_tool("reticle_sessions", json!({})).await;
    }
    client.close().await;
    judged(history, |ops| judge::must_survive(ops, CALL))
}

/// H1.2: a panic inside the proxy's request handling; the next call succeeds.
pub async fn panic_in_the_proxy(env: &GateEnv) -> Ran {
    let history = History::new();
    let state = tempfile::tempdir().expect("state dir");
    let port = free_port();
    let _reap = Reap(port);
    let opts =
        options(env, port, state.path()).env(reticle::config::env::TEST_PANIC_METHOD, "ping");
    let client = match start(opts, &history).await {
        Ok(client) => client,
        Err(ran) => return ran,
    };
    warm(&client).await;
    let panicked = client.ping().await.err().and_then(|f| f.code()) == Some(-32603);
    history.fault(
        "panic_in_request_handling",
        panicked,
        json!({ "method": "ping" }),
    );
    for _ in 0..3 {
        let _ = client.call_tool("reticle_sessions", json!({})).await;
    }
    client.close().await;
    judged(history, |ops| judge::must_survive(ops, CALL))
}

/// H2.4: a squatter holds the port: `initialize` must answer within 1 s and the first tool
/// call must name the port and the squatter.
pub async fn squatter(env: &GateEnv) -> Ran {
    let history = History::new();
    let state = tempfile::tempdir().expect("state dir");
    let Ok(squatter) = std::net::TcpListener::bind("127.0.0.1:0") else {
        history.fault(
            "squat_port",
            false,
            json!({ "reason": "could not bind a squatter" }),
        );
        return judged(history, |ops| judge::must_surface(ops, CALL, &[]));
    };
    let port = squatter.local_addr().map(|a| a.port()).unwrap_or(0);
    let holder = std::process::id().to_string();
    history.fault(
        "squat_port",
        true,
        json!({ "port": port, "holder": holder }),
    );
    let started = tokio::time::timeout(
        Duration::from_secs(1),
        start(options(env, port, state.path()), &history),
    )
    .await;
    let client = match started {
        Ok(Ok(client)) => client,
        Ok(Err(ran)) => return ran,
        Err(_) => {
            return judged(history, |_| {
                Judgement::new(RowOutcome::Silent, "initialize was not answered within 1 s")
            });
        }
    };
    let _ = client.call_tool("reticle_sessions", json!({})).await;
    client.close().await;
    drop(squatter);
    let port = port.to_string();
    judged(history, |ops| {
        judge::must_surface(ops, CALL, &[&port, &holder])
    })
}

/// H2.6: kill the daemon, let the proxy start another, then call a tool: it must reach an
/// initialized session (the daemon refuses calls on an uninitialized one).
pub async fn handshake_replay(env: &GateEnv) -> Ran {
    let history = History::new();
    let state = tempfile::tempdir().expect("state dir");
    let port = free_port();
    let _reap = Reap(port);
    let opts = options(env, port, state.path());
    let client = match start(opts.clone(), &history).await {
        Ok(client) => client,
        Err(ran) => return ran,
    };
    warm(&client).await;
    let daemon = listeners(port).first().map(|h| h.pid);
    if let Some(pid) = daemon {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let seen = poll::within(BOUND, async || {
        opts.log_events()
            .into_iter()
            .find(|e| e["event"] == "mcp_connection_lost")
    })
    .await;
    history.fault(
        "kill_daemon",
        daemon.is_some_and(|pid| !pid_alive(pid)) && seen.is_some(),
        json!({ "port": port, "pid": daemon }),
    );
    for _ in 0..3 {
        let _ = client.call_tool("reticle_sessions", json!({})).await;
    }
    client.close().await;
    judged(history, |ops| judge::must_survive(ops, CALL))
}

/// H3.3: a daemon with a small idle bound and an attached proxy must not idle out; the agent's
/// calls keep reaching the same daemon.
pub async fn idle_while_attached(env: &GateEnv) -> Ran {
    let history = History::new();
    let state = tempfile::tempdir().expect("state dir");
    let daemon = OwnedDaemon::builder()
        .state_dir(state.path())
        .env("RETICLE_IDLE_SHUTDOWN_MS", "300")
        .env("RETICLE_HEARTBEAT_MS", "30")
        .start()
        .await;
    let client = match start(options(env, daemon.port(), state.path()), &history).await {
        Ok(client) => client,
        Err(ran) => return ran,
    };
    warm(&client).await;
    let log = daemon.log_path();
    let beats = |text: String| text.matches("daemon_alive").count();
    let before = beats(std::fs::read_to_string(&log).unwrap_or_default());
    // Forty heartbeats at 30 ms: four times the idle bound, with the proxy attached and silent.
    let passed = poll::within(BOUND, async || {
        (beats(std::fs::read_to_string(&log).unwrap_or_default()) >= before + 40).then_some(())
    })
    .await
    .is_some();
    history.fault(
        "idle_bound_passed_attached",
        passed,
        json!({ "boundMs": 300 }),
    );
    let _ = client.call_tool("reticle_sessions", json!({})).await;
    let same = daemon
        .status()
        .await
        .is_some_and(|s| s.instance == daemon.instance());
    client.close().await;
    judged(history, move |ops| {
        if !same {
            return Judgement::new(
                RowOutcome::Silent,
                "the daemon idled out while a client stream was attached",
            );
        }
        judge::must_survive(ops, CALL)
    })
}
