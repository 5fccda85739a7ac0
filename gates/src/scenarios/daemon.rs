//! Hop 3 scenarios: each provokes one daemon-lifecycle row against real processes, records the
//! fault and every CLI call in a history, and judges it. The CLI calls are what a user sees, so a
//! call's completion is `ok` for exit 0 and `fail` otherwise, with what it printed (`info` for a
//! call killed at the harness's bound: a hang). H3.8's control (the connection released first) is
//! [`connection_on_the_port`] with [`SourcePort::Released`]. H3.3 needs an attached client instead: its calls
//! go through the hop 1 and 2 [`super::agent::Agent`], opened by [`warm_agent`].

use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use harness::cli::{self, Ran as CliRan};
use harness::ports::{listeners, outbound, pid_alive};
use harness::{OwnedDaemon, free_port, marker, poll};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

use super::kit::{self, judge_survival, judged, unestablished, warm_agent};
use super::{GateEnv, Ran, proxy_options};
use crate::fault;
use crate::history::{History, OpType};
use crate::judge::{self, Judgement, RowOutcome, one_line};

const BOUND: Duration = Duration::from_secs(15);

/// Runs `reticle <args>` (bounded) and records it as a client call: `ok` for exit 0, `fail` for
/// any other exit, `info` when it did not exit within the harness's bound (the row is then
/// silent, "hung").
async fn call(history: &History, env: &GateEnv, state: &Path, args: &[&str]) -> CliRan {
    let f = args.first().copied().unwrap_or("reticle");
    history.invoke(f, json!({ "args": args }));
    let ran = cli::run_with(&env.reticle, state, args).await;
    kit::complete_cli(history, f, &ran);
    ran
}

/// Runs `reticle status --port <port> --json` as a recorded [`call`], and reads the report it
/// printed (null when it printed none).
async fn status_report(history: &History, env: &GateEnv, state: &Path, port: &str) -> Value {
    let ran = call(history, env, state, &["status", "--port", port, "--json"]).await;
    serde_json::from_str(ran.stdout.trim()).unwrap_or(Value::Null)
}

/// H3.1: `serve` on a squatted port must fail naming the port and the holder, never "started".
pub async fn serve_on_a_squatted_port(env: &GateEnv) -> Ran {
    let history = History::new();
    let state = tempfile::tempdir().expect("state dir");
    let squatter = TcpListener::bind("127.0.0.1:0");
    let Ok(squatter) = squatter else {
        history.fault(
            fault::SQUAT_PORT,
            false,
            json!({ "reason": "could not bind a squatter" }),
        );
        return judged(history, |ops| judge::must_surface(ops, "serve", &[]));
    };
    let port = squatter
        .local_addr()
        .map(|a| a.port())
        .unwrap_or(0)
        .to_string();
    history.fault(
        fault::SQUAT_PORT,
        true,
        json!({ "port": port, "holder": std::process::id() }),
    );
    let ran = call(&history, env, state.path(), &["serve", "--port", &port]).await;
    drop(squatter);
    let holder = std::process::id().to_string();
    let said_started = ran.said().contains("started");
    judged(history, move |ops| {
        if said_started {
            return Judgement::new(
                RowOutcome::Silent,
                format!("serve printed a started line: {}", one_line(&ran.said())),
            );
        }
        judge::must_surface(ops, "serve", &[&port, &holder])
    })
}

/// H3.2: a SIGSTOPped daemon (pid alive, port dead) must not read as running.
pub async fn stopped_daemon_status(env: &GateEnv) -> Ran {
    let history = History::new();
    let daemon = OwnedDaemon::start().await;
    let stopped = daemon.freeze().await;
    history.fault(
        fault::SIGSTOP_DAEMON,
        stopped,
        json!({ "pid": daemon.pid() }),
    );
    let port = daemon.port().to_string();
    let report = status_report(&history, env, daemon.state_dir(), &port).await;
    daemon.signal(Signal::SIGCONT);
    judged_after_fault(history, move || {
        match (&report["running"], report["diagnosis"].as_str()) {
            (Value::Bool(false), Some(diagnosis)) if diagnosis.contains("stopped") => {
                Judgement::new(
                    RowOutcome::Surfaced,
                    format!("status: not running: {}", one_line(diagnosis)),
                )
            }
            _ => Judgement::new(
                RowOutcome::Silent,
                format!(
                    "status of a stopped daemon: {}",
                    one_line(&report.to_string())
                ),
            ),
        }
    })
}

