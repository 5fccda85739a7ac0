//! Security rows (S1 to S7): each scenario attacks the real binary from outside, as another local
//! process or a page would (a fake `/status` naming a bystander, bad token material, a shared or
//! linked state dir, racing provisioners, a private config, a capsule holding a password, a flood
//! of worst-case frames), records what the commands said and what the harness then observed, and
//! judges that history with a pure judge. Each judge has unit tests feeding it the history the old
//! behaviour produced, which it must score `silent` (the negative controls).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use harness::cli::{self, Ran as CliRan};
use harness::ports::pid_alive;
use harness::wire_page::{Responder, WirePage};
use harness::{BridgeClient, McpClient, OwnedDaemon, ProxyOptions, free_port, marker, poll};
use reticle::config::env;
use serde_json::json;

use super::kit;
use super::kit::{control, controls_held, could_not_start, judged, observe, settle, worst};
use super::{GateEnv, Ran};
use crate::history::{Actor, History, Op, OpType};
use crate::judge::{self, Judgement, RowOutcome, one_line};

const BOUND: Duration = Duration::from_secs(15);
/// How long a page that should be refused gets to show up as a session anyway.
const ADMISSION_BOUND: Duration = Duration::from_secs(2);

/// Runs `reticle <args>` with `state` as its state dir (none: `RETICLE_STATE_DIR` removed), `set`
/// added to and `removed` taken out of its environment, recorded as the client call `f`.
async fn call(
    history: &History,
    env: &GateEnv,
    f: &str,
    state: Option<&Path>,
    args: &[&str],
    set: &[(&str, &str)],
    removed: &[&str],
) -> CliRan {
    history.invoke(f, json!({ "args": args, "env": set, "removed": removed }));
    let mut command = cli::command_with(&env.reticle, state.unwrap_or(Path::new("")), args);
    if state.is_none() {
        command.env_remove(reticle::config::env::STATE_DIR);
    }
    for (key, value) in set {
        command.env(key, value);
    }
    for key in removed {
        command.env_remove(key);
    }
    let ran = cli::run_command(command).await;
    kit::complete_cli(history, f, &ran);
    ran
}

/// Ends whatever Reticle daemon a case left on `port` (not recorded: cleanup, not evidence).
async fn end_daemon(env: &GateEnv, port: u16) {
    if reticle::probe::fetch_status(port, Duration::from_millis(500))
        .await
        .is_some()
    {
        let scratch = tempfile::tempdir().ok();
        if let Some(scratch) = scratch {
            let _ = cli::run_with(
                &env.reticle,
                scratch.path(),
                &["kill", "--port", &port.to_string()],
            )
            .await;
        }
    }
}

/// The origin the probing pages claim: a web app on loopback, as a page in a browser would.
const PAGE_ORIGIN: &str = "http://127.0.0.1:5173";

/// Whether a page sending `token` (none: no token at all) becomes a session of the daemon on
/// `port` within [`ADMISSION_BOUND`].
async fn admits(port: u16, session: &str, token: Option<&str>) -> bool {
    let Ok(page) = WirePage::open(port, Some(PAGE_ORIGIN)).await else {
        return false;
    };
    page.hello(session, token).await;
    let admitted = poll::within(ADMISSION_BOUND, async || {
        let status = reticle::probe::fetch_status(port, Duration::from_millis(500)).await?;
        status
            .sessions
            .iter()
            .any(|s| s.id == session)
            .then_some(())
    })
    .await
    .is_some();
    page.close().await;
    admitted
}

fn observed<'a>(ops: &'a [Op], f: &str) -> Vec<&'a Op> {
    ops.iter()
        .filter(|o| o.actor == Actor::Harness && o.f == f)
        .collect()
}

fn mode_of(path: &Path) -> Option<u32> {
    std::fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o777)
}

// ---------------------------------------------------------------------------------------------
// S1: `reticle stop` signals only the port's own daemon.

/// A loopback HTTP server that answers every request with a `/status` naming `pid`.
async fn fake_status(pid: u32) -> Option<(u16, tokio::task::JoinHandle<()>)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.ok()?;
    let port = listener.local_addr().ok()?.port();
    let body = json!({
        "running": true, "version": reticle::VERSION, "instance": "fake", "pid": pid,
        "port": port, "startedAt": "2020-01-01T00:00:00Z", "sessionCount": 0, "sessions": [],
    })
    .to_string();
    let task = tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                let mut buffer = [0u8; 2048];
                let _ = socket.read(&mut buffer).await;
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            });
        }
    });
    Some((port, task))
}

