//! The lease book: which holder has leased which browser session, in the daemon's memory only (a
//! restart loses every lease). While a session is leased only its holder may drive it:
//! [`LeaseBook::admits`] is the one check the chokepoint makes before a state-changing tool
//! runs. It owns no timer: a dead lease is swept whenever the book is read, and a call admitted
//! before a lease was taken runs to its end.
//! It must not know tools, transports or pages.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long a lease lasts without a call from its holder, unless configured.
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(5 * 60);
/// How long an agent's leases outlive its last link closing (a reconnect within it keeps them).
pub const DEFAULT_LINK_GRACE: Duration = Duration::from_secs(10);

/// Who holds (or asks for) a lease: one agent, its id (from its link) and the client name its
/// `initialize` gave, if any. An agent is one `reticle mcp` process, naming itself on every
/// stream it opens (`GET /mcp/sse?agent=<id>`) so its reconnects stay the same agent; a raw MCP
/// client that names none is its one stream. Each `reticle verify --jobs` job is an agent
/// (`verify-<run>-j<N>`), so CI never drives a person's leased tab and two jobs never share one.
#[derive(Debug, Clone)]
pub struct LeaseHolder {
    pub id: String,
    pub client: Option<String>,
}

impl LeaseHolder {
    /// Whether `other` is this holder (the client name is a label, not identity).
    pub fn is(&self, other: &LeaseHolder) -> bool {
        self.id == other.id
    }

    /// The holder as a tool result names it.
    pub fn to_value(&self) -> Value {
        json!({ "agent": self.id, "client": self.client })
    }

    /// The holder in a sentence.
    pub fn describe(&self) -> String {
        match &self.client {
            Some(client) => format!("agent {} ({client})", self.id),
            None => format!("agent {}", self.id),
        }
    }
}

/// A live lease, as seen now.
#[derive(Debug, Clone)]
pub struct LeaseView {
    pub session: String,
    pub holder: LeaseHolder,
    /// How long it lives unless its holder calls again (or, link lost, reconnects).
    pub expires_in: Duration,
    /// Whether the holder's link is open.
    pub linked: bool,
}

impl LeaseView {
    /// The lease as `reticle_sessions` and `reticle_lease` show it.
    pub fn to_value(&self) -> Value {
        json!({
            "holder": self.holder.to_value(),
            "expiresInMs": self.expires_in.as_millis() as u64,
            "linked": self.linked,
        })
    }
}

/// Why a lease could not be let go.
#[derive(Debug, Clone)]
pub enum LeaseError {
    /// Another holder has it.
    Held(LeaseView),
    /// The caller holds no lease on it.
    NotHeld,
}

/// The book of one daemon life. A lease is live while its holder has made a call within the
/// TTL and its agent's link is open, or was lost less than the link grace ago (so a `reticle
/// mcp` reconnect keeps it).
#[derive(Debug)]
pub struct LeaseBook {
    ttl: Duration,
    link_grace: Duration,
    /// A test-only stand-in that admits every caller (the negative control of the refusal).
    ignores_leases: bool,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// By session id.
    leases: HashMap<String, Lease>,
    /// Each agent's links: how many are open, and when the last one closed.
    links: HashMap<String, Links>,
}

#[derive(Debug, Clone)]
struct Lease {
    holder: LeaseHolder,
    touched: Instant,
}

#[derive(Debug, Default, Clone, Copy)]
struct Links {
    open: usize,
    lost_at: Option<Instant>,
}

impl Default for LeaseBook {
    fn default() -> Self {
        Self::new(DEFAULT_LEASE_TTL, DEFAULT_LINK_GRACE, false)
    }
}

