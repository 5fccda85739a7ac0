//! One connected page: its identity, its current socket (the link, which it can ping to learn
//! whether a page is still there), the commands waiting for their results, and its event buffer.
//! A session outlives a dead socket replaced by a newer one with the same id (the buffer and
//! cursors carry on); it ends when its socket drops with no replacement. Every pending command then resolves at once as `observation_lost`.
//! Its id is the one the daemon lists; the page may call itself otherwise (an id it was asked
//! for in its URL was adopted), and commands carry the page's own name for itself.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::ring::{Ring, RingLimits, RingRead, StoredEvent};
use crate::daemon::activity::Attachment;
use crate::wire::limits::MAX_ID_CHARS;
use crate::wire::{
    CloseReason, Command, CommandName, CommandResult, Event, KnownEventType, Message,
};

/// What the writer half of a socket is asked to send.
#[derive(Debug)]
pub enum Outbound {
    /// A text frame.
    Text(String),
    /// A ping frame: is the page still there? (see [`Session::link_answers`])
    Ping,
    /// A close frame, after which the writer stops.
    Close(CloseReason),
}

/// One socket carrying a session.
#[derive(Debug, Clone)]
pub struct SocketLink {
    /// Unique across the daemon's life, so a stale socket cannot detach its replacement.
    pub id: u64,
    /// Frames for the socket's writer.
    pub outbound: mpsc::UnboundedSender<Outbound>,
    /// Cancelled when the socket must stop reading (replaced, or the session ended).
    pub cancel: CancellationToken,
    /// Woken by the socket's reader whenever a pong arrives.
    pub pong: Arc<tokio::sync::Notify>,
}

impl SocketLink {
    /// A link with a fresh pong signal.
    pub fn new(id: u64, outbound: mpsc::UnboundedSender<Outbound>) -> Self {
        Self {
            id,
            outbound,
            cancel: CancellationToken::new(),
            pong: Arc::new(tokio::sync::Notify::new()),
        }
    }
}

/// A cursor into one session life's event stream. Written `<life>:<seq>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cursor {
    /// Which life of the session id the cursor belongs to (a reconnect after a drop starts a
    /// new life, with a new buffer).
    pub life: u64,
    /// The first event sequence number the next read returns.
    pub seq: u64,
}

impl std::fmt::Display for Cursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.life, self.seq)
    }
}

impl std::str::FromStr for Cursor {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (life, seq) = text
            .split_once(':')
            .ok_or_else(|| format!("cursor '{text}' is not <life>:<seq>"))?;
        Ok(Cursor {
            life: life
                .parse()
                .map_err(|_| format!("cursor '{text}' has a bad life"))?,
            seq: seq
                .parse()
                .map_err(|_| format!("cursor '{text}' has a bad seq"))?,
        })
    }
}

impl Serialize for Cursor {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A read of a session's events.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventsRead {
    pub session_id: String,
    /// Events from the cursor on, oldest first.
    pub events: Vec<StoredEvent>,
    /// Events at or after the cursor that the buffer evicted before this read.
    pub evicted: u64,
    /// True when the cursor came from an earlier life of this session id: everything between
    /// that life and this one is gone, and `evicted` cannot count it.
    pub life_changed: bool,
    /// Where the next read starts.
    pub next: Cursor,
}

/// The page's answer to a command.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `ok: true`, with the result (null when the page sent none).
    Done(Value),
    /// `ok: false`: the page refused or failed, with its sentence.
    Refused(String),
}

/// A command answered by the page.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub reply: Reply,
    /// From the command leaving the daemon to its result arriving back.
    pub round_trip: Duration,
    /// The session had been marked idle by the reaper, and this command revived it.
    pub revived: bool,
}

/// A command that got no answer from the page. None of these is the app's failure.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CommandError {
    /// The page's socket dropped (or was replaced) before it answered.
    #[error("observation lost: {reason}")]
    ObservationLost { reason: String },
    /// No answer within the bound.
    #[error("command '{name}' got no answer within {} ms", bound.as_millis())]
    TimedOut { name: String, bound: Duration },
    /// The command name is empty or past the protocol's length limit.
    #[error("command name must be 1 to {MAX_ID_CHARS} characters")]
    BadName,
}

impl CommandError {
    /// The stable word for this outcome.
    pub fn word(&self) -> &'static str {
        match self {
            CommandError::ObservationLost { .. } => "observation_lost",
            CommandError::TimedOut { .. } => "timed_out",
            CommandError::BadName => "bad_name",
        }
    }
}

