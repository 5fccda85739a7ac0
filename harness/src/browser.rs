//! [`Browser`]: Debian's Chromium over the DevTools protocol (chromiumoxide), headless, on a fresh
//! profile, killed on drop. It opens, reloads, backgrounds and closes tabs, evaluates script, reads
//! consoles and clicks and types as a person does (trusted events). One `Browser` belongs to one
//! tokio runtime (its protocol handler runs there).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chromiumoxide::browser::BrowserConfig;
use chromiumoxide::cdp::browser_protocol::emulation::SetFocusEmulationEnabledParams;
use chromiumoxide::cdp::browser_protocol::network;
use chromiumoxide::cdp::browser_protocol::page::{
    SetWebLifecycleStateParams, SetWebLifecycleStateState,
};
use chromiumoxide::cdp::browser_protocol::target::CreateTargetParams;
use chromiumoxide::cdp::js_protocol::runtime::{
    EventConsoleApiCalled, EventExceptionThrown, RemoteObject,
};
use futures_util::StreamExt;
use serde::de::DeserializeOwned;

use crate::marker;

/// Where Debian puts Chromium.
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// The flags the harness's launches add to the product's own (`reticle::config::CHROMIUM_FLAGS`).
pub const EXTRA_FLAGS: &[&str] = &["--disable-extensions", "--mute-audio"];

/// `flags` as chromiumoxide's builder takes them: it writes each argument as `--<name>`, so a
/// flag handed over with its dashes would reach Chromium as `----name`, which it ignores.
fn switch_names(flags: &'static [&'static str]) -> impl Iterator<Item = &'static str> {
    flags.iter().map(|flag| flag.trim_start_matches('-'))
}

/// Why the browser could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error(
        "chromium is not installed at {CHROMIUM}; run scripts/test.sh (it installs Debian's chromium)"
    )]
    Missing,
    #[error("chromium: {0}")]
    Cdp(String),
}

impl From<chromiumoxide::error::CdpError> for BrowserError {
    fn from(err: chromiumoxide::error::CdpError) -> Self {
        BrowserError::Cdp(err.to_string())
    }
}

/// One console line of a tab, as the page's console API or an uncaught exception produced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleLine {
    /// `log`, `info`, `warning`, `error`, `debug`, ... or `exception`.
    pub level: String,
    pub text: String,
}

/// A headless Chromium owned by the harness, with the flags this machine needs (no sandbox as
/// root, no GPU, no QUIC, no background networking). Its process carries the harness marker.
/// Tabs can be seeded by a script that runs before each document's own (the sessionStorage a
/// duplicated tab copies, say), and their DevTools network recording switched. Under nextest
/// every test is its own process, so each browser test launches its own Chromium.
pub struct Browser {
    inner: chromiumoxide::Browser,
    handler: tokio::task::JoinHandle<()>,
    pid: Option<u32>,
    _profile: Profile,
}

/// How long the profile's removal is retried while the browser's helper processes let go of it.
const PROFILE_RELEASE_BOUND: Duration = Duration::from_secs(5);

/// The browser's profile dir, removed when the harness lets go of the browser, even while a
/// killed browser's helper processes still write into it (a single removal racing them stops
/// half-way and leaves the dir behind).
struct Profile(std::path::PathBuf);

impl Drop for Profile {
    fn drop(&mut self) {
        reticle::store::remove_dir_released(&self.0, PROFILE_RELEASE_BOUND);
    }
}

