//! One proxy: a loopback listener, an upstream address, the toxic chain for each direction, and
//! the connections it has accepted.
//!
//! It owns starting and stopping the listener, accepting connections and opening their upstream
//! sockets, and keeping the chains: a change applies to new connections at once and is queued, in
//! order, to every live one. It must not parse HTTP; the API and the Rust guards both call it.

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Handle;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::connection::{self, Change, ConnCtl, ConnShared};
use crate::error::ApiError;
use crate::guard::{DownGuard, ToxicGuard};
use crate::rng::Rng;
use crate::toxic::{InstalledToxic, ToxicPatch, ToxicSpec};

/// What it takes to create a proxy (the body of `POST /proxies`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProxyConfig {
    /// Unique name.
    #[serde(default)]
    pub name: String,
    /// Where to listen; must be loopback. Port 0 picks a free port. Empty means
    /// `127.0.0.1:0`.
    #[serde(default)]
    pub listen: String,
    /// Where to connect for each accepted client.
    #[serde(default)]
    pub upstream: String,
    /// Whether to start listening now. Defaults to true.
    #[serde(default = "yes")]
    pub enabled: bool,
}

fn yes() -> bool {
    true
}

impl ProxyConfig {
    /// An enabled proxy on a free loopback port.
    pub fn new(name: impl Into<String>, upstream: impl ToString) -> Self {
        Self {
            name: name.into(),
            listen: "127.0.0.1:0".to_owned(),
            upstream: upstream.to_string(),
            enabled: true,
        }
    }

    /// The same config listening on `listen`.
    pub fn listen(mut self, listen: impl ToString) -> Self {
        self.listen = listen.to_string();
        self
    }

    pub(crate) fn validate(&self) -> Result<(), ApiError> {
        if self.name.is_empty() {
            return Err(ApiError::missing_field().with_detail("name"));
        }
        if self.upstream.is_empty() {
            return Err(ApiError::missing_field().with_detail("upstream"));
        }
        Ok(())
    }
}

/// A change to a proxy (the body of `POST /proxies/{name}`); absent fields keep their values.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProxyPatch {
    /// New listen address (restarts the proxy and drops its connections).
    #[serde(default)]
    pub listen: Option<String>,
    /// New upstream (restarts the proxy and drops its connections).
    #[serde(default)]
    pub upstream: Option<String>,
    /// Enable or disable.
    #[serde(default)]
    pub enabled: Option<bool>,
}

/// A proxy as the API shows it: `{name, listen, upstream, enabled, toxics}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProxyInfo {
    /// Unique name.
    pub name: String,
    /// The address it listens on (the real port once it has listened).
    pub listen: String,
    /// Where it connects.
    pub upstream: String,
    /// Whether it is listening.
    pub enabled: bool,
    /// Its toxics, upstream chain first, each in chain order.
    pub toxics: Vec<ToxicSpec>,
}

/// Resolves once every connection that was live when a change was made has carried it out.
#[derive(Debug, Default)]
pub struct Applied {
    /// One per live connection; resolved (or dropped) when that connection is done with it.
    acks: Vec<oneshot::Receiver<()>>,
}

impl Applied {
    /// One `Applied` for several changes.
    pub fn merge(all: impl IntoIterator<Item = Applied>) -> Applied {
        Applied {
            acks: all.into_iter().flat_map(|a| a.acks).collect(),
        }
    }

    /// Wait until every live connection carries the change. Connections that end first count
    /// as done.
    pub async fn wait(self) {
        for ack in self.acks {
            let _ = ack.await;
        }
    }
}

/// A listener that can be closed from synchronous code: the accept task borrows the socket
/// through the slot on every poll, so emptying the slot closes the port at once.
struct Listening {
    /// The socket, until the proxy stops.
    slot: Arc<Mutex<Option<TcpListener>>>,
    /// Ends the accept task and marks connections accepted after the stop as unwanted.
    stop: CancellationToken,
}

/// What a proxy may change under its lock.
struct State {
    /// As configured, then the bound address once listening.
    listen: String,
    /// Where each accepted client is connected to.
    upstream: String,
    /// Listening or not.
    enabled: bool,
    /// The listener while enabled.
    listening: Option<Listening>,
    /// The toxics per direction, in chain order.
    chains: [Vec<Arc<InstalledToxic>>; 2],
    /// Live (and recently finished) connections, pruned as new ones arrive.
    conns: Vec<ConnCtl>,
}

