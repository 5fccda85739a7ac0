//! The page side of a stack a scenario drives: an owned daemon, the fixture app and Chromium
//! started together ([`PageStack::start`]), and whether a page's session is listed by the daemon
//! ([`session_listed`]). It starts and waits; it must not open a page or judge what a tool
//! answered.

use std::time::Duration;

use harness::{Browser, FixtureApp, OwnedDaemon, OwnedDaemonBuilder, poll};
use serde_json::Value;

/// An owned daemon, the fixture app and one Chromium, none of them showing a page yet.
pub struct PageStack {
    pub daemon: OwnedDaemon,
    pub app: FixtureApp,
    pub browser: Browser,
}

impl PageStack {
    /// `builder`'s daemon with `daemon_env` added, then the fixture app and Chromium.
    pub async fn start(
        mut builder: OwnedDaemonBuilder,
        daemon_env: &[(&str, &str)],
    ) -> Result<Self, String> {
        for (key, value) in daemon_env {
            builder = builder.env(key, *value);
        }
        let daemon = builder.try_start().await?;
        let app = FixtureApp::start().await;
        let browser = Browser::launch()
            .await
            .map_err(|e| format!("Chromium did not launch: {e}"))?;
        Ok(Self {
            daemon,
            app,
            browser,
        })
    }
}

/// Whether `session` shows up in `reticle_sessions` within `bound`; `sessions` calls the tool
/// and gives its whole result (`None`, or a result without sessions, counts as not yet).
pub async fn session_listed(
    bound: Duration,
    session: &str,
    mut sessions: impl AsyncFnMut() -> Option<Value>,
) -> bool {
    poll::within(bound, async || {
        sessions().await?["structuredContent"]["sessions"]
            .as_array()?
            .iter()
            .any(|s| s["sessionId"] == session)
            .then_some(())
    })
    .await
    .is_some()
}
