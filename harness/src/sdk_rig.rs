//! [`SdkRig`]: what every gate that drives our SDK in a real page needs, together: an owned daemon,
//! the fixture app serving the SDK and the gate page ([`GATE_PAGE`]), one Chromium and a
//! [`BridgeClient`]. Nothing here panics: a rig that cannot be built says why, so a scenario can
//! score its row inconclusive instead of taking the gate down.

use std::path::PathBuf;
use std::time::Duration;

use nix::sys::signal::Signal;

use crate::{BridgeClient, Browser, FixtureApp, OwnedDaemon, poll};

/// Where the gate page is served.
pub const GATE_PAGE_PATH: &str = "/gate.html";

/// The page every SDK gate opens. It loads `/sdk/reticle.js` and connects with the port, token
/// and session in its query. Before the SDK loads, a classic script instruments the page's
/// `WebSocket` so the harness can see what the SDK did without trusting its own report:
/// `window.__gate.opens` (every socket the SDK opened: page time, and the retry delay the SDK's
/// `status()` reported just before), `window.__gate.closes` (code, reason), with `&skew=N` in
/// the query every `hello` rewritten to protocol version N (a page speaking another version),
/// and while `window.__gate.hold` is true every frame from the daemon kept in
/// `window.__gate.held` instead of reaching the SDK (a command the page has but has not
/// answered).
pub const GATE_PAGE: &str = r#"<!doctype html>
<html><head><title>Bridge gate</title>
<script>
  (() => {
    const q = new URLSearchParams(location.search);
    const skew = q.get('skew') ? Number(q.get('skew')) : null;
    const gate = { opens: [], closes: [], rewritten: 0, hold: false, held: [] };
    window.__gate = gate;
    const Native = window.WebSocket;
    class GateSocket extends Native {
      constructor(url, protocols) {
        super(url, protocols);
        let delayMs = null;
        try {
          const s = window.__reticle && window.__reticle.status();
          delayMs = s && s.transport ? s.transport.lastDelayMs : null;
        } catch (_) {}
        gate.opens.push({ t: performance.now(), delayMs });
        this.addEventListener('close', (ev) => gate.closes.push({ t: performance.now(), code: ev.code, reason: ev.reason }));
      }
      set onmessage(handler) {
        super.onmessage = typeof handler === 'function'
          ? (ev) => { if (gate.hold) gate.held.push(String(ev.data)); else handler.call(this, ev); }
          : handler;
      }
      get onmessage() {
        return super.onmessage;
      }
      send(data) {
        if (skew !== null && typeof data === 'string') {
          try {
            const m = JSON.parse(data);
            if (m && m.kind === 'hello') {
              m.protocolVersion = skew;
              data = JSON.stringify(m);
              gate.rewritten += 1;
            }
          } catch (_) {}
        }
        return super.send(data);
      }
    }
    window.WebSocket = GateSocket;
  })();
</script>
</head>
<body>
  <h1>Bridge gate</h1>
  <button id="inc" onclick="window.clicks=(window.clicks||0)+1; this.textContent='Clicked ' + window.clicks">Click me</button>
  <div id="slot"><button id="target">Replace me</button></div>
  <label>Email <input id="email" placeholder="you@example.test"></label>
  <script type="module">
    import * as reticle from '/sdk/reticle.js';
    const q = new URLSearchParams(location.search);
    window.__reticle = reticle;
    reticle.registerStore('cart', () => ({ items: 2, total: 9.5 }));
    window.__connected = reticle.connect({
      port: Number(q.get('port')), token: q.get('token') || undefined,
      session: q.get('session') || undefined, present: false,
    });
  </script>
</body></html>"#;

/// A daemon, the fixture app, one Chromium and a bridge client. The daemon runs on a private
/// state dir, so it can be stopped and brought back on the same port with the same token; the
/// SDK is the repository's, or a stand-in a negative control gives
/// ([`SdkRig::launch_serving_sdk`]).
pub struct SdkRig {
    daemon: Option<OwnedDaemon>,
    state: tempfile::TempDir,
    env: Vec<(String, String)>,
    port: u16,
    token: String,
    pub app: FixtureApp,
    pub browser: Browser,
    pub client: BridgeClient,
}

impl SdkRig {
    /// A rig with a default daemon.
    pub async fn launch() -> Result<Self, String> {
        Self::launch_with(&[]).await
    }

    /// A rig whose daemon (and every restart of it) gets `env`.
    pub async fn launch_with(env: &[(&str, &str)]) -> Result<Self, String> {
        Self::launch_from(env, FixtureApp::builder()).await
    }