/// H3.3: a daemon with a 300 ms idle bound and an attached `reticle mcp` must not idle out
/// while the agent is silent for forty heartbeats (four times the bound); its calls after that
/// keep reaching the same daemon.
pub async fn idle_while_attached(env: &GateEnv) -> Ran {
    let history = History::new();
    let state = tempfile::tempdir().expect("state dir");
    let daemon = OwnedDaemon::builder()
        .state_dir(state.path())
        .env(reticle::config::env::IDLE_SHUTDOWN_MS, "300")
        .env(reticle::config::env::HEARTBEAT_MS, "30")
        .start()
        .await;
    let options = proxy_options(env, daemon.port(), state.path());
    let agent = match warm_agent(
        &history,
        options,
        fault::IDLE_BOUND_PASSED_ATTACHED,
        judge_survival,
    )
    .await
    {
        Ok(agent) => agent,
        Err(ran) => return ran,
    };
    let log = daemon.log_path();
    let beats = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .matches("daemon_alive")
            .count()
    };
    let before = beats();
    let passed = poll::within(BOUND, async || (beats() >= before + 40).then_some(()))
        .await
        .is_some();
    history.fault(
        fault::IDLE_BOUND_PASSED_ATTACHED,
        passed,
        json!({ "boundMs": 300, "heartbeatMs": 30, "heartbeats": beats().saturating_sub(before) }),
    );
    for _ in 0..2 {
        let _ = agent.call("reticle_sessions", json!({})).await;
    }
    let same = daemon
        .status()
        .await
        .is_some_and(|s| s.instance == daemon.instance());
    agent.close().await;
    judged(history, move |ops| {
        if !same {
            return Judgement::new(
                RowOutcome::Silent,
                "the daemon idled out while a client stream was attached",
            );
        }
        let verdict = judge_survival(ops);
        if verdict.outcome != RowOutcome::Survived {
            return verdict;
        }
        Judgement::new(
            RowOutcome::Survived,
            format!(
                "{}; the same daemon still answers after forty heartbeats (four times its 300 ms idle bound) with the agent attached and silent",
                verdict.evidence
            ),
        )
    })
}

/// H3.4: an idle exit is logged with its reason and reported by `status` as the last exit.
pub async fn idle_exit_is_reported(env: &GateEnv) -> Ran {
    let history = History::new();
    let mut daemon = OwnedDaemon::builder()
        .env(reticle::config::env::IDLE_SHUTDOWN_MS, "200")
        .start()
        .await;
    let exited = poll::within(BOUND, async || daemon.has_exited().then_some(()))
        .await
        .is_some();
    history.fault(fault::IDLE_PAST_BOUND, exited, json!({ "boundMs": 200 }));
    let port = daemon.port().to_string();
    let exit = status_report(&history, env, daemon.state_dir(), &port).await["lastExit"].clone();
    judged_after_fault(history, move || {
        let reason = exit["reason"].as_str().unwrap_or("");
        if exit["kind"] == "clean" && reason.contains("idle") {
            Judgement::new(RowOutcome::Surfaced, format!("last exit: clean, {reason}"))
        } else {
            Judgement::new(
                RowOutcome::Silent,
                format!("last exit after an idle shutdown: {exit}"),
            )
        }
    })
}

