//! The worker's POST leg to one daemon session: HTTP/1.1 on one connection kept alive between
//! POSTs, and the rule for which failures prove a call never reached the daemon: `NotSent` only
//! when no byte left, `Unknown` once any did. A kept connection is reused only while it shows
//! alive just before writing and has idled less than [`KEEP_IDLE`].
//!
//! It must not know MCP: bytes and extra headers in, a status and a body out.

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::http_get;

/// How long a kept connection may idle and still be used: well under any idle timeout of the
/// daemon's HTTP server, so a server-side close never races a request.
pub const KEEP_IDLE: Duration = Duration::from_secs(5);

/// The longest answer body read.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// How a POST ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Posted {
    /// The daemon answered with this status and body.
    Answered { status: u16, body: String },
    /// It never reached the daemon: no connection, or a write refused before any byte left.
    NotSent(String),
    /// Bytes left and no whole answer came back: whether it ran cannot be known.
    Unknown(String),
}

/// One session's POST target and its kept connection.
pub struct PostLink {
    addr: SocketAddr,
    authority: String,
    path: String,
    /// Extra request header lines, each ending in CRLF.
    headers: String,
    kept: Option<(TcpStream, Instant)>,
}

impl PostLink {
    /// The link for `url` (`http://<ip>:<port><path>`, as a daemon's endpoint names it).
    pub fn new(url: &str) -> Result<Self, String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("not an http URL: {url}"))?;
        let split = rest.find('/').unwrap_or(rest.len());
        let (authority, path) = rest.split_at(split);
        let addr = authority
            .parse()
            .map_err(|_| format!("not an IP address and port: {authority}"))?;
        Ok(Self {
            addr,
            authority: authority.to_string(),
            path: if path.is_empty() { "/" } else { path }.to_string(),
            headers: String::new(),
            kept: None,
        })
    }

    /// The same link, sending `name: value` with every request.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push_str(&format!("{name}: {value}\r\n"));
        self
    }

    /// POSTs `body` as JSON, within `bound` in all.
    pub async fn post(&mut self, body: &str, bound: Duration) -> Posted {
        let deadline = tokio::time::Instant::now() + bound;
        let mut stream = match self.take_alive() {
            Some(stream) => stream,
            None => match tokio::time::timeout_at(deadline, TcpStream::connect(self.addr)).await {
                Ok(Ok(stream)) => {
                    let _ = stream.set_nodelay(true);
                    stream
                }
                Ok(Err(err)) => {
                    return Posted::NotSent(format!("no connection could be made: {err}"));
                }
                Err(_) => {
                    return Posted::NotSent(format!(
                        "no connection could be made within {} ms",
                        bound.as_millis()
                    ));
                }
            },
        };
        let request = format!(
            "POST {} HTTP/1.1\r\nhost: {}\r\n{}content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            self.path,
            self.authority,
            self.headers,
            body.len()
        );
        let exchange = async {
            let first = match stream.write(request.as_bytes()).await {
                Ok(0) => return Err(Posted::NotSent("the connection took no byte".into())),
                Ok(n) => n,
                Err(err) => {
                    return Err(Posted::NotSent(format!(
                        "the connection refused its first byte: {err}"
                    )));
                }
            };
            stream
                .write_all(&request.as_bytes()[first..])
                .await
                .map_err(|err| Posted::Unknown(format!("writing it failed part way: {err}")))?;
            read_response(&mut stream).await.map_err(Posted::Unknown)
        };
        match tokio::time::timeout_at(deadline, exchange).await {
            Ok(Ok((status, body, keep))) => {
                if keep {
                    self.kept = Some((stream, Instant::now()));
                }
                Posted::Answered { status, body }
            }
            Ok(Err(failed)) => failed,
            Err(_) => Posted::Unknown(format!("no answer within {} ms", bound.as_millis())),
        }
    }

    /// The kept connection, if it idled less than [`KEEP_IDLE`] and nothing (an end of stream, a
    /// reset, stray bytes) is queued on it now; dropped otherwise.
    fn take_alive(&mut self) -> Option<TcpStream> {
        let (stream, since) = self.kept.take()?;
        if since.elapsed() >= KEEP_IDLE {
            return None;
        }
        shows_alive(&stream).then_some(stream)
    }
}

/// Whether nothing is queued on `stream` now: a non-blocking peek that would block (no end of
/// stream, no reset, no stray bytes).
fn shows_alive(stream: &TcpStream) -> bool {
    use nix::sys::socket::{MsgFlags, recv};
    let mut probe = [0u8; 1];
    matches!(
        recv(
            stream.as_raw_fd(),
            &mut probe,
            MsgFlags::MSG_PEEK | MsgFlags::MSG_DONTWAIT
        ),
        Err(nix::errno::Errno::EAGAIN)
    )
}

