//! The environment vocabulary and port resolution: every `RETICLE_*` variable the product reads
//! is named here once, with the fixed flags of the Chromium it launches. This module parses and
//! validates; it must not act on what it reads.

use std::time::Duration;

pub mod executables;

/// The port a daemon binds when nothing else says otherwise.
pub const DEFAULT_PORT: u16 = 4400;
/// The only address the daemon binds without a token.
pub const LOOPBACK_HOST: &str = "127.0.0.1";

/// The flags every headless Chromium Reticle launches gets, beyond `--headless`, its profile and
/// its debugging port (`reticle verify`, and the harness's browser): what Chromium needs to run as
/// root, offline and without background traffic.
pub const CHROMIUM_FLAGS: &[&str] = &[
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

/// Names of every environment variable the product reads.
pub mod env {
    pub const PORT: &str = "RETICLE_PORT";
    pub const STATE_DIR: &str = "RETICLE_STATE_DIR";
    pub const HEARTBEAT_MS: &str = "RETICLE_HEARTBEAT_MS";
    pub const IDLE_SHUTDOWN_MS: &str = "RETICLE_IDLE_SHUTDOWN_MS";
    /// How often the idle watch looks (default: a tenth of the bound, 20 ms to 1 s).
    pub const IDLE_CHECK_MS: &str = "RETICLE_IDLE_CHECK_MS";
    /// How long a daemon with agents attached but no call, page or lease may go on before it
    /// ends (unset or 0: it waits for its agents to go; the next call starts a daemon again).
    pub const IDLE_ATTACHED_MS: &str = "RETICLE_IDLE_ATTACHED_MS";
    pub const SERVE_TIMEOUT_MS: &str = "RETICLE_SERVE_TIMEOUT_MS";
    pub const INSTANCE_ID: &str = "RETICLE_INSTANCE_ID";
    pub const TOKEN: &str = "RETICLE_TOKEN";
    pub const HOST: &str = "RETICLE_HOST";
    pub const ALLOWED_ORIGINS: &str = "RETICLE_ALLOWED_ORIGINS";
    pub const MAX_EVENTS_PER_SECOND: &str = "RETICLE_MAX_EVENTS_PER_SECOND";
    pub const SESSION_IDLE_MS: &str = "RETICLE_SESSION_IDLE_MS";
    /// `reticle mcp`: how long a call may wait for a daemon before it is answered -32001.
    pub const QUEUE_WAIT_MS: &str = "RETICLE_QUEUE_WAIT_MS";
    /// `reticle mcp`: how long a daemon it started gets to answer `/status`.
    pub const DAEMON_READY_TIMEOUT_MS: &str = "RETICLE_DAEMON_READY_TIMEOUT_MS";
    /// `reticle mcp`: reconnect attempts after a lost link before it goes dormant.
    pub const RECONNECT_ATTEMPTS: &str = "RETICLE_RECONNECT_ATTEMPTS";
    /// `reticle mcp`: how long calls still owed get once stdin closes.
    pub const DRAIN_MS: &str = "RETICLE_DRAIN_MS";
    /// `reticle mcp-worker`: the descriptor of its posting ledger, set by the supervisor that
    /// started it (internal; see `proxy::ledger`).
    pub const POSTING_LEDGER_FD: &str = "RETICLE_POSTING_LEDGER_FD";
    /// The project whose `.reticle/` holds capsules (default: the daemon's working directory).
    pub const PROJECT_DIR: &str = "RETICLE_PROJECT_DIR";
    /// How long the first calls after a daemon starts wait for a first page (ms, default 3000).
    pub const FIRST_SESSION_WAIT_MS: &str = "RETICLE_FIRST_SESSION_WAIT_MS";
    /// Advertise every catalogued tool, with output schemas (`1`, `true`, `on`, `yes`).
    pub const ADVERTISE_ALL_TOOLS: &str = "RETICLE_ADVERTISE_ALL_TOOLS";
    /// Write a trace line per closed span to the daemon log (`1`, `true`, `on`, `yes`).
    pub const TRACE: &str = "RETICLE_TRACE";
    /// Tokio's own: the daemon's worker thread count, instead of its one (for paired
    /// measurements).
    pub const TOKIO_WORKER_THREADS: &str = "TOKIO_WORKER_THREADS";
    /// Mount the `/bridge/*` routes, which send raw page commands over HTTP for the harness and
    /// the benches (`1`, `true`, `on`, `yes`). Off by default: an agent's only path to a page is
    /// a tool call through `run_tool`.
    pub const HARNESS_ROUTES: &str = "RETICLE_HARNESS_ROUTES";
    /// The most MCP streams (each one protocol session) a daemon holds open at once.
    pub const MAX_MCP_SESSIONS: &str = "RETICLE_MAX_MCP_SESSIONS";
    /// The most tool calls the daemon's MCP endpoint runs at once, over all sessions.
    pub const MAX_MCP_CALLS: &str = "RETICLE_MAX_MCP_CALLS";
    /// How long a POST from `reticle mcp` waits for its request's answer to carry it back itself
    /// (ms, default 2; `0`: every answer goes on the stream).
    pub const MCP_INLINE_WAIT_MS: &str = "RETICLE_MCP_INLINE_WAIT_MS";
    /// How long a session lease lives without a call from its holder, in ms (default 5 min).
    pub const LEASE_TTL_MS: &str = "RETICLE_LEASE_TTL_MS";
    /// How long an agent's leases outlive its last MCP link closing, in ms (default 10 s): a
    /// `reticle mcp` that reconnects within it keeps them.
    pub const LEASE_LINK_GRACE_MS: &str = "RETICLE_LEASE_LINK_GRACE_MS";
    /// `reticle verify` and the driven browser: the Chromium binary launched (default: Debian's
    /// /usr/bin/chromium).
    pub const CHROMIUM: &str = "RETICLE_CHROMIUM";
    /// `reticle mcp --drive URL`, as its proxy processes pass it on to each other: the local app
    /// the daemon opens in a browser of its own for this agent.
    pub const DRIVE_URL: &str = "RETICLE_DRIVE_URL";
    /// `1` with `reticle mcp --drive URL --headed`: that browser shows a window.
    pub const DRIVE_HEADED: &str = "RETICLE_DRIVE_HEADED";
    /// `1`: `reticle mcp` runs the proxy in its own process instead of handing over to the
    /// `reticle-mcp` beside it (what it also does when there is none).
    pub const MCP_IN_PROCESS: &str = "RETICLE_MCP_IN_PROCESS";
    /// Test only: edits to the daemon's tool catalogue, read at start (`+name,-name`).
    pub const TEST_CATALOGUE: &str = "RETICLE_TEST_CATALOGUE";
    /// Test only, a stand-in: the bridge lets a hello take a session from a live socket without
    /// asking it (the old behaviour, for S9's negative control).
    pub const TEST_STAND_IN_SESSION_SWAP: &str = "RETICLE_TEST_STAND_IN_SESSION_SWAP";
    /// Test only, a stand-in: the bridge keeps a session with a document frozen in the
    /// back/forward cache and refuses its tab's newer document `session in use` (the old
    /// behaviour, for the negative control of the frozen-holder hand-over).
    pub const TEST_STAND_IN_KEEP_FROZEN_HOLDER: &str = "RETICLE_TEST_STAND_IN_KEEP_FROZEN_HOLDER";
    /// Test only, a stand-in: the daemon records leases but admits every caller to a leased
    /// session (the negative control of the lease refusal).
    pub const TEST_STAND_IN_IGNORE_LEASES: &str = "RETICLE_TEST_STAND_IN_IGNORE_LEASES";
    /// Test only, a stand-in: `reticle verify` drives its sessions without leasing them (the
    /// negative control of its leases; `1`, `true`, `on`, `yes`).
    pub const TEST_STAND_IN_VERIFY_SKIPS_LEASES: &str = "RETICLE_TEST_STAND_IN_VERIFY_SKIPS_LEASES";
    /// Test only, a stand-in: `reticle verify` opens every later flow in its job's start-up
    /// context instead of a fresh one (the negative control of flow isolation).
    pub const TEST_STAND_IN_VERIFY_SHARES_CONTEXT: &str =
        "RETICLE_TEST_STAND_IN_VERIFY_SHARES_CONTEXT";
    /// Test only, a stand-in: a launched Chromium is started without its keeper, so it outlives
    /// a killed launcher (the negative control of the no-orphan row).
    pub const TEST_STAND_IN_CHROMIUM_UNKEPT: &str = "RETICLE_TEST_STAND_IN_CHROMIUM_UNKEPT";
    /// Test only, a stand-in: the workspace writes its files in place (truncate, then write)
    /// instead of atomically (the negative control of the durability row).
    pub const TEST_STAND_IN_WRITE_IN_PLACE: &str = "RETICLE_TEST_STAND_IN_WRITE_IN_PLACE";
    /// Test only: `reticle mcp` names no project on its streams, as before each agent's
    /// workspace was its own project's (the per-project workspace row's control).
    pub const TEST_STAND_IN_PROXY_NAMES_NO_PROJECT: &str =
        "RETICLE_TEST_STAND_IN_PROXY_NAMES_NO_PROJECT";
    /// Test only, a stand-in: `reticle_flow_heal` applies its best candidate whether or not the
    /// step's consequence proved it (the negative control of heal-never-guesses).
    pub const TEST_STAND_IN_HEAL_GUESSES: &str = "RETICLE_TEST_STAND_IN_HEAL_GUESSES";
    /// Test only, a stand-in: a replay grades every flow asserted, so an assertion-free flow
    /// can answer `yes` (the negative control of assertion-free-never-yes).
    pub const TEST_STAND_IN_GRADE_ASSERTED: &str = "RETICLE_TEST_STAND_IN_GRADE_ASSERTED";
    /// Test only, a stand-in: a replay reuses the ref a step's target resolved to the first
    /// time instead of resolving it afresh (the negative control of stale-never-replayed).
    pub const TEST_STAND_IN_STORED_REF: &str = "RETICLE_TEST_STAND_IN_STORED_REF";
    /// Test only, a stand-in: `reticle mcp` never reads its worker's posting ledger, so it takes
    /// a call whose POST left for one that never did (the negative control of the ledger).
    pub const TEST_STAND_IN_LEDGER_UNREAD: &str = "RETICLE_TEST_STAND_IN_LEDGER_UNREAD";
    /// Test only: a JSON-RPC method whose handling panics inside `reticle mcp`.
    pub const TEST_PANIC_METHOD: &str = "RETICLE_TEST_PANIC_METHOD";
    /// Test only, a stand-in for the gate's trace controls: the daemon's trace breaks every
    /// invariant once (`1`, `true`, `on`, `yes`; see `crate::trace::Breakage`).
    pub const TEST_STAND_IN_BROKEN_TRACE: &str = "RETICLE_TEST_STAND_IN_BROKEN_TRACE";
}

/// Defaults for the durations above.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(30);
pub const DEFAULT_IDLE_SHUTDOWN: Duration = Duration::from_secs(5 * 60);
pub const DEFAULT_SERVE_TIMEOUT: Duration = Duration::from_secs(10);
pub const DEFAULT_QUEUE_WAIT: Duration = Duration::from_secs(20);
pub const DEFAULT_DAEMON_READY_TIMEOUT: Duration = Duration::from_secs(10);
pub const DEFAULT_RECONNECT_ATTEMPTS: u32 = 30;
pub const DEFAULT_DRAIN: Duration = Duration::from_secs(5);

/// Defaults for the daemon's caps: what one client, or one page, can make it hold.
pub const DEFAULT_MAX_MCP_SESSIONS: u32 = 64;
pub const DEFAULT_MAX_MCP_CALLS: u32 = 256;
/// How long a POST that asked for its answer inline waits for it: long enough for the calls that
/// answer at once (a read of the daemon's own state, a query the page answers in a millisecond),
/// short, because the proxy's next POST waits behind it.
pub const DEFAULT_MCP_INLINE_WAIT: Duration = Duration::from_millis(2);
/// Answers waiting on one MCP stream; a POST to a session whose backlog is full is refused.
pub const MCP_STREAM_BACKLOG: usize = 1024;
/// How long an answer waits for room on its stream before it is dropped (the stream is not
/// being read).
pub const MCP_STREAM_WAIT: Duration = Duration::from_secs(5);
/// Distinct project ids whose pages the bridge admits in one daemon life (remembered for its
/// wrong-project hint); a page of one more project is refused naming the cap.
pub const MAX_SERVED_PROJECTS: usize = 64;

/// A setting that could not be understood, named so the user can fix it.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("{name} must be a port number between 1 and 65535, got '{value}'")]
    BadPort { name: &'static str, value: String },
    #[error("{name} must be a whole number of milliseconds, got '{value}'")]
    BadMillis { name: &'static str, value: String },
    #[error("{name} must be a whole number of at least 1, got '{value}'")]
    BadCount { name: &'static str, value: String },
    #[error("{name} must be a whole number of milliseconds of at least 1, got '{value}'")]
    ZeroMillis { name: &'static str, value: String },
    #[error(
        "RETICLE_HOST must be an address that 127.0.0.1 reaches, where every Reticle command looks for the daemon: 127.0.0.1 (the default) or 0.0.0.0 (every interface, which needs RETICLE_TOKEN), got '{value}'"
    )]
    BadHost { value: String },
    #[error("{name} is not valid UTF-8; set it to plain text or unset it")]
    NotUnicode { name: &'static str },
}

/// The text of variable `name`: `None` when unset or blank, refused when not UTF-8 (never taken
/// for unset, which would quietly fall back to a default).
pub fn env_text(name: &'static str) -> Result<Option<String>, ConfigError> {
    match std::env::var(name) {
        Ok(raw) if raw.trim().is_empty() => Ok(None),
        Ok(raw) => Ok(Some(raw)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(ConfigError::NotUnicode { name }),
    }
}

/// Port order: the `--port` flag, then `RETICLE_PORT`, then [`DEFAULT_PORT`].
pub fn resolve_port(flag: Option<u16>) -> Result<u16, ConfigError> {
    if let Some(port) = flag {
        return Ok(port);
    }
    match env_text(env::PORT)? {
        Some(raw) => parse_port(env::PORT, &raw),
        None => Ok(DEFAULT_PORT),
    }
}

/// Parses a port, refusing 0 and anything that is not a number.
pub fn parse_port(name: &'static str, raw: &str) -> Result<u16, ConfigError> {
    match raw.trim().parse::<u16>() {
        Ok(port) if port != 0 => Ok(port),
        _ => Err(ConfigError::BadPort {
            name,
            value: raw.to_string(),
        }),
    }
}

/// Reads a millisecond duration from the environment; unset or blank gives the default.
pub fn millis_from_env(name: &'static str, default: Duration) -> Result<Duration, ConfigError> {
    match env_text(name)? {
        Some(raw) => parse_millis(name, &raw),
        None => Ok(default),
    }
}

/// [`millis_from_env`] for a period, which cannot be zero.
pub fn period_from_env(name: &'static str, default: Duration) -> Result<Duration, ConfigError> {
    let period = millis_from_env(name, default)?;
    if period.is_zero() {
        return Err(ConfigError::ZeroMillis {
            name,
            value: env_text(name)?.unwrap_or_default(),
        });
    }
    Ok(period)
}

/// Reads a positive count from the environment; unset or blank gives the default.
pub fn count_from_env(name: &'static str, default: u32) -> Result<u32, ConfigError> {
    match env_text(name)? {
        Some(raw) => match raw.trim().parse::<u32>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(ConfigError::BadCount { name, value: raw }),
        },
        None => Ok(default),
    }
}

/// Whether a switch variable is on (`1`, `true`, `on`, `yes`, any case).
pub fn switch_on(name: &str) -> bool {
    std::env::var(name)
        .map(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "on" | "yes"
            )
        })
        .unwrap_or(false)
}

/// Parses a whole number of milliseconds.
pub fn parse_millis(name: &'static str, raw: &str) -> Result<Duration, ConfigError> {
    raw.trim()
        .parse::<u64>()
        .map(Duration::from_millis)
        .map_err(|_| ConfigError::BadMillis {
            name,
            value: raw.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_refuse_zero_and_words() {
        assert_eq!(parse_port("X", "4400"), Ok(4400));
        assert!(parse_port("X", "0").is_err());
        assert!(parse_port("X", "abc").is_err());
        assert!(parse_port("X", "70000").is_err());
    }

    #[test]
    fn millis_refuse_negative_and_fractions() {
        assert_eq!(parse_millis("X", " 250 "), Ok(Duration::from_millis(250)));
        assert!(parse_millis("X", "-1").is_err());
        assert!(parse_millis("X", "1.5").is_err());
    }

    #[test]
    fn a_variable_that_is_not_utf8_is_refused_by_name_not_taken_for_unset() {
        use std::os::unix::ffi::OsStrExt;
        let name = "RETICLE_TEST_CONFIG_NOT_UTF8";
        // SAFETY: this test alone reads or writes this variable.
        unsafe { std::env::set_var(name, std::ffi::OsStr::from_bytes(b"\xff")) };
        assert_eq!(env_text(name), Err(ConfigError::NotUnicode { name }));
        assert!(millis_from_env(name, Duration::from_secs(1)).is_err());
        assert!(count_from_env(name, 1).is_err());
        // Control: unset and blank are the default.
        unsafe { std::env::set_var(name, " ") };
        assert_eq!(env_text(name), Ok(None));
        unsafe { std::env::remove_var(name) };
        assert_eq!(env_text(name), Ok(None));
    }

    #[test]
    fn a_period_refuses_zero() {
        let name = "RETICLE_TEST_CONFIG_PERIOD";
        // SAFETY: this test alone reads or writes this variable.
        unsafe { std::env::set_var(name, "0") };
        let refused = period_from_env(name, Duration::from_secs(1)).unwrap_err();
        assert!(refused.to_string().contains("at least 1"), "{refused}");
        // Control: 1 ms is a period.
        unsafe { std::env::set_var(name, "1") };
        assert_eq!(
            period_from_env(name, Duration::from_secs(1)),
            Ok(Duration::from_millis(1))
        );
        unsafe { std::env::remove_var(name) };
    }
}
