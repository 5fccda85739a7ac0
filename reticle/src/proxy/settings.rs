//! The proxy's bounds, read once from the environment (names in [`crate::config::env`]).

use std::time::Duration;

use crate::config::{self, ConfigError, env};

/// The longest stdin line the proxy reads; a longer one is dropped and answered -32600.
pub const MAX_LINE_BYTES: usize = crate::mcp::MAX_MCP_BODY_BYTES;
/// First reconnect delay; doubles per attempt up to [`BACKOFF_CAP`], with jitter.
pub const BACKOFF_BASE: Duration = Duration::from_millis(50);
pub const BACKOFF_CAP: Duration = Duration::from_secs(2);
/// A stream silent for this long is dead (the daemon sends a keep-alive every second).
pub const STREAM_STALL: Duration = Duration::from_secs(5);
/// How long the worker waits for the stream's headers and endpoint frame.
pub const STREAM_HANDSHAKE: Duration = Duration::from_secs(3);
/// How long a POST whose fate cannot be known waits to see whether its stream broke too (then
/// the link dropped, and the stream's end answers the call): two of the daemon's keep-alives,
/// since a broken stream shows at the next one. Past it, the POST alone failed.
pub const STREAM_FATE: Duration = Duration::from_secs(2);
/// How long one POST may take before it counts as failed.
pub const POST_BOUND: Duration = Duration::from_secs(10);
/// A worker silent for this long is killed and replaced.
pub const WORKER_SILENCE: Duration = Duration::from_secs(5);

/// Everything tunable.
#[derive(Debug, Clone)]
pub struct Settings {
    pub port: u16,
    /// How long a call may wait unsent before it is answered -32001.
    pub queue_wait: Duration,
    /// How long a daemon the worker started gets to answer `/status`.
    pub ready_timeout: Duration,
    /// Reconnect attempts after a lost link before going dormant.
    pub reconnect_attempts: u32,
    /// How long calls still owed get once stdin closes.
    pub drain: Duration,
    /// Test only: a method whose handling panics.
    pub panic_method: Option<String>,
}

impl Settings {
    pub fn from_env(port: u16) -> Result<Self, ConfigError> {
        Ok(Self {
            port,
            queue_wait: config::millis_from_env(env::QUEUE_WAIT_MS, config::DEFAULT_QUEUE_WAIT)?,
            ready_timeout: config::millis_from_env(
                env::DAEMON_READY_TIMEOUT_MS,
                config::DEFAULT_DAEMON_READY_TIMEOUT,
            )?,
            reconnect_attempts: config::count_from_env(
                env::RECONNECT_ATTEMPTS,
                config::DEFAULT_RECONNECT_ATTEMPTS,
            )?,
            drain: config::millis_from_env(env::DRAIN_MS, config::DEFAULT_DRAIN)?,
            panic_method: std::env::var(env::TEST_PANIC_METHOD)
                .ok()
                .filter(|m| !m.is_empty()),
        })
    }
}

/// The delay before reconnect attempt `attempt` (1-based): exponential from [`BACKOFF_BASE`],
/// capped at [`BACKOFF_CAP`], scaled by a random factor in [0.5, 1) so proxies do not march in
/// step.
pub fn backoff(attempt: u32) -> Duration {
    let doubled = BACKOFF_BASE.saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
    let capped = doubled.min(BACKOFF_CAP);
    let jitter = getrandom::u32().unwrap_or(u32::MAX / 2) as f64 / u32::MAX as f64;
    capped.mul_f64(0.5 + jitter / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_then_caps_and_stays_jittered_below_the_cap() {
        for _ in 0..50 {
            let first = backoff(1);
            assert!(
                first >= BACKOFF_BASE / 2 && first <= BACKOFF_BASE,
                "{first:?}"
            );
            let late = backoff(40);
            assert!(late >= BACKOFF_CAP / 2 && late <= BACKOFF_CAP, "{late:?}");
        }
        assert!(backoff(3) > BACKOFF_BASE);
    }
}