/// Reads one response: its status, its body, and whether the connection may be used again.
async fn read_response(stream: &mut TcpStream) -> Result<(u16, String, bool), String> {
    let response = http_get::read_response(stream).await?;
    let status = response.status;
    let finished = response.finish(MAX_BODY).await?;
    Ok((
        status,
        String::from_utf8_lossy(&finished.body).into_owned(),
        finished.reusable,
    ))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::AsyncReadExt;
    use tokio::net::TcpListener;

    use super::*;

    const BOUND: Duration = Duration::from_secs(10);

    /// What the stand-in server does with each request it reads.
    #[derive(Clone, Copy)]
    enum Serve {
        /// Answers 202 and keeps the connection.
        Accept,
        /// Answers 202, then closes the connection.
        AcceptThenClose,
        /// Reads the request, then closes without an answer.
        Vanish,
    }

    /// A stand-in HTTP server; how many connections it accepted.
    async fn server(serve: Serve) -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!(
            "http://{}/mcp/message?sessionId=s",
            listener.local_addr().unwrap()
        );
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut seen = Vec::new();
                    loop {
                        let mut chunk = [0u8; 1024];
                        let Ok(n) = stream.read(&mut chunk).await else {
                            return;
                        };
                        if n == 0 {
                            return;
                        }
                        seen.extend_from_slice(&chunk[..n]);
                        // Each request's body is `{}`: a request ends with it.
                        if !seen.ends_with(b"{}") {
                            continue;
                        }
                        seen.clear();
                        match serve {
                            Serve::Vanish => return,
                            Serve::Accept | Serve::AcceptThenClose => {
                                let answer = "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n";
                                if stream.write_all(answer.as_bytes()).await.is_err() {
                                    return;
                                }
                                if matches!(serve, Serve::AcceptThenClose) {
                                    return;
                                }
                            }
                        }
                    }
                });
            }
        });
        (url, accepted)
    }

    #[tokio::test]
    async fn posts_share_one_connection_while_it_stays_alive() {
        let (url, accepted) = server(Serve::Accept).await;
        let mut link = PostLink::new(&url).unwrap();
        for _ in 0..3 {
            let posted = link.post("{}", BOUND).await;
            assert_eq!(
                posted,
                Posted::Answered {
                    status: 202,
                    body: String::new()
                }
            );
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_connection_the_server_closed_is_replaced_before_the_next_post() {
        let (url, accepted) = server(Serve::AcceptThenClose).await;
        let mut link = PostLink::new(&url).unwrap();
        assert!(matches!(
            link.post("{}", BOUND).await,
            Posted::Answered { status: 202, .. }
        ));
        // The server's close reaches this side's kernel; poll (bounded) until it shows.
        let closed_seen = async {
            loop {
                let Some((stream, _)) = &link.kept else {
                    return;
                };
                if !shows_alive(stream) {
                    return;
                }
                tokio::task::yield_now().await;
            }
        };
        tokio::time::timeout(BOUND, closed_seen).await.unwrap();
        assert!(matches!(
            link.post("{}", BOUND).await,
            Posted::Answered { status: 202, .. }
        ));
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn extra_headers_go_with_every_request_and_a_body_comes_back() {
        // Answers each request with its own head as the body.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp/message", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut seen = Vec::new();
            let mut chunk = [0u8; 4096];
            while !seen.ends_with(b"{}") {
                let n = stream.read(&mut chunk).await.unwrap();
                assert!(n > 0, "the request ended early");
                seen.extend_from_slice(&chunk[..n]);
            }
            let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", seen.len());
            stream.write_all(head.as_bytes()).await.unwrap();
            stream.write_all(&seen).await.unwrap();
        });
        let mut link = PostLink::new(&url)
            .unwrap()
            .with_header("x-answer", "inline");
        let Posted::Answered { status: 200, body } = link.post("{}", BOUND).await else {
            panic!("no answer");
        };
        assert!(body.contains("\r\nx-answer: inline\r\n"), "{body}");
        assert!(body.ends_with("\r\n\r\n{}"), "{body}");
    }

    #[tokio::test]
    async fn no_listener_means_not_sent_and_a_silent_close_means_unknown() {
        let gone = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp/message", gone.local_addr().unwrap());
        drop(gone);
        let mut link = PostLink::new(&url).unwrap();
        assert!(matches!(link.post("{}", BOUND).await, Posted::NotSent(_)));
        let (url, _) = server(Serve::Vanish).await;
        let mut link = PostLink::new(&url).unwrap();
        assert!(matches!(link.post("{}", BOUND).await, Posted::Unknown(_)));
    }

    #[test]
    fn a_url_names_an_address_and_a_path() {
        let link = PostLink::new("http://127.0.0.1:9/mcp/message?sessionId=a").unwrap();
        assert_eq!(link.path, "/mcp/message?sessionId=a");
        assert_eq!(link.authority, "127.0.0.1:9");
        assert!(PostLink::new("https://127.0.0.1:9/").is_err());
        assert!(PostLink::new("http://localhost:9/").is_err());
    }
}
