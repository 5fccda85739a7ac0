//! The worker, `reticle mcp-worker --port N`: started and restarted by the supervisor, it holds
//! every socket the proxy has on the daemon's port, so the supervisor holds none. On `connect` it
//! probes the port, starts a daemon if asked, opens `GET /mcp/sse` and relays frames up; it POSTs
//! what it is given in order, one at a time ([`super::post_link`]), each asking for its answer
//! inline. It keeps no protocol state and exits when its stdin (the supervisor's pipe) closes;
//! it must not decide anything the supervisor decides.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::os::fd::AsFd;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::net::unix::pipe;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::boot::boot;
use super::events;
use super::ledger::LedgerWriter;
use super::link::{BEAT_EVERY, LinkCommand, Report, read_command, report_line};
use super::post_link::{PostLink, Posted};
use super::settings::{POST_BOUND, STREAM_FATE, STREAM_HANDSHAKE, STREAM_STALL, Settings};
use super::sse::{Frame, SseParser};
use crate::daemon::StateDir;
use crate::daemon::spawn::{SpawnedFor, spawn_detached};
use crate::http_get::{self, Connection, Response};
use crate::mcp::{
    AGENT_PARAM, ENDPOINT_EVENT, INLINE_ANSWER, INLINE_ANSWER_HEADER, MESSAGE_EVENT, MESSAGE_PATH,
    SESSION_EVENT, SHUTDOWN_EVENT, SSE_PATH, own_project_dir, peer_query, project_query,
};
use crate::plane::quoting_refusal;
use crate::probe::obstacles::{
    foreign_holder, outbound_holder, recorded_daemon_running, start_failure,
};
use crate::probe::{
    PORT_SETTLE, PORT_SETTLE_POLL, PortPresence, PresenceKind, fetch_status, probe,
};
use crate::wire::CatalogueSummary;

/// Writes reports synchronously, one line each: `posting` reports into the posting ledger when
/// it has room ([`super::ledger`]), the rest (and a `posting` the ledger cannot take) to stdout.
/// A `posting` report is in a pipe before its POST leaves (the supervisor reads a dead worker's
/// pipes to the end).
#[derive(Debug, Clone, Copy)]
struct Reports {
    ledger: Option<&'static LedgerWriter>,
}

impl Reports {
    /// Reports through the ledger this process was given, if any.
    fn inherited() -> Self {
        static LEDGER: OnceLock<Option<LedgerWriter>> = OnceLock::new();
        Self {
            ledger: LEDGER.get_or_init(LedgerWriter::inherited).as_ref(),
        }
    }

    fn send(&self, report: Report) -> Result<(), ()> {
        let Ok(mut line) = report_line(&report) else {
            return Err(());
        };
        line.push('\n');
        if let (Report::Posting { .. }, Some(ledger)) = (&report, self.ledger)
            && ledger.write_line(&line).is_ok()
        {
            return Ok(());
        }
        let mut out = std::io::stdout().lock();
        if out
            .write_all(line.as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            // The supervisor is gone.
            std::process::exit(0);
        }
        Ok(())
    }
}

/// How much of a refused stream's answer is read for the daemon's sentence.
const REFUSAL_BYTES: usize = 4096;

/// How long a POST under way when its stream drops may still take to finish.
const POST_AFTER_DROP: Duration = Duration::from_millis(500);

/// The one open session, as the command loop sees it.
struct Live {
    epoch: u64,
    posts: mpsc::UnboundedSender<(u64, String)>,
    cancel: CancellationToken,
}

/// What the command loop and the connect tasks share: the attempt the supervisor asked for last
/// and the session open, if any. Only the last attempt may open the session: an earlier one
/// still under way when a new `connect` came is superseded, and its stream is dropped.
#[derive(Default)]
struct Slot {
    latest_attempt: u64,
    live: Option<Live>,
}

type Shared = Arc<Mutex<Slot>>;

/// Runs the worker until its stdin closes, reading its commands on its own runtime. A `connect`
/// probes the port (bounded TCP + `/status`), starts a daemon when the port is free and it is
/// asked to, and checks the endpoint frame; it supersedes any attempt still under way, so only
/// the last one may open the session. An inline answer is relayed up like a frame.
pub fn run(port: u16) -> ExitCode {
    let (settings, runtime) = match boot("reticle mcp-worker", port) {
        Ok(booted) => booted,
        Err(code) => return code,
    };
    runtime.block_on(serve(settings));
    ExitCode::SUCCESS
}

