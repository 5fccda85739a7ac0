//! Shared fixtures for the integration tests: a real origin server on loopback, a client probe
//! that reports what a connection through the proxy looked like, and a bounded poll.
//!
//! Nothing here sleeps to synchronise: readiness is a bound socket, and conditions are polled
//! with a bound.

#![allow(dead_code)]

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

use toxics::{Proxy, ProxyConfig, Server, ServerHandle};

/// The bytes a test sends or expects: position-dependent, so a lost, repeated or reordered
/// byte shows up.
pub fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

/// A request line, for origins that answer one.
pub const REQUEST: &[u8] = b"GET /thing\n";

/// How a stream ended, as its reader saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// A clean FIN.
    Eof,
    /// `ECONNRESET`.
    Reset,
    /// No end within the probe's window.
    Silent,
    /// Another error.
    Error(io::ErrorKind),
}

/// What an origin does with each connection.
#[derive(Debug, Clone, Copy)]
pub enum Mode {
    /// Write back whatever arrives; pass a FIN on.
    Echo,
    /// After a full request line, reply with `pattern(n)` and close.
    Reply(usize),
    /// Read until the end and keep what arrived.
    Sink,
}

/// What an origin saw on one connection.
#[derive(Debug, Clone)]
pub struct Received {
    pub bytes: Vec<u8>,
    pub end: End,
}

/// A real TCP server on an ephemeral loopback port.
pub struct Origin {
    pub addr: SocketAddr,
    finished: Arc<Mutex<Vec<Received>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Origin {
    pub async fn start(mode: Mode) -> Origin {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let finished = Arc::new(Mutex::new(Vec::new()));
        let record = finished.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let record = record.clone();
                tokio::spawn(async move {
                    let seen = serve(socket, mode).await;
                    record.lock().unwrap().push(seen);
                });
            }
        });
        Origin {
            addr,
            finished,
            task,
        }
    }

    /// The connections that have ended, in the order they ended.
    pub fn finished(&self) -> Vec<Received> {
        self.finished.lock().unwrap().clone()
    }

    /// Wait (bounded) until `n` connections have ended, and return them.
    pub async fn wait_finished(&self, n: usize) -> Vec<Received> {
        eventually(Duration::from_secs(10), || async {
            let f = self.finished();
            (f.len() >= n).then_some(f)
        })
        .await
        .unwrap_or_else(|| {
            panic!(
                "origin never saw {n} connections end: {:?}",
                self.finished()
            )
        })
    }
}

impl Drop for Origin {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn classify(e: &io::Error) -> End {
    match e.kind() {
        io::ErrorKind::ConnectionReset => End::Reset,
        kind => End::Error(kind),
    }
}

async fn serve(mut socket: TcpStream, mode: Mode) -> Received {
    let _ = socket.set_nodelay(true);
    let mut bytes = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match socket.read(&mut buf).await {
            Ok(0) => {
                if let Mode::Echo = mode {
                    let _ = socket.shutdown().await;
                }
                return Received {
                    bytes,
                    end: End::Eof,
                };
            }
            Ok(n) => n,
            Err(e) => {
                return Received {
                    bytes,
                    end: classify(&e),
                };
            }
        };
        bytes.extend_from_slice(&buf[..n]);
        match mode {
            Mode::Echo => {
                if let Err(e) = socket.write_all(&buf[..n]).await {
                    return Received {
                        bytes,
                        end: classify(&e),
                    };
                }
            }
            Mode::Reply(size) if bytes.contains(&b'\n') => {
                let end = match socket.write_all(&pattern(size)).await {
                    Ok(()) => End::Eof,
                    Err(e) => classify(&e),
                };
                let _ = socket.shutdown().await;
                return Received { bytes, end };
            }
            Mode::Reply(_) | Mode::Sink => {}
        }
    }
}

