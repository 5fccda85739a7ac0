//! Daemon lifecycle (H3.2, H3.5, H3.7 and the CLI promises): a stopped process is never
//! "running"; two racing daemons leave exactly one; a daemon started through a shell survives its
//! process group being SIGTERMed; `kill` ends the listener and spares clients; stale records from
//! a killed predecessor are noticed and never fatal; `/status` refuses a non-loopback Host; with
//! `RETICLE_IDLE_ATTACHED_MS`, an attached but unused daemon ends and the next call starts one.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use harness::cli::{self, run};
use harness::ports::{listeners, pid_alive};
use harness::{OwnedDaemon, free_port, marker, poll};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

const BOUND: Duration = Duration::from_secs(15);

#[tokio::test]
async fn a_stopped_daemon_is_never_reported_running() {
    let daemon = OwnedDaemon::start().await;
    let port = daemon.port().to_string();
    assert!(daemon.freeze().await, "the daemon never showed stopped");
    let report = run(daemon.state_dir(), &["status", "--port", &port, "--json"])
        .await
        .json();
    assert_eq!(report["running"], false, "{report}");
    assert_eq!(report["presence"], "foreign");
    assert!(
        report["diagnosis"].as_str().unwrap().contains("stopped"),
        "{report}"
    );
    // Control: the same daemon, continued, reads running again.
    daemon.signal(Signal::SIGCONT);
    let report = run(daemon.state_dir(), &["status", "--port", &port, "--json"])
        .await
        .json();
    assert_eq!(report["running"], true, "{report}");
    assert_eq!(report["daemon"]["instance"], daemon.instance());
}

#[tokio::test]
async fn stop_ends_a_stopped_daemon() {
    let mut daemon = OwnedDaemon::start().await;
    let port = daemon.port().to_string();
    assert!(daemon.freeze().await, "the daemon never showed stopped");
    let stop = run(daemon.state_dir(), &["stop", "--port", &port]).await;
    assert!(stop.ok(), "{stop:?}");
    poll::until("the daemon to exit", BOUND, async || {
        daemon.has_exited().then_some(())
    })
    .await;
    assert!(listeners(daemon.port()).is_empty());
}

#[tokio::test]
async fn stop_quiet_says_nothing_when_it_succeeds() {
    let mut daemon = OwnedDaemon::start().await;
    let port = daemon.port().to_string();
    let stop = run(daemon.state_dir(), &["stop", "--quiet", "--port", &port]).await;
    assert!(stop.ok(), "{stop:?}");
    assert_eq!(stop.stdout, "", "{stop:?}");
    poll::until("the daemon to exit", BOUND, async || {
        daemon.has_exited().then_some(())
    })
    .await;
    // With no daemon left, a quiet stop still succeeds in silence; without --quiet (the
    // control) it says no daemon is running.
    let again = run(daemon.state_dir(), &["stop", "-q", "--port", &port]).await;
    assert!(again.ok() && again.stdout.is_empty(), "{again:?}");
    let loud = run(daemon.state_dir(), &["stop", "--port", &port]).await;
    assert!(
        loud.ok() && loud.stdout.contains("no Reticle daemon"),
        "{loud:?}"
    );
}

#[tokio::test]
async fn two_racing_foreground_daemons_leave_exactly_one() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port().to_string();
    let spawn = || {
        cli::command(state.path(), &["serve", "--foreground", "--port", &port])
            .env(reticle::config::env::IDLE_SHUTDOWN_MS, "0")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut first = spawn();
    let mut second = spawn();
    let (loser, winner) = poll::until("one racer to give up", BOUND, async || {
        if let Ok(Some(code)) = first.try_wait() {
            return Some((code, second.id()));
        }
        if let Ok(Some(code)) = second.try_wait() {
            return Some((code, first.id()));
        }
        None
    })
    .await;
    assert!(!loser.success(), "the loser exits non-zero");
    let mut stderr = String::new();
    for child in [&mut first, &mut second] {
        if let Some(mut pipe) = child.stderr.take()
            && matches!(child.try_wait(), Ok(Some(_)))
        {
            use std::io::Read;
            pipe.read_to_string(&mut stderr).unwrap();
        }
    }
    assert!(
        stderr.contains(&winner.to_string()),
        "names the first: {stderr}"
    );
    let status = poll::until("the winner to answer", BOUND, async || {
        reticle::probe::fetch_status(port.parse().unwrap(), Duration::from_millis(300)).await
    })
    .await;
    assert_eq!(status.pid, winner);
    assert_eq!(listeners(port.parse().unwrap()).len(), 1);
    for child in [&mut first, &mut second] {
        let _ = child.kill();
        let _ = child.wait();
    }
}

