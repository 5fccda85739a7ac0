//! [`WirePage`]: a page without a browser. It opens the bridge socket as a page would (with an
//! Origin of the test's choosing), speaks protocol 1 frame by frame, and can answer commands on
//! its own, so gates can provoke the bridge with exact frames: floods, malformed and oversized
//! frames, aborted handshakes, replaced sockets. Frozen ([`WirePage::freeze`]) it stops reading,
//! so it answers no ping, as a page whose connection died without a close would.

use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::SplitSink;
use futures_util::{SinkExt, StreamExt};
use reticle::wire::{Command, Message};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::{Mutex, mpsc};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, Message as Frame};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How a page answers a command on its own: `Some((ok, result_or_error))`, or `None` to stay
/// silent.
pub type Responder = Arc<dyn Fn(&Command) -> Option<(bool, Value)> + Send + Sync>;

/// A responder that answers every command `ok: true` with `{"echo": <name>, "args": ...}`.
pub fn echo_responder() -> Responder {
    Arc::new(|command: &Command| {
        Some((true, json!({ "echo": command.name, "args": command.args })))
    })
}

/// What arrived from the bridge.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A command the responder did not answer.
    Command(Command),
    /// The bridge closed the socket (code and reason, when a close frame came), or the
    /// connection ended.
    Closed { code: Option<u16>, reason: String },
}

/// Why the socket could not be opened.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OpenError {
    /// The upgrade was answered with an HTTP status instead of 101.
    #[error("upgrade refused with HTTP {status}: {body}")]
    Refused { status: u16, body: String },
    #[error("cannot connect: {0}")]
    Io(String),
}

/// A protocol 1 page over a raw WebSocket.
pub struct WirePage {
    sink: Arc<Mutex<SplitSink<Socket, Frame>>>,
    incoming: mpsc::UnboundedReceiver<Incoming>,
    /// The reader task; aborted on drop so dropping a page really drops its connection.
    reader: tokio::task::JoinHandle<()>,
    /// While true the reader reads nothing (and so sends no pong).
    frozen: tokio::sync::watch::Sender<bool>,
}

impl Drop for WirePage {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// A hello for `session`, as the published SDK shapes it.
pub fn hello(session: &str, token: Option<&str>) -> Value {
    let mut hello = json!({
        "kind": "hello",
        "protocolVersion": 1,
        "sessionId": session,
        "url": format!("http://127.0.0.1/{session}"),
        "title": format!("page {session}"),
        "adapters": [],
        "hasCapabilities": false,
    });
    if let Some(token) = token {
        hello["token"] = json!(token);
    }
    hello
}

/// An event frame.
pub fn event(session: &str, kind: &str, data: Value) -> Value {
    json!({ "kind": "event", "event": { "t": 1, "type": kind, "sessionId": session, "data": data } })
}

impl WirePage {
    /// Opens `ws://127.0.0.1:<port>/reticle` with `origin` (none when `None`).
    pub async fn open(port: u16, origin: Option<&str>) -> Result<Self, OpenError> {
        Self::open_with(port, origin, None).await
    }

