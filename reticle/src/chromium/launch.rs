//! A Chromium over DevTools: launched (Debian's, or `RETICLE_CHROMIUM`, with a fresh
//! `--user-data-dir`, under a [`super::keeper`]) or attached to one a person started. A browser
//! whose connection ends or whose process exits before it is closed has died and says so; every
//! DevTools await here is bounded and ends early on death.
//!
//! It launches, attaches and opens pages; it must not talk to the daemon.

use std::future::Future;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::cdp::browser_protocol::page::NavigateParams;
use chromiumoxide::cdp::browser_protocol::target::{
    CreateBrowserContextParams, CreateTargetParams, GetTargetsParams, TargetId,
};
use chromiumoxide::handler::HandlerConfig;
use futures_util::StreamExt;
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use tokio::io::{AsyncBufReadExt, BufReader};
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

/// What to launch: whose browser (the profile's name says it), how, and its first page.
pub struct LaunchSpec<'a> {
    /// The profile directory's prefix, e.g. `reticle-verify-3` (a marker a sweep can find).
    pub label: String,
    /// Headless (the default everywhere), or a window a person can watch.
    pub headless: bool,
    /// The start-up tab's URL (an http(s) URL: callers refuse any other).
    pub first_url: &'a str,
}

/// One Chromium, launched or attached.
pub struct Chromium {
    inner: chromiumoxide::Browser,
    /// The keeper of a launched browser; `None` for an attached one (never closed by us).
    process: Option<tokio::process::Child>,
    handler: tokio::task::JoinHandle<()>,
    /// Watches the process and ends when it exited.
    watcher: tokio::task::JoinHandle<()>,
    /// Turns true when the DevTools connection ended or the process exited: the browser is gone.
    gone: watch::Receiver<bool>,
    pid: Option<u32>,
    /// A launched browser's profile, removed with it; `None` when attached.
    profile: Option<PathBuf>,
}

/// Where a flow's page lives, and so how it is put away.
pub enum FlowPage {
    /// The tab Chromium opened at launch, in the profile's own context: left on a blank page.
    StartUp(TargetId),
    /// A fresh browser context (its one tab goes with it).
    Context(BrowserContextId),
}

/// What Chromium prints on stderr once its DevTools endpoint listens.
const DEVTOOLS_LISTENING: &str = "DevTools listening on ";

/// How many of Chromium's last stderr lines a failed launch quotes.
const STDERR_QUOTED: usize = 5;