#[tokio::test]
async fn two_racing_detached_serves_leave_exactly_one_daemon() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port().to_string();
    let args = ["serve", "--port", port.as_str()];
    let (a, b) = tokio::join!(run(state.path(), &args), run(state.path(), &args));
    let status = reticle::probe::fetch_status(port.parse().unwrap(), Duration::from_secs(1))
        .await
        .expect("one daemon answers");
    assert_eq!(listeners(port.parse().unwrap()).len(), 1);
    let winner = status.pid.to_string();
    for ran in [&a, &b] {
        let honest = (ran.ok()
            && (ran.stdout.contains(&winner) || ran.stdout.contains("already serving")))
            || (!ran.ok() && ran.stderr.contains(&winner));
        assert!(
            honest,
            "each serve either started/found the winner or named it: {ran:?}"
        );
    }
    assert!(a.ok() || b.ok());
    let stop = run(state.path(), &["stop", "--port", &port]).await;
    assert!(stop.ok(), "{stop:?}");
}

#[tokio::test]
async fn a_daemon_survives_its_spawning_shells_process_group_being_terminated() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port();
    let script = format!(
        "'{}' serve --port {port} && exec sleep 60",
        harness::binaries::reticle().display()
    );
    let mut shell = Command::new("sh");
    shell
        .args(["-c", &script])
        .env("RETICLE_STATE_DIR", state.path())
        .env("RETICLE_HEARTBEAT_MS", "20")
        .stdout(Stdio::null())
        .process_group(0);
    marker::mark(&mut shell);
    let mut shell = shell.spawn().unwrap();
    let status = poll::until("the daemon to answer", BOUND, async || {
        reticle::probe::fetch_status(port, Duration::from_millis(300)).await
    })
    .await;
    kill(Pid::from_raw(-(shell.id() as i32)), Signal::SIGTERM).unwrap();
    poll::until("the shell to die", BOUND, async || {
        matches!(shell.try_wait(), Ok(Some(_))).then_some(())
    })
    .await;
    let log = state.path().join(format!("daemon-{port}.log"));
    let beats = |text: String| text.matches("daemon_alive").count();
    let before = beats(std::fs::read_to_string(&log).unwrap());
    poll::until("five more heartbeats", BOUND, async || {
        (beats(std::fs::read_to_string(&log).unwrap()) >= before + 5).then_some(())
    })
    .await;
    let after = reticle::probe::fetch_status(port, Duration::from_secs(1)).await;
    assert_eq!(after.map(|s| s.instance), Some(status.instance));
    let stop = run(state.path(), &["stop", "--port", &port.to_string()]).await;
    assert!(stop.ok(), "{stop:?}");
}

#[tokio::test]
async fn control_a_foreground_daemon_in_the_group_dies_with_it() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port();
    let script = format!(
        "'{}' serve --foreground --port {port}",
        harness::binaries::reticle().display()
    );
    let mut shell = Command::new("sh");
    shell
        .args(["-c", &script])
        .env("RETICLE_STATE_DIR", state.path())
        .env(reticle::config::env::IDLE_SHUTDOWN_MS, "0")
        .stdout(Stdio::null())
        .process_group(0);
    marker::mark(&mut shell);
    let mut shell = shell.spawn().unwrap();
    poll::until("the daemon to answer", BOUND, async || {
        reticle::probe::fetch_status(port, Duration::from_millis(300)).await
    })
    .await;
    kill(Pid::from_raw(-(shell.id() as i32)), Signal::SIGTERM).unwrap();
    poll::until("the port to be free", BOUND, async || {
        listeners(port).is_empty().then_some(())
    })
    .await;
    let _ = shell.wait();
}

#[tokio::test]
async fn kill_ends_the_listener_and_spares_a_connected_client() {
    let mut daemon = OwnedDaemon::start().await;
    let port = daemon.port();
    let mut client = Command::new("python3");
    client
        .args([
            "-c",
            &format!(
                "import socket,time\ns=socket.create_connection(('127.0.0.1',{port}))\nprint('connected',flush=True)\ntime.sleep(60)"
            ),
        ])
        .stdout(Stdio::piped());
    marker::mark(&mut client);
    let mut client = client.spawn().unwrap();
    let client_pid = client.id();
    poll::until("the client to hold a socket", BOUND, async || {
        harness::ports::holders(port)
            .iter()
            .any(|h| h.pid == client_pid)
            .then_some(())
    })
    .await;
    let ran = run(daemon.state_dir(), &["kill", "--port", &port.to_string()]).await;
    assert!(ran.ok(), "{ran:?}");
    poll::until("the daemon to exit", BOUND, async || {
        daemon.has_exited().then_some(())
    })
    .await;
    assert!(listeners(port).is_empty());
    assert!(
        pid_alive(client_pid),
        "the client process must be left alone"
    );
    let _ = client.kill();
    let _ = client.wait();
}

