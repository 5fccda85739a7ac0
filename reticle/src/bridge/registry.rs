//! [`Bridge`]: the registry of connected sessions and the Rust API the tool layer calls (list,
//! resolve, command, read events). It admits or refuses hellos, keeps the last refusals for
//! `/status` and each session id's latest recording (`flow.recorded`), and runs the reaper.
//!
//! It must not drive sockets itself: [`super::connection`] does.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::config::BridgeConfig;
use super::session::{Answer, CommandError, Cursor, EventsRead, Identity, Session, SocketLink};
use crate::auth::PairingToken;
use crate::config::MAX_SERVED_PROJECTS;
use crate::daemon::activity::Holder;
use crate::daemon::{Activity, DaemonLog};
use crate::wire::limits::{
    FROZEN_DOCUMENT_BOUND, LIVENESS_BOUND, MAX_PENDING_HANDSHAKES, MAX_SESSIONS,
};
use crate::wire::messages::{FrameClues, clip};
use crate::wire::session_param::asked_session;
use crate::wire::{CloseReason, Hello, RefusedPage, SessionSummary};

/// How many refusals `/status` remembers.
pub const REFUSALS_KEPT: usize = 16;
/// Most events one read returns.
pub const MAX_READ_EVENTS: usize = 5000;

/// What one attempt at admitting a hello came to.
enum Admission {
    Admitted(Arc<Session>),
    /// The id is carried by a socket (its link id) not yet known to be dead.
    Carried(Arc<Session>, u64),
}

/// A socket carrying a session that a newer hello may take it from, and why.
#[derive(Clone, Copy)]
struct Replaceable {
    link: u64,
    /// Its page is hidden and its script answered nothing: a document frozen in the
    /// back/forward cache, whose tab has a newer document.
    frozen: bool,
}

/// Why no session could be had.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ResolveError {
    /// No page is connected; carries the last refusal, when there was one, since that is
    /// usually why.
    #[error("no page is connected to the bridge{}", last_refusal.as_ref().map(|r| format!(" (the last page was refused: {r})")).unwrap_or_default())]
    NoSessions { last_refusal: Option<String> },
    /// No session with that id.
    #[error("no connected session '{id}' (connected: {})", if connected.is_empty() { "none".to_string() } else { connected.join(", ") })]
    NotFound { id: String, connected: Vec<String> },
    /// Several pages, none clearly the most recent: the caller must name one.
    #[error("{} sessions are connected; pass a session id (one of: {})", ids.len(), ids.join(", "))]
    Ambiguous { ids: Vec<String> },
}

/// A command through the bridge, or why it got no answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BridgeError {
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    #[error(transparent)]
    Command(#[from] CommandError),
}

/// The bridge: cheap to clone, shared by every socket and every caller.
#[derive(Clone)]
pub struct Bridge {
    inner: Arc<Inner>,
}

struct Inner {
    config: BridgeConfig,
    token: Option<PairingToken>,
    activity: Activity,
    shutdown: CancellationToken,
    log: Option<Arc<DaemonLog>>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    pending_handshakes: AtomicUsize,
    refused: Mutex<VecDeque<RefusedPage>>,
    /// The URL of the last page that went away (what `reticle_sessions` advises from).
    last_gone_url: Mutex<Option<String>>,
    /// Projects whose pages this daemon has accepted, so a refused page from another project
    /// can be told which one this daemon serves (at most [`MAX_SERVED_PROJECTS`]; past it a
    /// page of a new project is refused [`CloseReason::ProjectLimit`]).
    served_projects: Mutex<Vec<String>>,
    next_life: AtomicU64,
    next_link: AtomicU64,
    /// Sockets being served (from upgrade until their close frame is written).
    live_sockets: AtomicUsize,
    /// Woken whenever a socket finishes, for [`Bridge::drained`].
    socket_done: tokio::sync::Notify,
    /// Woken whenever a session is admitted (new or replaced), for waits on a page to appear.
    admitted: tokio::sync::Notify,
    /// The latest `flow.recorded` each session id sent (a person's recording), newest last, at
    /// most [`MAX_SESSIONS`]; kept across the id's lives, since a page may reload after it.
    recorded: Mutex<VecDeque<(String, RecordedFlow)>>,
}

