//! The browser the daemon drives: tabs Reticle opened itself, in a Chromium it launched (one per
//! daemon, relaunched when it died) or one a person started and it attached to, each tab known by
//! the session id its URL asks for. It opens tabs prepared for zero install (`inject`) and hands
//! out a tab's DevTools page; it must not read sessions or answer a tool.

mod inject;
pub mod mock;
mod refuse;

use std::collections::HashMap;
use std::sync::Arc;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::{
    AddScriptToEvaluateOnNewDocumentParams, SetBypassCspParams,
};
use chromiumoxide::cdp::browser_protocol::target::{CloseTargetParams, TargetId};
use std::time::Duration;
use tokio::sync::Mutex;

use crate::chromium::{Chromium, LaunchSpec};
use crate::wire::session_param::with_session;
pub use inject::outcome;
pub use refuse::{loopback_endpoint, loopback_url};

/// How a driven tab's browser came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driven {
    /// Reticle launched it (and ends it).
    Launched,
    /// A person started it; Reticle attached over DevTools (and only disconnects).
    Attached,
}

impl Driven {
    pub fn as_str(self) -> &'static str {
        match self {
            Driven::Launched => "launched",
            Driven::Attached => "attached",
        }
    }
}

/// Where a driven page's SDK came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdkSource {
    /// Not known yet: the page has not said hello, and nothing was injected.
    Pending,
    /// The app loads the SDK itself.
    App,
    /// Reticle injected the daemon's own SDK over DevTools.
    Injected,
}

impl SdkSource {
    pub fn as_str(self) -> &'static str {
        match self {
            SdkSource::Pending => "pending",
            SdkSource::App => "app",
            SdkSource::Injected => "injected",
        }
    }
}

/// What was asked of a launch or an attach.
#[derive(Debug, Clone)]
pub enum Want {
    Launch { headless: bool },
    Attach { endpoint: String },
}

/// One tab Reticle drives.
#[derive(Clone)]
pub struct DrivenTab {
    pub session: String,
    pub driven: Driven,
    pub sdk: SdkSource,
    /// The URL it was opened at (the session id stamped in).
    pub url: String,
    pub want: Want,
    target: TargetId,
    browser: Arc<Chromium>,
}

impl DrivenTab {
    /// Whether its browser has died.
    pub fn browser_died(&self) -> bool {
        self.browser.died()
    }

    /// Whether its browser dies within `bound` (a browser just killed takes a moment to be
    /// seen gone: its keeper and its DevTools link end after it).
    pub async fn died_within(&self, bound: Duration) -> bool {
        self.browser.died()
            || tokio::time::timeout(bound, self.browser.death())
                .await
                .is_ok()
    }

    /// Its DevTools page.
    pub async fn page(&self) -> Result<Page, String> {
        self.browser.page(&self.target).await.map_err(|why| {
            format!(
                "the driven tab of session '{}' is gone: {why}",
                self.session
            )
        })
    }

    /// Chromium's pid, when Reticle launched it.
    pub fn browser_pid(&self) -> Option<u32> {
        self.browser.pid()
    }
}

/// The driven tabs of one daemon, and its launched browser.
#[derive(Clone, Default)]
pub struct Drives {
    inner: Arc<Mutex<Held>>,
}

impl std::fmt::Debug for Drives {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Drives")
    }
}

#[derive(Default)]
struct Held {
    /// The browser this daemon launched (headless or not), while it lives.
    launched: Option<Arc<Chromium>>,
    /// Browsers attached to, by endpoint.
    attached: HashMap<String, Arc<Chromium>>,
    tabs: HashMap<String, DrivenTab>,
    /// The tab each agent's `reticle mcp --drive` asked for, by agent id.
    agents: HashMap<String, AgentDrive>,
    /// The network mocks set on a tab, by session id.
    mocks: HashMap<String, mock::Mocks>,
}

/// Where an agent's driven tab stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriveState {
    Opening,
    Ready,
    Failed(String),
}

/// The tab an agent's `reticle mcp --drive` asked for.
#[derive(Clone)]
pub struct AgentDrive {
    pub session: String,
    pub want: Want,
    pub url: String,
    state: tokio::sync::watch::Sender<DriveState>,
}

impl AgentDrive {
    /// Marks how the opening came out.
    pub fn settle(&self, state: DriveState) {
        self.state.send_replace(state);
    }

    /// Waits (within `bound`) until the opening came out; `None` when it had not by then.
    pub async fn settled(&self, bound: Duration) -> Option<DriveState> {
        let mut state = self.state.subscribe();
        let settled = tokio::time::timeout(bound, state.wait_for(|s| *s != DriveState::Opening))
            .await
            .ok()?
            .ok()?;
        Some(settled.clone())
    }
}

