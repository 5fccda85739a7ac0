//! [`BridgeClient`]: drives a daemon's bridge over its `/bridge/*` HTTP routes, as the tool layer
//! will in process: list sessions, run a command, read events from a cursor.

use std::time::Duration;

use serde_json::{Value, json};

/// An HTTP client for one daemon's bridge routes.
#[derive(Debug, Clone)]
pub struct BridgeClient {
    port: u16,
    http: reqwest::Client,
}

impl BridgeClient {
    pub fn new(port: u16) -> Self {
        Self {
            port,
            http: reqwest::Client::builder()
                .no_proxy()
                .timeout(Duration::from_secs(60))
                .build()
                .expect("an HTTP client"),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// `GET /bridge/sessions`.
    pub async fn sessions(&self) -> Value {
        self.get("/bridge/sessions").await
    }

    /// The sessions array of `GET /bridge/sessions`.
    pub async fn session_list(&self) -> Vec<Value> {
        self.sessions().await["sessions"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// One session's entry, when connected.
    pub async fn session(&self, id: &str) -> Option<Value> {
        self.session_list()
            .await
            .into_iter()
            .find(|s| s["id"] == id)
    }

    /// `POST /bridge/commands`; the body of the answer (with `"httpStatus"` added).
    pub async fn command(
        &self,
        session: Option<&str>,
        name: &str,
        args: Value,
        timeout: Option<Duration>,
    ) -> Value {
        let mut body = json!({ "name": name, "args": args });
        if let Some(session) = session {
            body["session"] = json!(session);
        }
        if let Some(timeout) = timeout {
            body["timeoutMs"] = json!(timeout.as_millis() as u64);
        }
        let response = self
            .http
            .post(self.url("/bridge/commands"))
            .json(&body)
            .send()
            .await
            .expect("the daemon answers POST /bridge/commands");
        let status = response.status().as_u16();
        let mut value: Value = response.json().await.unwrap_or(Value::Null);
        value["httpStatus"] = json!(status);
        value
    }

    /// `GET /bridge/events` for `session` from `since` (a `<life>:<seq>` cursor).
    pub async fn events(&self, session: &str, since: Option<&str>) -> Value {
        let mut path = format!("/bridge/events?session={}", urlencode(session));
        if let Some(since) = since {
            path.push_str(&format!("&since={}", urlencode(since)));
        }
        self.get(&path).await
    }

    /// `GET /status` as JSON.
    pub async fn status(&self) -> Value {
        self.get("/status").await
    }

    async fn get(&self, path: &str) -> Value {
        self.http
            .get(self.url(path))
            .send()
            .await
            .unwrap_or_else(|err| panic!("the daemon answers GET {path}: {err}"))
            .json()
            .await
            .unwrap_or(Value::Null)
    }
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}
