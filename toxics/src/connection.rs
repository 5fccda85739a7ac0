//! One proxied connection: the client and upstream sockets, one toxic chain per direction, and the
//! task that reconfigures those chains when the proxy's toxics change.
//!
//! It owns how a connection ends (half close, close, reset) and fires its `done` token when nothing
//! more can flow. It must not accept connections or keep the toxic list; the proxy does, and sends
//! this task [`AckedChange`]s in the order the changes happened.

use std::net::Shutdown;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use socket2::SockRef;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::chain::ToxicChain;
use crate::direction::Direction;
use crate::rng::Rng;
use crate::toxic::InstalledToxic;

/// Which of the connection's two sockets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// The socket the proxy accepted.
    Client,
    /// The socket the proxy opened to the upstream.
    Upstream,
}

impl Side {
    /// The socket a direction reads from and the one it writes to.
    pub(crate) fn ends(direction: Direction) -> (Side, Side) {
        match direction {
            Direction::Upstream => (Side::Client, Side::Upstream),
            Direction::Downstream => (Side::Upstream, Side::Client),
        }
    }
}

/// What the stages of both chains share: the two sockets and the connection's fate.
pub(crate) struct ConnShared {
    /// The accepted socket.
    client: TcpStream,
    /// The socket to the upstream.
    upstream: TcpStream,
    /// Cancelled when nothing more can flow: both directions finished, or the connection was
    /// closed or reset. Every stage's interrupt token is a child of it.
    pub(crate) done: CancellationToken,
    /// How many directions have passed their end on (two means the connection is over).
    finished: AtomicU8,
}

impl ConnShared {
    pub(crate) fn new(client: TcpStream, upstream: TcpStream) -> Self {
        Self {
            client,
            upstream,
            done: CancellationToken::new(),
            finished: AtomicU8::new(0),
        }
    }

    pub(crate) fn socket(&self, side: Side) -> &TcpStream {
        match side {
            Side::Client => &self.client,
            Side::Upstream => &self.upstream,
        }
    }

    /// One direction ended cleanly: send FIN on its destination. The other direction goes on.
    pub(crate) fn half_close(&self, side: Side) {
        let _ = SockRef::from(self.socket(side)).shutdown(Shutdown::Write);
        if self.finished.fetch_add(1, Ordering::AcqRel) + 1 >= 2 {
            self.done.cancel();
        }
    }

    /// Close the whole connection: both peers see the end of the stream now.
    pub(crate) fn close(&self) {
        if self.done.is_cancelled() {
            return;
        }
        let _ = SockRef::from(&self.client).shutdown(Shutdown::Both);
        let _ = SockRef::from(&self.upstream).shutdown(Shutdown::Both);
        self.done.cancel();
    }

    /// Reset the connection: with `SO_LINGER` 0 the sockets send RST when their last owner
    /// drops them, which every stage does as soon as `done` fires.
    pub(crate) fn reset(&self) {
        let _ = SockRef::from(&self.client).set_linger(Some(Duration::ZERO));
        let _ = SockRef::from(&self.upstream).set_linger(Some(Duration::ZERO));
        self.done.cancel();
    }
}

/// A change to carry out on a live connection's chains.
#[derive(Debug)]
pub(crate) enum Change {
    /// Append a toxic to the end of its direction's chain.
    Add(Arc<InstalledToxic>),
    /// Replace the toxic of the same name (its state and toxicity roll are kept).
    Update(Arc<InstalledToxic>),
    /// Take a toxic out of its chain.
    Remove { stream: Direction, name: String },
}

/// A change and the sender whose drop tells the proxy it was carried out.
#[derive(Debug)]
pub(crate) struct AckedChange {
    pub(crate) change: Change,
    pub(crate) ack: Option<oneshot::Sender<()>>,
}

/// The proxy's handle on one connection. Weak, so a finished connection's sockets close even
/// while the proxy still lists it.
pub(crate) struct ConnCtl {
    commands: mpsc::UnboundedSender<AckedChange>,
    conn: Weak<ConnShared>,
}

impl ConnCtl {
    pub(crate) fn new(
        commands: mpsc::UnboundedSender<AckedChange>,
        conn: &Arc<ConnShared>,
    ) -> Self {
        Self {
            commands,
            conn: Arc::downgrade(conn),
        }
    }

    /// False once the connection's task has ended.
    pub(crate) fn is_live(&self) -> bool {
        !self.commands.is_closed()
    }

    /// Queue a change; returns the receiver that resolves once it is carried out.
    pub(crate) fn send(&self, change: Change) -> Option<oneshot::Receiver<()>> {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(AckedChange {
                change,
                ack: Some(tx),
            })
            .ok()
            .map(|_| rx)
    }

    /// Close the connection (the proxy was disabled, changed or removed).
    pub(crate) fn close(&self) {
        if let Some(conn) = self.conn.upgrade() {
            conn.close();
        }
    }
}

/// Run one connection until it is done: build both toxic chains, then apply changes
/// in the order they arrive.
pub(crate) async fn run(
    conn: Arc<ConnShared>,
    chains: [Vec<Arc<InstalledToxic>>; 2],
    mut commands: mpsc::UnboundedReceiver<AckedChange>,
    mut rng: Rng,
) {
    let mut links =
        Direction::ALL.map(|d| ToxicChain::start(conn.clone(), d, &chains[d.index()], &mut rng));
    loop {
        let command = tokio::select! {
            biased;
            _ = conn.done.cancelled() => break,
            command = commands.recv() => command,
        };
        let Some(AckedChange { change, ack }) = command else {
            // The proxy let go of this connection without closing it; let it run out.
            conn.done.cancelled().await;
            break;
        };
        match change {
            Change::Add(toxic) => {
                let link = &mut links[toxic.stream.index()];
                link.add(toxic, &mut rng).await;
            }
            Change::Update(toxic) => links[toxic.stream.index()].update(toxic).await,
            Change::Remove { stream, name } => links[stream.index()].remove(&name).await,
        }
        drop(ack);
    }
}