/// A person's recording as a page sent it (`flow.recorded`): when it arrived and its data,
/// unchecked (the tool that saves it checks it).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedFlow {
    pub received_at: String,
    pub data: Map<String, Value>,
}

impl std::fmt::Debug for Bridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bridge")
            .field("sessions", &self.session_count())
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Counts one socket as live until dropped.
pub(crate) struct SocketGuard(Arc<Inner>);

impl Drop for SocketGuard {
    fn drop(&mut self) {
        self.0.live_sockets.fetch_sub(1, Ordering::SeqCst);
        self.0.socket_done.notify_waiters();
    }
}

/// Holds one of the pending-handshake places until dropped.
pub(crate) struct HandshakeSlot(Arc<Inner>);

impl Drop for HandshakeSlot {
    fn drop(&mut self) {
        self.0.pending_handshakes.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Bridge {
    /// A bridge; starts the reaper, which ends with `shutdown`. Call inside a tokio runtime.
    pub fn new(
        config: BridgeConfig,
        token: Option<PairingToken>,
        activity: Activity,
        shutdown: CancellationToken,
        log: Option<Arc<DaemonLog>>,
    ) -> Self {
        let bridge = Self {
            inner: Arc::new(Inner {
                config,
                token,
                activity,
                shutdown,
                log,
                sessions: Mutex::new(HashMap::new()),
                pending_handshakes: AtomicUsize::new(0),
                refused: Mutex::new(VecDeque::new()),
                last_gone_url: Mutex::new(None),
                served_projects: Mutex::new(Vec::new()),
                next_life: AtomicU64::new(1),
                next_link: AtomicU64::new(1),
                live_sockets: AtomicUsize::new(0),
                socket_done: tokio::sync::Notify::new(),
                admitted: tokio::sync::Notify::new(),
                recorded: Mutex::new(VecDeque::new()),
            }),
        };
        if !bridge.inner.config.session_idle.is_zero() {
            tokio::spawn(reap(bridge.clone()));
        }
        bridge
    }

    pub fn config(&self) -> &BridgeConfig {
        &self.inner.config
    }

    /// Whether hellos must carry the pairing token.
    pub fn has_token(&self) -> bool {
        self.inner.token.is_some()
    }

    pub(crate) fn shutdown(&self) -> &CancellationToken {
        &self.inner.shutdown
    }

    fn log(&self, event: &str, fields: Value) {
        if let Some(log) = &self.inner.log {
            log.event(event, fields);
        }
    }

    // ---- the API the tool layer calls ----

    /// Connected sessions, oldest first.
    pub fn sessions(&self) -> Vec<Arc<Session>> {
        let mut all: Vec<Arc<Session>> = lock(&self.inner.sessions).values().cloned().collect();
        all.sort_by_key(|s| s.life());
        all
    }

    /// How many sockets are waiting for their hello.
    pub fn pending_handshakes(&self) -> usize {
        self.inner.pending_handshakes.load(Ordering::SeqCst)
    }

    /// How many session lives this daemon has admitted (a measure of "ever connected").
    pub fn lives_started(&self) -> u64 {
        self.inner.next_life.load(Ordering::SeqCst) - 1
    }

    /// How many sessions are connected.
    pub fn session_count(&self) -> usize {
        lock(&self.inner.sessions).len()
    }

    /// `/status`'s view of the sessions.
    pub fn summaries(&self) -> Vec<SessionSummary> {
        self.sessions()
            .iter()
            .map(|s| {
                let identity = s.identity();
                SessionSummary {
                    id: s.id().to_string(),
                    url: identity.url,
                    title: identity.title,
                    connected_at: s.connected_at().to_string(),
                    last_seen_ms: s.last_seen_ms(),
                    idle: s.is_idle(),
                    page_id: s.adopted_from(),
                }
            })
            .collect()
    }

    /// The most recent refusals, oldest first.
    pub fn refused(&self) -> Vec<RefusedPage> {
        lock(&self.inner.refused).iter().cloned().collect()
    }

    /// The URL of the last page whose session ended with its socket (None before any did).
    pub fn last_gone_url(&self) -> Option<String> {
        lock(&self.inner.last_gone_url).clone()
    }

    /// Finds a session: by id, or the only one, or the clearly most recent one.
    pub fn resolve(&self, id: Option<&str>) -> Result<Arc<Session>, ResolveError> {
        let sessions = self.sessions();
        let found = match id {
            Some(id) => sessions
                .iter()
                .find(|s| s.id() == id)
                .cloned()
                .ok_or_else(|| ResolveError::NotFound {
                    id: id.to_string(),
                    connected: sessions.iter().map(|s| s.id().to_string()).collect(),
                }),
            None => match sessions.as_slice() {
                [] => Err(ResolveError::NoSessions {
                    last_refusal: self.refused().last().map(|r| r.reason.clone()),
                }),
                [only] => Ok(only.clone()),
                many => {
                    // Prefer a visible, active page; among several, only one clearly the most
                    // recently seen (a second apart) is picked for the caller.
                    let mut live: Vec<&Arc<Session>> = many
                        .iter()
                        .filter(|s| !s.identity().hidden && !s.is_idle())
                        .collect();
                    live.sort_by_key(|s| s.last_seen_ms());
                    match live.as_slice() {
                        [only] => Ok((*only).clone()),
                        [first, second, ..]
                            if second.last_seen_ms() >= first.last_seen_ms() + 1000 =>
                        {
                            Ok((*first).clone())
                        }
                        _ => Err(ResolveError::Ambiguous {
                            ids: many.iter().map(|s| s.id().to_string()).collect(),
                        }),
                    }
                }
            },
        }?;
        found.touch_agent();
        self.inner.activity.touch();
        Ok(found)
    }

    /// Resolves a session and runs one command on it, bounded by `bound` (default 8 s).
    pub async fn command(
        &self,
        session: Option<&str>,
        name: impl AsRef<str>,
        args: Value,
        bound: Option<Duration>,
    ) -> Result<Answer, BridgeError> {
        let session = self.resolve(session)?;
        let args = match args {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                let mut map = Map::new();
                map.insert("value".into(), other);
                map
            }
        };
        let bound = bound.unwrap_or(self.inner.config.command_timeout);
        Ok(session.command(name.as_ref(), args, bound).await?)
    }

    /// Waits (within `bound`) until a session passing `accept` is connected; returns it.
    pub async fn wait_for_session(
        &self,
        bound: Duration,
        accept: impl Fn(&Arc<Session>) -> bool,
    ) -> Option<Arc<Session>> {
        let deadline = tokio::time::Instant::now() + bound;
        loop {
            let admitted = self.inner.admitted.notified();
            if let Some(found) = self.sessions().into_iter().find(|s| accept(s)) {
                return Some(found);
            }
            if tokio::time::timeout_at(deadline, admitted).await.is_err() {
                return None;
            }
        }
    }

    /// The connected session with this id, without marking agent activity.
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        lock(&self.inner.sessions).get(id).cloned()
    }