/// S1: a server on a port answering `/status` with a bystander's pid: `reticle stop` on that port
/// must refuse, naming the port, and the bystander must live (control: `stop` still ends a real
/// daemon on its port).
pub async fn stop_signals_only_its_daemon(env: &GateEnv) -> Ran {
    const FAULT: &str = "status_names_a_bystander";
    let history = History::new();
    let Ok(state) = tempfile::tempdir() else {
        return could_not_start(history, FAULT, "no temporary dir");
    };
    let daemon = match OwnedDaemon::builder()
        .state_dir(state.path())
        .try_start()
        .await
    {
        Ok(daemon) => daemon,
        Err(why) => return could_not_start(history, FAULT, &why),
    };
    let own = daemon.port().to_string();
    let ran = call(
        &history,
        env,
        "stop_own",
        Some(state.path()),
        &["stop", "--port", &own],
        &[],
        &[],
    )
    .await;
    let pid = daemon.pid();
    let gone = poll::within(BOUND, async || (!pid_alive(pid)).then_some(()))
        .await
        .is_some();
    control(
        &history,
        "stop ends the real daemon on its port",
        ran.ok() && gone,
        json!({ "pid": pid, "gone": gone, "said": ran.said() }),
    );
    drop(daemon);
    let mut bystander_command = Command::new("sleep");
    bystander_command
        .arg("120")
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    marker::mark(&mut bystander_command);
    let Ok(mut bystander) = bystander_command.spawn() else {
        return could_not_start(history, FAULT, "could not start a bystander process");
    };
    let victim = bystander.id();
    let Some((port, server)) = fake_status(victim).await else {
        let _ = bystander.kill();
        return could_not_start(history, FAULT, "could not bind the fake /status server");
    };
    let answers = reticle::probe::fetch_status(port, Duration::from_secs(2))
        .await
        .is_some_and(|s| s.pid == victim);
    history.fault(FAULT, answers, json!({ "port": port, "bystander": victim }));
    let port_text = port.to_string();
    call(
        &history,
        env,
        "stop",
        Some(state.path()),
        &["stop", "--port", &port_text],
        &[],
        &[],
    )
    .await;
    let alive = matches!(bystander.try_wait(), Ok(None));
    observe(
        &history,
        "bystander",
        json!({ "pid": victim, "alive": alive }),
    );
    server.abort();
    let _ = bystander.kill();
    let _ = bystander.wait();
    judged(history, judge_stop)
}

/// S1's judge: a dead bystander is silent whatever `stop` said; otherwise `stop` must have failed
/// naming the port.
pub fn judge_stop(ops: &[Op]) -> Judgement {
    settle(|| {
        controls_held(ops)?;
        let fault = judge::established_fault(ops)?;
        if let Some(op) = observed(ops, "bystander")
            .into_iter()
            .find(|o| o.value["alive"] == false)
        {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "stop signalled pid {}, a bystander a fake /status named",
                    op.value["pid"]
                ),
            ));
        }
        let port = fault.value["port"].to_string();
        Ok(judge::must_surface(ops, "stop", &[&port]))
    })
}

// ---------------------------------------------------------------------------------------------
// S2: bad token material stops `serve`.

/// One way to start a daemon with bad token material: the call's name, the token file's content
/// (none: no file), the environment, and what the refusal must name.
struct TokenCase {
    f: &'static str,
    file: Option<String>,
    set: &'static [(&'static str, &'static str)],
    names: &'static [&'static str],
}

fn token_cases() -> Vec<TokenCase> {
    vec![
        TokenCase {
            f: "serve_oversized_file_and_empty_variable",
            file: Some("a".repeat(600)),
            set: &[(env::TOKEN, "")],
            names: &[env::TOKEN],
        },
        TokenCase {
            f: "serve_oversized_token_file",
            file: Some("a".repeat(600)),
            set: &[],
            names: &["pairing-token"],
        },
        TokenCase {
            f: "serve_malformed_token_file",
            file: Some("two words\n".into()),
            set: &[],
            names: &["pairing-token"],
        },
        TokenCase {
            f: "serve_empty_token_variable",
            file: None,
            set: &[(env::TOKEN, "")],
            names: &[env::TOKEN],
        },
        TokenCase {
            f: "serve_beyond_loopback_with_empty_token",
            file: Some("0123456789abcdef0123456789abcdef0123456789abcdef".into()),
            set: &[(env::TOKEN, ""), (env::HOST, "0.0.0.0")],
            names: &[env::TOKEN],
        },
    ]
}

/// S2: each bad token case must stop `serve` naming the culprit; a daemon that starts anyway must
/// not admit a page that sends no token.
pub async fn bad_token_stops_serve(env: &GateEnv) -> Ran {
    const FAULT: &str = "bad_token_material";
    let history = History::new();
    let cases = token_cases();
    let mut dirs = Vec::new();
    for case in &cases {
        let Ok(dir) = tempfile::tempdir() else {
            return could_not_start(history, FAULT, "no temporary dir");
        };
        if let Some(text) = &case.file
            && std::fs::write(dir.path().join("pairing-token"), text).is_err()
        {
            return could_not_start(history, FAULT, "could not write a token file");
        }
        dirs.push(dir);
    }
    let names: Vec<&str> = cases.iter().map(|c| c.f).collect();
    history.fault(FAULT, true, json!({ "cases": names }));
    for (case, dir) in cases.iter().zip(&dirs) {
        let port = free_port();
        let port_text = port.to_string();
        let ran = call(
            &history,
            env,
            case.f,
            Some(dir.path()),
            &["serve", "--port", &port_text],
            case.set,
            &[],
        )
        .await;
        if ran.ok() {
            let admitted = admits(port, "s2-no-token", None).await;
            observe(
                &history,
                "admitted_without_token",
                json!({ "case": case.f, "admitted": admitted }),
            );
        }
        end_daemon(env, port).await;
    }
    judged(history, judge_bad_token)
}