impl LeaseBook {
    pub fn new(ttl: Duration, link_grace: Duration, ignores_leases: bool) -> Self {
        Self {
            ttl,
            link_grace,
            ignores_leases,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The bound a lease lives without calls from its holder.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Leases `session` for `holder` (renewing it when the holder already has it); the error is
    /// the other holder's live lease.
    pub fn acquire(&self, session: &str, holder: &LeaseHolder) -> Result<LeaseView, LeaseView> {
        let mut inner = self.lock();
        let now = Instant::now();
        if let Some(other) = self.live(&inner, session, now)
            && !other.holder.is(holder)
        {
            return Err(other);
        }
        inner.leases.insert(
            session.to_string(),
            Lease {
                holder: holder.clone(),
                touched: now,
            },
        );
        // Dead at once only under a zero TTL or a zero grace with the link gone.
        Ok(self
            .live(&inner, session, now)
            .unwrap_or_else(|| LeaseView {
                session: session.to_string(),
                holder: holder.clone(),
                expires_in: Duration::ZERO,
                linked: false,
            }))
    }

    /// Lets `session` go; only its holder can.
    pub fn release(&self, session: &str, holder: &LeaseHolder) -> Result<(), LeaseError> {
        let mut inner = self.lock();
        match self.live(&inner, session, Instant::now()) {
            Some(view) if view.holder.is(holder) => {
                inner.leases.remove(session);
                Ok(())
            }
            Some(view) => Err(LeaseError::Held(view)),
            None => Err(LeaseError::NotHeld),
        }
    }

    /// Renews every lease `holder` has (each of its calls does).
    pub fn touch(&self, holder: &LeaseHolder) {
        let mut inner = self.lock();
        let now = Instant::now();
        for lease in inner.leases.values_mut() {
            if lease.holder.is(holder) {
                lease.touched = now;
            }
        }
    }

    /// The sessions `holder` has leased, live ones only.
    pub fn held_by(&self, holder: &LeaseHolder) -> Vec<String> {
        let inner = self.lock();
        let now = Instant::now();
        let mut held: Vec<String> = inner
            .leases
            .keys()
            .filter(|s| {
                self.live(&inner, s, now)
                    .is_some_and(|v| v.holder.is(holder))
            })
            .cloned()
            .collect();
        held.sort();
        held
    }

    /// The live lease on `session`, if any.
    pub fn lease_of(&self, session: &str) -> Option<LeaseView> {
        let mut inner = self.lock();
        let now = Instant::now();
        let view = self.live(&inner, session, now);
        if view.is_none() {
            inner.leases.remove(session);
        }
        view
    }

    /// Whether `caller` may drive `session`: yes unless someone else holds a live lease on it.
    pub fn admits(&self, session: &str, caller: Option<&LeaseHolder>) -> Result<(), LeaseView> {
        if self.ignores_leases {
            return Ok(());
        }
        match self.lease_of(session) {
            Some(view) if !caller.is_some_and(|c| view.holder.is(c)) => Err(view),
            _ => Ok(()),
        }
    }

    /// An agent's link opened (its `reticle mcp` connected, or reconnected).
    pub fn link_opened(&self, agent: &str) {
        let mut inner = self.lock();
        let links = inner.links.entry(agent.to_string()).or_default();
        links.open += 1;
        links.lost_at = None;
    }

    /// Whether agent `agent` has a link open.
    pub fn link_open(&self, agent: &str) -> bool {
        self.lock().links.get(agent).is_some_and(|l| l.open > 0)
    }

    /// How long an agent's leases outlive its last link.
    pub fn link_grace(&self) -> Duration {
        self.link_grace
    }

    /// An agent's link closed; with none left open, its leases live only the link grace.
    pub fn link_closed(&self, agent: &str) {
        let mut inner = self.lock();
        let now = Instant::now();
        if let Some(links) = inner.links.get_mut(agent) {
            links.open = links.open.saturating_sub(1);
            if links.open == 0 {
                links.lost_at = Some(now);
            }
        }
        // Sweep what is dead, and forget agents with neither links nor leases.
        let dead: Vec<String> = inner
            .leases
            .keys()
            .filter(|s| self.live(&inner, s, now).is_none())
            .cloned()
            .collect();
        for session in dead {
            inner.leases.remove(&session);
        }
        let holding: Vec<String> = inner.leases.values().map(|l| l.holder.id.clone()).collect();
        inner
            .links
            .retain(|id, links| links.open > 0 || holding.contains(id));
    }

    /// The lease on `session` if it is live at `now`.
    fn live(&self, inner: &Inner, session: &str, now: Instant) -> Option<LeaseView> {
        let lease = inner.leases.get(session)?;
        let idle = now.saturating_duration_since(lease.touched);
        let mut expires_in = self.ttl.checked_sub(idle).filter(|d| !d.is_zero())?;
        let mut linked = true;
        if let Some(links) = inner.links.get(&lease.holder.id)
            && links.open == 0
        {
            linked = false;
            let lost = now.saturating_duration_since(links.lost_at.unwrap_or(now));
            let left = self.link_grace.checked_sub(lost).filter(|d| !d.is_zero())?;
            expires_in = expires_in.min(left);
        }
        Some(LeaseView {
            session: session.to_string(),
            holder: lease.holder.clone(),
            expires_in,
            linked,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::LeaseHolder as Holder;
    use super::*;

    fn agent(id: &str) -> Holder {
        Holder {
            id: id.into(),
            client: Some("test".into()),
        }
    }

    #[test]
    fn a_held_lease_refuses_others_and_its_holder_renews_and_releases_it() {
        let book = LeaseBook::default();
        let (a, b) = (agent("a"), agent("b"));
        book.link_opened("a");
        book.acquire("s1", &a).unwrap();
        assert!(book.admits("s1", Some(&a)).is_ok());
        let held = book.admits("s1", Some(&b)).unwrap_err();
        assert!(held.holder.is(&a));
        assert!(
            book.admits("s1", None).is_err(),
            "a caller with no identity"
        );
        assert!(book.acquire("s1", &b).unwrap_err().holder.is(&a));
        assert!(matches!(book.release("s1", &b), Err(LeaseError::Held(_))));
        book.acquire("s1", &a).expect("the holder renews");
        assert_eq!(book.held_by(&a), ["s1"]);
        book.release("s1", &a).unwrap();
        assert!(matches!(book.release("s1", &a), Err(LeaseError::NotHeld)));
        assert!(book.admits("s1", Some(&b)).is_ok());
        assert!(book.admits("s2", Some(&b)).is_ok(), "an unleased session");
    }

    #[test]
    fn a_lease_dies_after_the_ttl_without_calls_and_after_the_link_grace() {
        let book = LeaseBook::new(Duration::ZERO, DEFAULT_LINK_GRACE, false);
        let a = agent("a");
        assert!(book.acquire("s1", &a).unwrap().expires_in.is_zero());
        assert!(book.lease_of("s1").is_none(), "no call within a zero TTL");
        assert!(book.admits("s1", Some(&agent("b"))).is_ok());
        let book = LeaseBook::new(DEFAULT_LEASE_TTL, Duration::ZERO, false);
        book.link_opened("a");
        book.acquire("s1", &a).unwrap();
        book.link_opened("a");
        book.link_closed("a");
        assert!(book.lease_of("s1").is_some(), "one link still open");
        book.link_closed("a");
        assert!(book.lease_of("s1").is_none(), "no link, no grace");
        let book = LeaseBook::new(DEFAULT_LEASE_TTL, DEFAULT_LINK_GRACE, false);
        book.link_opened("a");
        book.acquire("s1", &a).unwrap();
        book.link_closed("a");
        let view = book.lease_of("s1").expect("within the grace");
        assert!(!view.linked);
        book.link_opened("a");
        assert!(
            book.lease_of("s1").unwrap().linked,
            "the reconnect keeps it"
        );
    }

    #[test]
    fn the_stand_in_admits_everyone() {
        let ignoring = LeaseBook::new(DEFAULT_LEASE_TTL, DEFAULT_LINK_GRACE, true);
        ignoring.acquire("s1", &agent("b")).unwrap();
        assert!(ignoring.admits("s1", Some(&agent("a"))).is_ok());
    }
}