    /// A rig whose pages load the SDK in `dir` (a stand-in) instead of the repository's.
    pub async fn launch_serving_sdk(dir: &std::path::Path) -> Result<Self, String> {
        Self::launch_serving_sdk_with(dir, &[]).await
    }

    /// Like [`SdkRig::launch_serving_sdk`], with `env` on the daemon (a stand-in bridge too).
    pub async fn launch_serving_sdk_with(
        dir: &std::path::Path,
        env: &[(&str, &str)],
    ) -> Result<Self, String> {
        Self::launch_from(env, FixtureApp::builder().sdk(dir)).await
    }

    async fn launch_from(
        env: &[(&str, &str)],
        app: crate::fixture_app::FixtureAppBuilder,
    ) -> Result<Self, String> {
        let state = tempfile::tempdir().map_err(|e| format!("no private state dir: {e}"))?;
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let daemon = start_daemon(state.path().to_path_buf(), &env, None).await?;
        let port = daemon.port();
        let token = daemon.try_token()?;
        let app = app.start().await;
        app.page(GATE_PAGE_PATH, GATE_PAGE);
        let browser = Browser::launch()
            .await
            .map_err(|e| format!("chromium did not launch: {e}"))?;
        Ok(Self {
            daemon: Some(daemon),
            state,
            env,
            port,
            token,
            app,
            browser,
            client: BridgeClient::new(port),
        })
    }

    /// The daemon's port (the same across restarts).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The pairing token (the same across restarts: it lives in the state dir).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The daemon's state dir (the same across restarts).
    pub fn state_dir(&self) -> &std::path::Path {
        self.state.path()
    }

    /// The running daemon, if it is running.
    pub fn daemon(&self) -> Option<&OwnedDaemon> {
        self.daemon.as_ref()
    }

    /// The gate page, connecting as `session`.
    pub fn url(&self, session: &str) -> String {
        self.url_with(session, "")
    }

    /// The gate page with `extra` appended to its query (e.g. `&skew=2`).
    pub fn url_with(&self, session: &str, extra: &str) -> String {
        self.app.url(&format!(
            "{GATE_PAGE_PATH}?port={}&token={}&session={session}{extra}",
            self.port, self.token
        ))
    }

    /// The fixture app itself (`apps/e2e/`), connecting as `session` (its frame as
    /// `<session>-frame`).
    pub fn fixture_url(&self, session: &str) -> String {
        self.app.url(&format!(
            "/?reticlePort={}&reticleToken={}&session={session}",
            self.port, self.token
        ))
    }

    /// Waits for `id` to be a connected session; false when the bound runs out or the daemon
    /// stops answering.
    pub async fn wait_session(&self, id: &str, bound: Duration) -> bool {
        poll::within(bound, async || match self.client.try_session(id).await {
            Ok(Some(_)) => Some(true),
            Ok(None) => None,
            Err(_) => None,
        })
        .await
        .unwrap_or(false)
    }

    /// Stops the daemon with SIGTERM and waits (bounded) until its process has exited and
    /// nothing listens on its port; true when both were seen.
    pub async fn stop_daemon(&mut self, bound: Duration) -> bool {
        let Some(mut daemon) = self.daemon.take() else {
            return false;
        };
        daemon.signal(Signal::SIGTERM);
        let exited = poll::within(bound, async || daemon.has_exited().then_some(()))
            .await
            .is_some();
        drop(daemon);
        let port = self.port;
        let closed = poll::within(bound, async || {
            std::net::TcpStream::connect(("127.0.0.1", port))
                .is_err()
                .then_some(())
        })
        .await
        .is_some();
        exited && closed
    }

    /// Starts the daemon again on the same port and state dir.
    pub async fn restart_daemon(&mut self) -> Result<(), String> {
        if self.daemon.is_some() {
            return Err("the daemon is still running".into());
        }
        let daemon =
            start_daemon(self.state.path().to_path_buf(), &self.env, Some(self.port)).await?;
        self.daemon = Some(daemon);
        Ok(())
    }
}

async fn start_daemon(
    state: PathBuf,
    env: &[(String, String)],
    port: Option<u16>,
) -> Result<OwnedDaemon, String> {
    let mut builder = OwnedDaemon::builder().state_dir(state);
    if let Some(port) = port {
        builder = builder.port(port);
    }
    for (key, value) in env {
        builder = builder.env(key, value.clone());
    }
    builder.try_start().await
}