/// S2's judge: every case's `serve` must fail naming its culprit; a page admitted with no token is
/// silent.
pub fn judge_bad_token(ops: &[Op]) -> Judgement {
    settle(|| {
        judge::established_fault(ops)?;
        if let Some(op) = observed(ops, "admitted_without_token")
            .into_iter()
            .find(|o| o.value["admitted"] == true)
        {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "{}: a daemon started and admitted a page that sent no token",
                    op.value["case"]
                ),
            ));
        }
        Ok(worst(
            token_cases()
                .iter()
                .map(|case| judge::must_surface(ops, case.f, case.names))
                .collect(),
        ))
    })
}

// ---------------------------------------------------------------------------------------------
// S3: the state dir is private, never shared, never followed through links.

/// S3: `serve` with a state dir others can write, with neither `HOME` nor `RETICLE_STATE_DIR`, and
/// with its log planted as a link to another file must fail naming the problem, and the linked
/// file must keep its content.
pub async fn state_dir_is_private(env: &GateEnv) -> Ran {
    const FAULT: &str = "unsafe_state_dirs";
    const VICTIM_TEXT: &str = "the victim's own content\n";
    let history = History::new();
    let (Ok(shared), Ok(linked), Ok(elsewhere)) = (
        tempfile::tempdir(),
        tempfile::tempdir(),
        tempfile::tempdir(),
    ) else {
        return could_not_start(history, FAULT, "no temporary dir");
    };
    let link_port = free_port();
    let victim = elsewhere.path().join("victim.txt");
    let planted = std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o777))
        .and_then(|()| std::fs::write(&victim, VICTIM_TEXT))
        .and_then(|()| {
            std::os::unix::fs::symlink(
                &victim,
                linked.path().join(format!("daemon-{link_port}.log")),
            )
        });
    history.fault(
        FAULT,
        planted.is_ok(),
        json!({ "shared": shared.path(), "linked": linked.path(), "victim": victim }),
    );
    let port = free_port();
    let port_text = port.to_string();
    call(
        &history,
        env,
        "serve_shared_dir",
        Some(shared.path()),
        &["serve", "--port", &port_text],
        &[],
        &[],
    )
    .await;
    end_daemon(env, port).await;
    let port = free_port();
    let port_text = port.to_string();
    call(
        &history,
        env,
        "serve_without_home",
        None,
        &["serve", "--port", &port_text],
        &[],
        &["HOME"],
    )
    .await;
    end_daemon(env, port).await;
    let link_text = link_port.to_string();
    call(
        &history,
        env,
        "serve_through_link",
        Some(linked.path()),
        &["serve", "--port", &link_text],
        &[],
        &[],
    )
    .await;
    end_daemon(env, link_port).await;
    let kept = std::fs::read_to_string(&victim).is_ok_and(|t| t == VICTIM_TEXT);
    observe(
        &history,
        "linked_file",
        json!({ "path": victim, "kept": kept }),
    );
    judged(history, judge_state_dir)
}

/// S3's judge: a linked file written through is silent; each `serve` must fail naming what to fix.
pub fn judge_state_dir(ops: &[Op]) -> Judgement {
    settle(|| {
        let fault = judge::established_fault(ops)?;
        if observed(ops, "linked_file")
            .iter()
            .any(|o| o.value["kept"] == false)
        {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                "the daemon wrote through a link planted in its state dir",
            ));
        }
        let shared = fault.value["shared"].as_str().unwrap_or("?");
        Ok(worst(vec![
            judge::must_surface(ops, "serve_shared_dir", &[shared]),
            judge::must_surface(ops, "serve_without_home", &["HOME", env::STATE_DIR]),
            judge::must_surface(ops, "serve_through_link", &["link"]),
        ]))
    })
}

// ---------------------------------------------------------------------------------------------
// S4: the token file is created once, privately, and shared by racing daemons.

const RACE_ROUNDS: usize = 3;