/// H3.5: a daemon started through a shell survives SIGTERM to that shell's process group.
pub async fn survives_caller_group_sigterm(env: &GateEnv) -> Ran {
    let history = History::new();
    let state = tempfile::tempdir().expect("state dir");
    let port = free_port();
    let script = format!(
        "'{}' serve --port {port} && exec sleep 60",
        env.reticle.display()
    );
    let mut shell = Command::new("sh");
    shell
        .args(["-c", &script])
        .env(reticle::config::env::STATE_DIR, state.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    marker::mark(&mut shell);
    let Ok(mut shell) = shell.spawn() else {
        history.fault(
            fault::SIGTERM_CALLER_GROUP,
            false,
            json!({ "reason": "sh did not start" }),
        );
        return judged(history, |ops| judge::must_survive(ops, "status"));
    };
    let before = poll::within(BOUND, async || {
        reticle::probe::fetch_status(port, Duration::from_millis(300)).await
    })
    .await;
    let signalled =
        before.is_some() && kill(Pid::from_raw(-(shell.id() as i32)), Signal::SIGTERM).is_ok();
    let shell_gone = poll::within(BOUND, async || {
        matches!(shell.try_wait(), Ok(Some(_))).then_some(())
    })
    .await;
    history.fault(
        fault::SIGTERM_CALLER_GROUP,
        signalled && shell_gone.is_some(),
        json!({ "port": port, "daemonStarted": before.is_some() }),
    );
    let port_arg = port.to_string();
    let report = status_report(&history, env, state.path(), &port_arg).await;
    let _ = cli::run_with(&env.reticle, state.path(), &["stop", "--port", &port_arg]).await;
    let same =
        before.map(|s| s.instance) == report["daemon"]["instance"].as_str().map(str::to_string);
    judged_after_fault(history, move || {
        if same {
            Judgement::new(
                RowOutcome::Survived,
                "the same daemon instance answers after its caller's group was SIGTERMed",
            )
        } else {
            Judgement::new(
                RowOutcome::Silent,
                format!(
                    "the daemon died with its caller: {}",
                    one_line(&report.to_string())
                ),
            )
        }
    })
}

/// H3.6: a SIGKILLed daemon reads `died_silently`; the tidy control must read otherwise.
pub async fn sigkill_reads_died_silently(env: &GateEnv) -> Ran {
    let history = History::new();
    let mut control = OwnedDaemon::builder()
        .env(reticle::config::env::HEARTBEAT_MS, "50")
        .start()
        .await;
    let port = control.port().to_string();
    call(
        &history,
        env,
        control.state_dir(),
        &["stop", "--port", &port],
    )
    .await;
    poll::within(BOUND, async || control.has_exited().then_some(())).await;
    let tidy = status_report(&history, env, control.state_dir(), &port).await;
    let tidy_kind = tidy["lastExit"]["kind"].as_str().unwrap_or("").to_string();

    let mut daemon = OwnedDaemon::builder()
        .env(reticle::config::env::HEARTBEAT_MS, "50")
        .start()
        .await;
    daemon.signal(Signal::SIGKILL);
    let dead = poll::within(BOUND, async || daemon.has_exited().then_some(()))
        .await
        .is_some();
    history.fault(
        fault::SIGKILL_DAEMON,
        dead && !pid_alive(daemon.pid()),
        json!({ "pid": daemon.pid() }),
    );
    let port = daemon.port().to_string();
    let report = status_report(&history, env, daemon.state_dir(), &port).await;
    judged_after_fault(history, move || {
        if tidy_kind == "died_silently" {
            return Judgement::new(
                RowOutcome::Inconclusive,
                "the control (a tidy stop) also read died_silently: the reader proves nothing",
            );
        }
        let exit = &report["lastExit"];
        if exit["kind"] == "died_silently" {
            Judgement::new(
                RowOutcome::Surfaced,
                format!(
                    "died_silently ({}); control read {tidy_kind}",
                    one_line(exit["reason"].as_str().unwrap_or(""))
                ),
            )
        } else {
            Judgement::new(
                RowOutcome::Silent,
                format!("a SIGKILLed daemon read as {exit}"),
            )
        }
    })
}

/// H3.7: two daemons racing for one port: exactly one runs, the other exits non-zero naming it.
pub async fn racing_daemons(env: &GateEnv) -> Ran {
    let history = History::new();
    let state = tempfile::tempdir().expect("state dir");
    let port = free_port().to_string();
    let spawn = || {
        let mut command = cli::command_with(
            &env.reticle,
            state.path(),
            &["serve", "--foreground", "--port", &port],
        );
        command
            .env(reticle::config::env::IDLE_SHUTDOWN_MS, "0")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        command.spawn()
    };
    let (Ok(mut a), Ok(mut b)) = (spawn(), spawn()) else {
        history.fault(
            fault::RACE_TWO_DAEMONS,
            false,
            json!({ "reason": "could not spawn both" }),
        );
        return judged(history, |ops| judge::must_surface(ops, "serve", &[]));
    };
    history.fault(
        fault::RACE_TWO_DAEMONS,
        true,
        json!({ "port": port, "pids": [a.id(), b.id()] }),
    );
    history.invoke("serve", json!({ "racers": 2 }));
    let (a_pid, b_pid) = (a.id(), b.id());
    let loser = poll::within(BOUND, async || {
        for (me, other) in [(&mut a, b_pid), (&mut b, a_pid)] {
            if let Ok(Some(code)) = me.try_wait() {
                let mut stderr = String::new();
                if let Some(mut pipe) = me.stderr.take() {
                    use std::io::Read;
                    let _ = pipe.read_to_string(&mut stderr);
                }
                return Some((code, stderr, other));
            }
        }
        None
    })
    .await;
    // The loser exits as soon as it finds the port's lock taken, and the winner takes the lock
    // before it binds: on a loaded machine the winner may not listen yet. Wait (bounded) for it.
    let port_number = port.parse().unwrap_or(0);
    let listening = poll::within(BOUND, async || {
        let count = listeners(port_number).len();
        (count == 1).then_some(count)
    })
    .await
    .unwrap_or_else(|| listeners(port_number).len());
    match &loser {
        Some((code, stderr, winner)) => {
            let op = if code.success() {
                OpType::Ok
            } else {
                OpType::Fail
            };
            history.complete(op, "serve", json!({ "code": code.code(), "stderr": stderr, "winner": winner, "listeners": listening }));
        }
        None => {
            history.complete(
                OpType::Info,
                "serve",
                json!({ "message": "neither racer exited", "listeners": listening }),
            );
        }
    }
    for child in [&mut a, &mut b] {
        let _ = child.kill();
        let _ = child.wait();
    }
    let winner = loser.map(|(_, _, w)| w.to_string()).unwrap_or_default();
    judged(history, move |ops| {
        if listening != 1 {
            return Judgement::new(
                RowOutcome::Silent,
                format!("{listening} daemons listen on the port"),
            );
        }
        judge::must_surface(ops, "serve", &[&winner])
    })
}

/// What H3.8 does with the connection that holds the port before it runs the CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourcePort {
    /// The connection stays open: the row.
    Held,
    /// The connection is closed first: the control, where `serve` starts.
    Released,
}

