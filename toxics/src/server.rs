//! The embeddable server: the REST API on a loopback address plus the proxy collection it
//! drives, as one value that shuts everything down when dropped.
//!
//! It owns binding the API (loopback only), reporting the real address, and the lifetime of
//! the API task and of every proxy. It must not implement endpoints ([`crate::api`]) or proxy
//! behaviour ([`crate::proxy`]).

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::api;
use crate::collection::ProxyCollection;
use crate::rng::Rng;

/// Builds a server. `Server::start(addr)` is the short form with a random seed.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use toxics::{ProxyConfig, Server, ToxicSpec, toxic::Latency};
/// let server = Server::builder().seed(7).serve("127.0.0.1:0").await?;
/// let proxy = server.proxies().create(ProxyConfig::new("daemon", "127.0.0.1:4400"))?;
/// let slow = proxy.inject(ToxicSpec::new(Latency { latency: 250, jitter: 0 })).await?;
/// // ... connect to proxy.listen_addr() and observe ...
/// drop(slow); // healed
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default)]
pub struct Server {
    /// The seed for every random choice (toxicity rolls, jitter, slices); random if unset.
    seed: Option<u64>,
}

impl Server {
    /// A builder with no seed set.
    pub fn builder() -> Self {
        Self::default()
    }

    /// Fix the seed, so the same sequence of connections gets the same random choices.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Start a server with a random seed on `addr` (use `127.0.0.1:0` in tests).
    pub async fn start(addr: impl ToSocketAddrs) -> io::Result<ServerHandle> {
        Self::builder().serve(addr).await
    }

    /// Bind the API on `addr` (which must be loopback) and start serving.
    pub async fn serve(self, addr: impl ToSocketAddrs) -> io::Result<ServerHandle> {
        let candidates: Vec<SocketAddr> = tokio::net::lookup_host(addr).await?.collect();
        if let Some(open) = candidates.iter().find(|a| !a.ip().is_loopback()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("refusing to serve the fault API on {open}: it is localhost-only"),
            ));
        }
        let listener = TcpListener::bind(candidates.as_slice()).await?;
        let addr = listener.local_addr()?;
        let seed = self.seed.unwrap_or_else(|| Rng::from_entropy().next_u64());
        let proxies = Arc::new(ProxyCollection::new(
            tokio::runtime::Handle::current(),
            seed,
        ));
        let shutdown = CancellationToken::new();
        let app = api::routes(proxies.clone());
        let stop = shutdown.clone();
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(stop.cancelled_owned())
                .await
        });
        tracing::info!(%addr, seed, "toxics API listening");
        Ok(ServerHandle {
            addr,
            proxies,
            shutdown,
            task: Some(task),
        })
    }
}

/// A running server. Dropping it stops every proxy and the API.
#[derive(Debug)]
pub struct ServerHandle {
    /// Where the API listens.
    addr: SocketAddr,
    /// The proxies, for driving faults from Rust without HTTP.
    proxies: Arc<ProxyCollection>,
    /// Ends the API task.
    shutdown: CancellationToken,
    /// The API task, until shut down.
    task: Option<JoinHandle<io::Result<()>>>,
}

impl ServerHandle {
    /// The API's real address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The API's base URL, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The proxies this server drives.
    pub fn proxies(&self) -> &Arc<ProxyCollection> {
        &self.proxies
    }

    /// The seed every random choice derives from.
    pub fn seed(&self) -> u64 {
        self.proxies.seed()
    }

    /// Stop every proxy, then the API, and wait for the API task to end.
    pub async fn shutdown(mut self) -> io::Result<()> {
        self.proxies.clear();
        self.shutdown.cancel();
        match self.task.take() {
            Some(task) => task.await.map_err(io::Error::other)?,
            None => Ok(()),
        }
    }

    /// Wait until the API task ends (it ends only on shutdown or a fatal error).
    pub async fn wait(&mut self) -> io::Result<()> {
        match self.task.as_mut() {
            Some(task) => {
                let result = task.await.map_err(io::Error::other)?;
                self.task = None;
                result
            }
            None => Ok(()),
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.proxies.clear();
        self.shutdown.cancel();
    }
}