    /// Reads a session's events from `since` (the start of its current life when `None`).
    pub fn events_since(
        &self,
        session: Option<&str>,
        since: Option<Cursor>,
        limit: Option<usize>,
    ) -> Result<EventsRead, ResolveError> {
        let session = self.resolve(session)?;
        let limit = limit.unwrap_or(MAX_READ_EVENTS).min(MAX_READ_EVENTS);
        Ok(session.events_since(since, limit))
    }

    // ---- what the sockets call ----

    /// Counts a socket as live until the guard drops.
    pub(crate) fn track_socket(&self) -> SocketGuard {
        self.inner.live_sockets.fetch_add(1, Ordering::SeqCst);
        SocketGuard(self.inner.clone())
    }

    /// After shutdown is cancelled: waits (within `bound`) until every socket has written its
    /// close frame and ended; returns whether they all did.
    pub async fn drained(&self, bound: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + bound;
        loop {
            let notified = self.inner.socket_done.notified();
            if self.inner.live_sockets.load(Ordering::SeqCst) == 0 {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return false;
            }
        }
    }

    /// Takes a pending-handshake place, or `None` when all are taken.
    pub(crate) fn begin_handshake(&self) -> Option<HandshakeSlot> {
        let before = self.inner.pending_handshakes.fetch_add(1, Ordering::SeqCst);
        let slot = HandshakeSlot(self.inner.clone());
        (before < MAX_PENDING_HANDSHAKES).then_some(slot)
    }