impl Chromium {
    /// Launches Chromium as `spec` says, with a fresh profile, under a keeper (this process's
    /// own executable), so it ends with this process however this process ends.
    pub async fn launch(spec: LaunchSpec<'_>) -> Result<Self, String> {
        let binary = chromium_path();
        if !binary.exists() {
            return Err(format!(
                "Chromium is not at {} (install Debian's chromium, or point {} at a Chromium binary)",
                binary.display(),
                env::CHROMIUM
            ));
        }
        let keeper = std::env::current_exe().map_err(|e| {
            format!("Reticle could not find its own executable to keep Chromium: {e}")
        })?;
        let profile =
            std::env::temp_dir().join(format!("{}-{}", spec.label, uuid::Uuid::new_v4().simple()));
        // Chromium's own temporary files (its singleton socket's directory) go inside the
        // profile, so they leave with it even when the browser is killed.
        std::fs::create_dir_all(&profile)
            .map_err(|e| format!("its profile {} could not be made: {e}", profile.display()))?;
        let args = chromium_args(&profile, spec.headless, spec.first_url);
        let mut command = if crate::config::switch_on(env::TEST_STAND_IN_CHROMIUM_UNKEPT) {
            let mut unkept = tokio::process::Command::new(&binary);
            unkept.args(&args);
            unkept
        } else {
            let mut kept = tokio::process::Command::new(&keeper);
            kept.args(super::keeper::arguments(&profile, &binary, &args));
            kept
        };
        let mut process = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                let _ = std::fs::remove_dir_all(&profile);
                format!("Chromium ({}) did not start: {e}", binary.display())
            })?;
        let keeper_pid = process.id();
        let endpoint = tokio::time::timeout(LAUNCH_BOUND, devtools_endpoint(&mut process))
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "its DevTools endpoint did not open within {} s",
                    LAUNCH_BOUND.as_secs()
                ))
            });
        let mut pid = None;
        let connected = match endpoint {
            Ok((endpoint, chromium_pid)) => {
                pid = chromium_pid;
                let config = HandlerConfig {
                    request_timeout: LAUNCH_BOUND,
                    ..HandlerConfig::default()
                };
                chromiumoxide::Browser::connect_with_config(endpoint, config)
                    .await
                    .map_err(|e| format!("its DevTools endpoint refused the connection: {e}"))
            }
            Err(why) => Err(why),
        };
        let (inner, handler) = match connected {
            Ok(connected) => connected,
            Err(why) => {
                let _ = process.kill().await;
                let _ = std::fs::remove_dir_all(&profile);
                return Err(format!(
                    "Chromium ({}) did not start: {why}",
                    binary.display()
                ));
            }
        };
        let (handler, watcher, gone) = watch_life(handler, keeper_pid);
        Ok(Self {
            inner,
            process: Some(process),
            handler,
            watcher,
            gone,
            pid,
            profile: Some(profile),
        })
    }

    /// Attaches to a Chromium a person started with `--remote-debugging-port`, at `endpoint`
    /// (`http://127.0.0.1:9222`, or its `ws://` browser URL). Closing it later only disconnects.
    pub async fn attach(endpoint: &str) -> Result<Self, String> {
        let config = HandlerConfig {
            request_timeout: LAUNCH_BOUND,
            ..HandlerConfig::default()
        };
        let connected = tokio::time::timeout(
            LAUNCH_BOUND,
            chromiumoxide::Browser::connect_with_config(endpoint, config),
        )
        .await
        .map_err(|_| {
            format!(
                "no DevTools endpoint answered at {endpoint} within {} s",
                LAUNCH_BOUND.as_secs()
            )
        })?;
        let (inner, handler) = connected.map_err(|e| {
            format!("no Chromium DevTools endpoint at {endpoint} ({e}); start Chromium with --remote-debugging-port=9222, then attach to http://127.0.0.1:9222")
        })?;
        let (handler, watcher, gone) = watch_life(handler, None);
        Ok(Self {
            inner,
            process: None,
            handler,
            watcher,
            gone,
            pid: None,
            profile: None,
        })
    }

    /// Whether this browser was launched here (else attached).
    pub fn launched(&self) -> bool {
        self.process.is_some()
    }

    /// The DevTools connection, for the callers that drive pages themselves.
    pub fn devtools(&self) -> &chromiumoxide::Browser {
        &self.inner
    }

    /// Chromium's own process id, when launched here.
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
        if crate::config::switch_on(env::TEST_STAND_IN_VERIFY_SHARES_CONTEXT) {
            return self.open_in_start_up_context(url).await;
        }
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
        self.open_tab(target, url).await?;
        Ok(FlowPage::Context(context))
    }

    /// The stand-in's way: a tab in the start-up context, storage shared with the first flow.
    async fn open_in_start_up_context(&self, url: &str) -> Result<FlowPage, String> {
        let tab = self.open_tab(CreateTargetParams::new(url), url).await?;
        Ok(FlowPage::StartUp(tab))
    }

    /// The DevTools page of tab `tab`, bounded and ended early by the browser's death.
    pub async fn page(&self, tab: &TargetId) -> Result<chromiumoxide::Page, String> {
        self.answer(CLOSE_BOUND, async {
            self.inner
                .get_page(tab.clone())
                .await
                .map_err(|e| format!("Chromium has no such tab: {e}"))
        })
        .await
    }

    /// Creates the tab `target` describes and waits (bounded) until it has parsed `url`.
    pub async fn open_tab(
        &self,
        target: CreateTargetParams,
        url: &str,
    ) -> Result<TargetId, String> {
        let created = self
            .answer(LAUNCH_BOUND, async {
                self.inner
                    .execute(target)
                    .await
                    .map_err(|e| format!("Chromium could not open {url}: {e}"))
            })
            .await?;
        let tab = created.result.target_id.clone();
        self.parsed(&tab)
            .await
            .map_err(|why| format!("{url} did not load: {why}"))?;
        Ok(tab)
    }

    /// Opens a blank tab, in a window of its own in the start-up context, and answers its id at
    /// once (a tab to prepare before it is sent anywhere: [`Self::go`]).
    pub async fn blank_tab(&self) -> Result<TargetId, String> {
        // A window of its own: a tab in a shared window is hidden (its timers throttled) once
        // another opens in front of it.
        let target = CreateTargetParams::builder()
            .url("about:blank")
            .new_window(true)
            .build()
            .map_err(|e| format!("Chromium could not be asked for a tab: {e}"))?;
        let page = self
            .answer(CLOSE_BOUND, async {
                self.inner
                    .new_page(target)
                    .await
                    .map_err(|e| format!("Chromium could not open a tab: {e}"))
            })
            .await?;
        Ok(page.target_id().clone())
    }

    /// Sends tab `tab` to `url` and waits until it has parsed it, within `bound` (a page busy
    /// in a loop never parses) and ended early by the browser's death.
    pub async fn go(&self, tab: &TargetId, url: &str, bound: Duration) -> Result<(), String> {
        self.answer(bound, async {
            let page = self
                .inner
                .get_page(tab.clone())
                .await
                .map_err(|e| format!("Chromium has no such tab: {e}"))?;
            page.execute(NavigateParams::new(url))
                .await
                .map_err(|e| format!("Chromium could not open {url}: {e}"))?;
            self.until_parsed(tab.clone()).await;
            Ok(())
        })
        .await
        .map_err(|why| format!("{url} did not load: {why}"))
    }

    /// [`Self::until_parsed`], bounded and ended early by the browser's death.
    async fn parsed(&self, tab: &TargetId) -> Result<(), String> {
        self.answer(LAUNCH_BOUND, async {
            self.until_parsed(tab.clone()).await;
            Ok(())
        })
        .await
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

    /// The start-up tab, once it holds its own document, parsed (as [`Self::open`] waits).
    pub async fn start_up_page(&self) -> Result<FlowPage, String> {
        let tab = self
            .answer(LAUNCH_BOUND, async {
                loop {
                    let targets = self
                        .inner
                        .execute(GetTargetsParams::default())
                        .await
                        .map_err(|e| format!("Chromium did not list its tabs: {e}"))?;
                    let tab = targets
                        .result
                        .target_infos
                        .iter()
                        .find(|t| t.r#type == "page");
                    if let Some(tab) = tab {
                        return Ok(tab.target_id.clone());
                    }
                    tokio::time::sleep(PARSED_POLL).await;
                }
            })
            .await?;
        self.parsed(&tab)
            .await
            .map_err(|why| format!("the start-up tab did not load: {why}"))?;
        Ok(FlowPage::StartUp(tab))
    }

    /// Puts a flow's page away: a context ends (its tab and storage go with it); the start-up
    /// tab is left on a blank page (closing a browser's last tab may end the browser).
    pub async fn close_page(&self, page: FlowPage) {
        let _ = self
            .answer(CLOSE_BOUND, async {
                match page {
                    FlowPage::Context(context) => self
                        .inner
                        .dispose_browser_context(context)
                        .await
                        .map_err(|e| e.to_string()),
                    FlowPage::StartUp(tab) => {
                        let page = self.inner.get_page(tab).await.map_err(|e| e.to_string())?;
                        page.execute(NavigateParams::new("about:blank"))
                            .await
                            .map(drop)
                            .map_err(|e| e.to_string())
                    }
                }
            })
            .await;
    }

    /// Closes a launched browser (killing it when it does not close), reaps it, dead or not,
    /// and removes its profile; an attached one is only disconnected.
    pub async fn close(mut self) {
        let Some(mut process) = self.process.take() else {
            self.handler.abort();
            return;
        };
        if !self.died() {
            let mut gone = self.gone.clone();
            tokio::select! {
                _ = tokio::time::timeout(CLOSE_BOUND, self.inner.close()) => {}
                _ = gone.wait_for(|gone| *gone) => {}
            }
        }
        if tokio::time::timeout(CLOSE_BOUND, process.wait())
            .await
            .is_err()
        {
            let _ = tokio::time::timeout(CLOSE_BOUND, process.kill()).await;
        }
        // The keeper removed the profile as it ended; a keeper that was killed could not.
        if let Some(profile) = self.profile.clone() {
            let _ = tokio::task::spawn_blocking(move || {
                crate::store::remove_dir_released(&profile, CLOSE_BOUND)
            })
            .await;
        }
    }
}

/// Drains the DevTools handler and watches the keeper `pid` (when there is one): the receiver
/// turns true when either ends.
fn watch_life(
    mut handler: chromiumoxide::Handler,
    pid: Option<u32>,
) -> (
    tokio::task::JoinHandle<()>,
    tokio::task::JoinHandle<()>,
    watch::Receiver<bool>,
) {
    let (mark_gone, gone) = watch::channel(false);
    let disconnected = mark_gone.clone();
    let handler = tokio::spawn(async move {
        while handler.next().await.is_some() {}
        disconnected.send_replace(true);
    });
    let watcher = tokio::spawn(async move {
        let Some(pid) = pid else {
            return std::future::pending().await;
        };
        while running(pid) {
            tokio::time::sleep(EXIT_POLL).await;
        }
        mark_gone.send_replace(true);
    });
    (handler, watcher, gone)
}

/// Chromium's arguments: headless unless asked otherwise, the product's flags, the fresh
/// profile, a DevTools port of the kernel's choosing, and the first URL last.
fn chromium_args(profile: &std::path::Path, headless: bool, first_url: &str) -> Vec<String> {
    let mut args = Vec::new();
    if headless {
        args.push("--headless".to_string());
    }
    args.extend(crate::config::CHROMIUM_FLAGS.iter().map(|f| f.to_string()));
    args.push(format!("--user-data-dir={}", profile.display()));
    args.push("--remote-debugging-port=0".to_string());
    args.push(first_url.to_string());
    args
}

/// Reads the keeper's stderr (Chromium's pid, then Chromium's own lines) until it names its
/// DevTools endpoint, then keeps draining it (a full pipe would stall the browser). A process
/// that ends first is quoted by its last lines.
async fn devtools_endpoint(
    process: &mut tokio::process::Child,
) -> Result<(String, Option<u32>), String> {
    let Some(stderr) = process.stderr.take() else {
        return Err("its stderr could not be read".into());
    };
    let mut lines = BufReader::new(stderr).lines();
    let mut last = std::collections::VecDeque::new();
    let mut pid = None;
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(said) = line.strip_prefix(super::keeper::PID_LINE) {
            pid = said.trim().parse().ok();
            continue;
        }
        if let Some(endpoint) = line.split(DEVTOOLS_LISTENING).nth(1) {
            let endpoint = endpoint.trim().to_string();
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            return Ok((endpoint, pid));
        }
        if last.len() == STDERR_QUOTED {
            last.pop_front();
        }
        last.push_back(line);
    }
    let said: Vec<String> = last.into_iter().collect();
    Err(format!(
        "it exited before opening its DevTools endpoint; its last words: {}",
        said.join(" | ")
    ))
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

impl Drop for Chromium {
    fn drop(&mut self) {
        self.handler.abort();
        self.watcher.abort();
        if let Some(profile) = &self.profile {
            let _ = std::fs::remove_dir_all(profile);
        }
    }
}