struct Pending {
    /// The socket the command went out on.
    link: u64,
    name: String,
    sent: Instant,
    revived: bool,
    reply: oneshot::Sender<Result<Answer, CommandError>>,
}

/// What a page said about itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Identity {
    pub url: String,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    pub adapters: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sdk_version: Option<String>,
    /// When the page's SDK is on another build or wire contract than the daemon: what differs
    /// and what fixes it ([`crate::wire::skew`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_skew: Option<String>,
    /// From `page.health`: the page's tab is hidden.
    pub hidden: bool,
    /// From `page.health`: the page's document has focus (unknown until the first report).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focused: Option<bool>,
}

impl Identity {
    /// The page as its hello describes it (not hidden, focus unknown until it reports).
    pub fn from_hello(hello: &crate::wire::Hello) -> Self {
        let skew = crate::wire::skew::describe(
            crate::wire::skew::Pair::Sdk,
            "the page",
            hello.sdk_version.as_deref(),
            hello.contract.as_deref(),
        );
        Self {
            url: hello.url.clone(),
            title: hello.title.clone(),
            project_id: hello.project_id.clone(),
            adapters: hello.adapters.clone(),
            sdk_version: hello.sdk_version.clone(),
            version_skew: skew,
            hidden: false,
            focused: None,
        }
    }
}

/// Counters a session keeps about its own stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionCounters {
    /// Events stored.
    pub events_stored: u64,
    /// Events dropped by the rate cap.
    pub events_dropped: u64,
    /// Events stored whose type this daemon does not know.
    pub unknown_event_types: u64,
    /// Events evicted from the buffer over this life.
    pub events_evicted: u64,
    /// Events held now.
    pub events_held: usize,
    /// Bytes held now.
    pub bytes_held: usize,
    /// Results that matched no pending command (late, or for fire-and-forget pushes).
    pub unmatched_results: u64,
    /// Sockets this session has had (1 plus replacements).
    pub links: u64,
}