impl Browser {
    /// Launches Chromium with a fresh profile.
    pub async fn launch() -> Result<Self, BrowserError> {
        if !std::path::Path::new(CHROMIUM).exists() {
            return Err(BrowserError::Missing);
        }
        let profile = tempfile::tempdir().map_err(|e| BrowserError::Cdp(e.to_string()))?;
        let config = BrowserConfig::builder()
            .chrome_executable(CHROMIUM)
            .disable_default_args()
            // The builder's default headless mode adds `--headless`.
            .no_sandbox()
            .args(switch_names(reticle::config::CHROMIUM_FLAGS))
            .args(switch_names(EXTRA_FLAGS))
            .user_data_dir(profile.path())
            .env(marker::MARKER_VAR, marker::marker())
            // Its temporary files (the singleton socket's directory) stay in the profile, which
            // is removed with it even when the browser is killed.
            .env("TMPDIR", profile.path().to_string_lossy())
            .launch_timeout(Duration::from_secs(30))
            .request_timeout(Duration::from_secs(30))
            .viewport(None)
            .build()
            .map_err(BrowserError::Cdp)?;
        let (mut inner, mut handler) = chromiumoxide::Browser::launch(config).await?;
        let pid = inner
            .get_mut_child()
            .and_then(|child| child.as_mut_inner().id());
        let handler = tokio::spawn(async move { while handler.next().await.is_some() {} });
        Ok(Self {
            inner,
            handler,
            pid,
            _profile: Profile(profile.keep()),
        })
    }

    /// The browser process id, when known.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Opens a tab at `url`, with its console recorded from before the first script runs.
    pub async fn open(&self, url: &str) -> Result<Tab, BrowserError> {
        let page = self.inner.new_page("about:blank").await?;
        let tab = Tab::watch(page).await?;
        tab.page.goto(url).await?;
        Ok(tab)
    }

    /// Like [`Browser::open`], with `seed` run in every document of the tab before its own
    /// scripts: how a tab that starts with state (a duplicated tab's copy of its source's
    /// sessionStorage) is opened.
    pub async fn open_seeded(&self, url: &str, seed: &str) -> Result<Tab, BrowserError> {
        let page = self.inner.new_page("about:blank").await?;
        let tab = Tab::watch(page).await?;
        tab.page.evaluate_on_new_document(seed).await?;
        tab.page.goto(url).await?;
        Ok(tab)
    }

    /// Like [`Browser::open`], in a window of its own, so the tab stays visible while others
    /// open: Chromium aligns a hidden tab's timers to whole seconds, which a gate that times what
    /// the page does must not measure.
    pub async fn open_in_window(&self, url: &str) -> Result<Tab, BrowserError> {
        let params = CreateTargetParams::builder()
            .url("about:blank")
            .new_window(true)
            .build()
            .map_err(BrowserError::Cdp)?;
        let page = self.inner.new_page(params).await?;
        let tab = Tab::watch(page).await?;
        tab.page.goto(url).await?;
        Ok(tab)
    }

    /// Closes the browser.
    pub async fn close(mut self) {
        let _ = self.inner.close().await;
        let _ = self.inner.wait().await;
        self.handler.abort();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        self.handler.abort();
    }
}

/// One tab.
pub struct Tab {
    page: chromiumoxide::Page,
    console: Arc<Mutex<Vec<ConsoleLine>>>,
    watchers: Vec<tokio::task::JoinHandle<()>>,
}

fn remote_text(object: &RemoteObject) -> String {
    match &object.value {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => object
            .description
            .clone()
            .or_else(|| {
                object
                    .unserializable_value
                    .as_ref()
                    .map(|u| u.inner().clone())
            })
            .unwrap_or_default(),
    }
}

