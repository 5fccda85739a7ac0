//! The browser the daemon drives: tabs Reticle opened itself, in a Chromium it launched (one per
//! daemon, relaunched when it died) or one a person started and it attached to, each tab known by
//! the session id its URL asks for. It opens tabs, injects the served SDK into a page that has
//! none, and hands out a tab's DevTools page; it must not read sessions or answer a tool.

mod inject;
mod refuse;

use std::collections::HashMap;
use std::sync::Arc;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::{
    AddScriptToEvaluateOnNewDocumentParams, SetBypassCspParams,
};
use chromiumoxide::cdp::browser_protocol::target::{CreateTargetParams, TargetId};
use tokio::sync::Mutex;

use crate::chromium::{Chromium, FlowPage, LaunchSpec};
use crate::wire::session_param::with_session;
pub use inject::Injected;
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
}

impl Drives {
    /// Opens `url` for session `session` as `want` says: a tab of the launched browser
    /// (launching it, or launching it again when it died), or of the browser at an endpoint.
    pub async fn open(&self, want: Want, url: &str, session: &str) -> Result<DrivenTab, String> {
        let stamped = with_session(url, session);
        let mut held = self.inner.lock().await;
        let (browser, target, driven) = match &want {
            Want::Launch { headless } => {
                let live = held.launched.clone().filter(|b| !b.died());
                match live {
                    Some(browser) => {
                        let target = browser
                            .open_tab(CreateTargetParams::new(&stamped), &stamped)
                            .await?;
                        (browser, target, Driven::Launched)
                    }
                    None => {
                        let browser = Chromium::launch(LaunchSpec {
                            label: "reticle-drive".into(),
                            headless: *headless,
                            first_url: &stamped,
                        })
                        .await?;
                        let FlowPage::StartUp(target) = browser.start_up_page().await? else {
                            unreachable!("the start-up page is in the start-up context");
                        };
                        let browser = Arc::new(browser);
                        held.launched = Some(browser.clone());
                        (browser, target, Driven::Launched)
                    }
                }
            }
            Want::Attach { endpoint } => {
                let live = held.attached.get(endpoint).cloned().filter(|b| !b.died());
                let browser = match live {
                    Some(browser) => browser,
                    None => {
                        let browser = Arc::new(Chromium::attach(endpoint).await?);
                        held.attached.insert(endpoint.clone(), browser.clone());
                        browser
                    }
                };
                let target = browser
                    .open_tab(CreateTargetParams::new(&stamped), &stamped)
                    .await?;
                (browser, target, Driven::Attached)
            }
        };
        let tab = DrivenTab {
            session: session.to_string(),
            driven,
            sdk: SdkSource::Pending,
            url: stamped,
            want,
            target,
            browser,
        };
        held.tabs.insert(session.to_string(), tab.clone());
        Ok(tab)
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

    /// Injects the served SDK of the daemon on `port` into `tab`: into every document it loads
    /// from now on, before the page's own scripts, and into the document already there. A page
    /// whose Content-Security-Policy refuses the SDK is loaded again with CSP bypassed (this is a
    /// tab Reticle drives, in development); the answer says so.
    pub async fn inject(&self, tab: &DrivenTab, port: u16) -> Result<Injected, String> {
        let page = tab.page().await?;
        let source = inject::source(port, &tab.session);
        page.execute(SetBypassCspParams::new(true))
            .await
            .map_err(|e| format!("Chromium refused to bypass the page's CSP: {e}"))?;
        page.execute(AddScriptToEvaluateOnNewDocumentParams::new(source.clone()))
            .await
            .map_err(|e| format!("Chromium refused the SDK for new documents: {e}"))?;
        inject::into_current(&page, &source).await
    }
}
