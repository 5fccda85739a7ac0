//! `reticle verify`'s link to the daemon's tool layer: one MCP stream per job (`GET
//! /mcp/sse?agent=<job's id>`), so each job is an agent of its own to the lease book, with tool
//! calls POSTed on it and matched to their answers by JSON-RPC id. A stream that ends answers
//! every call still owed with why.
//!
//! It carries tool calls; it must not interpret what a tool answers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::CONTENT_TYPE;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::mcp::{
    AGENT_PARAM, ENDPOINT_EVENT, MESSAGE_EVENT, MESSAGE_PATH, SSE_PATH, own_project_dir,
    project_query,
};
use crate::plane::quoting_refusal;
use crate::proxy::sse::SseParser;

/// How long the stream gets to open and answer `initialize`.
const HANDSHAKE_BOUND: Duration = Duration::from_secs(10);

/// Answers owed, by request id.
type Owed = Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>;

/// One MCP session on the daemon, as one agent.
pub struct ToolClient {
    posts: reqwest::Client,
    post_url: String,
    owed: Owed,
    next_id: AtomicU64,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for ToolClient {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

fn lock(owed: &Owed) -> std::sync::MutexGuard<'_, HashMap<u64, oneshot::Sender<Value>>> {
    owed.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl ToolClient {
    /// Opens a stream on the daemon at `port` as agent `agent` (1 to 64 letters, digits, `-`
    /// or `_`) and initializes the session.
    pub async fn connect(port: u16, agent: &str) -> Result<Self, String> {
        let opened = tokio::time::timeout(HANDSHAKE_BOUND, Self::open(port, agent)).await;
        let client = opened.map_err(|_| {
            format!(
                "the daemon on port {port} did not open an MCP stream within {} ms",
                HANDSHAKE_BOUND.as_millis()
            )
        })??;
        let init = json!({
            "protocolVersion": "2024-11-05",
            "capabilities": {},
            "clientInfo": {"name": "reticle-verify", "version": crate::VERSION},
        });
        tokio::time::timeout(HANDSHAKE_BOUND, client.request("initialize", init))
            .await
            .map_err(|_| "the daemon did not answer `initialize` in time".to_string())??;
        client
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        Ok(client)
    }

    async fn open(port: u16, agent: &str) -> Result<Self, String> {
        let origin = format!("http://127.0.0.1:{port}");
        let mut stream = reqwest::Client::new()
            .get(format!(
                "{origin}{SSE_PATH}?{AGENT_PARAM}={agent}{}",
                project_query(own_project_dir().as_deref())
            ))
            .send()
            .await
            .map_err(|e| format!("GET {SSE_PATH} failed: {e}"))?;
        if !stream.status().is_success() {
            let status = stream.status();
            let body = stream.bytes().await.ok();
            return Err(quoting_refusal(
                format!("the daemon answered GET {SSE_PATH} with HTTP {status}"),
                body.as_deref(),
            ));
        }
        let mut parser = SseParser::new();
        let post_url = loop {
            let chunk = stream
                .chunk()
                .await
                .map_err(|e| format!("the MCP stream failed: {e}"))?
                .ok_or("the MCP stream ended before its endpoint frame")?;
            let endpoint = parser
                .feed(&chunk)
                .into_iter()
                .find(|frame| frame.event == ENDPOINT_EVENT);
            if let Some(frame) = endpoint {
                if !frame.data.starts_with(MESSAGE_PATH) {
                    return Err(format!("the endpoint frame names {}", frame.data));
                }
                break format!("{origin}{}", frame.data);
            }
        };
        let owed: Owed = Arc::default();
        let reader = tokio::spawn(read_answers(stream, parser, Arc::clone(&owed)));
        Ok(Self {
            posts: reqwest::Client::new(),
            post_url,
            owed,
            next_id: AtomicU64::new(1),
            reader,
        })
    }

    async fn post(&self, message: Value) -> Result<(), String> {
        let response = self
            .posts
            .post(&self.post_url)
            .header(CONTENT_TYPE, "application/json")
            .body(message.to_string())
            .send()
            .await
            .map_err(|e| format!("the daemon could not be reached: {e}"))?;
        if response.status().is_success() {
            Ok(())
        } else {
            Err(format!(
                "the daemon refused the message with HTTP {}",
                response.status()
            ))
        }
    }

    async fn request(&self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.owed).insert(id, tx);
        let sent = self
            .post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        if let Err(why) = sent {
            lock(&self.owed).remove(&id);
            return Err(why);
        }
        let answer = rx
            .await
            .map_err(|_| "the daemon's MCP stream ended before the answer came".to_string())?;
        match answer.get("error") {
            Some(error) => Err(format!(
                "the daemon answered error {}: {}",
                error["code"],
                error["message"].as_str().unwrap_or("")
            )),
            None => Ok(answer["result"].clone()),
        }
    }

    /// Calls `tool`; its structured content, and whether the tool refused.
    pub async fn call(&self, tool: &str, arguments: Value) -> Result<(Value, bool), String> {
        let result = self
            .request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await?;
        Ok((
            result["structuredContent"].clone(),
            result["isError"] == json!(true),
        ))
    }
}

/// Hands each answer on the stream to its caller; when the stream ends, every caller still owed
/// is told (its sender dropped).
async fn read_answers(mut stream: reqwest::Response, mut parser: SseParser, owed: Owed) {
    while let Ok(Some(chunk)) = stream.chunk().await {
        for frame in parser.feed(&chunk) {
            if frame.event != MESSAGE_EVENT {
                continue;
            }
            let Ok(message) = serde_json::from_str::<Value>(&frame.data) else {
                continue;
            };
            if let Some(tx) = message["id"]
                .as_u64()
                .and_then(|id| lock(&owed).remove(&id))
            {
                let _ = tx.send(message);
            }
        }
    }
    lock(&owed).clear();
}
