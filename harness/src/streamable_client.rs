//! [`StreamableClient`], an agent on a daemon's Streamable HTTP MCP endpoint (`POST /mcp`): it
//! opens a session with `initialize` and sends each JSON-RPC request on one kept-alive
//! connection, reading the answer from the POST's response. It owns only that session; it must
//! not start a daemon (it dies with the one it speaks to) or judge what a call answered.

use std::sync::atomic::{AtomicU64, Ordering};

use reticle::mcp::streamable::{SESSION_HEADER, STREAMABLE_PATH};
use serde_json::{Value, json};

/// A session on one daemon's Streamable HTTP endpoint.
pub struct StreamableClient {
    url: String,
    session: String,
    client: reqwest::Client,
    next_id: AtomicU64,
}

impl StreamableClient {
    /// Opens a session on the daemon at `port` as `client_name`; `None` when nothing answered
    /// with a session (no daemon, or a binary without the endpoint).
    pub async fn open(port: u16, client_name: &str) -> Option<Self> {
        Self::open_on(port, client_name, "2025-06-18").await
    }

    /// [`Self::open`], agreeing to protocol `revision`.
    pub async fn open_on(port: u16, client_name: &str, revision: &str) -> Option<Self> {
        let url = format!("http://127.0.0.1:{port}{STREAMABLE_PATH}");
        let client = reqwest::Client::builder()
            .no_proxy()
            .tcp_nodelay(true)
            .build()
            .ok()?;
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": revision, "capabilities": {},
                       "clientInfo": {"name": client_name, "version": "1"}}});
        let response = client
            .post(&url)
            .header("content-type", "application/json")
            .body(initialize.to_string())
            .send()
            .await
            .ok()?;
        let session = response
            .headers()
            .get(SESSION_HEADER)?
            .to_str()
            .ok()?
            .to_string();
        Some(Self {
            url,
            session,
            client,
            next_id: AtomicU64::new(1),
        })
    }

    /// The whole JSON-RPC answer to `method`, or why there was none (the daemon died...).
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header(SESSION_HEADER, &self.session)
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| e.to_string())?;
        response.json().await.map_err(|e| e.to_string())
    }

    /// Posts one message as it is: the response's status and body, or why there was none.
    pub async fn post(&self, message: &Value) -> Result<(u16, String), String> {
        self.post_text(message.to_string()).await
    }

    /// Posts `body` byte for byte (a message a `Value` would re-encode, a batch, garbage).
    pub async fn post_text(&self, body: String) -> Result<(u16, String), String> {
        let response = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header(SESSION_HEADER, &self.session)
            .body(body)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        Ok((status, response.text().await.map_err(|e| e.to_string())?))
    }

    /// A tool call's result (`null` when the answer holds none), or why there was no answer.
    pub async fn call_tool(&self, tool: &str, arguments: Value) -> Result<Value, String> {
        let answer = self
            .request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await?;
        Ok(answer["result"].clone())
    }
}
