//! A panic anywhere in a daemon life is written to its log as a `daemon_panic` line before the
//! previous hook runs. It records the panic; it must not catch or recover from it.

use std::sync::{Arc, OnceLock};

use serde_json::json;

use super::{DaemonLog, events};

static PANIC_LOG: OnceLock<Arc<DaemonLog>> = OnceLock::new();

/// Routes this process's panics to `log` (the first life's log, if called twice).
pub fn install(log: Arc<DaemonLog>) {
    let _ = PANIC_LOG.set(log);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if let Some(log) = PANIC_LOG.get() {
            log.event(events::PANIC, json!({ "message": info.to_string() }));
        }
        previous(info);
    }));
}
