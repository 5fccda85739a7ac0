//! A TCP relay between `reticle mcp` and a daemon that faults one leg of the link by what the
//! request is, which a TCP toxic cannot see: blackhole new SSE streams while `/status` still
//! answers, or cut every SSE stream right after its handshake (flapping). Requests are told
//! apart by their first line. It also keeps the body of every POST it forwards, in the order
//! they reached it (every request on a kept-alive connection, not only the first), so a test
//! can see what the daemon was sent. Every plain TCP fault goes
//! through the `toxics` nemesis instead (`gates::nemesis`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// What the relay does to new connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Pass,
    /// New SSE streams are accepted and never answered.
    BlackholeStreams,
    /// Every SSE stream is reset right after its handshake (endpoint and session events).
    Flap,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leg {
    Stream,
    Post,
    Other,
}

struct State {
    upstream: u16,
    mode: Mutex<Mode>,
    next: AtomicU64,
    open: Mutex<HashMap<u64, (Leg, Arc<Notify>)>>,
    streams_opened: AtomicUsize,
    /// The body of every POST forwarded, in arrival order.
    posted: Mutex<Vec<String>>,
}

/// A running relay on `port`.
pub struct Relay {
    pub port: u16,
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

impl Relay {
    pub async fn start(upstream: u16) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the relay");
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(State {
            upstream,
            mode: Mutex::new(Mode::Pass),
            next: AtomicU64::new(0),
            open: Mutex::new(HashMap::new()),
            streams_opened: AtomicUsize::new(0),
            posted: Mutex::new(Vec::new()),
        });
        let shared = state.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(handle(client, shared.clone()));
            }
        });
        Self { port, state, task }
    }

    /// Changes the mode for new connections.
    pub fn set_mode(&self, mode: Mode) {
        *self.state.mode.lock().unwrap() = mode;
    }

    /// Resets every open SSE stream; returns how many.
    pub fn reset_streams(&self) -> usize {
        self.reset(Leg::Stream)
    }

    fn reset(&self, leg: Leg) -> usize {
        let open = self.state.open.lock().unwrap();
        let mut count = 0;
        for (kind, kill) in open.values() {
            if *kind == leg {
                kill.notify_one();
                count += 1;
            }
        }
        count
    }

    /// SSE streams forwarded so far.
    pub fn streams_opened(&self) -> usize {
        self.state.streams_opened.load(Ordering::SeqCst)
    }

    /// The bodies of the POSTs forwarded so far, in the order they reached the relay (the order
    /// the daemon was sent them: the proxy posts one at a time).
    pub fn posted(&self) -> Vec<String> {
        self.state.posted.lock().unwrap().clone()
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
        self.reset(Leg::Stream);
        self.reset(Leg::Post);
        self.reset(Leg::Other);
    }
}

async fn handle(mut client: TcpStream, state: Arc<State>) {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(2).any(|w| w == b"\r\n") && head.len() < 16 * 1024 {
        match client.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let leg = if head.starts_with(b"GET /mcp/sse") {
        Leg::Stream
    } else if head.starts_with(b"POST ") {
        Leg::Post
    } else {
        Leg::Other
    };
    if leg == Leg::Post {
        match read_body(&mut client, &mut head).await {
            Some(body) => state.posted.lock().unwrap().push(body),
            None => return,
        }
    }
    let mode = *state.mode.lock().unwrap();
    if (leg, mode) == (Leg::Stream, Mode::BlackholeStreams) {
        while let Ok(n) = client.read(&mut buf).await {
            if n == 0 {
                return;
            }
        }
        return;
    }
    let Ok(mut upstream) = TcpStream::connect(("127.0.0.1", state.upstream)).await else {
        let _ = client.set_zero_linger();
        return;
    };
    // A POST's first request goes now; anything after it on the connection is read request by
    // request below.
    let first = match leg {
        Leg::Post => whole_request(&head).unwrap_or(head.len()),
        _ => head.len(),
    };
    let rest = head.split_off(first);
    if upstream.write_all(&head).await.is_err() {
        return;
    }
    let id = state.next.fetch_add(1, Ordering::SeqCst);
    let kill = Arc::new(Notify::new());
    state.open.lock().unwrap().insert(id, (leg, kill.clone()));
    if leg == Leg::Stream {
        state.streams_opened.fetch_add(1, Ordering::SeqCst);
    }
    let reset = if leg == Leg::Stream && mode == Mode::Flap {
        // Forward the stream's handshake (endpoint and session events), then cut it.
        let mut seen = Vec::new();
        loop {
            match upstream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if client.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                    seen.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&seen);
                    if let Some(at) = text.find("reticle-session")
                        && text[at..].contains("\n\n")
                    {
                        break;
                    }
                }
            }
        }
        true
    } else if leg == Leg::Post {
        // A kept-alive connection carries many POSTs: each one after the first is read whole
        // and kept as it goes by.
        tokio::select! {
            _ = relay_posts(&mut client, &mut upstream, rest, &state) => false,
            _ = kill.notified() => true,
        }
    } else {
        tokio::select! {
            _ = tokio::io::copy_bidirectional(&mut client, &mut upstream) => false,
            _ = kill.notified() => true,
        }
    };
    state.open.lock().unwrap().remove(&id);
    if reset {
        let _ = client.set_zero_linger();
        let _ = upstream.set_zero_linger();
    }
}

/// Forwards a POST connection's later requests one by one (the first was kept and sent; `pending`
/// holds what came after it), keeping the body of each, and the answers back, until either side
/// ends.
async fn relay_posts(
    client: &mut TcpStream,
    upstream: &mut TcpStream,
    mut pending: Vec<u8>,
    state: &State,
) {
    let (mut from_client, mut to_client) = client.split();
    let (mut from_upstream, mut to_upstream) = upstream.split();
    let requests = async {
        let mut buf = [0u8; 4096];
        loop {
            while let Some(length) = whole_request(&pending) {
                let request: Vec<u8> = pending.drain(..length).collect();
                state.posted.lock().unwrap().push(body_of(&request));
                if to_upstream.write_all(&request).await.is_err() {
                    return;
                }
            }
            match from_client.read(&mut buf).await {
                Ok(0) | Err(_) => {
                    let _ = to_upstream.shutdown().await;
                    return;
                }
                Ok(n) => pending.extend_from_slice(&buf[..n]),
            }
        }
    };
    let answers = tokio::io::copy(&mut from_upstream, &mut to_client);
    let _ = tokio::join!(requests, answers);
}

/// The length of the first whole request (head and `content-length` bytes of body) in `bytes`.
fn whole_request(bytes: &[u8]) -> Option<usize> {
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n")?;
    let headers = String::from_utf8_lossy(&bytes[..end]).to_ascii_lowercase();
    let length: usize = headers
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let total = end + 4 + length;
    (bytes.len() >= total).then_some(total)
}

/// The body of one whole request.
fn body_of(request: &[u8]) -> String {
    let start = request
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(request.len(), |end| end + 4);
    String::from_utf8_lossy(&request[start..]).into_owned()
}

/// Reads the rest of a request whose first bytes are in `head` (headers, then `content-length`
/// bytes of body) into `head`; the body, or `None` when the client went away first.
async fn read_body(client: &mut TcpStream, head: &mut Vec<u8>) -> Option<String> {
    let mut buf = [0u8; 4096];
    loop {
        if let Some(length) = whole_request(head) {
            return Some(body_of(&head[..length]));
        }
        match client.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
}