async fn serve(settings: Settings) {
    let reports = Reports::inherited();
    let mut commands = match commands() {
        Ok(commands) => commands,
        Err(err) => {
            crate::proxy::stderr::say(format_args!(
                "reticle mcp-worker: stdin is not the supervisor's pipe ({err})"
            ));
            std::process::exit(2);
        }
    };
    let beats = reports;
    tokio::spawn(async move {
        let mut every = tokio::time::interval(BEAT_EVERY);
        loop {
            every.tick().await;
            if beats.send(Report::Beat).is_err() {
                return;
            }
        }
    });
    let settings = Arc::new(settings);
    let shared: Shared = Arc::new(Mutex::new(Slot::default()));
    while let Ok(Some(line)) = commands.next_line().await {
        let command = match read_command(&line) {
            Ok(command) => command,
            Err(err) => {
                crate::proxy::stderr::say(format_args!(
                    "reticle mcp-worker: unreadable command ({err}): {line}"
                ));
                continue;
            }
        };
        match command {
            LinkCommand::Connect {
                attempt,
                spawn,
                agent,
            } => {
                {
                    let mut slot = lock(&shared);
                    slot.latest_attempt = attempt;
                    if let Some(live) = slot.live.take() {
                        live.cancel.cancel();
                    }
                }
                tokio::spawn(connect(
                    attempt,
                    spawn,
                    agent,
                    settings.clone(),
                    reports,
                    shared.clone(),
                ));
            }
            LinkCommand::Post { epoch, seq, body } => {
                let refused = match lock(&shared).live.as_ref() {
                    Some(live) if live.epoch == epoch => live.posts.send((seq, body)).is_err(),
                    _ => true,
                };
                if refused {
                    let _ = reports.send(Report::PostFailed {
                        epoch,
                        seq,
                        reason: "its stream had already ended, so it was never sent".into(),
                        reached: Some(false),
                        retryable: true,
                    });
                }
            }
        }
    }
    // stdin closed: the supervisor is gone.
    std::process::exit(0);
}

fn lock(shared: &Shared) -> std::sync::MutexGuard<'_, Slot> {
    shared.lock().unwrap_or_else(|p| p.into_inner())
}

/// The supervisor's commands, a line each, read on this runtime (stdin is the pipe the
/// supervisor made, so it is read without a thread of its own).
fn commands() -> std::io::Result<Lines<BufReader<pipe::Receiver>>> {
    let stdin = std::io::stdin().as_fd().try_clone_to_owned()?;
    Ok(BufReader::new(pipe::Receiver::from_owned_fd(stdin)?).lines())
}

/// A daemon stream whose endpoint frame was usable.
struct Established {
    response: Response,
    parser: SseParser,
    /// Where its POSTs go.
    posts: PostLink,
    session: String,
    instance: String,
    catalogue: Option<CatalogueSummary>,
    /// `message` frames that arrived with the handshake.
    early: Vec<String>,
    spawned: Option<u32>,
}

/// Why an attempt failed.
struct Unreachable {
    presence: PresenceKind,
    obstacle: String,
    definitive: bool,
}