/// The session id of agent `agent`'s driven tab: the same on each of its reconnects.
pub fn agent_session(agent: &str) -> String {
    let mut id = format!("drive-{agent}");
    id.truncate(crate::wire::limits::MAX_ID_CHARS);
    id
}

/// How long a driven tab's page gets to load (parse its document).
pub const LOAD_BOUND: Duration = Duration::from_secs(10);

/// How long each DevTools request made to prepare a tab gets.
const PREPARE_BOUND: Duration = Duration::from_secs(5);

/// A tab opened: what it is, and whether its browser had to be launched again to open it.
pub struct Opened {
    pub tab: DrivenTab,
    pub relaunched: bool,
    /// Milliseconds spent getting the browser (launch or attach; 0 when it was up).
    pub browser_ms: u64,
    /// Milliseconds from the blank tab to its page parsed.
    pub load_ms: u64,
}

impl Drives {
    /// Opens `url` for session `session` as `want` says: a tab of the launched browser
    /// (launching it, or launching it again when it died), or of the browser at an endpoint.
    /// The tab is prepared before it loads anything: the page's CSP bypassed and the
    /// zero-install script of the daemon on `port` set to run first in every document.
    pub async fn open(
        &self,
        want: Want,
        url: &str,
        session: &str,
        port: u16,
    ) -> Result<Opened, String> {
        let stamped = with_session(url, session);
        let started = std::time::Instant::now();
        let mut held = self.inner.lock().await;
        let mut relaunched = false;
        let (browser, driven) = match &want {
            Want::Launch { headless } => match held.launched.clone() {
                Some(browser) if !browser.died() => (browser, Driven::Launched),
                earlier => {
                    relaunched = earlier.is_some();
                    let browser = Arc::new(
                        Chromium::launch(LaunchSpec {
                            label: "reticle-drive".into(),
                            headless: *headless,
                            first_url: "about:blank",
                        })
                        .await?,
                    );
                    held.launched = Some(browser.clone());
                    (browser, Driven::Launched)
                }
            },
            Want::Attach { endpoint } => {
                match held.attached.get(endpoint).cloned().filter(|b| !b.died()) {
                    Some(browser) => (browser, Driven::Attached),
                    None => {
                        let browser = Arc::new(Chromium::attach(endpoint).await?);
                        held.attached.insert(endpoint.clone(), browser.clone());
                        (browser, Driven::Attached)
                    }
                }
            }
        };
        let browser_ms = started.elapsed().as_millis() as u64;
        let target = browser.blank_tab().await?;
        let page = browser.page(&target).await?;
        prepare(&page, &inject::source(port, session)).await?;
        browser.go(&target, &stamped, LOAD_BOUND).await?;
        let tab = DrivenTab {
            session: session.to_string(),
            driven,
            sdk: SdkSource::Pending,
            url: stamped,
            want,
            target,
            browser,
        };
        // A tab opened again starts without the mocks of the one it replaces.
        held.mocks.remove(session);
        held.tabs.insert(session.to_string(), tab.clone());
        let load_ms = started.elapsed().as_millis() as u64 - browser_ms;
        Ok(Opened {
            tab,
            relaunched,
            browser_ms,
            load_ms,
        })
    }

    /// The driven tab of `session`, if Reticle drives it.
    pub async fn tab(&self, session: &str) -> Option<DrivenTab> {
        self.inner.lock().await.tabs.get(session).cloned()
    }

    /// Every driven tab, by session id.
    pub async fn tabs(&self) -> HashMap<String, DrivenTab> {
        self.inner.lock().await.tabs.clone()
    }

    /// Records where `session`'s SDK came from.
    pub async fn mark_sdk(&self, session: &str, sdk: SdkSource) {
        if let Some(tab) = self.inner.lock().await.tabs.get_mut(session) {
            tab.sdk = sdk;
        }
    }

    /// Begins agent `agent`'s drive of `url`: its entry, marked opening, when no opening is
    /// under way and its tab is not already up (`None` then: there is nothing to do).
    pub async fn begin_agent(&self, agent: &str, want: Want, url: &str) -> Option<AgentDrive> {
        let mut held = self.inner.lock().await;
        if let Some(earlier) = held.agents.get(agent) {
            let live = held
                .tabs
                .get(&earlier.session)
                .is_some_and(|tab| !tab.browser_died());
            let state = earlier.state.borrow().clone();
            if state == DriveState::Opening || (state == DriveState::Ready && live) {
                return None;
            }
        }
        let (state, _) = tokio::sync::watch::channel(DriveState::Opening);
        let drive = AgentDrive {
            session: agent_session(agent),
            want,
            url: url.to_string(),
            state,
        };
        held.agents.insert(agent.to_string(), drive.clone());
        Some(drive)
    }

