//! The TCP nemesis as the gates drive it: a fault proxy in front of one hop ([`LinkProxy`]),
//! with toxics put on and taken off through Toxiproxy's REST API. The same calls drive the
//! embedded `toxics` server (the default) or, with `TOXIPROXY_URL` set (`reticle gate
//! --toxiproxy URL`), a real Toxiproxy, so both share one code path. Every change is read back
//! before it counts: an HTTP error or a missing toxic is an unestablished fault, never a silent
//! no-op.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toxics::ToxicSpec;

/// The environment variable naming a Toxiproxy server to use instead of the embedded one.
pub const TOXIPROXY_URL: &str = "TOXIPROXY_URL";

/// How long one REST call may take.
const API_BOUND: Duration = Duration::from_secs(10);

/// A Toxiproxy-compatible server the gates put faults through.
#[derive(Clone)]
pub struct Nemesis {
    /// The REST API's base URL, without a trailing slash.
    base: String,
    /// One HTTP client for every call.
    http: reqwest::Client,
    /// The embedded server, kept alive as long as anything uses it; `None` for an external one.
    embedded: Option<Arc<toxics::ServerHandle>>,
}

impl std::fmt::Debug for Nemesis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Nemesis {
    /// The server `TOXIPROXY_URL` names, or else an embedded `toxics` server.
    pub async fn from_env() -> Result<Self, String> {
        match std::env::var(TOXIPROXY_URL)
            .ok()
            .filter(|u| !u.trim().is_empty())
        {
            Some(url) => Ok(Self::external(&url)),
            None => Self::embedded().await,
        }
    }

    /// An embedded `toxics` server on a free loopback port, driven over its REST API.
    pub async fn embedded() -> Result<Self, String> {
        let server = toxics::Server::start("127.0.0.1:0")
            .await
            .map_err(|e| format!("the embedded toxics server did not start: {e}"))?;
        Ok(Self {
            base: server.url(),
            http: client(),
            embedded: Some(Arc::new(server)),
        })
    }

    /// A Toxiproxy (or `toxics serve`) server already running at `url`.
    pub fn external(url: &str) -> Self {
        Self {
            base: url.trim().trim_end_matches('/').to_string(),
            http: client(),
            embedded: None,
        }
    }

    /// Which nemesis this is, for evidence lines: `embedded toxics` or `toxiproxy at URL`.
    pub fn describe(&self) -> String {
        match self.embedded {
            Some(_) => "embedded toxics".to_string(),
            None => format!("toxiproxy at {}", self.base),
        }
    }

    /// Creates a proxy on a free loopback port in front of `127.0.0.1:upstream`, and reads back
    /// the port it listens on.
    pub async fn proxy(&self, upstream: u16) -> Result<LinkProxy, String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "reticle-gate-{}-{}-{upstream}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let body = json!({
            "name": name,
            "listen": "127.0.0.1:0",
            "upstream": format!("127.0.0.1:{upstream}"),
            "enabled": true,
        });
        let created = self
            .send(self.http.post(format!("{}/proxies", self.base)).json(&body))
            .await?;
        let mut proxy = LinkProxy {
            name: name.clone(),
            port: 0,
            nemesis: self.clone(),
        };
        // Read it back rather than trusting the create answer.
        let shown = match proxy.show().await {
            Ok(shown) => shown,
            Err(err) => return Err(format!("{err} (created: {created})")),
        };
        let port = shown["listen"]
            .as_str()
            .and_then(|l| l.rsplit(':').next())
            .and_then(|p| p.parse::<u16>().ok())
            .filter(|p| *p != 0)
            .ok_or_else(|| {
                format!("the nemesis did not report a listen port for {name}: {shown}")
            })?;
        if shown["enabled"] != true {
            return Err(format!("the nemesis proxy {name} is not enabled: {shown}"));
        }
        proxy.port = port;
        Ok(proxy)
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Result<Value, String> {
        let response = request
            .timeout(API_BOUND)
            .send()
            .await
            .map_err(|e| format!("the nemesis at {} did not answer: {e}", self.base))?;
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        if !status.is_success() {
            return Err(format!(
                "the nemesis at {} answered HTTP {status}: {}",
                self.base,
                text.trim()
            ));
        }
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("an HTTP client for the nemesis")
}