/// S4: a readable-by-others token file is tightened to 0600 and the daemon's log says so; two
/// daemons started at once on a fresh state dir both admit a page with the one token the file
/// holds ([`RACE_ROUNDS`] rounds).
pub async fn token_file_is_created_once(env: &GateEnv) -> Ran {
    const FAULT: &str = "token_file_readable_and_raced";
    let history = History::new();
    let Ok(state) = tempfile::tempdir() else {
        return could_not_start(history, FAULT, "no temporary dir");
    };
    let token_path = state.path().join("pairing-token");
    let written = std::fs::write(
        &token_path,
        "0123456789abcdef0123456789abcdef0123456789abcdef",
    )
    .and_then(|()| std::fs::set_permissions(&token_path, std::fs::Permissions::from_mode(0o644)));
    history.fault(
        FAULT,
        written.is_ok(),
        json!({ "token": token_path, "mode": "0644" }),
    );
    let port = free_port();
    let port_text = port.to_string();
    let ran = call(
        &history,
        env,
        "serve_readable_token",
        Some(state.path()),
        &["serve", "--port", &port_text],
        &[],
        &[],
    )
    .await;
    let log = std::fs::read_to_string(state.path().join(format!("daemon-{port}.log")))
        .unwrap_or_default();
    let said = log
        .lines()
        .find(|l| l.contains("pairing_token_tightened"))
        .unwrap_or_default()
        .to_string();
    end_daemon(env, port).await;
    observe(
        &history,
        "token_mode",
        json!({ "mode": mode_of(&token_path), "started": ran.ok(), "logged": said }),
    );
    for round in 0..RACE_ROUNDS {
        let admitted = race_round(env).await;
        observe(
            &history,
            "race_round",
            json!({ "round": round, "admitted": admitted }),
        );
    }
    judged(history, judge_token_file)
}

/// Two daemons on one fresh state dir: whether each admits a page with the file's token (none
/// when the round could not be run).
async fn race_round(env: &GateEnv) -> Option<Vec<bool>> {
    let state = tempfile::tempdir().ok()?;
    let ports = [free_port(), free_port()];
    let mut children = Vec::new();
    for port in ports {
        let mut command = cli::command_with(
            &env.reticle,
            state.path(),
            &["serve", "--foreground", "--port", &port.to_string()],
        );
        command.stdout(Stdio::null()).stderr(Stdio::null());
        children.push(command.spawn().ok()?);
    }
    let up = poll::within(BOUND, async || {
        for port in ports {
            reticle::probe::fetch_status(port, Duration::from_millis(300)).await?;
        }
        Some(())
    })
    .await;
    let mut admitted = Vec::new();
    if up.is_some() {
        let token = std::fs::read_to_string(state.path().join("pairing-token")).unwrap_or_default();
        for (i, port) in ports.into_iter().enumerate() {
            admitted.push(admits(port, &format!("s4-race-{i}"), Some(token.trim())).await);
        }
    }
    for child in &mut children {
        let _ = child.kill();
        let _ = child.wait();
    }
    up.map(|()| admitted)
}

/// S4's judge: a token file still readable by others, or a race round where a daemon refused the
/// file's token, is silent; a tightening the log does not mention is silent too.
pub fn judge_token_file(ops: &[Op]) -> Judgement {
    settle(|| {
        judge::established_fault(ops)?;
        let Some(mode) = observed(ops, "token_mode").first().map(|o| o.value.clone()) else {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                "the token file's mode was not observed",
            ));
        };
        if mode["mode"].as_u64().is_none_or(|m| m & 0o077 != 0) {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "the token file is left readable by others (mode {:o})",
                    mode["mode"].as_u64().unwrap_or(0)
                ),
            ));
        }
        let rounds = observed(ops, "race_round");
        if rounds.iter().all(|o| o.value["admitted"].is_null()) {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                "no race round could be run",
            ));
        }
        if let Some(op) = rounds.iter().find(|o| {
            o.value["admitted"]
                .as_array()
                .is_some_and(|a| a.iter().any(|b| b == false))
        }) {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "race round {}: a daemon refused the token its state dir holds",
                    op.value["round"]
                ),
            ));
        }
        let logged = mode["logged"].as_str().unwrap_or_default();
        if logged.is_empty() {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                "the token file's mode changed but the daemon's log does not say so",
            ));
        }
        Ok(Judgement::new(
            RowOutcome::Surfaced,
            format!("tightened and logged: {}", one_line(logged)),
        ))
    })
}

// ---------------------------------------------------------------------------------------------
// S5: `reticle init` keeps modes and ignores the runtime folders.