    /// A fresh socket id and its channels.
    pub(crate) fn new_link(
        &self,
    ) -> (
        SocketLink,
        tokio::sync::mpsc::UnboundedReceiver<super::session::Outbound>,
    ) {
        let (outbound, receiver) = tokio::sync::mpsc::unbounded_channel();
        let id = self.inner.next_link.fetch_add(1, Ordering::SeqCst);
        (SocketLink::new(id, outbound), receiver)
    }

    /// Admits a hello on `link`: checks the token and the session and project limits, and picks
    /// the id the page is listed under. A hello whose URL asks for a session id
    /// (`__reticle_session`, stamped by `reticle verify` or by the daemon's own navigation of
    /// the tab) other than the one the page gave itself (an app passing a fixed `session` to
    /// `connect()`, or the published SDK's per-load `auto` id) is adopted under the asked id:
    /// that URL is the proof it is the tab that was opened or navigated for that id. Should a
    /// live document hold the asked id, the page is admitted under its own id instead; another
    /// page's session is never taken.
    pub(crate) async fn admit(
        &self,
        hello: &Hello,
        link: SocketLink,
    ) -> Result<Arc<Session>, CloseReason> {
        self.check_token(hello)?;
        let asked = asked_session(&hello.url).filter(|asked| *asked != hello.session_id);
        if let Some(asked) = asked {
            match self.admit_as(&asked, hello, &link).await {
                Err(CloseReason::SessionInUse(_)) => self.log(
                    "bridge_session_not_adopted",
                    json!({ "asked": asked, "page": hello.session_id }),
                ),
                admitted => {
                    if admitted.is_ok() {
                        self.log(
                            "bridge_session_adopted",
                            json!({ "session": asked, "page": hello.session_id }),
                        );
                    }
                    return admitted;
                }
            }
        }
        self.admit_as(&hello.session_id, hello, &link).await
    }

    /// Admits `hello` under the listed id `key`. A hello naming a session another socket
    /// carries is a reconnect when that socket is dead (it does not answer a ping within
    /// [`LIVENESS_BOUND`]), and replaces it. It is the tab's newer document when that socket's
    /// page last said it was hidden and its script answers no command within
    /// [`FROZEN_DOCUMENT_BOUND`] (a document kept frozen in the back/forward cache, whose socket
    /// the browser still answers pings on), and replaces it too. Otherwise two live documents
    /// share the id and the newcomer is refused [`CloseReason::SessionInUse`], never swapped in
    /// silently (unless a stand-in switch says otherwise, for the gates' negative controls).
    async fn admit_as(
        &self,
        key: &str,
        hello: &Hello,
        link: &SocketLink,
    ) -> Result<Arc<Session>, CloseReason> {
        // The socket found carrying the id, and found dead or frozen: only that one may be
        // replaced.
        let mut replaceable = None;
        loop {
            match self.admit_now(key, hello, link, replaceable)? {
                Admission::Admitted(session) => return Ok(session),
                Admission::Carried(existing, carrier) => {
                    let frozen = if existing.link_answers(LIVENESS_BOUND).await {
                        if !self.frozen_in_history(&existing).await {
                            self.log(
                                "bridge_session_in_use",
                                json!({ "session": existing.id(), "life": existing.life() }),
                            );
                            return Err(CloseReason::SessionInUse(key.to_string()));
                        }
                        true
                    } else {
                        false
                    };
                    replaceable = Some(Replaceable {
                        link: carrier,
                        frozen,
                    });
                }
            }
        }
    }

