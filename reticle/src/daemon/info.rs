//! Facts about this daemon life, fixed at start: what `/status` reports and what a tool call
//! may say about the daemon it runs in. It holds facts; it must not gather them (that is
//! [`crate::assembly`]).

/// Facts about this daemon life, fixed at start.
#[derive(Debug, Clone)]
pub struct DaemonInfo {
    pub version: String,
    pub instance: String,
    pub pid: u32,
    pub port: u16,
    pub started_at: String,
}
