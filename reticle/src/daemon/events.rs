//! The daemon log's event names, defined once. Every line also carries `t`, `pid` and
//! `instance`, so a reader can split the log into lives without the start line.

pub const START: &str = "daemon_start";
pub const START_FAILED: &str = "daemon_start_failed";
pub const STALE_PID: &str = "daemon_stale_pid";
pub const STALE_LOCK: &str = "daemon_stale_lock";
pub const PREVIOUS_DIED_UNCLEAN: &str = "daemon_previous_died_unclean";
pub const ALIVE: &str = "daemon_alive";
pub const SIGNALLED: &str = "daemon_signalled";
pub const IDLE: &str = "daemon_idle";
pub const EXIT: &str = "daemon_exit";
pub const PANIC: &str = "daemon_panic";