    /// Whether `existing`'s document is frozen in the back/forward cache: it last said it was
    /// hidden (a document turns hidden as its tab navigates away) and its script answers no
    /// command within [`FROZEN_DOCUMENT_BOUND`]. A visible page is never asked, and a hidden one
    /// whose script runs (a background tab) answers: both keep their session.
    async fn frozen_in_history(&self, existing: &Arc<Session>) -> bool {
        if self.inner.config.stand_in_keep_frozen || !existing.identity().hidden {
            return false;
        }
        let frozen = !existing.document_answers(FROZEN_DOCUMENT_BOUND).await;
        if frozen {
            self.log(
                "bridge_session_frozen_document",
                json!({ "session": existing.id(), "life": existing.life() }),
            );
        }
        frozen
    }

    /// One attempt at admission under the sessions lock: a new session, a replacement of
    /// `dead_link` (or of any socket, under the stand-in switch), or the session whose live
    /// socket must be asked first.
    fn admit_now(
        &self,
        key: &str,
        hello: &Hello,
        link: &SocketLink,
        replaceable: Option<Replaceable>,
    ) -> Result<Admission, CloseReason> {
        let identity = Identity::from_hello(hello);
        let mut sessions = lock(&self.inner.sessions);
        if let Some(existing) = sessions.get(key) {
            let carrier = existing.link_id();
            if let Some(carrier) = carrier
                && Some(carrier) != replaceable.map(|r| r.link)
                && !self.inner.config.stand_in_silent_swap
            {
                return Ok(Admission::Carried(existing.clone(), carrier));
            }
            let frozen = replaceable.is_some_and(|r| r.frozen && Some(r.link) == carrier);
            existing.replace_link(link.clone(), &hello.session_id, identity, frozen);
            let existing = existing.clone();
            drop(sessions);
            self.log(
                "bridge_session_replaced",
                json!({ "session": existing.id(), "life": existing.life() }),
            );
            self.inner.admitted.notify_waiters();
            return Ok(Admission::Admitted(existing));
        }
        if sessions.len() >= MAX_SESSIONS {
            return Err(CloseReason::SessionLimit);
        }
        if let Some(project) = &hello.project_id {
            let mut served = lock(&self.inner.served_projects);
            if !served.contains(project) {
                if served.len() >= MAX_SERVED_PROJECTS {
                    return Err(CloseReason::ProjectLimit(MAX_SERVED_PROJECTS));
                }
                served.push(project.clone());
            }
        }
        let life = self.inner.next_life.fetch_add(1, Ordering::SeqCst);
        let session = Arc::new(Session::new(
            key.to_string(),
            hello.session_id.clone(),
            life,
            identity,
            link.clone(),
            self.inner.config.ring,
            self.inner.activity.attach(Holder::Session),
        ));
        sessions.insert(key.to_string(), session.clone());
        drop(sessions);
        self.log(
            "bridge_session_connected",
            json!({ "session": session.id(), "life": life, "url": clip(&hello.url, 512) }),
        );
        self.inner.admitted.notify_waiters();
        Ok(Admission::Admitted(session))
    }

    fn check_token(&self, hello: &Hello) -> Result<(), CloseReason> {
        let Some(token) = &self.inner.token else {
            return Ok(());
        };
        let presented = hello.token.as_ref().map(|t| t.0.as_str());
        if presented.is_some_and(|t| token.matches(t)) {
            return Ok(());
        }
        if let Some(theirs) = &hello.project_id {
            let served = lock(&self.inner.served_projects);
            if !served.is_empty() && !served.contains(theirs) {
                return Err(CloseReason::AuthFailed(format!(
                    "this daemon serves project {}, not {}; run `reticle stop` and retry",
                    clip(&served.join(","), 24),
                    clip(theirs, 24)
                )));
            }
        }
        Err(CloseReason::AuthFailed(match presented {
            None => "the hello carried no token; pass the pairing token to connect()".into(),
            Some(_) => "wrong token; pass this daemon's pairing token to connect()".into(),
        }))
    }

