//! The bridge's settings, read once from the environment at daemon start.

use std::time::Duration;

use super::origin::AllowedOrigins;
use super::ring::RingLimits;
use crate::config::{ConfigError, count_from_env, env, millis_from_env, switch_on};
use crate::wire::limits::{COMMAND_TIMEOUT, HELLO_TIMEOUT, MAX_EVENTS_PER_SECOND};

/// How long a session may go without agent activity before the reaper marks it idle.
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(300);

/// Everything the bridge is told at start.
#[derive(Debug, Clone)]
pub struct BridgeConfig {
    /// `RETICLE_ALLOWED_ORIGINS`: non-loopback origins a page may connect from.
    pub allowed_origins: AllowedOrigins,
    /// `RETICLE_MAX_EVENTS_PER_SECOND`: the per-socket event rate cap.
    pub max_events_per_second: u32,
    /// `RETICLE_SESSION_IDLE_MS`: the reaper's bound (zero: never mark idle).
    pub session_idle: Duration,
    /// How long a command waits for its result by default.
    pub command_timeout: Duration,
    /// How long a socket has for its hello.
    pub hello_timeout: Duration,
    /// Each session's event buffer bounds.
    pub ring: RingLimits,
    /// `RETICLE_TEST_STAND_IN_SESSION_SWAP`, test only: a stand-in for the old bridge, which
    /// let a hello take a session from a live socket without asking it (S9's negative control).
    pub stand_in_silent_swap: bool,
    /// `RETICLE_TEST_STAND_IN_KEEP_FROZEN_HOLDER`, test only: a stand-in for the bridge before
    /// back/forward cache handling, which kept a session with a frozen document that answered
    /// pings and refused the tab's newer document `session in use`.
    pub stand_in_keep_frozen: bool,
}

impl Default for BridgeConfig {
    fn default() -> Self {
        Self {
            allowed_origins: AllowedOrigins::default(),
            max_events_per_second: MAX_EVENTS_PER_SECOND,
            session_idle: DEFAULT_SESSION_IDLE,
            command_timeout: COMMAND_TIMEOUT,
            hello_timeout: HELLO_TIMEOUT,
            ring: RingLimits::default(),
            stand_in_silent_swap: false,
            stand_in_keep_frozen: false,
        }
    }
}

impl BridgeConfig {
    /// Reads the bridge's variables; unset ones take the protocol's defaults.
    pub fn from_env() -> Result<Self, ConfigError> {
        let allowed_origins = std::env::var(env::ALLOWED_ORIGINS)
            .map(|raw| AllowedOrigins::parse(&raw))
            .unwrap_or_default();
        let max_events_per_second =
            count_from_env(env::MAX_EVENTS_PER_SECOND, MAX_EVENTS_PER_SECOND)?;
        Ok(Self {
            allowed_origins,
            max_events_per_second,
            session_idle: millis_from_env(env::SESSION_IDLE_MS, DEFAULT_SESSION_IDLE)?,
            stand_in_silent_swap: switch_on(env::TEST_STAND_IN_SESSION_SWAP),
            stand_in_keep_frozen: switch_on(env::TEST_STAND_IN_KEEP_FROZEN_HOLDER),
            ..Self::default()
        })
    }
}
