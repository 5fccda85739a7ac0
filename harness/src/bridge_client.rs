//! [`BridgeClient`]: drives a daemon's bridge over its `/bridge/*` HTTP routes, as the tool layer
//! will in process: list sessions, run a command, read events from a cursor.
//!
//! Each call comes in two forms: `try_*` returns `Err` with a sentence when the daemon does not
//! answer (what a gate scenario needs: a dead transport is inconclusive, never a panic), and the
//! plain form panics with that sentence (what a test wants).

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

    /// `GET /bridge/sessions`, or why the daemon did not answer.
    pub async fn try_sessions(&self) -> Result<Value, String> {
        self.try_get("/bridge/sessions").await
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

    /// One session's entry (`Ok(None)` when not connected), or why the daemon did not answer.
    pub async fn try_session(&self, id: &str) -> Result<Option<Value>, String> {
        let sessions = self.try_sessions().await?;
        Ok(sessions["sessions"]
            .as_array()
            .and_then(|list| list.iter().find(|s| s["id"] == id).cloned()))
    }

    /// `POST /bridge/commands`; the body of the answer (with `"httpStatus"` added).
    pub async fn command(
        &self,
        session: Option<&str>,
        name: &str,
        args: Value,
        timeout: Option<Duration>,
    ) -> Value {
        self.try_command(session, name, args, timeout)
            .await
            .unwrap_or_else(|err| panic!("{err}"))
    }

    /// `POST /bridge/commands`, or why the daemon did not answer.
    pub async fn try_command(
        &self,
        session: Option<&str>,
        name: &str,
        args: Value,
        timeout: Option<Duration>,
    ) -> Result<Value, String> {
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
            .map_err(|err| format!("the daemon did not answer POST /bridge/commands: {err}"))?;
        let status = response.status().as_u16();
        let mut value: Value = response.json().await.unwrap_or(Value::Null);
        if !value.is_object() {
            value = json!({ "body": value });
        }
        value["httpStatus"] = json!(status);
        Ok(value)
    }

    /// `GET /bridge/events` for `session` from `since` (a `<life>:<seq>` cursor).
    pub async fn events(&self, session: &str, since: Option<&str>) -> Value {
        self.try_events(session, since)
            .await
            .unwrap_or_else(|err| panic!("{err}"))
    }

    /// `GET /bridge/events`, or why the daemon did not answer.
    pub async fn try_events(&self, session: &str, since: Option<&str>) -> Result<Value, String> {
        let mut path = format!("/bridge/events?session={}", urlencode(session));
        if let Some(since) = since {
            path.push_str(&format!("&since={}", urlencode(since)));
        }
        self.try_get(&path).await
    }

    /// `GET /status` as JSON.
    pub async fn status(&self) -> Value {
        self.get("/status").await
    }

    /// `GET /status`, or why the daemon did not answer.
    pub async fn try_status(&self) -> Result<Value, String> {
        self.try_get("/status").await
    }

    async fn get(&self, path: &str) -> Value {
        self.try_get(path)
            .await
            .unwrap_or_else(|err| panic!("{err}"))
    }

    async fn try_get(&self, path: &str) -> Result<Value, String> {
        let response = self
            .http
            .get(self.url(path))
            .send()
            .await
            .map_err(|err| format!("the daemon did not answer GET {path}: {err}"))?;
        Ok(response.json().await.unwrap_or(Value::Null))
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
