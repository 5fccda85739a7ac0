//! Hop 3 scenarios: each provokes one daemon-lifecycle row against real processes, records the
//! fault and every CLI call in a history, and judges it. The CLI calls are what a user sees, so a
//! call's completion is `ok` for exit 0 and `fail` otherwise, with what it printed (`info` for a
//! call killed at the harness's bound: a hang). Each judge (`judge_<what>`) reads the history
//! alone: the `status --json` report and the `serve` output from the recorded completions, the
//! port, holder and instance from the fault and the harness's observations, so `reticle gate
//! analyze` re-judges every row here. The daemons of H3.2 to H3.6 are traced, and each trace is
//! checked for T1 to T4 as the scenario ends (`fault_trace::record_trace_under_faults`; H3.1, H3.7 and
//! H3.8 serve no call). H3.8's control (the connection released first) is
//! [`connection_on_the_port`] with [`SourcePort::Released`]. H3.3 needs an attached client
//! instead: its calls go through the hop 1 and 2 [`super::agent::Agent`], opened by
//! [`warm_agent`].

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

use super::agent_kit::{judge_survival, warm_agent};
use super::fault_trace::record_trace_under_faults;
use super::kit;
use super::kit::{judged, unestablished};
use super::{GateEnv, Ran, proxy_options};
use crate::fault;
use crate::history::{Actor, History, Op, OpType};
use crate::judge::{self, Judgement, RowOutcome, one_line};

const BOUND: Duration = Duration::from_secs(15);

/// The variable that makes a daemon write its trace: every daemon a scenario here starts is
/// traced, and its trace checked for T1 to T4 as the scenario ends.
const TRACE: &str = reticle::config::env::TRACE;

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

/// The arguments of `reticle status --port <port> --json`, whose report the judges read back
/// from its recorded completion ([`report_of`]).
fn status_args(port: &str) -> [&str; 4] {
    ["status", "--port", port, "--json"]
}

/// Whether `op` is the recorded end of the CLI call `f`.
fn is_completion(op: &Op, f: &str) -> bool {
    op.actor == Actor::Client && op.f == f && op.op_type != OpType::Invoke
}

/// The last recorded end of the CLI call `f`.
fn last_cli<'a>(ops: &'a [Op], f: &str) -> Option<&'a Op> {
    ops.iter().rev().find(|o| is_completion(o, f))
}

/// What a recorded CLI call printed, stdout then stderr, as its user read it.
fn said(op: &Op) -> String {
    let stream = |key: &str| op.value[key].as_str().unwrap_or("").to_string();
    format!("{}\n{}", stream("stdout"), stream("stderr"))
}

/// The JSON report a recorded `status --json` printed (null when it printed none, or there is
/// no such call).
fn report_of(op: Option<&Op>) -> Value {
    op.and_then(|o| o.value["stdout"].as_str())
        .and_then(|out| serde_json::from_str(out.trim()).ok())
        .unwrap_or(Value::Null)
}

/// The values the established fault recorded under `keys`, as words (none when the fault was
/// not established: the judge then says so).
fn fault_words(ops: &[Op], keys: &[&str]) -> Vec<String> {
    let Ok(fault) = judge::established_fault(ops) else {
        return Vec::new();
    };
    keys.iter()
        .map(|key| match &fault.value[*key] {
            Value::String(word) => word.clone(),
            other => other.to_string(),
        })
        .collect()
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
        return judged(history, judge_squatted_serve);
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
    call(&history, env, state.path(), &["serve", "--port", &port]).await;
    drop(squatter);
    judged(history, judge_squatted_serve)
}

/// H3.1's judge: `serve` never printed a started line, and failed naming the squatted port and
/// its holder (both as the fault recorded them).
pub fn judge_squatted_serve(ops: &[Op]) -> Judgement {
    if let Some(said) = last_cli(ops, "serve")
        .map(said)
        .filter(|said| said.contains("started"))
    {
        return Judgement::new(
            RowOutcome::Silent,
            format!("serve printed a started line: {}", one_line(&said)),
        );
    }
    let names = fault_words(ops, &["port", "holder"]);
    judge::must_surface(
        ops,
        "serve",
        &names.iter().map(String::as_str).collect::<Vec<_>>(),
    )
}