impl Tab {
    async fn watch(page: chromiumoxide::Page) -> Result<Self, BrowserError> {
        let console = Arc::new(Mutex::new(Vec::new()));
        let mut calls = page.event_listener::<EventConsoleApiCalled>().await?;
        let mut thrown = page.event_listener::<EventExceptionThrown>().await?;
        page.enable_runtime().await?;
        let lines = console.clone();
        let calls = tokio::spawn(async move {
            while let Some(call) = calls.next().await {
                let text = call
                    .args
                    .iter()
                    .map(remote_text)
                    .collect::<Vec<_>>()
                    .join(" ");
                let level = serde_json::to_value(&call.r#type)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_else(|| "log".into());
                if let Ok(mut lines) = lines.lock() {
                    lines.push(ConsoleLine { level, text });
                }
            }
        });
        let lines = console.clone();
        let thrown = tokio::spawn(async move {
            while let Some(event) = thrown.next().await {
                let details = &event.exception_details;
                let text = details
                    .exception
                    .as_ref()
                    .and_then(|e| e.description.clone())
                    .unwrap_or_else(|| details.text.clone());
                if let Ok(mut lines) = lines.lock() {
                    lines.push(ConsoleLine {
                        level: "exception".into(),
                        text,
                    });
                }
            }
        });
        Ok(Self {
            page,
            console,
            watchers: vec![calls, thrown],
        })
    }

    /// Every console line so far.
    pub fn console(&self) -> Vec<ConsoleLine> {
        self.console.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Console lines at `level` containing `needle`.
    pub fn console_matching(&self, level: &str, needle: &str) -> Vec<ConsoleLine> {
        self.console()
            .into_iter()
            .filter(|l| l.level == level && l.text.contains(needle))
            .collect()
    }

    /// Evaluates `expression` (awaiting a promise) and returns its value.
    pub async fn eval<T: DeserializeOwned>(&self, expression: &str) -> Result<T, BrowserError> {
        let result = self.page.evaluate(expression).await?;
        result
            .into_value::<T>()
            .map_err(|e| BrowserError::Cdp(format!("{expression}: {e}")))
    }

    /// Clicks the element `selector` finds as a person does: scrolled into view, then a real
    /// mouse press and release at its centre (DevTools input, so the page sees trusted events).
    pub async fn click(&self, selector: &str) -> Result<(), BrowserError> {
        self.page.find_element(selector).await?.click().await?;
        Ok(())
    }

    /// Clicks into the element `selector` finds and types `text` key by key, as a person does
    /// (DevTools input: trusted key and input events).
    pub async fn type_into(&self, selector: &str, text: &str) -> Result<(), BrowserError> {
        self.page
            .find_element(selector)
            .await?
            .click()
            .await?
            .type_str(text)
            .await?;
        Ok(())
    }

    /// Turns DevTools' network recording for this tab on or off. chromiumoxide turns it on for
    /// every tab; while on, Chromium copies every WebSocket frame the page sends or receives into
    /// a DevTools event for this harness, work a page without DevTools attached never does and
    /// that a benchmark of the page's round trips would otherwise measure.
    pub async fn set_network_recording(&self, on: bool) -> Result<(), BrowserError> {
        if on {
            self.page.execute(network::EnableParams::default()).await?;
        } else {
            self.page.execute(network::DisableParams::default()).await?;
        }
        Ok(())
    }

    /// Navigates to `url`.
    pub async fn goto(&self, url: &str) -> Result<(), BrowserError> {
        self.page.goto(url).await?;
        Ok(())
    }

    /// Reloads the page.
    pub async fn reload(&self) -> Result<(), BrowserError> {
        self.page.reload().await?;
        Ok(())
    }

    /// Puts the tab in the background as Chrome does to a hidden tab: no focus, and frozen
    /// (timers and sockets stop being serviced) until [`Tab::foreground`].
    pub async fn background(&self) -> Result<(), BrowserError> {
        self.page
            .execute(SetFocusEmulationEnabledParams::new(false))
            .await?;
        self.page
            .execute(SetWebLifecycleStateParams::new(
                SetWebLifecycleStateState::Frozen,
            ))
            .await?;
        Ok(())
    }

    /// Brings a backgrounded tab back.
    pub async fn foreground(&self) -> Result<(), BrowserError> {
        self.page
            .execute(SetWebLifecycleStateParams::new(
                SetWebLifecycleStateState::Active,
            ))
            .await?;
        self.page.bring_to_front().await?;
        Ok(())
    }

    /// Closes the tab.
    pub async fn close(self) -> Result<(), BrowserError> {
        for watcher in &self.watchers {
            watcher.abort();
        }
        self.page.clone().close().await?;
        Ok(())
    }
}