/// One connected page.
pub struct Session {
    id: String,
    /// What the page calls itself (its hello's `sessionId`): commands carry it, since both SDKs
    /// refuse a command addressed to another id. Differs from `id` when the bridge adopted the
    /// page under the id its URL asked for.
    page_id: Mutex<String>,
    life: u64,
    connected_at: String,
    started: Instant,
    identity: Mutex<Identity>,
    last_seen: Mutex<Instant>,
    last_agent: Mutex<Instant>,
    idle: AtomicBool,
    closed: AtomicBool,
    link: Mutex<Option<SocketLink>>,
    pending: Mutex<HashMap<String, Pending>>,
    next_command: AtomicU64,
    ring: Mutex<Ring>,
    events_stored: AtomicU64,
    events_dropped: AtomicU64,
    unknown_types: AtomicU64,
    unmatched: AtomicU64,
    links: AtomicU64,
    /// Woken whenever an event is stored or the session ends, for waits that re-evaluate as
    /// events arrive.
    changed: tokio::sync::Notify,
    /// Keeps the daemon from idling out while the page is connected.
    _attachment: Attachment,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("life", &self.life)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Session {
    pub(crate) fn new(
        id: String,
        page_id: String,
        life: u64,
        identity: Identity,
        link: SocketLink,
        ring: RingLimits,
        attachment: Attachment,
    ) -> Self {
        let now = Instant::now();
        Self {
            id,
            page_id: Mutex::new(page_id),
            life,
            connected_at: crate::daemon::log::now_rfc3339(),
            started: now,
            identity: Mutex::new(identity),
            last_seen: Mutex::new(now),
            last_agent: Mutex::new(now),
            idle: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            link: Mutex::new(Some(link)),
            pending: Mutex::new(HashMap::new()),
            next_command: AtomicU64::new(1),
            ring: Mutex::new(Ring::new(ring)),
            events_stored: AtomicU64::new(0),
            events_dropped: AtomicU64::new(0),
            unknown_types: AtomicU64::new(0),
            unmatched: AtomicU64::new(0),
            links: AtomicU64::new(1),
            changed: tokio::sync::Notify::new(),
            _attachment: attachment,
        }
    }

    /// The page's session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// What the page calls itself (its hello's `sessionId`).
    pub fn page_id(&self) -> String {
        lock(&self.page_id).clone()
    }

    /// The page's own id when it differs from the listed one (the bridge adopted the page).
    pub fn adopted_from(&self) -> Option<String> {
        let page = self.page_id();
        (page != self.id).then_some(page)
    }

    /// This life's number (unique across the daemon's life).
    pub fn life(&self) -> u64 {
        self.life
    }

    /// When the session's first socket said hello, RFC 3339.
    pub fn connected_at(&self) -> &str {
        &self.connected_at
    }

    /// What the page last said about itself.
    pub fn identity(&self) -> Identity {
        lock(&self.identity).clone()
    }

    /// Milliseconds since the page last sent anything.
    pub fn last_seen_ms(&self) -> u64 {
        lock(&self.last_seen).elapsed().as_millis() as u64
    }

    /// How long since an agent last resolved or commanded this session.
    pub fn agent_idle_for(&self) -> Duration {
        lock(&self.last_agent).elapsed()
    }

    /// Marked idle by the reaper.
    pub fn is_idle(&self) -> bool {
        self.idle.load(Ordering::SeqCst)
    }

    /// Ended: its socket dropped with no replacement.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// The stream's counters.
    pub fn counters(&self) -> SessionCounters {
        let (held, bytes, evicted) = lock(&self.ring).stats();
        SessionCounters {
            events_stored: self.events_stored.load(Ordering::Relaxed),
            events_dropped: self.events_dropped.load(Ordering::Relaxed),
            unknown_event_types: self.unknown_types.load(Ordering::Relaxed),
            events_evicted: evicted,
            events_held: held,
            bytes_held: bytes,
            unmatched_results: self.unmatched.load(Ordering::Relaxed),
            links: self.links.load(Ordering::Relaxed),
        }
    }

    /// Notes that an agent used this session (resolving counts).
    pub fn touch_agent(&self) {
        *lock(&self.last_agent) = Instant::now();
    }

    pub(crate) fn touch_page(&self) {
        *lock(&self.last_seen) = Instant::now();
    }

    /// Sends a command and waits (within `bound`) for the page's answer.
    pub async fn command(
        &self,
        name: &str,
        args: Map<String, Value>,
        bound: Duration,
    ) -> Result<Answer, CommandError> {
        let chars = name.chars().count();
        if chars == 0 || chars > MAX_ID_CHARS {
            return Err(CommandError::BadName);
        }
        self.touch_agent();
        let revived = self.revive();
        self.exchange(name, args, bound, revived).await
    }

    /// Whether the page's script answers a harmless command within `bound`: a document frozen
    /// in the back/forward cache keeps a socket that answers pings (the browser's network stack
    /// does that), but it answers no command. Not agent activity: an idle session stays idle.
    pub(crate) async fn document_answers(&self, bound: Duration) -> bool {
        let mut args = Map::new();
        args.insert("mode".into(), json!("status"));
        self.exchange(CommandName::Snapshot.as_str(), args, bound, false)
            .await
            .is_ok()
    }

    /// Sends one command on the current socket and waits (within `bound`) for its answer.
    async fn exchange(
        &self,
        name: &str,
        args: Map<String, Value>,
        bound: Duration,
        revived: bool,
    ) -> Result<Answer, CommandError> {
        let id = self.next_id();
        let frame = Message::Command(Command {
            id: id.clone(),
            session_id: Some(self.page_id()),
            name: name.to_string(),
            args,
        })
        .encode();
        let (reply, answer) = oneshot::channel();
        let lost = || CommandError::ObservationLost {
            reason: "the page had already disconnected".into(),
        };
        let Some(link) = lock(&self.link).clone() else {
            return Err(lost());
        };
        {
            let mut pending = lock(&self.pending);
            if self.is_closed() {
                return Err(lost());
            }
            pending.insert(
                id.clone(),
                Pending {
                    link: link.id,
                    name: name.to_string(),
                    sent: Instant::now(),
                    revived,
                    reply,
                },
            );
        }
        if link.outbound.send(Outbound::Text(frame)).is_err() {
            lock(&self.pending).remove(&id);
            return Err(CommandError::ObservationLost {
                reason: "the page's socket was gone before the command could be sent".into(),
            });
        }
        match tokio::time::timeout(bound, answer).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(_)) => Err(CommandError::ObservationLost {
                reason: "the session ended before the page answered".into(),
            }),
            Err(_) => {
                lock(&self.pending).remove(&id);
                Err(CommandError::TimedOut {
                    name: name.to_string(),
                    bound,
                })
            }
        }
    }

    /// Sends a command without waiting for (or tracking) its answer.
    pub fn push(&self, name: CommandName, args: Value) {
        let args = match args {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let frame = Message::Command(Command {
            id: self.next_id(),
            session_id: Some(self.page_id()),
            name: name.as_str().to_string(),
            args,
        })
        .encode();
        self.send(Outbound::Text(frame));
    }

    fn next_id(&self) -> String {
        format!("c{}", self.next_command.fetch_add(1, Ordering::SeqCst))
    }

    fn send(&self, frame: Outbound) -> bool {
        lock(&self.link)
            .as_ref()
            .is_some_and(|link| link.outbound.send(frame).is_ok())
    }

    /// Clears the idle mark, telling the page; returns whether it was set.
    fn revive(&self) -> bool {
        let was_idle = self.idle.swap(false, Ordering::SeqCst);
        if was_idle {
            self.push(CommandName::Presenter, json!({ "state": "active" }));
        }
        was_idle
    }

    /// Marks the session idle and tells the page; returns whether it was active before.
    pub(crate) fn mark_idle(&self) -> bool {
        let was_active = !self.idle.swap(true, Ordering::SeqCst);
        if was_active {
            self.push(
                CommandName::Presenter,
                json!({
                    "state": "ended",
                    "text": "Agent idle: your turn. The agent's next action resumes this session.",
                    "tone": "waiting",
                }),
            );
        }
        was_active
    }

    /// Settles a pending command with the page's result; unknown or late ids are counted.
    pub(crate) fn settle(&self, result: CommandResult) {
        self.touch_page();
        let Some(pending) = lock(&self.pending).remove(&result.id) else {
            self.unmatched.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let reply = if result.ok {
            Reply::Done(result.result.unwrap_or(Value::Null))
        } else {
            Reply::Refused(result.error.unwrap_or_else(|| {
                format!(
                    "the page answered '{}' with ok:false and no error",
                    pending.name
                )
            }))
        };
        let _ = pending.reply.send(Ok(Answer {
            reply,
            round_trip: pending.sent.elapsed(),
            revived: pending.revived,
        }));
    }

    /// Stores an event, restamped with the daemon's clock.
    pub(crate) fn record(&self, event: Event, bytes: usize) {
        let now = Instant::now();
        *lock(&self.last_seen) = now;
        if let crate::wire::EventType::Known(known) = &event.kind {
            match known {
                KnownEventType::RouteChange => {
                    if let Some(to) = event.data.get("to").and_then(Value::as_str) {
                        lock(&self.identity).url = crate::wire::messages::clip(to, 4096);
                    }
                }
                KnownEventType::PageHealth => {
                    let mut identity = lock(&self.identity);
                    if let Some(hidden) = event.data.get("hidden").and_then(Value::as_bool) {
                        identity.hidden = hidden;
                    }
                    if let Some(focused) = event.data.get("focused").and_then(Value::as_bool) {
                        identity.focused = Some(focused);
                    }
                }
                _ => {}
            }
        } else {
            self.unknown_types.fetch_add(1, Ordering::Relaxed);
        }
        let t = now.saturating_duration_since(self.started).as_millis() as u64;
        let stored = StoredEvent::new(
            t,
            event.kind,
            event.element_ref,
            event.data,
            event.seq,
            bytes,
        );
        lock(&self.ring).push(stored, now);
        self.events_stored.fetch_add(1, Ordering::Relaxed);
        self.changed.notify_waiters();
    }

    /// Resolves at the next stored event or when the session ends. Create it before reading,
    /// then await it, so nothing stored in between is missed.
    pub fn changed(&self) -> tokio::sync::futures::Notified<'_> {
        self.changed.notified()
    }

    /// Milliseconds on this life's clock (the clock events are stamped with).
    pub fn clock_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Counts an event the rate cap dropped.
    pub(crate) fn note_dropped(&self) {
        self.events_dropped.fetch_add(1, Ordering::Relaxed);
    }

    /// Updates identity from a repeated hello on the same socket.
    pub(crate) fn refresh(&self, identity: Identity) {
        let mut current = lock(&self.identity);
        let (hidden, focused) = (current.hidden, current.focused);
        *current = Identity {
            hidden,
            focused,
            ..identity
        };
    }

    /// Reads events from `since` (this life's start when `None`).
    pub fn events_since(&self, since: Option<Cursor>, limit: usize) -> EventsRead {
        let (seq, life_changed) = match since {
            Some(cursor) if cursor.life == self.life => (cursor.seq, false),
            Some(_) => (0, true),
            None => (0, false),
        };
        let RingRead {
            events,
            evicted,
            next,
        } = lock(&self.ring).read(seq, limit, Instant::now());
        EventsRead {
            session_id: self.id.clone(),
            events,
            evicted,
            life_changed,
            next: Cursor {
                life: self.life,
                seq: next,
            },
        }
    }

    /// The daemon time of the newest held event passing `which`.
    pub fn last_event_t(&self, which: impl Fn(&StoredEvent) -> bool) -> Option<u64> {
        lock(&self.ring).last_matching(which).map(|e| e.t)
    }

    /// The cursor at the head of the stream: a read from it returns only later events.
    pub fn head(&self) -> Cursor {
        Cursor {
            life: self.life,
            seq: lock(&self.ring).head(),
        }
    }

    /// The id of the socket carrying this session, if one does.
    pub(crate) fn link_id(&self) -> Option<u64> {
        lock(&self.link).as_ref().map(|l| l.id)
    }

    /// Pings the socket carrying this session and waits (within `bound`) for its pong: whether
    /// a page is still at the other end. A session with no socket, or one whose writer is gone,
    /// does not answer.
    pub(crate) async fn link_answers(&self, bound: Duration) -> bool {
        let Some(link) = lock(&self.link).clone() else {
            return false;
        };
        let pong = link.pong.notified();
        if link.outbound.send(Outbound::Ping).is_err() {
            return false;
        }
        tokio::select! {
            answered = tokio::time::timeout(bound, pong) => answered.is_ok(),
            _ = link.cancel.cancelled() => false,
        }
    }

    /// Swaps in a newer socket (whose page calls itself `page_id`); the old one is closed and its
    /// pending commands are lost. When
    /// the newer socket is another document's (`new_document`: the old one sits frozen in the
    /// back/forward cache), what the old document said about its visibility is dropped too.
    pub(crate) fn replace_link(
        &self,
        link: SocketLink,
        page_id: &str,
        identity: Identity,
        new_document: bool,
    ) {
        let old = lock(&self.link).replace(link);
        *lock(&self.page_id) = page_id.to_string();
        self.links.fetch_add(1, Ordering::Relaxed);
        if new_document {
            *lock(&self.identity) = identity;
        } else {
            self.refresh(identity);
        }
        *lock(&self.last_seen) = Instant::now();
        if let Some(old) = old {
            let _ = old.outbound.send(Outbound::Close(CloseReason::Replaced));
            old.cancel.cancel();
            self.fail_where(
                |p| p.link == old.id,
                "the page's socket was replaced by a newer connection with the same session id",
            );
        }
    }

    /// Whether `link_id` is the socket currently carrying this session.
    pub(crate) fn carried_by(&self, link_id: u64) -> bool {
        lock(&self.link).as_ref().is_some_and(|l| l.id == link_id)
    }

    /// Ends the session: no more commands, every pending one resolves as observation lost.
    pub(crate) fn close(&self, reason: &str) {
        {
            let _pending = lock(&self.pending);
            self.closed.store(true, Ordering::SeqCst);
        }
        if let Some(link) = lock(&self.link).take() {
            link.cancel.cancel();
        }
        self.fail_all(reason);
        self.changed.notify_waiters();
    }

    fn fail_all(&self, reason: &str) {
        self.fail_where(|_| true, reason);
    }

    fn fail_where(&self, which: impl Fn(&Pending) -> bool, reason: &str) {
        let drained: Vec<Pending> = {
            let mut pending = lock(&self.pending);
            let ids: Vec<String> = pending
                .iter()
                .filter(|(_, p)| which(p))
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter().filter_map(|id| pending.remove(id)).collect()
        };
        for pending in drained {
            let _ = pending.reply.send(Err(CommandError::ObservationLost {
                reason: reason.to_string(),
            }));
        }
    }

    /// How many commands await an answer.
    pub fn pending_count(&self) -> usize {
        lock(&self.pending).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::Activity;
    use crate::daemon::activity::Holder;

    fn session() -> (Arc<Session>, mpsc::UnboundedReceiver<Outbound>, Activity) {
        let activity = Activity::new();
        let (outbound, receiver) = mpsc::unbounded_channel();
        let link = SocketLink::new(1, outbound);
        let session = Session::new(
            "s1".into(),
            "s1".into(),
            1,
            Identity::default(),
            link,
            RingLimits::default(),
            activity.attach(Holder::Session),
        );
        (Arc::new(session), receiver, activity)
    }

    fn sent_id(frame: Outbound) -> String {
        let Outbound::Text(text) = frame else {
            panic!("a text frame")
        };
        let Message::Command(command) = crate::wire::messages::decode(&text).unwrap() else {
            panic!("a command")
        };
        command.id
    }

    use std::sync::Arc;

    #[tokio::test]
    async fn results_are_matched_by_id_even_out_of_order() {
        let (session, mut wire, _activity) = session();
        let bound = Duration::from_secs(5);
        let first = tokio::spawn({
            let s = session.clone();
            async move { s.command("query", Map::new(), bound).await }
        });
        let first_id = sent_id(wire.recv().await.unwrap());
        let second = tokio::spawn({
            let s = session.clone();
            async move { s.command("snapshot", Map::new(), bound).await }
        });
        let second_id = sent_id(wire.recv().await.unwrap());
        assert_ne!(first_id, second_id);
        for (id, value) in [(&second_id, "two"), (&first_id, "one")] {
            session.settle(CommandResult {
                id: id.clone(),
                ok: true,
                result: Some(Value::from(value)),
                error: None,
            });
        }
        let first = first.await.unwrap().unwrap();
        let second = second.await.unwrap().unwrap();
        assert_eq!(first.reply, Reply::Done(Value::from("one")));
        assert_eq!(second.reply, Reply::Done(Value::from("two")));
        // A late or unknown id is counted, never an error.
        session.settle(CommandResult {
            id: "c999".into(),
            ok: true,
            result: None,
            error: None,
        });
        assert_eq!(session.counters().unmatched_results, 1);
    }

    #[tokio::test]
    async fn a_page_refusal_is_not_a_lost_observation() {
        let (session, mut wire, _activity) = session();
        let waiting = tokio::spawn({
            let s = session.clone();
            async move { s.command("nope", Map::new(), Duration::from_secs(5)).await }
        });
        let id = sent_id(wire.recv().await.unwrap());
        session.settle(CommandResult {
            id,
            ok: false,
            result: None,
            error: Some("unknown command 'nope'".into()),
        });
        let answer = waiting.await.unwrap().unwrap();
        assert_eq!(
            answer.reply,
            Reply::Refused("unknown command 'nope'".into())
        );
    }

    #[tokio::test]
    async fn closing_resolves_every_pending_command_at_once_as_observation_lost() {
        let (session, mut wire, _activity) = session();
        let mut waiting = Vec::new();
        for _ in 0..3 {
            let s = session.clone();
            waiting.push(tokio::spawn(async move {
                s.command("query", Map::new(), Duration::from_secs(3600))
                    .await
            }));
            wire.recv().await.unwrap();
        }
        assert_eq!(session.pending_count(), 3);
        session.close("the page disconnected (test)");
        for task in waiting {
            let outcome = task.await.unwrap();
            assert!(
                matches!(outcome, Err(CommandError::ObservationLost { .. })),
                "{outcome:?}"
            );
        }
        // Control: a command after the close is refused the same way, without waiting.
        let after = session
            .command("query", Map::new(), Duration::from_secs(3600))
            .await;
        assert!(matches!(after, Err(CommandError::ObservationLost { .. })));
    }

    #[tokio::test(start_paused = true)]
    async fn an_unanswered_command_times_out_at_its_bound() {
        let (session, _wire, _activity) = session();
        let outcome = session
            .command("query", Map::new(), Duration::from_millis(8000))
            .await;
        assert_eq!(
            outcome,
            Err(CommandError::TimedOut {
                name: "query".into(),
                bound: Duration::from_millis(8000)
            })
        );
        assert_eq!(session.pending_count(), 0);
    }

    #[tokio::test]
    async fn idle_marks_push_a_presenter_and_the_next_command_revives() {
        let (session, mut wire, _activity) = session();
        assert!(session.mark_idle());
        assert!(!session.mark_idle(), "marking twice tells the page once");
        let Outbound::Text(ended) = wire.recv().await.unwrap() else {
            panic!()
        };
        assert!(ended.contains("\"presenter\"") && ended.contains("\"ended\""));
        let waiting = tokio::spawn({
            let s = session.clone();
            async move { s.command("query", Map::new(), Duration::from_secs(5)).await }
        });
        let Outbound::Text(active) = wire.recv().await.unwrap() else {
            panic!()
        };
        assert!(active.contains("\"active\""));
        let id = sent_id(wire.recv().await.unwrap());
        session.settle(CommandResult {
            id,
            ok: true,
            result: None,
            error: None,
        });
        let answer = waiting.await.unwrap().unwrap();
        assert!(answer.revived);
        assert!(!session.is_idle());
    }
}