/// H3.2: a SIGSTOPped daemon (pid alive, port dead) must not read as running.
pub async fn stopped_daemon_status(env: &GateEnv) -> Ran {
    let history = History::new();
    let daemon = OwnedDaemon::builder().env(TRACE, "1").start().await;
    let stopped = daemon.freeze().await;
    history.fault(
        fault::SIGSTOP_DAEMON,
        stopped,
        json!({ "pid": daemon.pid() }),
    );
    let port = daemon.port().to_string();
    call(&history, env, daemon.state_dir(), &status_args(&port)).await;
    daemon.signal(Signal::SIGCONT);
    record_trace_under_faults(&history, &daemon.log_path()).await;
    judged(history, judge_stopped_status)
}

/// H3.2's judge: the `status` report after the SIGSTOP says not running, stopped.
pub fn judge_stopped_status(ops: &[Op]) -> Judgement {
    after_fault(ops, |_| {
        let report = report_of(last_cli(ops, "status"));
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
        .env(TRACE, "1")
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
    let answered_by = daemon.status().await.map(|s| s.instance);
    kit::observe(
        &history,
        DAEMON_INSTANCE,
        json!({ "started": daemon.instance(), "answeredBy": answered_by }),
    );
    agent.close().await;
    record_trace_under_faults(&history, &daemon.log_path()).await;
    judged(history, judge_idle_while_attached)
}

/// The observation of which daemon instance the harness started and which answered `/status`
/// after the fault (H3.3).
const DAEMON_INSTANCE: &str = "daemon_instance";

/// H3.3's judge: the daemon that answered after forty heartbeats is the one started (as the
/// harness observed it), and the agent's calls survived.
pub fn judge_idle_while_attached(ops: &[Op]) -> Judgement {
    let observed = ops
        .iter()
        .rfind(|o| o.actor == Actor::Harness && o.f == DAEMON_INSTANCE);
    match observed {
        Some(seen)
            if seen.value["answeredBy"].is_null()
                || seen.value["answeredBy"] != seen.value["started"] =>
        {
            return Judgement::new(
                RowOutcome::Silent,
                "the daemon idled out while a client stream was attached",
            );
        }
        None if judge::established_fault(ops).is_ok() => {
            return Judgement::new(
                RowOutcome::Inconclusive,
                "which daemon answered after the fault was not recorded",
            );
        }
        _ => {}
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
}

/// H3.4: an idle exit is logged with its reason and reported by `status` as the last exit.
pub async fn idle_exit_is_reported(env: &GateEnv) -> Ran {
    let history = History::new();
    let mut daemon = OwnedDaemon::builder()
        .env(reticle::config::env::IDLE_SHUTDOWN_MS, "200")
        .env(TRACE, "1")
        .start()
        .await;
    let exited = poll::within(BOUND, async || daemon.has_exited().then_some(()))
        .await
        .is_some();
    history.fault(fault::IDLE_PAST_BOUND, exited, json!({ "boundMs": 200 }));
    let port = daemon.port().to_string();
    call(&history, env, daemon.state_dir(), &status_args(&port)).await;
    record_trace_under_faults(&history, &daemon.log_path()).await;
    judged(history, judge_idle_exit)
}

/// H3.4's judge: the `status` report after the idle exit reads a clean last exit, idle.
pub fn judge_idle_exit(ops: &[Op]) -> Judgement {
    after_fault(ops, |_| {
        let exit = &report_of(last_cli(ops, "status"))["lastExit"];
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
        .env(TRACE, "1")
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
        return judged(history, judge_caller_group_sigterm);
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
        json!({ "port": port, "daemonStarted": before.is_some(),
                "instance": before.map(|s| s.instance) }),
    );
    let port_arg = port.to_string();
    call(&history, env, state.path(), &status_args(&port_arg)).await;
    let _ = cli::run_with(&env.reticle, state.path(), &["stop", "--port", &port_arg]).await;
    let log = state.path().join(format!("daemon-{port}.log"));
    record_trace_under_faults(&history, &log).await;
    judged(history, judge_caller_group_sigterm)
}

/// H3.5's judge: the `status` report after the SIGTERM names the daemon instance that answered
/// before it (as the fault recorded it).
pub fn judge_caller_group_sigterm(ops: &[Op]) -> Judgement {
    after_fault(ops, |fault| {
        let report = report_of(last_cli(ops, "status"));
        let before = fault.value["instance"].as_str();
        if before == report["daemon"]["instance"].as_str() {
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
        .env(TRACE, "1")
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
    call(&history, env, control.state_dir(), &status_args(&port)).await;
    record_trace_under_faults(&history, &control.log_path()).await;

    let mut daemon = OwnedDaemon::builder()
        .env(reticle::config::env::HEARTBEAT_MS, "50")
        .env(TRACE, "1")
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
    call(&history, env, daemon.state_dir(), &status_args(&port)).await;
    record_trace_under_faults(&history, &daemon.log_path()).await;
    judged(history, judge_sigkill_exit)
}

/// H3.6's judge: the `status` report after the SIGKILL reads `died_silently`, while the one
/// before it (the control's tidy stop) read otherwise.
pub fn judge_sigkill_exit(ops: &[Op]) -> Judgement {
    after_fault(ops, |fault| {
        let tidy = report_of(
            ops.iter()
                .find(|o| o.index < fault.index && is_completion(o, "status")),
        );
        let tidy_kind = tidy["lastExit"]["kind"].as_str().unwrap_or("");
        let report = report_of(last_cli(ops, "status").filter(|o| o.index > fault.index));
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
        return judged(history, judge_race);
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
    judged(history, judge_race)
}

/// H3.7's judge: one daemon listened once the race was over, and the loser's `serve` failed
/// naming the winner (both as its completion recorded them).
pub fn judge_race(ops: &[Op]) -> Judgement {
    if let Err(unproven) = judge::established_fault(ops) {
        return unproven;
    }
    let done = last_cli(ops, "serve");
    let listening = done
        .and_then(|o| o.value["listeners"].as_u64())
        .unwrap_or(0);
    if listening != 1 {
        return Judgement::new(
            RowOutcome::Silent,
            format!("{listening} daemons listen on the port"),
        );
    }
    let winner = done
        .map(|o| &o.value["winner"])
        .filter(|w| !w.is_null())
        .map(Value::to_string)
        .unwrap_or_default();
    judge::must_surface(ops, "serve", &[&winner])
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
            judge_connection_on_the_port,
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
            json!({ "port": port, "holders": holders, "holder": std::process::id() }),
        );
    }
    let port_arg = port.to_string();
    call(&history, env, state.path(), &status_args(&port_arg)).await;
    let ran = call(&history, env, state.path(), &["serve", "--port", &port_arg]).await;
    if ran.ok() {
        let _ = call(&history, env, state.path(), &["stop", "--port", &port_arg]).await;
    }
    judged(history, judge_connection_on_the_port)
}

/// H3.8's judge: `serve` failed naming the port and the connection's holder (as the fault
/// recorded them), and the `status` report before it said the port is held outbound, by it.
pub fn judge_connection_on_the_port(ops: &[Op]) -> Judgement {
    let names = fault_words(ops, &["port", "holder"]);
    let surfaced = judge::must_surface(
        ops,
        "serve",
        &names.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    if surfaced.outcome != RowOutcome::Surfaced {
        return surfaced;
    }
    let holder = names.get(1).cloned().unwrap_or_default();
    let report = report_of(ops.iter().find(|o| is_completion(o, "status")));
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

/// `judge` of the established fault; else the inconclusive judgement saying why.
fn after_fault(ops: &[Op], judge: impl FnOnce(&Op) -> Judgement) -> Judgement {
    match judge::established_fault(ops) {
        Ok(fault) => judge(fault),
        Err(inconclusive) => inconclusive,
    }
}
