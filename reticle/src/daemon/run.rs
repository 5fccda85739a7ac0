//! The foreground daemon: claim the port (lock, then bind, waiting out a killed process's sockets
//! the kernel is still tearing down), record the life, assemble the rooms (bridge, MCP endpoint, tools) into one [`AppState`], serve the router the caller hands in until
//! a signal or idle shutdown, then write the exit line and let go. Every way out of a start writes
//! a `daemon_start_failed` line naming the obstacle (a pairing token that cannot be had is one: a
//! daemon never runs without a token); every way out of a life writes `daemon_exit`.
//!
//! This is the one place the rooms are put together; each handler draws only its own substate
//! from [`AppState`] (the `FromRef` impls below). It must not know the routes: the router is a
//! parameter, so nothing here imports `http`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::FromRef;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio_util::sync::CancellationToken;

use super::life;
use super::lock::{LockError, LockHolder, PortLock};
use super::log::read_tail;
use super::state::{PortFiles, StateDir};
use super::{Activity, DaemonInfo, DaemonLog, events};
use crate::auth::PairingToken;
use crate::auth::token::{TOKEN_FILE, TokenSource};
use crate::bridge::{Bridge, BridgeConfig};
use crate::config::{self, ConfigError, env};
use crate::mcp::McpState;
use crate::plane::is_loopback;
use crate::probe::holders::pid_alive;
use crate::probe::obstacles;
use crate::probe::{PORT_SETTLE, PORT_SETTLE_POLL, no_live_holder};
use crate::tools::{Catalogue, ToolContext, ToolHost};

/// How long in-flight requests get to finish once shutdown begins.
const DRAIN_BOUND: Duration = Duration::from_secs(2);

/// Everything a daemon life needs to know before it starts.
#[derive(Debug, Clone)]
pub struct Settings {
    pub port: u16,
    pub host: IpAddr,
    pub state: StateDir,
    pub instance: String,
    pub heartbeat: Duration,
    pub idle_shutdown: Duration,
    /// The runtime's worker threads ([`super::runtime`]).
    pub workers: usize,
}

impl Settings {
    /// Reads the environment for a daemon on `port`.
    pub fn from_env(port: u16) -> Result<Self, ConfigError> {
        let instance = instance_from_env();
        let host = match config::env_text(env::HOST)? {
            Some(raw) => reachable_host(&raw).ok_or(ConfigError::BadHost { value: raw })?,
            None => IpAddr::V4(Ipv4Addr::LOCALHOST),
        };
        Ok(Self {
            port,
            host,
            state: StateDir::from_env(),
            instance,
            heartbeat: config::period_from_env(env::HEARTBEAT_MS, config::DEFAULT_HEARTBEAT)?,
            idle_shutdown: config::millis_from_env(
                env::IDLE_SHUTDOWN_MS,
                config::DEFAULT_IDLE_SHUTDOWN,
            )?,
            workers: super::runtime::workers_from_env()?,
        })
    }
}

/// This daemon life's id: the one its spawner chose (`RETICLE_INSTANCE_ID`), else a fresh one.
pub fn instance_from_env() -> String {
    std::env::var(env::INSTANCE_ID)
        .ok()
        .filter(|id| !id.is_empty() && id.len() <= 64)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string())
}

/// `raw` as an address to bind, if a daemon bound there answers on 127.0.0.1 (loopback itself,
/// or every IPv4 interface): every command, the proxy and the SDK look for it there.
fn reachable_host(raw: &str) -> Option<IpAddr> {
    let host: IpAddr = raw.trim().parse().ok()?;
    (host == IpAddr::V4(Ipv4Addr::LOCALHOST) || host == IpAddr::V4(Ipv4Addr::UNSPECIFIED))
        .then_some(host)
}

/// The rooms of one daemon life, assembled: what the router serves. A handler takes the substate
/// it needs (`State<Bridge>`, `State<McpState>`, `State<ToolContext>`), not this whole.
#[derive(Debug, Clone)]
pub struct AppState {
    pub info: Arc<DaemonInfo>,
    pub activity: Activity,
    /// The pairing token; `None` when none could be provisioned (then only loopback is served).
    pub token: Option<PairingToken>,
    /// Cancelled when the daemon begins to shut down: long-lived streams (SSE, WebSocket) end
    /// on it, so draining never waits on a client.
    pub shutdown: CancellationToken,
    /// The bridge: connected pages and the API that drives them.
    pub bridge: Bridge,
    /// The MCP endpoint: catalogue and open protocol sessions.
    pub mcp: McpState,
    /// The tool layer's host: call accounting, per-session memory, where tools may write.
    pub tools: Arc<ToolHost>,
}