    /// The socket `link_id` of `session` has ended; if it still carried the session, the
    /// session ends with it and its pending commands resolve as observation lost.
    pub(crate) fn detach(&self, session: &Arc<Session>, link_id: u64, why: &str) {
        let removed = {
            let mut sessions = lock(&self.inner.sessions);
            let current = sessions
                .get(session.id())
                .is_some_and(|s| Arc::ptr_eq(s, session) && s.carried_by(link_id));
            if current {
                sessions.remove(session.id());
            }
            current
        };
        if removed {
            *lock(&self.inner.last_gone_url) = Some(session.identity().url);
            session.close(&format!("the page disconnected ({why})"));
            self.log(
                "bridge_session_closed",
                json!({ "session": session.id(), "life": session.life(), "why": why }),
            );
        }
    }

    /// Keeps `data` as the latest recording session `id` sent, replacing its previous one.
    pub(crate) fn keep_recorded(&self, id: &str, data: Map<String, Value>) {
        let mut recorded = lock(&self.inner.recorded);
        recorded.retain(|(held, _)| held != id);
        if recorded.len() >= MAX_SESSIONS {
            recorded.pop_front();
        }
        recorded.push_back((
            id.to_string(),
            RecordedFlow {
                received_at: crate::daemon::log::now_rfc3339(),
                data,
            },
        ));
    }

    /// The latest recording session `id` sent, if one arrived.
    pub fn latest_recorded(&self, id: &str) -> Option<RecordedFlow> {
        lock(&self.inner.recorded)
            .iter()
            .find(|(held, _)| held == id)
            .map(|(_, flow)| flow.clone())
    }

    /// Records a refusal for `/status` and the log.
    pub(crate) fn note_refusal(
        &self,
        code: u16,
        kind: &str,
        reason: &str,
        clues: &FrameClues,
        origin: Option<&str>,
    ) {
        let page = RefusedPage {
            at: crate::daemon::log::now_rfc3339(),
            code,
            kind: kind.to_string(),
            reason: reason.to_string(),
            session_id: clues.session_id.clone(),
            url: clues.url.clone(),
            origin: origin.map(|o| clip(o, 256)),
        };
        self.log(
            "bridge_refused",
            serde_json::to_value(&page).unwrap_or(Value::Null),
        );
        let mut refused = lock(&self.inner.refused);
        if refused.len() == REFUSALS_KEPT {
            refused.pop_front();
        }
        refused.push_back(page);
    }
}

/// Marks sessions idle once no agent has used them for the configured bound. Reaping never
/// closes a socket; the next command revives the session.
async fn reap(bridge: Bridge) {
    let bound = bridge.inner.config.session_idle;
    let every = (bound / 4).clamp(Duration::from_millis(10), Duration::from_secs(5));
    let mut ticks = tokio::time::interval(every);
    loop {
        tokio::select! {
            _ = bridge.inner.shutdown.cancelled() => return,
            _ = ticks.tick() => {}
        }
        for session in bridge.sessions() {
            if !session.is_idle() && session.agent_idle_for() >= bound && session.mark_idle() {
                bridge.log(
                    "bridge_session_idle",
                    json!({ "session": session.id(), "idleMs": session.agent_idle_for().as_millis() as u64 }),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_latest_recording_of_each_session_id_is_kept_and_bounded() {
        let bridge = Bridge::new(
            BridgeConfig::default(),
            None,
            Activity::new(),
            CancellationToken::new(),
            None,
        );
        let data = |n: usize| json!({ "id": n }).as_object().cloned().unwrap();
        bridge.keep_recorded("a", data(1));
        bridge.keep_recorded("b", data(2));
        bridge.keep_recorded("a", data(3));
        assert_eq!(bridge.latest_recorded("a").unwrap().data, data(3));
        assert_eq!(bridge.latest_recorded("b").unwrap().data, data(2));
        assert!(bridge.latest_recorded("c").is_none());
        for i in 0..MAX_SESSIONS + 5 {
            bridge.keep_recorded(&format!("s{i}"), data(i));
        }
        assert_eq!(lock(&bridge.inner.recorded).len(), MAX_SESSIONS);
        assert!(
            bridge.latest_recorded("a").is_none(),
            "the oldest went first"
        );
    }
}
