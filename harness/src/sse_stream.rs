//! [`SseReader`]: a raw MCP stream opened straight on a daemon (no proxy), read event by event,
//! and its session's POSTs. For tests and gate scenarios that speak the daemon's endpoint
//! directly; it must not interpret what the daemon answers beyond the SSE framing.

use std::time::Duration;

use serde_json::Value;

/// How long one read or POST may take.
pub const BOUND: Duration = Duration::from_secs(20);

/// A raw MCP stream opened straight on a daemon, read event by event.
pub struct SseReader {
    response: reqwest::Response,
    buf: String,
    pub post_url: String,
}

impl SseReader {
    /// Opens `GET /mcp/sse` and reads the endpoint event.
    pub async fn open(port: u16) -> Self {
        Self::try_open(port).await.expect("an MCP stream opens")
    }

    /// Opens `GET /mcp/sse`; `Err` carries the status and body of a refusal (or why nothing
    /// answered).
    pub async fn try_open(port: u16) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .no_proxy()
            .build()
            .map_err(|e| e.to_string())?;
        let response = tokio::time::timeout(
            BOUND,
            client
                .get(format!("http://127.0.0.1:{port}/mcp/sse"))
                .send(),
        )
        .await
        .map_err(|_| "GET /mcp/sse was not answered within the bound".to_string())?
        .map_err(|e| format!("GET /mcp/sse failed: {e}"))?;
        if response.status() != 200 {
            let status = response.status().as_u16();
            let body = response.text().await.unwrap_or_default();
            return Err(format!("{status} {body}"));
        }
        let mut reader = Self {
            response,
            buf: String::new(),
            post_url: String::new(),
        };
        let first = tokio::time::timeout(BOUND, reader.next_event()).await;
        let Ok(Some((event, data))) = first else {
            return Err("the stream sent no first event".into());
        };
        if event != "endpoint" || !data.starts_with("/mcp/message?sessionId=") {
            return Err(format!(
                "the first event must name the POST path, got {event}: {data}"
            ));
        }
        reader.post_url = format!("http://127.0.0.1:{port}{data}");
        Ok(reader)
    }

    /// The next event (name, data), skipping keep-alive comments; `None` when the stream ends.
    pub async fn next_event(&mut self) -> Option<(String, String)> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut event = "message".to_string();
                let mut data: Option<String> = None;
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        event = v.trim().to_string();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        let v = v.strip_prefix(' ').unwrap_or(v);
                        data = Some(match data {
                            Some(d) => format!("{d}\n{v}"),
                            None => v.to_string(),
                        });
                    }
                }
                match data {
                    Some(data) => return Some((event, data)),
                    None => continue,
                }
            }
            let chunk = self.response.chunk().await.ok()??;
            self.buf.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// The next `message` event's JSON, or `None` when none arrives within `bound`.
    pub async fn message_within(&mut self, bound: Duration) -> Option<Value> {
        tokio::time::timeout(bound, async {
            loop {
                let (event, data) = self.next_event().await?;
                if event == "message" {
                    return serde_json::from_str(&data).ok();
                }
            }
        })
        .await
        .ok()
        .flatten()
    }

    /// The next `message` event's JSON.
    pub async fn next_message(&mut self) -> Value {
        loop {
            let (event, data) = tokio::time::timeout(BOUND, self.next_event())
                .await
                .expect("an event within the bound")
                .expect("the stream is open");
            if event == "message" {
                return serde_json::from_str(&data).unwrap();
            }
        }
    }

    /// POSTs one raw body to this session; the HTTP status.
    pub async fn post(&self, body: &str) -> u16 {
        self.try_post(body).await.expect("the POST is answered").0
    }

    /// POSTs one raw body to this session; the HTTP status and body.
    pub async fn try_post(&self, body: &str) -> Result<(u16, String), String> {
        self.try_post_with(body, &[]).await
    }

    /// POSTs one raw body to this session with extra request headers; the HTTP status and body.
    pub async fn try_post_with(
        &self,
        body: &str,
        headers: &[(&str, &str)],
    ) -> Result<(u16, String), String> {
        let client = reqwest::Client::builder()
            .no_proxy()
            .build()
            .map_err(|e| e.to_string())?;
        let mut request = client
            .post(&self.post_url)
            .header("content-type", "application/json");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let sent = request.body(body.to_string()).send();
        let response = tokio::time::timeout(BOUND, sent)
            .await
            .map_err(|_| "the POST was not answered within the bound".to_string())?
            .map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        Ok((status, response.text().await.unwrap_or_default()))
    }
}