    /// Opens the socket, answering commands with `responder` when given.
    pub async fn open_with(
        port: u16,
        origin: Option<&str>,
        responder: Option<Responder>,
    ) -> Result<Self, OpenError> {
        let mut request = format!("ws://127.0.0.1:{port}/reticle")
            .into_client_request()
            .map_err(|e| OpenError::Io(e.to_string()))?;
        if let Some(origin) = origin {
            request.headers_mut().insert(
                "Origin",
                origin
                    .parse()
                    .map_err(|_| OpenError::Io("bad origin".into()))?,
            );
        }
        // Large enough to send oversized frames on purpose.
        let config = WebSocketConfig::default()
            .max_message_size(Some(64 << 20))
            .max_frame_size(Some(64 << 20));
        let (socket, _) =
            tokio_tungstenite::connect_async_with_config(request, Some(config), false)
                .await
                .map_err(|err| match err {
                    tungstenite::Error::Http(response) => OpenError::Refused {
                        status: response.status().as_u16(),
                        body: response
                            .body()
                            .as_ref()
                            .map(|b| String::from_utf8_lossy(b).into_owned())
                            .unwrap_or_default(),
                    },
                    other => OpenError::Io(other.to_string()),
                })?;
        let (sink, mut stream) = socket.split();
        let sink = Arc::new(Mutex::new(sink));
        let (tx, incoming) = mpsc::unbounded_channel();
        let reply_sink = sink.clone();
        let (frozen, mut thawed) = tokio::sync::watch::channel(false);
        let reader = tokio::spawn(async move {
            loop {
                if thawed.wait_for(|frozen| !*frozen).await.is_err() {
                    return;
                }
                let Some(frame) = stream.next().await else {
                    break;
                };
                match frame {
                    Ok(Frame::Text(text)) => {
                        let Ok(Message::Command(command)) = reticle::wire::messages::decode(&text)
                        else {
                            continue;
                        };
                        let answer = responder.as_ref().and_then(|r| r(&command));
                        match answer {
                            Some((ok, value)) => {
                                let mut result =
                                    json!({ "kind": "command_result", "id": command.id, "ok": ok });
                                if ok {
                                    result["result"] = value;
                                } else {
                                    result["error"] = value;
                                }
                                let _ = reply_sink
                                    .lock()
                                    .await
                                    .send(Frame::Text(result.to_string().into()))
                                    .await;
                            }
                            None => {
                                let _ = tx.send(Incoming::Command(command));
                            }
                        }
                    }
                    Ok(Frame::Close(frame)) => {
                        let _ = tx.send(Incoming::Closed {
                            code: frame.as_ref().map(|f| u16::from(f.code)),
                            reason: frame.map(|f| f.reason.to_string()).unwrap_or_default(),
                        });
                        return;
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
            let _ = tx.send(Incoming::Closed {
                code: None,
                reason: "the connection ended without a close frame".into(),
            });
        });
        Ok(Self {
            sink,
            incoming,
            reader,
            frozen,
        })
    }

    /// Sends one text frame; false when the socket is gone.
    pub async fn send_text(&self, text: impl Into<String>) -> bool {
        self.sink
            .lock()
            .await
            .send(Frame::Text(text.into().into()))
            .await
            .is_ok()
    }

    /// Sends one binary frame.
    pub async fn send_binary(&self, bytes: Vec<u8>) -> bool {
        self.sink
            .lock()
            .await
            .send(Frame::Binary(bytes.into()))
            .await
            .is_ok()
    }

    /// Sends a JSON value as one text frame.
    pub async fn send_json(&self, value: &Value) -> bool {
        self.send_text(value.to_string()).await
    }

    /// Sends a hello for `session`.
    pub async fn hello(&self, session: &str, token: Option<&str>) -> bool {
        self.send_json(&hello(session, token)).await
    }

    /// Sends an event.
    pub async fn event(&self, session: &str, kind: &str, data: Value) -> bool {
        self.send_json(&event(session, kind, data)).await
    }

    /// Sends many frames under one lock, as fast as the socket takes them.
    pub async fn send_burst(&self, frames: impl IntoIterator<Item = String>) -> bool {
        let mut sink = self.sink.lock().await;
        for frame in frames {
            if sink.feed(Frame::Text(frame.into())).await.is_err() {
                return false;
            }
        }
        sink.flush().await.is_ok()
    }

    /// Answers a command.
    pub async fn answer(&self, command: &Command, ok: bool, value: Value) -> bool {
        let mut result = json!({ "kind": "command_result", "id": command.id, "ok": ok });
        result[if ok { "result" } else { "error" }] = value;
        self.send_json(&result).await
    }

    /// Stops reading (after the frame being read, if any): the page answers no ping and sees
    /// nothing until [`WirePage::thaw`], as a page behind a dead connection.
    pub fn freeze(&self) {
        self.frozen.send_replace(true);
    }

    /// Reads again, from where [`WirePage::freeze`] stopped.
    pub fn thaw(&self) {
        self.frozen.send_replace(false);
    }

    /// Closes the socket with a normal close frame.
    pub async fn close(&self) {
        let _ = self.sink.lock().await.close().await;
    }

    /// The next thing from the bridge within `bound`.
    pub async fn next(&mut self, bound: Duration) -> Option<Incoming> {
        tokio::time::timeout(bound, self.incoming.recv())
            .await
            .ok()
            .flatten()
    }

    /// The next command within `bound` (skipping nothing: a close first returns `None`).
    pub async fn next_command(&mut self, bound: Duration) -> Option<Command> {
        match self.next(bound).await? {
            Incoming::Command(command) => Some(command),
            Incoming::Closed { .. } => None,
        }
    }

    /// Waits for the socket to be closed within `bound`, passing over commands; returns the
    /// close code and reason.
    pub async fn closed(&mut self, bound: Duration) -> Option<(Option<u16>, String)> {
        let deadline = tokio::time::Instant::now() + bound;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.next(left).await? {
                Incoming::Closed { code, reason } => return Some((code, reason)),
                Incoming::Command(_) => {}
            }
        }
    }
}