#[tokio::test]
async fn kill_refuses_a_foreign_listener_without_force() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut squatter = Command::new("python3");
    squatter
        .args([
            "-c",
            &format!("import socket,time\ns=socket.socket()\ns.bind(('127.0.0.1',{port}))\ns.listen()\ntime.sleep(60)"),
        ]);
    marker::mark(&mut squatter);
    let mut squatter = squatter.spawn().unwrap();
    poll::until("the squatter to listen", BOUND, async || {
        (!listeners(port).is_empty()).then_some(())
    })
    .await;
    let refused = run(state.path(), &["kill", "--port", &port.to_string()]).await;
    assert!(!refused.ok());
    assert!(refused.stderr.contains("--force"), "{}", refused.stderr);
    assert!(pid_alive(squatter.id()));
    let forced = run(
        state.path(),
        &["kill", "--port", &port.to_string(), "--force"],
    )
    .await;
    assert!(forced.ok(), "{forced:?}");
    poll::until("the squatter to die", BOUND, async || {
        matches!(squatter.try_wait(), Ok(Some(_))).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_killed_predecessors_records_are_noticed_and_not_fatal() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut first = OwnedDaemon::builder()
        .port(port)
        .state_dir(state.path())
        .start()
        .await;
    first.signal(Signal::SIGKILL);
    poll::until("the first daemon to die", BOUND, async || {
        first.has_exited().then_some(())
    })
    .await;
    let port_arg = port.to_string();
    let doctor = run(state.path(), &["doctor", "--port", &port_arg]).await;
    assert!(
        !doctor.ok(),
        "stale records are obstacles: {}",
        doctor.stdout
    );
    assert!(
        doctor.stdout.contains("pid file") && doctor.stdout.contains("gone"),
        "{}",
        doctor.stdout
    );

    let second = OwnedDaemon::builder()
        .port(port)
        .state_dir(state.path())
        .start()
        .await;
    let log = std::fs::read_to_string(second.log_path()).unwrap();
    for event in [
        "daemon_stale_lock",
        "daemon_stale_pid",
        "daemon_previous_died_unclean",
    ] {
        assert!(log.contains(event), "{event} missing from:\n{log}");
    }
    drop(second);
    let stop = run(state.path(), &["stop", "--port", &port_arg]).await;
    assert!(stop.ok());
    // Control: once the records are cleared, doctor finds nothing wrong.
    let doctor = run(state.path(), &["doctor", "--port", &port_arg]).await;
    assert!(doctor.ok(), "{}", doctor.stdout);
}

#[tokio::test]
async fn status_refuses_a_rebinding_host_without_the_token() {
    let daemon = OwnedDaemon::start().await;
    let url = format!("http://127.0.0.1:{}/status", daemon.port());
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let evil = client
        .get(&url)
        .header("Host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(evil.status(), 401);
    let body: serde_json::Value = evil.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("token"));
    let token = std::fs::read_to_string(daemon.state_dir().join("pairing-token")).unwrap();
    let with_token = client
        .get(&url)
        .header("Host", "evil.example")
        .bearer_auth(token.trim())
        .send()
        .await
        .unwrap();
    assert_eq!(with_token.status(), 200);
    let local = client.get(&url).send().await.unwrap();
    assert_eq!(local.status(), 200);
}

#[tokio::test]
async fn unknown_subcommands_run_reticle_dash_name_from_path() {
    let state = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let script = bin.path().join("reticle-hello");
    std::fs::write(&script, "#!/bin/sh\necho \"hello $*\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut hello = cli::command(state.path(), &["hello", "a", "b"]);
    hello.env("PATH", &path);
    let out = assert_cmd::Command::from_std(hello)
        .timeout(cli::CLI_BOUND)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "hello a b");
    // Control: a name with no program behind it is a usage error naming it.
    let missing = run(state.path(), &["no-such-thing"]).await;
    assert_eq!(missing.code, Some(2));
    assert!(
        missing.stderr.contains("reticle-no-such-thing"),
        "{}",
        missing.stderr
    );
}

#[tokio::test]
async fn marked_orphans_are_found_by_marker_not_port() {
    let mut child = Command::new("sleep");
    child.arg("30");
    marker::mark(&mut child);
    let mut child = child.spawn().unwrap();
    let pid = child.id();
    // The marker appears in /proc once the child has exec'd, not at fork.
    poll::until("the child's marker", BOUND, async || {
        marker::marked_processes()
            .into_iter()
            .find(|m| m.pid == pid && m.owner == std::process::id())
    })
    .await;
    // Its owner (this test) is alive, so the sweep must leave it alone.
    assert!(marker::sweep_orphans().iter().all(|m| m.pid != child.id()));
    assert!(pid_alive(child.id()));
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test]
async fn restart_replaces_the_daemon_with_a_fresh_instance() {
    let state = tempfile::tempdir().unwrap();
    let port = free_port().to_string();
    assert!(run(state.path(), &["serve", "--port", &port]).await.ok());
    let first = run(state.path(), &["status", "--port", &port, "--json"])
        .await
        .json();
    let restart = run(state.path(), &["restart", "--port", &port]).await;
    assert!(restart.ok(), "{restart:?}");
    let second = run(state.path(), &["status", "--port", &port, "--json"])
        .await
        .json();
    assert_eq!(second["running"], true);
    assert_ne!(first["daemon"]["instance"], second["daemon"]["instance"]);
    assert_eq!(second["lastExit"]["kind"], "signalled", "{second}");
    assert!(run(state.path(), &["stop", "--port", &port]).await.ok());
}

/// A stand-in daemon answering `/status` as an older Reticle would (a deliberate fake: the point
/// is a version the real binary can never report).
fn older_daemon_on_a_free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            use std::io::{Read, Write};
            let mut stream = stream;
            let mut buf = [0u8; 2048];
            let _ = stream.read(&mut buf);
            let body = format!(
                r#"{{"running":true,"version":"0.0.1","instance":"old","pid":1,"port":{port},"startedAt":"then","sessionCount":0,"sessions":[]}}"#
            );
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

#[tokio::test]
async fn doctor_names_a_version_mismatch() {
    let state = tempfile::tempdir().unwrap();
    let port = older_daemon_on_a_free_port().to_string();
    let doctor = run(state.path(), &["doctor", "--port", &port, "--json"]).await;
    assert!(!doctor.ok());
    let report = doctor.json();
    let version = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "version")
        .expect("a version finding");
    assert_eq!(version["ok"], false);
    assert!(
        version["detail"].as_str().unwrap().contains("0.0.1"),
        "{version}"
    );
}