/// S5: a 0600 `.mcp.json` holding another server's secret keeps its mode through `reticle init`,
/// and `.gitignore` gets the line ignoring `.reticle/runs/` once over two runs (and no line
/// ignoring the whole `.reticle/`, which would keep the saved flows out of git).
pub async fn init_keeps_modes(env: &GateEnv) -> Ran {
    const FAULT: &str = "private_config";
    let history = History::new();
    let (Ok(project), Ok(state)) = (tempfile::tempdir(), tempfile::tempdir()) else {
        return could_not_start(history, FAULT, "no temporary dir");
    };
    let config = project.path().join(".mcp.json");
    let ignore = project.path().join(".gitignore");
    let written = std::fs::write(
        &config,
        r#"{"mcpServers": {"other": {"command": "other", "env": {"API_KEY": "s3cret"}}}}"#,
    )
    .and_then(|()| std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)))
    .and_then(|()| std::fs::write(&ignore, "node_modules/\n"));
    history.fault(
        FAULT,
        written.is_ok(),
        json!({ "config": config, "mode": "0600" }),
    );
    let dir = project.path().to_string_lossy().to_string();
    let args = ["init", "--dir", &dir, "--client", "claude"];
    call(&history, env, "init", Some(state.path()), &args, &[], &[]).await;
    call(
        &history,
        env,
        "init_again",
        Some(state.path()),
        &args,
        &[],
        &[],
    )
    .await;
    let ignored = std::fs::read_to_string(&ignore).unwrap_or_default();
    observe(
        &history,
        "files",
        json!({
            "configMode": mode_of(&config),
            "reticleLines": ignored.lines().filter(|l| l.trim() == "/.reticle/runs/").count(),
            "wholeWorkspaceLines": ignored.lines().filter(|l| l.trim().trim_matches('/') == ".reticle").count(),
            "keptLines": ignored.lines().filter(|l| l.trim() == "node_modules/").count(),
        }),
    );
    judged(history, judge_init)
}

/// S5's judge: both runs succeed, the config keeps 0600, `.gitignore` keeps its lines, ignores
/// `.reticle/runs/` exactly once and never the whole `.reticle/`, and the first run says so.
pub fn judge_init(ops: &[Op]) -> Judgement {
    settle(|| {
        let fault = judge::established_fault(ops)?;
        let Some(files) = observed(ops, "files").first().map(|o| o.value.clone()) else {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                "the files were not observed",
            ));
        };
        if files["configMode"] != 0o600 {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "init left the private config mode {:o}",
                    files["configMode"].as_u64().unwrap_or(0)
                ),
            ));
        }
        if files["reticleLines"] != 1
            || files["keptLines"] != 1
            || files["wholeWorkspaceLines"].as_u64().unwrap_or(0) != 0
        {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(".gitignore after two runs: {files}"),
            ));
        }
        let runs = judge::completions(ops, fault.index, "init");
        let said = runs
            .last()
            .map(|o| judge::text(&o.value))
            .unwrap_or_default();
        if !said.contains(".gitignore") {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                "init changed .gitignore without saying so",
            ));
        }
        Ok(worst(vec![
            judge::must_survive(ops, "init"),
            judge::must_survive(ops, "init_again"),
        ]))
    })
}

// ---------------------------------------------------------------------------------------------
// S6: capsules hold no secrets and are private.

const TYPED_SECRET: &str = "hunter2-typed-secret";

/// A page that finds one password field and acts on it.
fn password_page() -> Responder {
    std::sync::Arc::new(
        |command: &reticle::wire::Command| match command.name.as_str() {
            "query" => Some((
                true,
                json!({ "count": 1, "elements": [{ "ref": "e1", "role": "textbox", "name": "Password" }] }),
            )),
            _ => Some((true, json!({ "dispatched": true }))),
        },
    )
}

/// S6: an agent fills a password field and the verdict is red, so a capsule is written: it must
/// not hold the typed secret and must be readable only by its owner.
pub async fn capsules_hold_no_secrets(env: &GateEnv) -> Ran {
    const FAULT: &str = "password_typed_into_a_red_action";
    let history = History::new();
    let Ok(project) = tempfile::tempdir() else {
        return could_not_start(history, FAULT, "no temporary dir");
    };
    let builder = OwnedDaemon::builder().env(
        env::PROJECT_DIR,
        project.path().to_string_lossy().to_string(),
    );
    let (daemon, token) = match super::kit::daemon(builder).await {
        Ok(started) => started,
        Err(why) => return could_not_start(history, FAULT, &why),
    };
    let page = match WirePage::open_with(daemon.port(), None, Some(password_page())).await {
        Ok(page) => page,
        Err(why) => return could_not_start(history, FAULT, &why.to_string()),
    };
    page.hello("s6-page", Some(&token)).await;
    let options = ProxyOptions::new(daemon.port(), daemon.state_dir()).program(&env.reticle);
    let client = match McpClient::start(options).await {
        Ok(client) => client,
        Err(why) => return could_not_start(history, FAULT, &format!("{why:?}")),
    };
    let arguments = json!({
        "target": { "label": "Password" }, "action": "fill", "args": { "value": TYPED_SECRET },
        "until": { "kind": "signal", "name": "never.sent" }, "timeout_ms": 300,
    });
    history.fault(FAULT, true, json!({ "typed": TYPED_SECRET }));
    history.invoke("act_and_wait", arguments.clone());
    let answer = poll::within(BOUND, async || {
        let envelope = client
            .call_tool("reticle_act_and_wait", arguments.clone())
            .await
            .ok()?;
        Some(
            envelope
                .get("structuredContent")
                .cloned()
                .unwrap_or(envelope),
        )
    })
    .await;
    let (op, value) = match &answer {
        Some(value) if value["capsuleSaved"].is_string() => (OpType::Ok, value.clone()),
        Some(value) => (OpType::Fail, value.clone()),
        None => (
            OpType::Info,
            json!({ "message": "no answer within the bound" }),
        ),
    };
    history.complete(op, "act_and_wait", value.clone());
    let capsule = value["capsuleSaved"]
        .as_str()
        .map(|name| project.path().join(name));
    let text = capsule
        .as_deref()
        .and_then(|p| std::fs::read_to_string(p).ok());
    observe(
        &history,
        "capsule",
        json!({
            "written": text.is_some(),
            "holdsSecret": text.as_deref().is_some_and(|t| t.contains(TYPED_SECRET)),
            "mode": capsule.as_deref().and_then(mode_of),
        }),
    );
    client.close().await;
    page.close().await;
    daemon.shutdown().await;
    judged(history, judge_capsule)
}

