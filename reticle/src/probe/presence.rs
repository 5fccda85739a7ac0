//! Four-valued port presence: `daemon` (answers `/status` as Reticle), `foreign` (accepts TCP
//! but does not answer as Reticle: a squatter, or a stopped or wedged daemon), `outbound`
//! (refuses TCP, yet is the local end of a connection, so no daemon can bind it) or `free`; and
//! [`PresenceKind`], the same words without the details, for messages that carry only the word
//! (the proxy worker's reports). `/status` is fetched with [`crate::http_get`].

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::holders::{OutboundConnections, outbound};
use crate::http_get::{self, Connection};
use crate::wire::StatusReport;
use crate::wire::status::STATUS_PATH;

/// Bound on the TCP connect probe.
pub const TCP_PROBE_TIMEOUT: Duration = Duration::from_millis(300);
/// Bound on the `/status` probe.
pub const STATUS_PROBE_TIMEOUT: Duration = Duration::from_millis(700);

/// What holds a port.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "presence", rename_all = "snake_case")]
pub enum PortPresence {
    /// A Reticle daemon answered `/status`.
    Daemon { status: Box<StatusReport> },
    /// Something accepts connections but did not answer as a Reticle daemon.
    Foreign,
    /// Nothing accepts connections, but the port is the local end of connections.
    Outbound { connections: OutboundConnections },
    /// Nothing accepts connections and no connection holds the port.
    Free,
}

impl PortPresence {
    /// Whether this presence may be a killed process's sockets still being torn down (a
    /// listener that completes handshakes without answering, or connections no live process
    /// owns), so the port is worth looking at again for [`super::PORT_SETTLE`] before it is
    /// reported held.
    pub fn may_be_settling(&self, port: u16) -> bool {
        matches!(self, PortPresence::Foreign | PortPresence::Outbound { .. })
            && super::no_live_holder(port)
    }

    /// Which of the three it is.
    pub fn kind(&self) -> PresenceKind {
        match self {
            PortPresence::Daemon { .. } => PresenceKind::Daemon,
            PortPresence::Foreign => PresenceKind::Foreign,
            PortPresence::Outbound { .. } => PresenceKind::Outbound,
            PortPresence::Free => PresenceKind::Free,
        }
    }

    /// The vocabulary word: `daemon`, `foreign`, `outbound` or `free`.
    pub fn word(&self) -> &'static str {
        self.kind().word()
    }
}

/// What holds a port, as a word alone (serialized as `daemon`, `foreign`, `outbound` or `free`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PresenceKind {
    Daemon,
    Foreign,
    Outbound,
    Free,
}

impl PresenceKind {
    /// The vocabulary word: `daemon`, `foreign`, `outbound` or `free`.
    pub fn word(self) -> &'static str {
        match self {
            PresenceKind::Daemon => "daemon",
            PresenceKind::Foreign => "foreign",
            PresenceKind::Outbound => "outbound",
            PresenceKind::Free => "free",
        }
    }
}

/// Probes `127.0.0.1:port`: TCP first, then `/status`, each bounded; a refused port is looked up
/// in `/proc/net/tcp` for connections whose local end it is.
pub async fn probe(port: u16) -> PortPresence {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    match tokio::time::timeout(TCP_PROBE_TIMEOUT, tokio::net::TcpStream::connect(addr)).await {
        Ok(Ok(_stream)) => {}
        // Only a refusal means nothing listens: a reset right after the handshake (a wedge that
        // accepts and closes) is something holding the port.
        Ok(Err(err)) if err.kind() == std::io::ErrorKind::ConnectionRefused => {
            return match outbound(port) {
                Some(connections) => PortPresence::Outbound { connections },
                None => PortPresence::Free,
            };
        }
        Ok(Err(_)) => return PortPresence::Foreign,
        // A connect that neither succeeds nor is refused means something holds the port but
        // cannot take connections (a full backlog on a stopped process).
        Err(_) => return PortPresence::Foreign,
    }
    match fetch_status(port, STATUS_PROBE_TIMEOUT).await {
        Some(status) => PortPresence::Daemon {
            status: Box::new(status),
        },
        None => PortPresence::Foreign,
    }
}

/// The longest `/status` body read before the answer is called foreign.
const MAX_STATUS_BODY: usize = 1024 * 1024;

/// `GET /status` on loopback, bounded; `None` when it does not answer as a Reticle daemon (a
/// 2xx JSON status report saying it is running) within `bound`.
pub async fn fetch_status(port: u16, bound: Duration) -> Option<StatusReport> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let exchange = async {
        let response = http_get::get(addr, STATUS_PATH, Connection::Close)
            .await
            .ok()?;
        if !(200..300).contains(&response.status) {
            return None;
        }
        response.body(MAX_STATUS_BODY).await.ok()
    };
    let body = tokio::time::timeout(bound, exchange).await.ok()??;
    let status: StatusReport = serde_json::from_slice(&body).ok()?;
    status.running.then_some(status)
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    const BOUND: Duration = Duration::from_secs(5);

    /// A stand-in listener that answers every connection with `answer` (after reading the
    /// request's head) and closes; `None` answers nothing and holds the connection.
    async fn listener(answer: Option<String>) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((mut stream, _)) = listener.accept().await {
                let Some(answer) = answer.clone() else {
                    held.push(stream);
                    continue;
                };
                tokio::spawn(async move {
                    let mut seen = Vec::new();
                    let mut chunk = [0u8; 1024];
                    while !seen.ends_with(b"\r\n\r\n") {
                        match stream.read(&mut chunk).await {
                            Ok(n) if n > 0 => seen.extend_from_slice(&chunk[..n]),
                            _ => return,
                        }
                    }
                    let _ = stream.write_all(answer.as_bytes()).await;
                });
            }
        });
        port
    }

    fn report(running: bool) -> String {
        serde_json::json!({
            "running": running, "version": "0", "instance": "i", "pid": 1, "port": 1,
            "startedAt": "t", "sessionCount": 0, "sessions": []
        })
        .to_string()
    }

    fn answer(status: &str, body: &str) -> Option<String> {
        Some(format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        ))
    }

    #[tokio::test]
    async fn only_a_running_status_report_is_a_daemon() {
        let daemon = listener(answer("200 OK", &report(true))).await;
        let status = fetch_status(daemon, BOUND)
            .await
            .expect("a daemon's answer");
        assert_eq!(status.instance, "i");
        // The same report sent chunked reads alike.
        let body = report(true);
        let chunked = format!(
            "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
            body.len()
        );
        assert!(
            fetch_status(listener(Some(chunked)).await, BOUND)
                .await
                .is_some()
        );
        // Controls: everything else is not a daemon.
        for foreign in [
            answer("200 OK", &report(false)),
            answer("404 Not Found", &report(true)),
            answer("200 OK", "<html>a dev server</html>"),
            Some("SSH-2.0-OpenSSH_9.6\r\n\r\n".to_string()),
            Some(String::new()),
        ] {
            let port = listener(foreign.clone()).await;
            assert!(fetch_status(port, BOUND).await.is_none(), "{foreign:?}");
        }
    }

    #[tokio::test]
    async fn a_listener_that_never_answers_is_not_a_daemon_within_the_bound() {
        let silent = listener(None).await;
        assert!(
            fetch_status(silent, Duration::from_millis(100))
                .await
                .is_none()
        );
    }
}
