//! The fixture app open in Chromium as the session `bench` of a daemon, waited for until the
//! bridge lists it: what every bench that drives a page starts from. Holds the app, browser and
//! tab alive for as long as the bench keeps it.

use std::time::Duration;

use harness::{BridgeClient, Browser, FixtureApp, OwnedDaemon, Tab, poll};

/// The session id the page connects as.
pub const SESSION: &str = "bench";
const BOUND: Duration = Duration::from_secs(30);

pub struct FixturePage {
    pub app: FixtureApp,
    pub browser: Browser,
    pub tab: Tab,
}

/// Opens the fixture app on `daemon` and waits for its session.
pub async fn open(daemon: &OwnedDaemon) -> FixturePage {
    let app = FixtureApp::start().await;
    let browser = Browser::launch().await.expect("chromium launches");
    let url = app.url(&format!(
        "/?reticlePort={}&reticleToken={}&session={SESSION}",
        daemon.port(),
        daemon.token()
    ));
    let tab = browser.open(&url).await.unwrap();
    let bridge = BridgeClient::new(daemon.port());
    poll::until("the fixture page as a session", BOUND, async || {
        bridge.session(SESSION).await.map(|_| ())
    })
    .await;
    FixturePage { app, browser, tab }
}