/// One fault proxy in front of one hop. Deleted from its server on [`LinkProxy::close`] (or,
/// best effort, on drop).
///
/// ```text
/// reticle mcp ──▶ [ LinkProxy 127.0.0.1:P ] ──▶ daemon 127.0.0.1:D      (the proxy thinks P is
///                   toxics: upstream ▶ / ◀ downstream                    the daemon's port)
/// ```
#[derive(Debug)]
pub struct LinkProxy {
    /// Unique on its server.
    name: String,
    /// The loopback port clients connect to instead of the hop's real port.
    port: u16,
    /// The server it lives on.
    nemesis: Nemesis,
}

impl LinkProxy {
    /// The port to give clients in place of the real one.
    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Which nemesis carries it.
    pub fn describe(&self) -> String {
        self.nemesis.describe()
    }

    fn url(&self, tail: &str) -> String {
        format!("{}/proxies/{}{tail}", self.nemesis.base, self.name)
    }

    /// The proxy as its server shows it.
    pub async fn show(&self) -> Result<Value, String> {
        self.nemesis.send(self.nemesis.http.get(self.url(""))).await
    }

    /// The toxics installed now, as the server lists them.
    pub async fn toxics(&self) -> Result<Vec<Value>, String> {
        let listed = self
            .nemesis
            .send(self.nemesis.http.get(self.url("/toxics")))
            .await?;
        Ok(listed.as_array().cloned().unwrap_or_default())
    }

    /// Installs `spec` (named explicitly, `<type>_<stream>` by default) and confirms it by
    /// reading the toxic list back. Returns the name it is installed under.
    pub async fn inject(&self, spec: &ToxicSpec) -> Result<String, String> {
        let name = spec.resolved_name();
        let mut body = serde_json::to_value(spec).map_err(|e| e.to_string())?;
        body["name"] = json!(name);
        self.nemesis
            .send(self.nemesis.http.post(self.url("/toxics")).json(&body))
            .await?;
        let listed = self.toxics().await?;
        let found = listed.iter().find(|t| t["name"] == name.as_str());
        match found {
            Some(t) if t["type"] == spec.kind.as_str() && t["stream"] == body["stream"] => Ok(name),
            _ => Err(format!(
                "toxic {name} is not in {}'s list after it was added: {}",
                self.name,
                Value::Array(listed)
            )),
        }
    }

    /// Removes the toxic `name` and confirms it is gone.
    pub async fn heal(&self, name: &str) -> Result<(), String> {
        self.nemesis
            .send(
                self.nemesis
                    .http
                    .delete(self.url(&format!("/toxics/{name}"))),
            )
            .await?;
        let listed = self.toxics().await?;
        if listed.iter().any(|t| t["name"] == name) {
            return Err(format!("toxic {name} is still listed after its removal"));
        }
        Ok(())
    }

    /// Removes every toxic and confirms none is left.
    pub async fn heal_all(&self) -> Result<(), String> {
        for toxic in self.toxics().await? {
            if let Some(name) = toxic["name"].as_str() {
                self.heal(name).await?;
            }
        }
        Ok(())
    }

    /// Deletes the proxy from its server.
    pub async fn close(mut self) {
        let name = std::mem::take(&mut self.name);
        let _ = self
            .nemesis
            .send(
                self.nemesis
                    .http
                    .delete(format!("{}/proxies/{name}", self.nemesis.base)),
            )
            .await;
    }
}

impl Drop for LinkProxy {
    fn drop(&mut self) {
        // An embedded server goes with its last handle; an external one keeps what it is not
        // told to delete, so tell it (best effort: there is no await in drop).
        if self.name.is_empty() || self.nemesis.embedded.is_some() {
            return;
        }
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let request = self
                .nemesis
                .http
                .delete(format!("{}/proxies/{}", self.nemesis.base, self.name))
                .timeout(API_BOUND);
            rt.spawn(async move {
                let _ = request.send().await;
            });
        }
    }
}

/// Whether `/status` answers through `port` within `bound`: the harness's own look at what a
/// fault does to a fresh connection, independent of the product's reaction to it.
pub async fn status_answers(port: u16, bound: Duration) -> bool {
    reticle::probe::fetch_status(port, bound).await.is_some()
}
