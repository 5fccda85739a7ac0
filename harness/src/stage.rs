//! What a test or a scenario that runs `reticle mcp` stands on: a private state dir, a free port
//! for the daemon the proxy starts, and [`ReapPort`], which ends that daemon when the stage goes.
//! Gate scenarios and gate tests share these; this module must not start anything itself.

use crate::{free_port, marker};

/// Ends, when dropped, every daemon this process's proxies started on the port (they carry the
/// harness marker; nothing else is touched).
pub struct ReapPort(pub u16);

impl Drop for ReapPort {
    fn drop(&mut self) {
        marker::end_marked_listeners(self.0);
    }
}

/// A private state dir, a free port for its daemon, and the reaper that ends whatever daemon a
/// proxy started there when the stage is dropped.
pub struct Stage {
    pub state: tempfile::TempDir,
    pub port: u16,
    pub _reap: ReapPort,
}

impl Default for Stage {
    fn default() -> Self {
        let state = tempfile::tempdir().expect("a private state dir");
        let port = free_port();
        Self {
            state,
            port,
            _reap: ReapPort(port),
        }
    }
}