impl FromRef<AppState> for Bridge {
    fn from_ref(state: &AppState) -> Self {
        state.bridge.clone()
    }
}

impl FromRef<AppState> for McpState {
    fn from_ref(state: &AppState) -> Self {
        state.mcp.clone()
    }
}

/// What a tool call can reach.
impl FromRef<AppState> for ToolContext {
    fn from_ref(state: &AppState) -> Self {
        ToolContext {
            info: state.info.clone(),
            activity: state.activity.clone(),
            bridge: state.bridge.clone(),
            host: state.tools.clone(),
            caller: None,
        }
    }
}

/// Builds the router over an assembled daemon life (the CLI hands in `http::router`).
pub type RouterOver = fn(AppState) -> Router;

/// Why a life ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ExitReason {
    Signal(&'static str),
    Idle(Duration),
}

static PANIC_LOG: OnceLock<Arc<DaemonLog>> = OnceLock::new();

/// Runs a daemon life serving `router`. `Err` carries the sentence naming why it could not start.
pub async fn run(settings: Settings, router: RouterOver) -> Result<ExitReason, String> {
    if let Some(problem) = settings.state.problem() {
        return Err(problem);
    }
    let files = settings.state.port_files(settings.port);
    let log = Arc::new(
        DaemonLog::open(&files.log, files.rolled_log(), &settings.instance)
            .map_err(|err| format!("cannot open the daemon log {}: {err}", files.log.display()))?,
    );
    let fail = |reason: String| {
        log.event(
            events::START_FAILED,
            json!({ "port": settings.port, "reason": reason }),
        );
        reason
    };
    let started_at = crate::daemon::log::now_rfc3339();
    let me = LockHolder {
        pid: std::process::id(),
        instance: settings.instance.clone(),
        started_at: started_at.clone(),
    };
    let acquired = match PortLock::acquire(&files.lock, &me) {
        Ok(acquired) => acquired,
        Err(LockError::Held(holder)) => {
            let who = holder.map_or_else(
                || "another Reticle daemon".to_string(),
                |h| {
                    format!(
                        "Reticle daemon pid {} (instance {}, started {})",
                        h.pid, h.instance, h.started_at
                    )
                },
            );
            return Err(fail(format!(
                "port {} is already owned by {who}; stop it with `reticle stop --port {}` or choose another port with --port",
                settings.port, settings.port
            )));
        }
        Err(err) => return Err(fail(err.to_string())),
    };
    note_predecessors(&log, &files, acquired.previous.as_ref());
    let token = match PairingToken::load_or_provision(settings.state.root()) {
        Ok(loaded) => loaded,
        Err(err) => {
            acquired.lock.release();
            return Err(fail(err.to_string()));
        }
    };
    if !is_loopback(settings.host) && token.source != TokenSource::Environment {
        acquired.lock.release();
        return Err(fail(format!(
            "{}={} binds beyond loopback, which needs a pairing token: set {} (any secret of up to 512 characters) or leave {} unset",
            env::HOST,
            settings.host,
            env::TOKEN,
            env::HOST
        )));
    }
    if let TokenSource::Tightened(mode) = token.source {
        log.event(
            "pairing_token_tightened",
            json!({ "file": settings.state.root().join(TOKEN_FILE), "wasMode": format!("{mode:o}"), "nowMode": "600" }),
        );
    }
    let token = Some(token.token);
    let signals = match TerminatingSignals::install() {
        Ok(signals) => signals,
        Err(err) => {
            acquired.lock.release();
            return Err(fail(format!(
                "could not install the SIGTERM/SIGINT/SIGHUP handlers ({err}), so a stop would kill the daemon without its exit line"
            )));
        }
    };
    let listener = match bind_when_settled(SocketAddr::new(settings.host, settings.port)).await {
        Ok(listener) => listener,
        Err(err) => {
            acquired.lock.release();
            return Err(fail(bind_obstacle(settings.port, &err)));
        }
    };
    let _ = files.record_pid(std::process::id());
    let _ = PANIC_LOG.set(log.clone());
    install_panic_hook();
    log.event(
        events::START,
        json!({
            "port": settings.port,
            "host": settings.host.to_string(),
            "version": crate::VERSION,
            "heartbeatMs": settings.heartbeat.as_millis() as u64,
            "idleShutdownMs": settings.idle_shutdown.as_millis() as u64,
        }),
    );
    let catalogue = match Catalogue::from_env() {
        Ok(catalogue) => catalogue,
        Err(reason) => {
            acquired.lock.release();
            return Err(fail(reason));
        }
    };
    let activity = Activity::new();
    let bridge_config = match BridgeConfig::from_env() {
        Ok(config) => config,
        Err(err) => {
            acquired.lock.release();
            return Err(fail(err.to_string()));
        }
    };
    let mcp_limits = match crate::mcp::limits::McpLimits::from_env() {
        Ok(limits) => limits,
        Err(err) => {
            acquired.lock.release();
            return Err(fail(err.to_string()));
        }
    };
    let shutdown = CancellationToken::new();
    let bridge = Bridge::new(
        bridge_config,
        token.clone(),
        activity.clone(),
        shutdown.clone(),
        Some(log.clone()),
    );
    let tools = match ToolHost::from_env(settings.state.root().to_path_buf(), Some(log.clone())) {
        Ok(host) => Arc::new(host),
        Err(reason) => {
            acquired.lock.release();
            return Err(fail(reason));
        }
    };
    if crate::trace::enabled() {
        use tracing_subscriber::layer::SubscriberExt;
        let subscriber = tracing_subscriber::registry().with(
            crate::trace::TraceLayer::new(log.clone()).broken(crate::trace::stand_in_broken()),
        );
        if tracing::subscriber::set_global_default(subscriber).is_ok() {
            log.event("trace_enabled", json!({ "var": crate::trace::TRACE_VAR }));
        }
    }
    let state = AppState {
        info: Arc::new(DaemonInfo {
            version: crate::VERSION.to_string(),
            instance: settings.instance.clone(),
            pid: std::process::id(),
            port: settings.port,
            started_at,
        }),
        activity: activity.clone(),
        token,
        shutdown: shutdown.clone(),
        bridge,
        mcp: McpState::new(catalogue, Some(log.clone()), shutdown, mcp_limits),
        tools,
    };
    let life_started = Instant::now();
    let heartbeat = tokio::spawn(super::heartbeat::beat(
        log.clone(),
        activity.clone(),
        settings.heartbeat,
    ));
    let reason = serve(
        listener,
        signals,
        state,
        router,
        &log,
        &activity,
        settings.idle_shutdown,
    )
    .await;
    heartbeat.abort();
    let mut fields = json!({
        "reason": match &reason { ExitReason::Signal(_) => "signal", ExitReason::Idle(_) => "idle" },
        "uptimeMs": life_started.elapsed().as_millis() as u64,
    });
    match &reason {
        ExitReason::Signal(name) => fields["signal"] = json!(name),
        ExitReason::Idle(idle) => fields["idleMs"] = json!(idle.as_millis() as u64),
    }
    log.event(events::EXIT, fields);
    if files.recorded_pid() == Some(std::process::id()) {
        let _ = std::fs::remove_file(&files.pid);
    }
    acquired.lock.release();
    Ok(reason)
}