/// `RETICLE_IDLE_ATTACHED_MS` (the reference's name): a daemon whose agents stay attached but
/// make no call, with no page or lease, ends at that bound, its agent's stream still open (the
/// plain idle bound, ten minutes here, would have kept it); the proxy lives on, and the agent's
/// next call is answered by a fresh daemon it starts.
#[tokio::test]
async fn an_attached_but_unused_daemon_ends_and_the_next_call_starts_another() {
    let (state, port) = (tempfile::tempdir().unwrap(), free_port());
    let _reap = harness::ReapPort(port);
    let options = harness::ProxyOptions::new(port, state.path())
        .env(reticle::config::env::IDLE_ATTACHED_MS, "1500")
        .env(reticle::config::env::IDLE_SHUTDOWN_MS, "600000");
    let mut agent = harness::RawMcp::start(options);
    agent.initialize().await;
    let instance = async |agent: &mut harness::RawMcp| {
        let id = agent
            .request(
                "tools/call",
                serde_json::json!({"name": "reticle_sessions", "arguments": {}}),
            )
            .await;
        let answer = agent
            .answer(&id, Duration::from_secs(30))
            .await
            .expect("answered");
        answer["result"]["structuredContent"]["daemon"]["instance"].clone()
    };
    let first = instance(&mut agent).await;
    assert!(first.is_string(), "{first}");
    poll::until(
        "the unused daemon ends, its agent attached",
        Duration::from_secs(30),
        async || {
            reticle::probe::fetch_status(port, Duration::from_millis(300))
                .await
                .is_none()
                .then_some(())
        },
    )
    .await;
    assert!(pid_alive(agent.pid()), "the proxy lives on");
    let second = instance(&mut agent).await;
    assert!(
        second.is_string() && second != first,
        "{first} then {second}"
    );
}