/// What a client saw of one connection.
#[derive(Debug)]
pub struct Outcome {
    /// Everything read, in order.
    pub bytes: Vec<u8>,
    /// When each read returned data (since the request was written) and how much.
    pub reads: Vec<(Duration, usize)>,
    /// How it ended.
    pub end: End,
    /// When it ended (since the request was written); `None` when silent.
    pub ended_at: Option<Duration>,
}

impl Outcome {
    pub fn first_byte_at(&self) -> Option<Duration> {
        self.reads.first().map(|r| r.0)
    }

    pub fn last_byte_at(&self) -> Option<Duration> {
        self.reads.last().map(|r| r.0)
    }
}

/// Connect to `addr`, write `request`, and read until the end or until `window` passes.
pub async fn probe(addr: SocketAddr, request: &[u8], window: Duration) -> Outcome {
    let mut socket = TcpStream::connect(addr)
        .await
        .expect("connect to the proxy");
    let _ = socket.set_nodelay(true);
    probe_on(&mut socket, request, window).await
}

/// [`probe`] on an open socket.
pub async fn probe_on(socket: &mut TcpStream, request: &[u8], window: Duration) -> Outcome {
    let start = Instant::now();
    let deadline = start + window;
    let mut outcome = Outcome {
        bytes: Vec::new(),
        reads: Vec::new(),
        end: End::Silent,
        ended_at: None,
    };
    if let Err(e) = socket.write_all(request).await {
        outcome.end = classify(&e);
        outcome.ended_at = Some(start.elapsed());
        return outcome;
    }
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match tokio::time::timeout_at(deadline, socket.read(&mut buf)).await {
            Err(_) => return outcome,
            Ok(Ok(0)) => {
                outcome.end = End::Eof;
                outcome.ended_at = Some(start.elapsed());
                return outcome;
            }
            Ok(Ok(n)) => {
                outcome.reads.push((start.elapsed(), n));
                outcome.bytes.extend_from_slice(&buf[..n]);
            }
            Ok(Err(e)) => {
                outcome.end = classify(&e);
                outcome.ended_at = Some(start.elapsed());
                return outcome;
            }
        }
    }
}

/// A long window: only reached when something is wrong.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// Poll `check` every few milliseconds until it yields a value or `bound` passes.
pub async fn eventually<T, F, Fut>(bound: Duration, mut check: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + bound;
    loop {
        if let Some(v) = check().await {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// A server with a fixed seed and one proxy in front of `origin`.
pub async fn proxied(origin: &Origin) -> (ServerHandle, Arc<Proxy>) {
    proxied_with_seed(origin, 42).await
}

pub async fn proxied_with_seed(origin: &Origin, seed: u64) -> (ServerHandle, Arc<Proxy>) {
    let server = Server::builder()
        .seed(seed)
        .serve("127.0.0.1:0")
        .await
        .unwrap();
    let proxy = server
        .proxies()
        .create(ProxyConfig::new("origin", origin.addr))
        .unwrap();
    (server, proxy)
}

/// Where to connect to reach `proxy`.
pub fn at(proxy: &Proxy) -> SocketAddr {
    proxy.listen_addr().expect("the proxy is listening")
}

/// Whether a connection to `addr` is refused.
pub async fn refused(addr: SocketAddr) -> bool {
    matches!(TcpStream::connect(addr).await, Err(e) if e.kind() == io::ErrorKind::ConnectionRefused)
}

/// Lower bound with a small allowance for timer granularity.
pub fn at_least(actual: Duration, ms: u64, what: &str) {
    let floor = Duration::from_millis(ms.saturating_sub(ms / 20 + 2));
    assert!(
        actual >= floor,
        "{what}: expected at least ~{ms} ms, got {actual:?}"
    );
}

/// Write `msg` on an open echo connection and read back exactly as many bytes (bounded).
pub async fn exchange(socket: &mut TcpStream, msg: &[u8]) -> Vec<u8> {
    socket.write_all(msg).await.unwrap();
    let mut back = vec![0u8; msg.len()];
    tokio::time::timeout(PATIENCE, socket.read_exact(&mut back))
        .await
        .expect("the echo came back")
        .expect("the echo came back whole");
    back
}