/// Serves until a terminating signal or idle shutdown, then drains within a bound.
async fn serve(
    listener: TcpListener,
    mut signals: TerminatingSignals,
    state: AppState,
    router: RouterOver,
    log: &Arc<DaemonLog>,
    activity: &Activity,
    idle_bound: Duration,
) -> ExitReason {
    let shutdown = state.shutdown.clone();
    let bridge = state.bridge.clone();
    let app = router(state).into_make_service_with_connect_info::<SocketAddr>();
    let draining = shutdown.clone();
    let server = axum::serve(listener, app)
        .with_graceful_shutdown(async move { draining.cancelled().await });
    let server = tokio::spawn(server.into_future());
    let reason = tokio::select! {
        name = signals.next(log) => ExitReason::Signal(name),
        idle = super::idle::idle_for(activity, idle_bound) => {
            log.event(events::IDLE, json!({ "idleMs": idle.as_millis() as u64, "boundMs": idle_bound.as_millis() as u64 }));
            ExitReason::Idle(idle)
        }
    };
    shutdown.cancel();
    // Bridge sockets are upgraded out of the server's sight: wait for their close frames too.
    let _ = tokio::join!(
        tokio::time::timeout(DRAIN_BOUND, server),
        bridge.drained(DRAIN_BOUND)
    );
    reason
}

