//! The browser `reticle verify` launches itself: Debian's Chromium (or `RETICLE_CHROMIUM`),
//! headless over the DevTools protocol, one process per job with a fresh `--user-data-dir`, and
//! for each flow a fresh browser context (its own storage) whose one tab opens the app with the
//! session id the flow's replay will drive. A browser whose connection ends or whose process
//! exits before it is closed has died, and says so: a watcher notices either at once, and every
//! DevTools await here is bounded and ends early when the browser dies (a request to a killed
//! Chromium is otherwise never answered).
//!
//! This module launches and opens pages; it must not talk to the daemon.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use chromiumoxide::browser::BrowserConfig;
use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::cdp::browser_protocol::target::{
    CreateBrowserContextParams, CreateTargetParams, TargetId,
};
use futures_util::StreamExt;
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use tokio::sync::watch;

use crate::config::env;

/// Where Debian puts Chromium.
pub const DEFAULT_CHROMIUM: &str = "/usr/bin/chromium";

/// How long Chromium gets to start and each DevTools request to be answered.
const LAUNCH_BOUND: Duration = Duration::from_secs(30);

/// How long a browser gets to close before it is killed.
const CLOSE_BOUND: Duration = Duration::from_secs(5);

/// How often the watcher looks whether the browser process has exited.
const EXIT_POLL: Duration = Duration::from_millis(50);

/// How often a new tab is asked whether it has parsed its own document.
const PARSED_POLL: Duration = Duration::from_millis(10);

/// True in a tab that holds its own document, parsed: the initial blank document does not count,
/// and a navigation still waiting for its response leaves that blank document in place.
const PARSED: &str = "location.href !== 'about:blank' && document.readyState !== 'loading'";

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
    /// Watches the process and ends when it exited.
    watcher: tokio::task::JoinHandle<()>,
    /// Turns true when the DevTools connection ended or the process exited: the browser is gone.
    gone: watch::Receiver<bool>,
    pid: Option<u32>,
    profile: PathBuf,
}

/// A flow's own browser context (its one tab goes with it).
pub struct FlowPage {
    context: BrowserContextId,
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
            .args(crate::config::CHROMIUM_FLAGS.iter().copied())
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
        let (mark_gone, gone) = watch::channel(false);
        let disconnected = mark_gone.clone();
        let handler = tokio::spawn(async move {
            while handler.next().await.is_some() {}
            disconnected.send_replace(true);
        });
        let watcher = tokio::spawn(async move {
            while pid.is_none_or(running) {
                tokio::time::sleep(EXIT_POLL).await;
            }
            mark_gone.send_replace(true);
        });
        Ok(Self {
            inner,
            handler,
            watcher,
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
    pub fn died(&self) -> bool {
        *self.gone.borrow()
    }

    /// Resolves when the browser has died.
    pub async fn death(&self) {
        let mut gone = self.gone.clone();
        // An error means both senders are gone, which they only are once they marked it.
        let _ = gone.wait_for(|gone| *gone).await;
    }

    /// `request`, given `bound` to answer and ended at once when the browser dies.
    async fn answer<T>(
        &self,
        bound: Duration,
        request: impl Future<Output = Result<T, String>>,
    ) -> Result<T, String> {
        tokio::select! {
            answered = tokio::time::timeout(bound, request) => answered.unwrap_or_else(|_| {
                Err(format!("Chromium did not answer within {} s", bound.as_secs()))
            }),
            () = self.death() => Err("Chromium exited or dropped its DevTools connection".into()),
        }
    }

    /// Opens `url` in a fresh browser context: storage no other flow has seen.
    pub async fn open(&self, url: &str) -> Result<FlowPage, String> {
        let context = self
            .answer(LAUNCH_BOUND, async {
                self.inner
                    .create_browser_context(CreateBrowserContextParams::default())
                    .await
                    .map_err(|e| format!("Chromium refused a new browser context: {e}"))
            })
            .await?;
        let target = CreateTargetParams::builder()
            .url(url)
            .browser_context_id(context.clone())
            .build()
            .map_err(|e| format!("Chromium could not be asked for a tab: {e}"))?;
        let created = self
            .answer(LAUNCH_BOUND, async {
                self.inner
                    .execute(target)
                    .await
                    .map_err(|e| format!("Chromium could not open {url}: {e}"))
            })
            .await?;
        let tab = created.result.target_id.clone();
        self.answer(LAUNCH_BOUND, async {
            self.until_parsed(tab).await;
            Ok(())
        })
        .await
        .map_err(|why| format!("{url} did not load: {why}"))?;
        Ok(FlowPage { context })
    }

    /// Resolves once tab `tab` holds its own document (not the blank one a new tab starts with)
    /// and has parsed it: its scripts, the SDK's among them, have run. Nothing waits for images,
    /// frames or the load event; whether the page is far enough along is the daemon's to see
    /// (its SDK session appears). Unbounded here: the caller bounds it.
    async fn until_parsed(&self, tab: TargetId) {
        loop {
            if let Ok(page) = self.inner.get_page(tab.clone()).await
                && let Ok(answer) = page.evaluate(PARSED).await
                && answer.into_value::<bool>().unwrap_or(false)
            {
                return;
            }
            tokio::time::sleep(PARSED_POLL).await;
        }
    }

    /// Ends a flow's context (its tab and storage go with it).
    pub async fn close_page(&self, page: FlowPage) {
        let _ = self
            .answer(CLOSE_BOUND, async {
                self.inner
                    .dispose_browser_context(page.context)
                    .await
                    .map_err(|e| e.to_string())
            })
            .await;
    }

    /// Closes the browser (killing it when it does not close), reaps it, dead or not, and
    /// removes its profile.
    pub async fn close(mut self) {
        if !self.died() {
            let mut gone = self.gone.clone();
            tokio::select! {
                _ = tokio::time::timeout(CLOSE_BOUND, self.inner.close()) => {}
                _ = gone.wait_for(|gone| *gone) => {}
            }
        }
        if tokio::time::timeout(CLOSE_BOUND, self.inner.wait())
            .await
            .is_err()
        {
            let _ = tokio::time::timeout(CLOSE_BOUND, self.inner.kill()).await;
        }
    }
}

/// Whether process `pid` has not exited (looked at without reaping it: its owner reaps it).
fn running(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    matches!(
        waitid(
            Id::Pid(nix::unistd::Pid::from_raw(pid)),
            WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT,
        ),
        Ok(WaitStatus::StillAlive)
    )
}

impl Drop for JobBrowser {
    fn drop(&mut self) {
        self.handler.abort();
        self.watcher.abort();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}