    /// Agent `agent`'s drive, if it asked for one.
    pub async fn agent(&self, agent: &str) -> Option<AgentDrive> {
        self.inner.lock().await.agents.get(agent).cloned()
    }

    /// Ends agent `agent`'s drive: its tab closes, and the launched browser with it when no
    /// other tab of it is left.
    pub async fn release_agent(&self, agent: &str) {
        let (tab, browser) = {
            let mut held = self.inner.lock().await;
            let Some(drive) = held.agents.remove(agent) else {
                return;
            };
            let tab = held.tabs.remove(&drive.session);
            let others = held.tabs.values().any(|t| t.driven == Driven::Launched);
            let browser = if others { None } else { held.launched.take() };
            (tab, browser)
        };
        if let Some(tab) = tab {
            let _ = tokio::time::timeout(
                PREPARE_BOUND,
                tab.browser
                    .devtools()
                    .execute(CloseTargetParams::new(tab.target.clone())),
            )
            .await;
        }
        if let Some(browser) = browser.and_then(|b| Arc::try_unwrap(b).ok()) {
            browser.close().await;
        }
    }

    /// Knows `session`'s tab as `actual` from now on: its app connected under an id of its own.
    pub async fn rename(&self, session: &str, actual: &str) {
        let mut held = self.inner.lock().await;
        if let Some(mut tab) = held.tabs.remove(session) {
            tab.session = actual.to_string();
            held.tabs.insert(actual.to_string(), tab);
        }
        for drive in held.agents.values_mut() {
            if drive.session == session {
                drive.session = actual.to_string();
            }
        }
    }

    /// Sets `rules` as `session`'s network mocks (replacing any); how many are in force.
    pub async fn set_mocks(
        &self,
        tab: &DrivenTab,
        rules: Vec<mock::MockRule>,
    ) -> Result<usize, String> {
        let count = rules.len();
        let mut held = self.inner.lock().await;
        if let Some(mocks) = held.mocks.get(&tab.session) {
            mocks.set(rules);
            return Ok(count);
        }
        let page = tab.page().await?;
        let mocks = tokio::time::timeout(PREPARE_BOUND, mock::Mocks::install(&page, rules))
            .await
            .map_err(|_| "Chromium did not start intercepting within 5 s".to_string())??;
        held.mocks.insert(tab.session.clone(), mocks);
        Ok(count)
    }

    /// `session`'s mocks in force and how many requests they answered (none set: empty, 0).
    pub async fn mocks(&self, session: &str) -> (Vec<mock::MockRule>, u64) {
        let held = self.inner.lock().await;
        held.mocks
            .get(session)
            .map(|m| (m.rules(), m.answered()))
            .unwrap_or_default()
    }

    /// Removes `session`'s mocks; how many rules there were.
    pub async fn clear_mocks(&self, tab: &DrivenTab) -> usize {
        let removed = self.inner.lock().await.mocks.remove(&tab.session);
        let Some(mocks) = removed else {
            return 0;
        };
        let count = mocks.rules().len();
        if let Ok(page) = tab.page().await {
            let _ = tokio::time::timeout(PREPARE_BOUND, mocks.remove(&page)).await;
        }
        count
    }

    /// Forgets `session`'s tab (it failed to come up, or was closed).
    pub async fn forget(&self, session: &str) {
        self.inner.lock().await.tabs.remove(session);
    }
}

/// Bypasses `page`'s CSP (a tab Reticle drives, in development) and sets `script` to run
/// before the page's own scripts in every document it loads.
async fn prepare(page: &Page, script: &str) -> Result<(), String> {
    let bounded = |what: &'static str| {
        move |e: tokio::time::error::Elapsed| {
            format!(
                "Chromium did not {what} within {} s ({e})",
                PREPARE_BOUND.as_secs()
            )
        }
    };
    tokio::time::timeout(PREPARE_BOUND, page.execute(SetBypassCspParams::new(true)))
        .await
        .map_err(bounded("bypass the page's CSP"))?
        .map_err(|e| format!("Chromium refused to bypass the page's CSP: {e}"))?;
    tokio::time::timeout(
        PREPARE_BOUND,
        page.execute(AddScriptToEvaluateOnNewDocumentParams::new(script)),
    )
    .await
    .map_err(bounded("take Reticle's start-up script"))?
    .map_err(|e| format!("Chromium refused Reticle's start-up script: {e}"))?;
    Ok(())
}