/// S6's judge: a capsule holding the typed secret, or readable by others, is silent.
pub fn judge_capsule(ops: &[Op]) -> Judgement {
    settle(|| {
        judge::established_fault(ops)?;
        let Some(capsule) = observed(ops, "capsule").first().map(|o| o.value.clone()) else {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                "the capsule was not observed",
            ));
        };
        if capsule["written"] != true {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                "the red action wrote no capsule",
            ));
        }
        if capsule["holdsSecret"] == true {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                "the capsule holds the password the agent typed",
            ));
        }
        if capsule["mode"].as_u64().is_none_or(|m| m & 0o077 != 0) {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "the capsule is readable by others (mode {:o})",
                    capsule["mode"].as_u64().unwrap_or(0)
                ),
            ));
        }
        Ok(judge::must_survive(ops, "act_and_wait"))
    })
}

// ---------------------------------------------------------------------------------------------
// S7: what the event rings hold is bounded in memory.

/// Sessions flooding at once in the gate (the bench runs 32).
pub const FLOOD_SESSIONS: usize = 4;
/// Worst-case frames each session sends.
pub const FLOOD_FRAMES: usize = 12;
/// What the rings of the flooding sessions may add to the daemon's resident memory: the byte
/// bound of each session's ring (8 MiB) twice over, plus 64 MiB for buffers and the allocator.
pub const FLOOD_GROWTH_BOUND_KB: u64 = (FLOOD_SESSIONS as u64 * 2 * 8 + 64) * 1024;

/// An event frame just under the 1 MiB frame limit whose data is an array of zeros: the shape
/// that costs the most memory once parsed.
pub fn worst_case_frame(session: &str) -> String {
    let zeros = "0,".repeat((reticle::wire::limits::MAX_FRAME_BYTES - 256) / 2);
    format!(
        r#"{{"kind":"event","event":{{"t":1,"type":"signal","sessionId":"{session}","data":{{"name":"flood","zeros":[{}0]}}}}}}"#,
        zeros
    )
}