/// One proxy. Shared as `Arc<Proxy>`; see the module docs.
pub struct Proxy {
    /// Unique within its collection; never changes.
    name: String,
    /// The runtime the listener and connection tasks run on, so synchronous callers (drop
    /// guards) can start a listener.
    rt: Handle,
    /// Everything that changes.
    state: Mutex<State>,
    /// Seeds one generator per accepted connection, in accept order.
    rng: Mutex<Rng>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy").field("name", &self.name).finish()
    }
}

impl Proxy {
    pub(crate) fn new(config: &ProxyConfig, rt: Handle, seed: u64) -> Arc<Self> {
        Arc::new(Self {
            name: config.name.clone(),
            rt,
            state: Mutex::new(State {
                listen: config.listen.clone(),
                upstream: config.upstream.clone(),
                enabled: false,
                listening: None,
                chains: [Vec::new(), Vec::new()],
                conns: Vec::new(),
            }),
            rng: Mutex::new(Rng::new(seed)),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding this lock leaves no half-made change behind that a later
        // caller could trip on, so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The proxy's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The address clients should connect to, while listening.
    pub fn listen_addr(&self) -> Option<SocketAddr> {
        let st = self.lock();
        if st.enabled {
            st.listen.parse().ok()
        } else {
            None
        }
    }

    /// Whether it is listening.
    pub fn enabled(&self) -> bool {
        self.lock().enabled
    }

    /// How many accepted connections are still open.
    pub fn connections(&self) -> usize {
        self.lock().conns.iter().filter(|c| c.is_live()).count()
    }

    /// The API view of this proxy.
    pub fn info(&self) -> ProxyInfo {
        let st = self.lock();
        ProxyInfo {
            name: self.name.clone(),
            listen: st.listen.clone(),
            upstream: st.upstream.clone(),
            enabled: st.enabled,
            toxics: st.chains.iter().flatten().map(|t| t.spec()).collect(),
        }
    }

    /// Start listening. Binding happens before this returns; a second start is a no-op.
    pub fn start(self: &Arc<Self>) -> Result<(), ApiError> {
        let mut st = self.lock();
        self.start_locked(&mut st)
    }

    fn start_locked(self: &Arc<Self>, st: &mut State) -> Result<(), ApiError> {
        if st.enabled {
            return Ok(());
        }
        let addr = resolve_listen(&st.listen)?;
        let std_listener = std::net::TcpListener::bind(addr)
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .map_err(|e| ApiError::internal(format!("listen tcp {addr}: {e}")))?;
        let listener = {
            let _entered = self.rt.enter();
            TcpListener::from_std(std_listener).map_err(ApiError::internal)?
        };
        let bound = listener.local_addr().map_err(ApiError::internal)?;
        st.listen = bound.to_string();
        let listening = Listening {
            slot: Arc::new(Mutex::new(Some(listener))),
            stop: CancellationToken::new(),
        };
        self.rt.spawn(accept_loop(
            self.clone(),
            listening.slot.clone(),
            listening.stop.clone(),
        ));
        st.listening = Some(listening);
        st.enabled = true;
        tracing::info!(proxy = %self.name, listen = %st.listen, upstream = %st.upstream, "proxy started");
        Ok(())
    }

    /// Stop listening and close every connection. The port is closed when this returns.
    pub fn stop(&self) {
        let mut st = self.lock();
        stop_locked(&self.name, &mut st);
    }

    /// Close every live connection and keep listening (new connections are accepted as
    /// before): the "cut all links" step of a scenario.
    pub fn cut(&self) {
        let mut st = self.lock();
        for conn in st.conns.drain(..) {
            conn.close();
        }
    }

    /// Change listen, upstream or enabled, as `POST /proxies/{name}` does: a new listen or
    /// upstream restarts the proxy (dropping its connections).
    pub fn update(self: &Arc<Self>, patch: ProxyPatch) -> Result<(), ApiError> {
        let mut st = self.lock();
        let listen = patch.listen.unwrap_or_else(|| st.listen.clone());
        let upstream = patch.upstream.unwrap_or_else(|| st.upstream.clone());
        let enabled = patch.enabled.unwrap_or(st.enabled);
        if differs(&st, &listen, &upstream)? {
            stop_locked(&self.name, &mut st);
            st.listen = listen;
            st.upstream = upstream;
        }
        if enabled != st.enabled {
            if enabled {
                self.start_locked(&mut st)?;
            } else {
                stop_locked(&self.name, &mut st);
            }
        }
        Ok(())
    }

    /// Whether `config` asks for a different listen address or upstream than this proxy has.
    /// A requested port 0 matches whatever port was picked.
    pub(crate) fn differs_from(&self, config: &ProxyConfig) -> Result<bool, ApiError> {
        differs(&self.lock(), &config.listen, &config.upstream)
    }

    /// Add a toxic. New connections carry it at once; the returned [`Applied`] resolves when
    /// the live ones do.
    pub fn add_toxic(&self, spec: ToxicSpec) -> Result<(Arc<InstalledToxic>, Applied), ApiError> {
        let toxic = Arc::new(spec.install()?);
        let mut st = self.lock();
        if find(&st, &toxic.name).is_some() {
            return Err(ApiError::toxic_already_exists());
        }
        st.chains[toxic.stream.index()].push(toxic.clone());
        let applied = broadcast(&st, || Change::Add(toxic.clone()));
        Ok((toxic, applied))
    }

    /// Change a toxic's attributes or toxicity.
    pub fn update_toxic(
        &self,
        name: &str,
        patch: ToxicPatch,
    ) -> Result<(Arc<InstalledToxic>, Applied), ApiError> {
        let mut st = self.lock();
        let (d, i) = find(&st, name).ok_or_else(ApiError::toxic_not_found)?;
        let toxic = Arc::new(st.chains[d][i].patched(patch)?);
        st.chains[d][i] = toxic.clone();
        let applied = broadcast(&st, || Change::Update(toxic.clone()));
        Ok((toxic, applied))
    }

    /// Remove a toxic.
    pub fn remove_toxic(&self, name: &str) -> Result<Applied, ApiError> {
        let mut st = self.lock();
        let (d, i) = find(&st, name).ok_or_else(ApiError::toxic_not_found)?;
        let toxic = st.chains[d].remove(i);
        Ok(broadcast(&st, || Change::Remove {
            stream: toxic.stream,
            name: toxic.name.clone(),
        }))
    }

    /// Remove every toxic.
    pub fn remove_all_toxics(&self) -> Applied {
        let mut st = self.lock();
        let removed: Vec<_> = st.chains.iter_mut().flat_map(std::mem::take).collect();
        let mut applied = Applied::default();
        for toxic in removed {
            applied.acks.extend(
                broadcast(&st, || Change::Remove {
                    stream: toxic.stream,
                    name: toxic.name.clone(),
                })
                .acks,
            );
        }
        applied
    }

    /// The toxics, upstream chain first.
    pub fn toxics(&self) -> Vec<Arc<InstalledToxic>> {
        self.lock().chains.iter().flatten().cloned().collect()
    }

    /// One toxic by name.
    pub fn toxic(&self, name: &str) -> Option<Arc<InstalledToxic>> {
        let st = self.lock();
        find(&st, name).map(|(d, i)| st.chains[d][i].clone())
    }

    /// Install a toxic and wait until live connections carry it. Dropping the guard removes
    /// it again.
    pub async fn inject(self: &Arc<Self>, spec: ToxicSpec) -> Result<ToxicGuard, ApiError> {
        let (toxic, applied) = self.add_toxic(spec)?;
        applied.wait().await;
        Ok(ToxicGuard::new(self.clone(), toxic.name.clone()))
    }

    /// Take the proxy down (the `down` state: refused connections, live ones cut). Dropping
    /// the guard brings it back up on the same address.
    pub fn down(self: &Arc<Self>) -> DownGuard {
        self.stop();
        DownGuard::new(self.clone())
    }

    /// Accept one client: open its upstream, register it, run it until it ends.
    async fn serve(self: Arc<Self>, client: TcpStream, seed: u64, stop: CancellationToken) {
        let upstream_addr = self.lock().upstream.clone();
        let upstream = tokio::select! {
            _ = stop.cancelled() => return,
            upstream = TcpStream::connect(upstream_addr.as_str()) => upstream,
        };
        let upstream = match upstream {
            Ok(s) => s,
            Err(e) => {
                // As Toxiproxy does: the client is closed. The log says why.
                tracing::warn!(proxy = %self.name, upstream = %upstream_addr, error = %e, "unable to open connection to upstream");
                return;
            }
        };
        let _ = client.set_nodelay(true);
        let _ = upstream.set_nodelay(true);
        let conn = Arc::new(ConnShared::new(client, upstream));
        let (tx, rx) = mpsc::unbounded_channel();
        let chains = {
            let mut st = self.lock();
            if stop.is_cancelled() {
                return;
            }
            st.conns.retain(ConnCtl::is_live);
            st.conns.push(ConnCtl::new(tx, &conn));
            st.chains.clone()
        };
        connection::run(conn, chains, rx, Rng::new(seed)).await;
    }
}

fn stop_locked(name: &str, st: &mut State) {
    if let Some(listening) = st.listening.take() {
        listening.stop.cancel();
        // Dropping the socket here closes the port before the caller goes on.
        drop(
            listening
                .slot
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take(),
        );
    }
    for conn in st.conns.drain(..) {
        conn.close();
    }
    if st.enabled {
        tracing::info!(proxy = %name, "proxy stopped");
    }
    st.enabled = false;
}

fn find(st: &State, name: &str) -> Option<(usize, usize)> {
    st.chains
        .iter()
        .enumerate()
        .find_map(|(d, chain)| chain.iter().position(|t| t.name == name).map(|i| (d, i)))
}

/// Queue a change to every live connection.
fn broadcast(st: &State, change: impl Fn() -> Change) -> Applied {
    Applied {
        acks: st
            .conns
            .iter()
            .filter(|c| c.is_live())
            .filter_map(|c| c.send(change()))
            .collect(),
    }
}

fn differs(st: &State, listen: &str, upstream: &str) -> Result<bool, ApiError> {
    if upstream != st.upstream {
        return Ok(true);
    }
    let wanted = resolve_listen(listen)?;
    let current: Option<SocketAddr> = st.listen.parse().ok();
    Ok(match current {
        Some(current) if wanted.port() == 0 => current.ip() != wanted.ip(),
        Some(current) => current != wanted,
        None => true,
    })
}

/// A listen address, resolved, IPv4 first, and required to be loopback.
fn resolve_listen(listen: &str) -> Result<SocketAddr, ApiError> {
    let listen = if listen.is_empty() {
        "127.0.0.1:0"
    } else {
        listen
    };
    let mut addrs: Vec<SocketAddr> = listen
        .to_socket_addrs()
        .map_err(|e| ApiError::bad_request_body().with_detail(format!("listen {listen}: {e}")))?
        .collect();
    addrs.sort_by_key(|a| !a.is_ipv4());
    let addr = addrs.first().copied().ok_or_else(|| {
        ApiError::bad_request_body().with_detail(format!("listen {listen}: no address"))
    })?;
    if !addr.ip().is_loopback() {
        return Err(ApiError::not_loopback().with_detail(listen));
    }
    Ok(addr)
}

async fn accept_loop(
    proxy: Arc<Proxy>,
    slot: Arc<Mutex<Option<TcpListener>>>,
    stop: CancellationToken,
) {
    loop {
        let accepted = tokio::select! {
            biased;
            _ = stop.cancelled() => return,
            accepted = std::future::poll_fn(|cx| {
                let guard = slot.lock().unwrap_or_else(|p| p.into_inner());
                match guard.as_ref() {
                    Some(listener) => listener.poll_accept(cx).map(Some),
                    None => Poll::Ready(None),
                }
            }) => accepted,
        };
        match accepted {
            None => return,
            Some(Ok((client, _peer))) => {
                let seed = proxy
                    .rng
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .next_u64();
                tokio::spawn(proxy.clone().serve(client, seed, stop.clone()));
            }
            Some(Err(e)) => {
                // Out of descriptors and the like: back off a little rather than spin.
                tracing::warn!(proxy = %proxy.name, error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses_must_be_loopback() {
        assert!(resolve_listen("127.0.0.1:0").is_ok());
        assert!(resolve_listen("localhost:0").unwrap().is_ipv4());
        assert!(resolve_listen("").is_ok());
        assert_eq!(resolve_listen("0.0.0.0:0").unwrap_err().status, 400);
    }
}