/// H3.8: a port that is the local end of an outgoing connection (nothing listens): `serve` must
/// fail naming the port and the process holding the connection, and `status` must not call it
/// free.
pub async fn port_held_by_a_connection(env: &GateEnv) -> Ran {
    connection_on_the_port(env, SourcePort::Held).await
}

/// H3.8's scenario, or its control: connects from a port the kernel picks (an ephemeral one,
/// as any client connection on the machine would take) to a loopback listener, then runs
/// `status` and `serve` on that port with the connection held, or released first.
pub async fn connection_on_the_port(env: &GateEnv, source: SourcePort) -> Ran {
    let history = History::new();
    let state = tempfile::tempdir().expect("state dir");
    // The client's source port is one the harness reserved (outside the ephemeral range), bound
    // by number: once the control closes the connection, no other connection on the machine can
    // be handed that port as its source port before `serve` binds it.
    let connected = TcpListener::bind("127.0.0.1:0").and_then(|listener| {
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
        socket.bind(&std::net::SocketAddr::from(([127, 0, 0, 1], free_port())).into())?;
        socket.connect(&listener.local_addr()?.into())?;
        let client: TcpStream = socket.into();
        let (accepted, _) = listener.accept()?;
        Ok((client, accepted))
    });
    let Ok((client, accepted)) = connected else {
        return unestablished(
            history,
            fault::CONNECTION_ON_PORT,
            "could not open a loopback connection",
            |ops| judge::must_surface(ops, "serve", &[]),
        );
    };
    let port = client.local_addr().map(|a| a.port()).unwrap_or(0);
    if source == SourcePort::Released {
        release(client, accepted, port).await;
    } else {
        // The fault is established when the kernel lists the connection on the port, and held
        // (both ends open) until the calls are done.
        let holders = outbound(port).map(|o| o.holders).unwrap_or_default();
        history.fault(
            fault::CONNECTION_ON_PORT,
            holders.iter().any(|h| h.pid == std::process::id()),
            json!({ "port": port, "holders": holders }),
        );
    }
    let port_arg = port.to_string();
    let report = status_report(&history, env, state.path(), &port_arg).await;
    let ran = call(&history, env, state.path(), &["serve", "--port", &port_arg]).await;
    if ran.ok() {
        let _ = call(&history, env, state.path(), &["stop", "--port", &port_arg]).await;
    }
    let holder = std::process::id().to_string();
    judged(history, move |ops| {
        let surfaced = judge::must_surface(ops, "serve", &[&port_arg, &holder]);
        if surfaced.outcome != RowOutcome::Surfaced {
            return surfaced;
        }
        match (report["presence"].as_str(), report["diagnosis"].as_str()) {
            (Some("outbound"), Some(diagnosis)) if diagnosis.contains(&holder) => surfaced,
            _ => Judgement::new(
                RowOutcome::Silent,
                format!(
                    "serve named the connection, but status said: {}",
                    one_line(&report.to_string())
                ),
            ),
        }
    })
}

/// Closes a loopback connection so that its end does not linger on `port`: the client's end is
/// reset (linger 0: no TIME_WAIT, which would hold the port for a minute), then waits (bounded)
/// until the kernel lists nothing on the port.
async fn release(client: TcpStream, accepted: TcpStream, port: u16) {
    use std::os::fd::AsRawFd;
    let linger = nix::libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: `client` is an open socket for the whole call, and `linger` is a valid
    // `struct linger` of the size passed.
    unsafe {
        nix::libc::setsockopt(
            client.as_raw_fd(),
            nix::libc::SOL_SOCKET,
            nix::libc::SO_LINGER,
            (&raw const linger).cast(),
            std::mem::size_of::<nix::libc::linger>() as nix::libc::socklen_t,
        );
    }
    drop(client);
    drop(accepted);
    poll::within(BOUND, async || outbound(port).is_none().then_some(())).await;
}

/// Judges with `judge` only when the history's fault was established; else inconclusive.
fn judged_after_fault(history: History, judge: impl FnOnce() -> Judgement) -> Ran {
    judged(history, |ops| match judge::established_fault(ops) {
        Ok(_) => judge(),
        Err(inconclusive) => inconclusive,
    })
}