async fn connect(
    attempt: u64,
    spawn: bool,
    agent: String,
    settings: Arc<Settings>,
    reports: Reports,
    shared: Shared,
) {
    let est = match establish(spawn, &agent, &settings, &reports).await {
        Ok(est) => est,
        Err(u) => {
            let _ = reports.send(Report::Unreachable {
                attempt,
                presence: u.presence,
                obstacle: u.obstacle,
                definitive: u.definitive,
            });
            return;
        }
    };
    let (posts, posts_rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    {
        let mut slot = lock(&shared);
        if slot.latest_attempt != attempt {
            // A later attempt was asked for while this one was under way: that one reports.
            return;
        }
        slot.live = Some(Live {
            epoch: attempt,
            posts,
            cancel: cancel.clone(),
        });
    }
    let _ = reports.send(Report::Connected {
        epoch: attempt,
        session: est.session.clone(),
        instance: est.instance.clone(),
        catalogue: est.catalogue.clone(),
        spawned: est.spawned,
    });
    for data in est.early {
        let _ = reports.send(Report::Message {
            epoch: attempt,
            data,
        });
    }
    let stop_posting = CancellationToken::new();
    let poster = tokio::spawn(post_in_order(
        est.posts,
        posts_rx,
        attempt,
        reports,
        stop_posting.clone(),
    ));
    let (reason, detail) = read_stream(est.response, est.parser, attempt, &reports, &cancel).await;
    {
        let mut slot = lock(&shared);
        if slot.live.as_ref().is_some_and(|live| live.epoch == attempt) {
            slot.live = None;
        }
    }
    stop_posting.cancel();
    if let Ok(mut left) = poster.await {
        while let Ok((seq, _)) = left.try_recv() {
            let _ = reports.send(Report::PostFailed {
                epoch: attempt,
                seq,
                reason: "its stream ended before it could be sent".into(),
                reached: Some(false),
                retryable: true,
            });
        }
    }
    if reason == "closed" {
        return;
    }
    let _ = reports.send(Report::Dropped {
        epoch: attempt,
        reason: reason.into(),
        detail,
    });
}

async fn establish(
    spawn: bool,
    agent: &str,
    settings: &Settings,
    reports: &Reports,
) -> Result<Established, Unreachable> {
    let port = settings.port;
    let mut spawned = None;
    let mut presence = probe(port).await;
    // A daemon that was just killed leaves its listener and connections for a moment while the
    // kernel tears them down: while no live process holds the port, look again before calling it
    // held.
    let settle_until = Instant::now() + PORT_SETTLE;
    while presence.may_be_settling(port) && Instant::now() < settle_until {
        tokio::time::sleep(PORT_SETTLE_POLL).await;
        presence = probe(port).await;
    }
    // The Reticle daemon on record listening there, alive and not stopped, but not answering
    // `/status` yet (still starting, or on a loaded machine): it gets the bound a daemon this
    // worker starts gets before it is called wedged. A stopped one is reported at once.
    let files = StateDir::from_env().port_files(port);
    let answer_until = Instant::now() + settings.ready_timeout;
    while matches!(presence, PortPresence::Foreign)
        && recorded_daemon_running(port, &files)
        && Instant::now() < answer_until
    {
        tokio::time::sleep(PORT_SETTLE_POLL).await;
        presence = probe(port).await;
    }
    match presence {
        PortPresence::Daemon { .. } => {}
        PortPresence::Foreign => {
            return Err(Unreachable {
                presence: PresenceKind::Foreign,
                obstacle: foreign_holder(port, &files).0,
                definitive: true,
            });
        }
        PortPresence::Outbound { connections } => {
            return Err(Unreachable {
                presence: PresenceKind::Outbound,
                obstacle: outbound_holder(port, &connections),
                definitive: true,
            });
        }
        PortPresence::Free if !spawn => {
            return Err(Unreachable {
                presence: PresenceKind::Free,
                obstacle: format!(
                    "nothing listens on port {port}: no Reticle daemon is running there"
                ),
                definitive: false,
            });
        }
        PortPresence::Free => spawned = Some(start_daemon(settings, reports).await?),
    }
    open_stream(port, agent, spawned)
        .await
        .map_err(|obstacle| Unreachable {
            presence: PresenceKind::Daemon,
            obstacle,
            definitive: false,
        })
}

/// Starts a daemon on a free port and waits until one answers `/status` there (ours, or a racer
/// that won the port: either will do).
async fn start_daemon(settings: &Settings, reports: &Reports) -> Result<u32, Unreachable> {
    let port = settings.port;
    let definitive = |obstacle: String| Unreachable {
        presence: PresenceKind::Free,
        obstacle,
        definitive: true,
    };
    let state = StateDir::from_env();
    if let Some(problem) = state.problem() {
        return Err(definitive(format!(
            "no daemon can start on port {port}: {problem}"
        )));
    }
    let files = state.port_files(port);
    let instance = uuid::Uuid::new_v4().to_string();
    // The daemon serves every agent on the port, whatever its project: it is not pinned to
    // this agent's RETICLE_PROJECT_DIR, and each agent's link names its own project.
    let first_project = own_project_dir();
    let spawned_for = SpawnedFor::Agents {
        first_project: first_project.as_deref(),
    };
    let mut child = spawn_detached(port, &instance, spawned_for)
        .map_err(|err| definitive(format!("cannot start a daemon process: {err}")))?;
    let _ = reports.send(Report::Log {
        event: events::DAEMON_SPAWNED.into(),
        fields: json!({ "port": port, "daemonPid": child.id(), "daemonInstance": instance }),
    });
    let deadline = Instant::now() + settings.ready_timeout;
    let answer = loop {
        if let Some(status) = fetch_status(port, Duration::from_millis(250)).await {
            break Ok(status.pid);
        }
        if let Ok(Some(code)) = child.try_wait() {
            if let Some(status) = fetch_status(port, Duration::from_millis(250)).await {
                break Ok(status.pid);
            }
            let reason = start_failure(&files.log, &instance).unwrap_or_else(|| {
                format!(
                    "the daemon exited ({code}) before answering /status; see {}",
                    files.log.display()
                )
            });
            break Err(definitive(format!(
                "no daemon could start on port {port}: {reason}"
            )));
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            break Err(definitive(format!(
                "the daemon started on port {port} did not answer /status within {} ms, so it was stopped; raise {} on a slow machine, or see {}",
                settings.ready_timeout.as_millis(),
                crate::config::env::DAEMON_READY_TIMEOUT_MS,
                files.log.display()
            )));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    // Reap the daemon whenever it ends, so it never lingers as a zombie of this worker.
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    answer
}

async fn open_stream(port: u16, agent: &str, spawned: Option<u32>) -> Result<Established, String> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    // The agent's project is where this proxy was started: its flows and runs go there, even
    // on a daemon another project's agent started.
    let project =
        if crate::config::switch_on(crate::config::env::TEST_STAND_IN_PROXY_NAMES_NO_PROJECT) {
            String::new()
        } else {
            project_query(own_project_dir().as_deref())
        };
    // This build and its wire contract, so the daemon can tell the agent when they disagree.
    // `reticle mcp --drive URL`: every stream asks for the agent's tab (the daemon opens it once).
    let drive_url = std::env::var(crate::config::env::DRIVE_URL).ok();
    let headed = std::env::var(crate::config::env::DRIVE_HEADED).is_ok_and(|v| v == "1");
    let drive = crate::mcp::drive_query(drive_url.as_deref(), headed);
    let path = format!(
        "{SSE_PATH}?{AGENT_PARAM}={agent}{project}{}{drive}",
        peer_query()
    );
    let handshake = async {
        let mut response = http_get::get(addr, &path, Connection::Open)
            .await
            .map_err(|err| format!("GET {SSE_PATH} failed: {err}"))?;
        if !(200..300).contains(&response.status) {
            let status = http_status(response.status);
            let body = response.body(REFUSAL_BYTES).await.ok();
            return Err(quoting_refusal(
                format!("the daemon answered GET {SSE_PATH} with HTTP {status}"),
                body.as_deref(),
            ));
        }
        let mut parser = SseParser::new();
        let mut endpoint = None;
        let mut info: Option<serde_json::Value> = None;
        let mut early = Vec::new();
        while endpoint.is_none() || info.is_none() {
            let chunk = response
                .chunk()
                .await
                .map_err(|err| format!("the stream failed before its endpoint event: {err}"))?
                .ok_or("the stream ended before its endpoint event")?;
            for Frame { event, data } in parser.feed(&chunk) {
                match event.as_str() {
                    ENDPOINT_EVENT => endpoint = Some(endpoint_url(port, &data)?),
                    SESSION_EVENT => info = serde_json::from_str(&data).ok(),
                    MESSAGE_EVENT => early.push(data),
                    _ => {}
                }
            }
        }
        Ok((response, parser, endpoint, info, early))
    };
    let (response, parser, endpoint, info, early) =
        tokio::time::timeout(STREAM_HANDSHAKE, handshake)
            .await
            .map_err(|_| {
                format!(
                    "the daemon on port {port} did not open an MCP stream within {} ms",
                    STREAM_HANDSHAKE.as_millis()
                )
            })??;
    let info = info.unwrap_or_default();
    Ok(Established {
        response,
        parser,
        posts: PostLink::new(&endpoint.unwrap_or_default())?
            .with_header(INLINE_ANSWER_HEADER, INLINE_ANSWER),
        session: info["session"].as_str().unwrap_or_default().to_string(),
        instance: info["instance"].as_str().unwrap_or_default().to_string(),
        catalogue: serde_json::from_value(info["catalogue"].clone()).ok(),
        early,
        spawned,
    })
}

/// The POST URL named by an endpoint frame; an empty or malformed one is refused (a stream
/// without a usable endpoint is not a connection).
pub fn endpoint_url(port: u16, data: &str) -> Result<String, String> {
    let path = data.trim();
    let refuse = |why: &str| {
        Err(format!(
            "the daemon's endpoint event was {why} ('{path}'), so its stream was refused"
        ))
    };
    if path.is_empty() {
        return refuse("empty");
    }
    let Some(query) = path
        .strip_prefix(MESSAGE_PATH)
        .and_then(|rest| rest.strip_prefix('?'))
    else {
        return refuse(&format!("not a {MESSAGE_PATH} path"));
    };
    let session = query
        .split('&')
        .find_map(|pair| pair.strip_prefix("sessionId="))
        .unwrap_or("");
    if session.is_empty() || path.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return refuse("missing a usable sessionId");
    }
    Ok(format!("http://127.0.0.1:{port}{path}"))
}

/// Relays frames until the stream ends; returns the reason (`closed` when told to stop).
async fn read_stream(
    mut response: Response,
    mut parser: SseParser,
    epoch: u64,
    reports: &Reports,
    cancel: &CancellationToken,
) -> (&'static str, String) {
    let mut retiring = false;
    loop {
        let next = tokio::select! {
            _ = cancel.cancelled() => return ("closed", String::new()),
            next = tokio::time::timeout(STREAM_STALL, response.chunk()) => next,
        };
        match next {
            Err(_) => {
                return (
                    "sse_stalled",
                    format!(
                        "no bytes for {} ms (the daemon sends a keep-alive every second): it is stopped or the link is blackholed",
                        STREAM_STALL.as_millis()
                    ),
                );
            }
            Ok(Err(err)) => return ("sse_error", err),
            Ok(Ok(None)) => {
                let reason = if retiring {
                    "daemon_shutdown"
                } else {
                    "sse_ended"
                };
                return (reason, String::new());
            }
            Ok(Ok(Some(bytes))) => {
                for frame in parser.feed(&bytes) {
                    match frame.event.as_str() {
                        MESSAGE_EVENT => {
                            let _ = reports.send(Report::Message {
                                epoch,
                                data: frame.data,
                            });
                        }
                        SHUTDOWN_EVENT => {
                            retiring = true;
                            let _ = reports.send(Report::Retiring { epoch });
                        }
                        _ => {}
                    }
                }
            }
        }
    }
}

/// POSTs each message in order, one at a time, so the daemon sees them in the order sent, on a
/// connection kept alive between them ([`PostLink`], which says which failures prove a call
/// never reached the daemon). Each POST asks for its answer inline: an answer that comes back as
/// the POST's response is relayed up like one from the stream. A POST whose fate cannot be known
/// is left to the stream's end when the stream ends with it (a daemon that died resets both),
/// so its call is answered as lost with the link, not as refused by a daemon still there.
async fn post_in_order(
    mut link: PostLink,
    mut posts: mpsc::UnboundedReceiver<(u64, String)>,
    epoch: u64,
    reports: Reports,
    stop: CancellationToken,
) -> mpsc::UnboundedReceiver<(u64, String)> {
    loop {
        let next = tokio::select! {
            biased;
            _ = stop.cancelled() => return posts,
            next = posts.recv() => next,
        };
        let Some((seq, body)) = next else {
            return posts;
        };
        let _ = reports.send(Report::Posting { epoch, seq });
        let post = link.post(&body, POST_BOUND);
        // A POST under way when the stream drops gets a short while to finish, so its outcome
        // is known; abandoned after that, its call is answered as "may or may not have run".
        tokio::pin!(post);
        let sent = tokio::select! {
            sent = &mut post => sent,
            _ = stop.cancelled() => match tokio::time::timeout(POST_AFTER_DROP, &mut post).await {
                Ok(sent) => sent,
                Err(_) => return posts,
            },
        };
        let failure = match sent {
            Posted::Answered { status, body } if (200..300).contains(&status) => {
                if !body.is_empty() {
                    let _ = reports.send(Report::Message { epoch, data: body });
                }
                None
            }
            Posted::Answered { status, body } => {
                let reason = format!(
                    "the daemon refused it with HTTP {}: {}",
                    http_status(status),
                    body.trim()
                );
                Some((reason, Some(false), false))
            }
            Posted::NotSent(why) => {
                let reason = format!("no connection could be made for its POST: {why}");
                Some((reason, Some(false), true))
            }
            Posted::Unknown(why) => {
                if tokio::time::timeout(STREAM_FATE, stop.cancelled())
                    .await
                    .is_ok()
                {
                    return posts;
                }
                Some((format!("its POST failed: {why}"), None, false))
            }
        };
        if let Some((reason, reached, retryable)) = failure {
            let _ = reports.send(Report::PostFailed {
                epoch,
                seq,
                reason,
                reached,
                retryable,
            });
        }
    }
}

/// A status code as HTTP names it (`404 Not Found`), or the bare number HTTP has no name for.
fn http_status(code: u16) -> String {
    StatusCode::from_u16(code).map_or_else(|_| code.to_string(), |status| status.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_frames_are_checked() {
        assert_eq!(
            endpoint_url(9, "/mcp/message?sessionId=abc").unwrap(),
            "http://127.0.0.1:9/mcp/message?sessionId=abc"
        );
        for bad in [
            "",
            "   ",
            "/mcp/message",
            "/mcp/message?sessionId=",
            "http://evil/x?sessionId=1",
            "/other?sessionId=1",
            "/mcp/message?sessionId=a b",
        ] {
            assert!(endpoint_url(9, bad).is_err(), "{bad:?}");
        }
    }
}