/// The resident memory of `pid` in kB (VmRSS).
pub fn resident_kb(pid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Opens `sessions` pages on `daemon`, each sending `frames` worst-case frames, and waits until
/// the daemon has stored or dropped every one; the pages, to be dropped once measured.
pub async fn flood(
    daemon: &OwnedDaemon,
    token: &str,
    sessions: usize,
    frames: usize,
) -> Result<Vec<WirePage>, String> {
    let client = BridgeClient::new(daemon.port());
    let mut pages = Vec::new();
    for i in 0..sessions {
        let id = format!("flood-{i}");
        let page = WirePage::open(daemon.port(), None)
            .await
            .map_err(|e| e.to_string())?;
        page.hello(&id, Some(token)).await;
        poll::within(BOUND, async || client.session(&id).await.map(|_| ()))
            .await
            .ok_or_else(|| format!("session {id} never appeared"))?;
        pages.push(page);
    }
    for (i, page) in pages.iter().enumerate() {
        let frame = worst_case_frame(&format!("flood-{i}"));
        page.send_burst(std::iter::repeat_n(frame, frames)).await;
    }
    for i in 0..sessions {
        let id = format!("flood-{i}");
        poll::within(Duration::from_secs(60), async || {
            let entry = client.session(&id).await?;
            let counters = &entry["counters"];
            let seen = counters["eventsStored"].as_u64()? + counters["eventsDropped"].as_u64()?;
            (seen >= frames as u64).then_some(())
        })
        .await
        .ok_or_else(|| format!("session {id} never took its {frames} frames"))?;
    }
    Ok(pages)
}

/// S7: [`FLOOD_SESSIONS`] pages each send [`FLOOD_FRAMES`] worst-case frames; the daemon's
/// resident memory may grow by at most [`FLOOD_GROWTH_BOUND_KB`].
pub async fn ring_memory_is_bounded(_env: &GateEnv) -> Ran {
    const FAULT: &str = "worst_case_frames";
    let history = History::new();
    let builder = OwnedDaemon::builder()
        .env(env::HARNESS_ROUTES, "1")
        .env(env::MAX_EVENTS_PER_SECOND, "100000");
    let (daemon, token) = match super::kit::daemon(builder).await {
        Ok(started) => started,
        Err(why) => return could_not_start(history, FAULT, &why),
    };
    let before = resident_kb(daemon.pid());
    let flooded = flood(&daemon, &token, FLOOD_SESSIONS, FLOOD_FRAMES).await;
    history.fault(
        FAULT,
        flooded.is_ok(),
        json!({ "sessions": FLOOD_SESSIONS, "frames": FLOOD_FRAMES, "error": flooded.as_ref().err() }),
    );
    let after = resident_kb(daemon.pid());
    observe(
        &history,
        "resident",
        json!({ "beforeKb": before, "afterKb": after, "boundKb": FLOOD_GROWTH_BOUND_KB }),
    );
    drop(flooded);
    daemon.shutdown().await;
    judged(history, judge_ring_memory)
}

/// S7's judge: growth past the bound is silent (nothing tells anyone memory ran away).
pub fn judge_ring_memory(ops: &[Op]) -> Judgement {
    settle(|| {
        judge::established_fault(ops)?;
        let Some(resident) = observed(ops, "resident").first().map(|o| o.value.clone()) else {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                "resident memory was not observed",
            ));
        };
        let (Some(before), Some(after), Some(bound)) = (
            resident["beforeKb"].as_u64(),
            resident["afterKb"].as_u64(),
            resident["boundKb"].as_u64(),
        ) else {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                format!("unreadable VmRSS: {resident}"),
            ));
        };
        let grown = after.saturating_sub(before);
        let outcome = if grown <= bound {
            RowOutcome::Survived
        } else {
            RowOutcome::Silent
        };
        Ok(Judgement::new(
            outcome,
            format!(
                "resident memory grew {} MiB (bound {} MiB)",
                grown / 1024,
                bound / 1024
            ),
        ))
    })
}

#[cfg(test)]
mod tests {
    //! Negative controls: each judge fed the history the old behaviour produced scores `silent`,
    //! and fed the fixed behaviour's history scores its target.
    use super::*;
    use serde_json::Value;

    fn fault(history: &History, f: &str, detail: Value) {
        history.fault(f, true, detail);
    }

    fn cli(history: &History, f: &str, ok: bool, said: &str) {
        history.invoke(f, json!({}));
        let op = if ok { OpType::Ok } else { OpType::Fail };
        history.complete(
            op,
            f,
            json!({ "code": if ok { 0 } else { 1 }, "stdout": said, "stderr": "" }),
        );
    }

    /// S1's history: `stop` answered `ok` saying `said`, and the bystander is then `alive`.
    fn stop_history(ok: bool, said: &str, alive: bool) -> Vec<Op> {
        let history = History::new();
        control(&history, "stop ends the real daemon", true, json!({}));
        let detail = json!({ "port": 4999, "bystander": 77 });
        fault(&history, "status_names_a_bystander", detail);
        cli(&history, "stop", ok, said);
        observe(&history, "bystander", json!({ "pid": 77, "alive": alive }));
        history.ops()
    }

    #[test]
    fn stop_that_kills_the_bystander_is_silent() {
        let old = stop_history(
            true,
            "stopped Reticle daemon pid 77 on 127.0.0.1:4999",
            false,
        );
        assert_eq!(judge_stop(&old).outcome, RowOutcome::Silent);
        let fixed = stop_history(false, "port 4999 names pid 77, not its listener", true);
        assert_eq!(judge_stop(&fixed).outcome, RowOutcome::Surfaced);
    }

    #[test]
    fn a_daemon_started_on_bad_token_material_is_silent() {
        let old = History::new();
        fault(&old, "bad_token_material", json!({}));
        for case in token_cases() {
            cli(&old, case.f, true, "started Reticle daemon");
        }
        observe(
            &old,
            "admitted_without_token",
            json!({ "case": "serve_oversized_token_file", "admitted": true }),
        );
        assert_eq!(judge_bad_token(&old.ops()).outcome, RowOutcome::Silent);

        let fixed = History::new();
        fault(&fixed, "bad_token_material", json!({}));
        for case in token_cases() {
            cli(
                &fixed,
                case.f,
                false,
                &format!("refused: {}", case.names.join(" ")),
            );
        }
        assert_eq!(judge_bad_token(&fixed.ops()).outcome, RowOutcome::Surfaced);
    }

