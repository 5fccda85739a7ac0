//! What a daemon life needs to know before it starts: port, bind address, state dir, instance
//! id, heartbeat and idle periods, worker count, each read from the environment and refused by
//! name when bad. It reads settings; it must not act on them.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use super::state::StateDir;
use crate::config::{self, ConfigError, env};

/// Everything a daemon life needs to know before it starts.
#[derive(Debug, Clone)]
pub struct Settings {
    pub port: u16,
    pub host: IpAddr,
    pub state: StateDir,
    pub instance: String,
    pub heartbeat: Duration,
    pub idle_shutdown: Duration,
    /// How often the idle watch looks ([`super::idle::check_every`] unless set).
    pub idle_check: Duration,
    /// How long agents may stay attached with no use before the daemon ends (zero: no bound).
    pub idle_attached: Duration,
    /// The runtime's worker threads ([`super::runtime`]).
    pub workers: usize,
}

impl Settings {
    /// Reads the environment for a daemon on `port`.
    pub fn from_env(port: u16) -> Result<Self, ConfigError> {
        let instance = instance_from_env();
        let idle_shutdown =
            config::millis_from_env(env::IDLE_SHUTDOWN_MS, config::DEFAULT_IDLE_SHUTDOWN)?;
        let idle_attached = config::millis_from_env(env::IDLE_ATTACHED_MS, Duration::ZERO)?;
        let shortest = match idle_attached.is_zero() {
            true => idle_shutdown,
            false => idle_shutdown.min(idle_attached),
        };
        let idle_check =
            config::period_from_env(env::IDLE_CHECK_MS, super::idle::check_every(shortest))?;
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
            idle_shutdown,
            idle_check,
            idle_attached,
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
