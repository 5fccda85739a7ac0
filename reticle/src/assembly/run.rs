//! One daemon life: claim the port ([`super::port_claim`]), record the life, assemble the rooms
//! (bridge, MCP endpoint, tools) into one [`AppState`], serve the router the caller hands in
//! until a signal or idle shutdown, then write the exit line and let go. Every way out of a start
//! writes a `daemon_start_failed` line naming the obstacle (a daemon never runs without a pairing
//! token); every way out of a life writes `daemon_exit`. It must not know the routes.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::serve::ListenerExt;
use serde_json::json;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::port_claim;
use super::state::{AppState, RouterOver};
use crate::auth::PairingToken;
use crate::auth::token::{TOKEN_FILE, TokenSource};
use crate::bridge::{Bridge, BridgeConfig};
use crate::config::env;
use crate::daemon::lock::LockHolder;
use crate::daemon::settings::Settings;
use crate::daemon::signals::TerminatingSignals;
use crate::daemon::{Activity, DaemonInfo, DaemonLog, events, heartbeat, idle, panic_hook};
use crate::mcp::McpState;
use crate::mcp::limits::McpLimits;
use crate::plane::is_loopback;
use crate::tools::{Catalogue, ToolHost};

/// How long in-flight requests get to finish once shutdown begins.
const DRAIN_BOUND: Duration = Duration::from_secs(2);

/// Why a life ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ExitReason {
    Signal(&'static str),
    Idle(Duration),
}

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
    let lock = port_claim::take_lock(&log, settings.port, &files, &me).map_err(fail)?;
    let (listener, signals, state) = match start(&settings, &log, started_at).await {
        Ok(started) => started,
        Err(reason) => {
            lock.release();
            return Err(fail(reason));
        }
    };
    let activity = state.activity.clone();
    let life_started = Instant::now();
    let heartbeat = tokio::spawn(heartbeat::beat(
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
        (
            settings.idle_shutdown,
            settings.idle_attached,
            settings.idle_check,
        ),
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
    lock.release();
    Ok(reason)
}

/// Everything between taking the lock and serving: the token, the signal handlers, the bind,
/// the pid file, the start line, then the rooms. `Err` is the sentence naming the obstacle; the
/// caller releases the lock and logs it.
async fn start(
    settings: &Settings,
    log: &Arc<DaemonLog>,
    started_at: String,
) -> Result<(TcpListener, TerminatingSignals, AppState), String> {
    let token =
        PairingToken::load_or_provision(settings.state.root()).map_err(|e| e.to_string())?;
    if !is_loopback(settings.host) && token.source != TokenSource::Environment {
        return Err(format!(
            "{}={} binds beyond loopback, which needs a pairing token: set {} (any secret of up to 512 characters) or leave {} unset",
            env::HOST,
            settings.host,
            env::TOKEN,
            env::HOST
        ));
    }
    if let TokenSource::Tightened(mode) = token.source {
        log.event(
            "pairing_token_tightened",
            json!({ "file": settings.state.root().join(TOKEN_FILE), "wasMode": format!("{mode:o}"), "nowMode": "600" }),
        );
    }
    let token = Some(token.token);
    let signals = TerminatingSignals::install().map_err(|err| {
        format!(
            "could not install the SIGTERM/SIGINT/SIGHUP handlers ({err}), so a stop would kill the daemon without its exit line"
        )
    })?;
    let listener = port_claim::bind(SocketAddr::new(settings.host, settings.port)).await?;
    let files = settings.state.port_files(settings.port);
    let _ = files.record_pid(std::process::id());
    panic_hook::install(log.clone());
    log.event(
        events::START,
        json!({
            "port": settings.port,
            "host": settings.host.to_string(),
            "version": crate::VERSION,
            "heartbeatMs": settings.heartbeat.as_millis() as u64,
            "idleShutdownMs": settings.idle_shutdown.as_millis() as u64,
            "idleCheckMs": settings.idle_check.as_millis() as u64,
        }),
    );
    let catalogue = Catalogue::from_env()?;
    let activity = Activity::new();
    let bridge_config = BridgeConfig::from_env().map_err(|e| e.to_string())?;
    let mcp_limits = McpLimits::from_env().map_err(|e| e.to_string())?;
    let shutdown = CancellationToken::new();
    let bridge = Bridge::new(
        bridge_config,
        token.clone(),
        activity.clone(),
        shutdown.clone(),
        Some(log.clone()),
    );
    let tools = Arc::new(ToolHost::from_env(
        settings.state.root().to_path_buf(),
        Some(log.clone()),
    )?);
    install_trace(log);
    let state = AppState {
        info: Arc::new(DaemonInfo {
            version: crate::VERSION.to_string(),
            instance: settings.instance.clone(),
            pid: std::process::id(),
            port: settings.port,
            started_at,
        }),
        activity,
        token,
        shutdown: shutdown.clone(),
        bridge,
        mcp: McpState::new(catalogue, Some(log.clone()), shutdown, mcp_limits),
        tools,
    };
    Ok((listener, signals, state))
}

/// With `RETICLE_TRACE` on, span lines go to the daemon log.
fn install_trace(log: &Arc<DaemonLog>) {
    if !crate::trace::enabled() {
        return;
    }
    use tracing_subscriber::layer::SubscriberExt;
    let subscriber = tracing_subscriber::registry()
        .with(crate::trace::TraceLayer::new(log.clone()).broken(crate::trace::stand_in_broken()));
    if tracing::subscriber::set_global_default(subscriber).is_ok() {
        log.event("trace_enabled", json!({ "var": crate::trace::TRACE_VAR }));
    }
}

/// Serves until a terminating signal or idle shutdown, then drains within a bound.
async fn serve(
    listener: TcpListener,
    mut signals: TerminatingSignals,
    state: AppState,
    router: RouterOver,
    log: &Arc<DaemonLog>,
    activity: &Activity,
    (idle_bound, attached_bound, idle_check): (Duration, Duration, Duration),
) -> ExitReason {
    let shutdown = state.shutdown.clone();
    let bridge = state.bridge.clone();
    let app = router(state).into_make_service_with_connect_info::<SocketAddr>();
    let draining = shutdown.clone();
    // Every accepted socket sends at once: a command frame to a page, or an answer to a client,
    // must not wait on Nagle for the peer's delayed ACK (40 ms on Linux).
    let listener = listener.tap_io(|stream| {
        let _ = stream.set_nodelay(true);
    });
    let server = axum::serve(listener, app)
        .with_graceful_shutdown(async move { draining.cancelled().await });
    let server = tokio::spawn(server.into_future());
    let reason = tokio::select! {
        name = signals.next(log) => ExitReason::Signal(name),
        quiet = idle::until_quiet(activity, idle_bound, attached_bound, idle_check) => {
            let (why, bound) = match quiet {
                idle::Quiet::Idle(_) => ("nothing attached", idle_bound),
                idle::Quiet::Unused(_) => ("agents attached, no call, page or lease", attached_bound),
            };
            log.event(events::IDLE, json!({ "idleMs": quiet.lasted().as_millis() as u64, "boundMs": bound.as_millis() as u64, "why": why }));
            ExitReason::Idle(quiet.lasted())
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
