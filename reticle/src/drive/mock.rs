//! Network mocks on a driven tab, through the DevTools Fetch domain: the tab's requests pause,
//! and the first rule whose URL fragment (and method) matches answers them (a status, headers and
//! body, after an optional delay) or aborts them; any other request goes on untouched. It holds
//! the rules and answers paused requests; it must not check a rule's arguments.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::fetch::{
    ContinueRequestParams, DisableParams, EnableParams, EventRequestPaused, FailRequestParams,
    FulfillRequestParams, HeaderEntry, RequestPattern,
};
use chromiumoxide::cdp::browser_protocol::network::ErrorReason;
use futures_util::StreamExt;
use serde::Serialize;

/// One rule: which requests, and what they get.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MockRule {
    pub url_contains: String,
    /// Upper-case; `None` matches every method.
    pub method: Option<String>,
    pub status: u16,
    pub body: String,
    pub headers: Vec<(String, String)>,
    pub delay_ms: u64,
    pub abort: bool,
}

impl MockRule {
    /// Whether a request to `url` with `method` is this rule's.
    pub fn matches(&self, url: &str, method: &str) -> bool {
        url.contains(&self.url_contains)
            && self
                .method
                .as_deref()
                .is_none_or(|m| m.eq_ignore_ascii_case(method))
    }
}

/// The mocks of one tab while any are set: the rules and the task answering paused requests.
pub struct Mocks {
    rules: Arc<Mutex<Vec<MockRule>>>,
    /// How many requests a rule answered.
    answered: Arc<std::sync::atomic::AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl Mocks {
    /// Starts pausing `page`'s requests and answering them by `rules`.
    pub async fn install(page: &Page, rules: Vec<MockRule>) -> Result<Self, String> {
        let mut paused = page
            .event_listener::<EventRequestPaused>()
            .await
            .map_err(|e| format!("Chromium did not report paused requests: {e}"))?;
        let pattern = RequestPattern::builder().url_pattern("*").build();
        page.execute(EnableParams::builder().pattern(pattern).build())
            .await
            .map_err(|e| format!("Chromium refused to intercept the tab's requests: {e}"))?;
        let rules = Arc::new(Mutex::new(rules));
        let answered = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let (held, count, page) = (rules.clone(), answered.clone(), page.clone());
        let task = tokio::spawn(async move {
            while let Some(event) = paused.next().await {
                let rule = held.lock().ok().and_then(|r| {
                    r.iter()
                        .find(|r| r.matches(&event.request.url, &event.request.method))
                        .cloned()
                });
                let page = page.clone();
                let count = count.clone();
                tokio::spawn(async move {
                    let id = event.request_id.clone();
                    let Some(rule) = rule else {
                        let _ = page.execute(ContinueRequestParams::new(id)).await;
                        return;
                    };
                    count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    if rule.delay_ms > 0 {
                        tokio::time::sleep(Duration::from_millis(rule.delay_ms)).await;
                    }
                    if rule.abort {
                        let _ = page
                            .execute(FailRequestParams::new(id, ErrorReason::Aborted))
                            .await;
                        return;
                    }
                    let headers: Vec<HeaderEntry> = rule
                        .headers
                        .iter()
                        .map(|(name, value)| HeaderEntry::new(name.clone(), value.clone()))
                        .collect();
                    let body =
                        base64::engine::general_purpose::STANDARD.encode(rule.body.as_bytes());
                    let fulfil = FulfillRequestParams::builder()
                        .request_id(id)
                        .response_code(i64::from(rule.status))
                        .response_headers(headers)
                        .body(body)
                        .build();
                    if let Ok(fulfil) = fulfil {
                        let _ = page.execute(fulfil).await;
                    }
                });
            }
        });
        Ok(Self {
            rules,
            answered,
            task,
        })
    }

    /// Replaces the rules.
    pub fn set(&self, rules: Vec<MockRule>) {
        if let Ok(mut held) = self.rules.lock() {
            *held = rules;
        }
    }

    /// The rules in force.
    pub fn rules(&self) -> Vec<MockRule> {
        self.rules.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// How many requests a rule has answered.
    pub fn answered(&self) -> u64 {
        self.answered.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Stops intercepting `page`'s requests.
    pub async fn remove(self, page: &Page) {
        self.task.abort();
        let _ = page.execute(DisableParams::default()).await;
    }
}
