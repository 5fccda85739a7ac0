//! The browser `reticle verify` launches itself: Debian's Chromium (or `RETICLE_CHROMIUM`),
//! headless over the DevTools protocol, one process per job with a fresh `--user-data-dir`, and
//! for each flow a fresh browser context (its own storage) whose one tab opens the app with the
//! session id the flow's replay will drive. A browser whose connection ends before it is closed
//! has died, and says so.
//!
//! This module launches and opens pages; it must not talk to the daemon.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chromiumoxide::browser::BrowserConfig;
use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::cdp::browser_protocol::target::{
    CreateBrowserContextParams, CreateTargetParams,
};
use futures_util::StreamExt;

use crate::config::env;

/// Where Debian puts Chromium.
pub const DEFAULT_CHROMIUM: &str = "/usr/bin/chromium";

/// The flags every launch uses beyond `--headless` (which the launcher adds), the profile and
/// the debugging port.
const FLAGS: &[&str] = &[
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

/// How long Chromium gets to start and each DevTools request to be answered.
const LAUNCH_BOUND: Duration = Duration::from_secs(30);

/// How long a browser gets to close before it is killed.
const CLOSE_BOUND: Duration = Duration::from_secs(5);

/// The Chromium binary: `RETICLE_CHROMIUM`, else Debian's.
pub fn chromium_path() -> PathBuf {
    std::env::var_os(env::CHROMIUM)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_CHROMIUM))
}

/// One job's Chromium.
pub struct JobBrowser {
    inner: chromiumoxide::Browser,
    handler: tokio::task::JoinHandle<()>,
    /// Set when the DevTools connection ended: the browser is gone.
    gone: Arc<AtomicBool>,
    pid: Option<u32>,
    profile: PathBuf,
}

/// A flow's own browser context and the tab in it.
pub struct FlowPage {
    context: BrowserContextId,
    _page: chromiumoxide::Page,
}

impl JobBrowser {
    /// Launches Chromium with a fresh profile for job `job`.
    pub async fn launch(job: usize) -> Result<Self, String> {
        let binary = chromium_path();
        if !binary.exists() {
            return Err(format!(
                "Chromium is not at {} (install Debian's chromium, or point {} at a Chromium binary)",
                binary.display(),
                env::CHROMIUM
            ));
        }
        let profile = std::env::temp_dir().join(format!(
            "reticle-verify-{}-{job}",
            uuid::Uuid::new_v4().simple()
        ));
        let config = BrowserConfig::builder()
            .chrome_executable(&binary)
            .disable_default_args()
            .no_sandbox()
            .args(FLAGS.iter().copied())
            .user_data_dir(&profile)
            .launch_timeout(LAUNCH_BOUND)
            .request_timeout(LAUNCH_BOUND)
            .viewport(None)
            .build()
            .map_err(|e| format!("Chromium could not be configured: {e}"))?;
        let (mut inner, mut handler) = chromiumoxide::Browser::launch(config)
            .await
            .map_err(|e| format!("Chromium ({}) did not start: {e}", binary.display()))?;
        let pid = inner
            .get_mut_child()
            .and_then(|child| child.as_mut_inner().id());
        let gone = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&gone);
        let handler = tokio::spawn(async move {
            while handler.next().await.is_some() {}
            flag.store(true, Ordering::SeqCst);
        });
        Ok(Self {
            inner,
            handler,
            gone,
            pid,
            profile,
        })
    }

    /// The browser process id, when known.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Whether the browser died (its process ended or its DevTools connection closed).
    pub fn died(&mut self) -> bool {
        self.gone.load(Ordering::SeqCst) || !matches!(self.inner.try_wait(), Ok(None))
    }

    /// Opens `url` in a fresh browser context: storage no other flow has seen.
    pub async fn open(&self, url: &str) -> Result<FlowPage, String> {
        let context = self
            .inner
            .create_browser_context(CreateBrowserContextParams::default())
            .await
            .map_err(|e| format!("Chromium refused a new browser context: {e}"))?;
        let target = CreateTargetParams::builder()
            .url(url)
            .browser_context_id(context.clone())
            .build()
            .map_err(|e| format!("Chromium could not be asked for a tab: {e}"))?;
        let page = self
            .inner
            .new_page(target)
            .await
            .map_err(|e| format!("Chromium could not open {url}: {e}"))?;
        Ok(FlowPage {
            context,
            _page: page,
        })
    }

    /// Ends a flow's context (its tab and storage go with it).
    pub async fn close_page(&self, page: FlowPage) {
        let _ = self.inner.dispose_browser_context(page.context).await;
    }

    /// Closes the browser (a dead one is left to be reaped) and removes its profile.
    pub async fn close(mut self) {
        if !self.died() {
            let _ = tokio::time::timeout(CLOSE_BOUND, self.inner.close()).await;
            if tokio::time::timeout(CLOSE_BOUND, self.inner.wait())
                .await
                .is_err()
            {
                let _ = tokio::time::timeout(CLOSE_BOUND, self.inner.kill()).await;
            }
        }
        self.handler.abort();
    }
}

impl Drop for JobBrowser {
    fn drop(&mut self) {
        self.handler.abort();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}