    #[test]
    fn a_write_through_a_planted_link_is_silent() {
        let old = History::new();
        fault(&old, "unsafe_state_dirs", json!({ "shared": "/tmp/s" }));
        cli(&old, "serve_shared_dir", true, "started");
        cli(&old, "serve_without_home", true, "started");
        cli(&old, "serve_through_link", true, "started");
        observe(&old, "linked_file", json!({ "kept": false }));
        assert_eq!(judge_state_dir(&old.ops()).outcome, RowOutcome::Silent);

        let started_anyway = History::new();
        fault(
            &started_anyway,
            "unsafe_state_dirs",
            json!({ "shared": "/tmp/s" }),
        );
        cli(&started_anyway, "serve_shared_dir", true, "started");
        cli(
            &started_anyway,
            "serve_without_home",
            false,
            "set HOME or RETICLE_STATE_DIR",
        );
        cli(&started_anyway, "serve_through_link", false, "a link");
        observe(&started_anyway, "linked_file", json!({ "kept": true }));
        assert_eq!(
            judge_state_dir(&started_anyway.ops()).outcome,
            RowOutcome::Silent
        );
    }

    /// S4's history: the token file's `mode` after the start, what the log said, and one race
    /// round's admissions.
    fn token_history(mode: u32, logged: &str, admitted: [bool; 2]) -> Vec<Op> {
        let history = History::new();
        fault(&history, "token_file_readable_and_raced", json!({}));
        observe(
            &history,
            "token_mode",
            json!({ "mode": mode, "logged": logged }),
        );
        observe(
            &history,
            "race_round",
            json!({ "round": 0, "admitted": admitted }),
        );
        history.ops()
    }

    #[test]
    fn a_readable_or_raced_token_is_silent() {
        let tightened = "pairing_token_tightened";
        let readable = token_history(0o644, "", [true, true]);
        assert_eq!(judge_token_file(&readable).outcome, RowOutcome::Silent);
        let raced = token_history(0o600, tightened, [true, false]);
        assert_eq!(judge_token_file(&raced).outcome, RowOutcome::Silent);
        let fixed = token_history(0o600, tightened, [true, true]);
        assert_eq!(judge_token_file(&fixed).outcome, RowOutcome::Surfaced);
    }

    #[test]
    fn init_that_widens_a_private_config_is_silent() {
        let old = History::new();
        fault(&old, "private_config", json!({}));
        cli(&old, "init", true, "added the reticle server");
        cli(&old, "init_again", true, "unchanged");
        observe(
            &old,
            "files",
            json!({ "configMode": 0o644, "reticleLines": 0, "keptLines": 1 }),
        );
        assert_eq!(judge_init(&old.ops()).outcome, RowOutcome::Silent);

        let fixed = History::new();
        fault(&fixed, "private_config", json!({}));
        cli(&fixed, "init", true, ".gitignore: added .reticle/");
        cli(
            &fixed,
            "init_again",
            true,
            ".gitignore: already ignores .reticle/",
        );
        observe(
            &fixed,
            "files",
            json!({ "configMode": 0o600, "reticleLines": 1, "keptLines": 1 }),
        );
        assert_eq!(judge_init(&fixed.ops()).outcome, RowOutcome::Survived);

        let hides_flows = History::new();
        fault(&hides_flows, "private_config", json!({}));
        cli(&hides_flows, "init", true, ".gitignore: added .reticle/");
        cli(&hides_flows, "init_again", true, "unchanged");
        observe(
            &hides_flows,
            "files",
            json!({ "configMode": 0o600, "reticleLines": 1, "keptLines": 1, "wholeWorkspaceLines": 1 }),
        );
        assert_eq!(judge_init(&hides_flows.ops()).outcome, RowOutcome::Silent);
    }

    #[test]
    fn a_capsule_holding_the_password_is_silent() {
        let old = History::new();
        fault(&old, "password_typed_into_a_red_action", json!({}));
        old.invoke("act_and_wait", json!({}));
        old.complete(OpType::Ok, "act_and_wait", json!({ "capsuleSaved": "x" }));
        observe(
            &old,
            "capsule",
            json!({ "written": true, "holdsSecret": true, "mode": 0o644 }),
        );
        assert_eq!(judge_capsule(&old.ops()).outcome, RowOutcome::Silent);
    }

    #[test]
    fn memory_past_the_bound_is_silent() {
        let old = History::new();
        fault(&old, "worst_case_frames", json!({}));
        observe(
            &old,
            "resident",
            json!({ "beforeKb": 20_000, "afterKb": 1_500_000, "boundKb": FLOOD_GROWTH_BOUND_KB }),
        );
        assert_eq!(judge_ring_memory(&old.ops()).outcome, RowOutcome::Silent);
    }

    #[test]
    fn the_worst_case_frame_fits_the_frame_limit() {
        let frame = worst_case_frame("flood-31");
        assert!(frame.len() <= reticle::wire::limits::MAX_FRAME_BYTES);
        assert!(serde_json::from_str::<Value>(&frame).is_ok());
    }
}