/// The signals that end (or are ignored by) a daemon, installed before its port is bound: a
/// SIGTERM that arrives once `/status` answers must find the handler, never the default action
/// that would kill the daemon without its exit line.
struct TerminatingSignals {
    term: Signal,
    int: Signal,
    hup: Signal,
}

impl TerminatingSignals {
    fn install() -> std::io::Result<Self> {
        Ok(Self {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    /// Resolves with the name of the first SIGTERM or SIGINT; SIGHUP is logged and ignored.
    async fn next(&mut self, log: &DaemonLog) -> &'static str {
        loop {
            let name = tokio::select! {
                _ = self.term.recv() => "SIGTERM",
                _ = self.int.recv() => "SIGINT",
                _ = self.hup.recv() => {
                    log.event(events::SIGNALLED, json!({ "signal": "SIGHUP", "action": "ignored" }));
                    continue;
                }
            };
            log.event(
                events::SIGNALLED,
                json!({ "signal": name, "action": "shutting down" }),
            );
            return name;
        }
    }
}

/// Logs what a crashed or killed predecessor left behind. Never fatal.
fn note_predecessors(log: &DaemonLog, files: &PortFiles, lock_holder: Option<&LockHolder>) {
    let me = std::process::id();
    if let Some(prev) = lock_holder.filter(|h| h.pid != me) {
        log.event(
            events::STALE_LOCK,
            json!({ "previousPid": prev.pid, "previousInstance": prev.instance, "note": "the previous holder ended without releasing its record; the kernel had already freed the lock" }),
        );
    }
    if let Some(pid) = files.recorded_pid().filter(|pid| *pid != me) {
        let state = if pid_alive(pid) {
            "alive but not holding the port lock"
        } else {
            "dead"
        };
        log.event(
            events::STALE_PID,
            json!({ "previousPid": pid, "state": state }),
        );
    }
    let tail = read_tail(&files.log);
    let lives = life::lives(&tail);
    if let Some(prev) = lives
        .iter()
        .rev()
        .find(|l| l.ran() && l.instance != log.instance())
        && prev.end(pid_alive) == life::LifeEnd::DiedSilently
    {
        let heard = prev.last_beat.unwrap_or(prev.last_seen);
        log.event(
            events::PREVIOUS_DIED_UNCLEAN,
            json!({
                "previousPid": prev.pid,
                "previousInstance": prev.instance,
                "lastHeard": heard.format(&time::format_description::well_known::Rfc3339).ok(),
            }),
        );
    }
}

/// Binds the daemon's listener. A port held only by sockets no live process owns (a killed
/// daemon's, which the kernel is still tearing down) is tried again for [`PORT_SETTLE`]; a port a
/// live process holds fails at once.
async fn bind_when_settled(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let settle_until = tokio::time::Instant::now() + PORT_SETTLE;
    loop {
        match TcpListener::bind(addr).await {
            Err(err)
                if err.kind() == std::io::ErrorKind::AddrInUse
                    && tokio::time::Instant::now() < settle_until
                    && no_live_holder(addr.port()) =>
            {
                tokio::time::sleep(PORT_SETTLE_POLL).await;
            }
            bound => return bound,
        }
    }
}

/// A sentence naming why the port could not be bound, and who holds it when the OS says.
fn bind_obstacle(port: u16, err: &std::io::Error) -> String {
    if err.kind() != std::io::ErrorKind::AddrInUse {
        return format!("cannot bind 127.0.0.1:{port}: {err}");
    }
    obstacles::bind_taken(port)
}

fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if let Some(log) = PANIC_LOG.get() {
            log.event(events::PANIC, json!({ "message": info.to_string() }));
        }
        previous(info);
    }));
}
