//! Guards for faults installed from Rust: dropping one heals what it installed.
//!
//! [`ToxicGuard`] removes its toxic, [`DownGuard`] brings its proxy back up. Drop heals the proxy's
//! state at once and rewires live connections in the background; `forget()` leaves the fault on
//! purpose. This module must not install faults; [`crate::proxy::Proxy::inject`] and
//! [`crate::proxy::Proxy::down`] do.

use std::sync::Arc;

use crate::error::ApiError;
use crate::proxy::Proxy;

/// A toxic installed from Rust. Dropping it removes the toxic from the list at once; live
/// connections are rewired in the background (`heal().await` also waits for them).
#[must_use = "dropping the guard removes the toxic at once"]
#[derive(Debug)]
pub struct ToxicGuard {
    /// The proxy carrying the toxic.
    proxy: Arc<Proxy>,
    /// The toxic's name.
    name: String,
    /// False once healed or forgotten, so drop does nothing.
    armed: bool,
}

impl ToxicGuard {
    pub(crate) fn new(proxy: Arc<Proxy>, name: String) -> Self {
        Self {
            proxy,
            name,
            armed: true,
        }
    }

    /// The installed toxic's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Remove the toxic and wait until every live connection has dropped it.
    pub async fn heal(mut self) -> Result<(), ApiError> {
        self.armed = false;
        self.proxy.remove_toxic(&self.name)?.wait().await;
        Ok(())
    }

    /// Keep the toxic installed after the guard is gone.
    pub fn forget(mut self) {
        self.armed = false;
    }
}

impl Drop for ToxicGuard {
    fn drop(&mut self) {
        if self.armed {
            // Already removed (by the API or a reset) is fine: it is healed either way.
            let _ = self.proxy.remove_toxic(&self.name);
        }
    }
}

/// A proxy taken down from Rust. Dropping it starts the proxy again.
#[must_use = "dropping the guard brings the proxy back up at once"]
#[derive(Debug)]
pub struct DownGuard {
    /// The proxy that is down.
    proxy: Arc<Proxy>,
    /// False once healed or forgotten.
    armed: bool,
}

impl DownGuard {
    pub(crate) fn new(proxy: Arc<Proxy>) -> Self {
        Self { proxy, armed: true }
    }

    /// Start the proxy again, on the address it had. Fails when that port was taken meanwhile,
    /// which drop can only log.
    pub fn up(mut self) -> Result<(), ApiError> {
        self.armed = false;
        self.proxy.start()
    }

    /// Leave the proxy down.
    pub fn forget(mut self) {
        self.armed = false;
    }
}

impl Drop for DownGuard {
    fn drop(&mut self) {
        if self.armed
            && let Err(e) = self.proxy.start()
        {
            tracing::warn!(proxy = %self.proxy.name(), error = %e.error, "could not bring the proxy back up");
        }
    }
}
