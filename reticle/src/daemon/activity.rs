//! What keeps a daemon from being idle: attached agents (MCP streams), browser sessions, leases
//! and running tool calls, each a guard that detaches on drop, so no exit path can leak a count;
//! and when it was last used (a call, a page, a lease: an attached agent alone is no use). This
//! module counts; it must not decide when to shut down (that is [`super::idle`]).

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::time::Instant;

/// The kinds of thing that keep a daemon busy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// An MCP client stream.
    Agent,
    /// A connected browser session.
    Session,
    /// A lease on a session.
    Lease,
    /// A tool call running.
    Call,
}

/// Shared counters of attached holders and the moment the daemon last went quiet.
#[derive(Debug, Clone)]
pub struct Activity {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    agents: AtomicUsize,
    sessions: AtomicUsize,
    leases: AtomicUsize,
    calls: AtomicUsize,
    quiet_since: Mutex<Instant>,
    /// The last use: a call, a page or a lease attached or let go.
    used_since: Mutex<Instant>,
}

/// Detaches its holder when dropped.
#[derive(Debug)]
#[must_use = "dropping the guard detaches the holder"]
pub struct Attachment {
    activity: Activity,
    holder: Holder,
}

impl Default for Activity {
    fn default() -> Self {
        Self::new()
    }
}

impl Activity {
    pub fn new() -> Self {
        Self {
            inner: Arc::new(Inner {
                agents: AtomicUsize::new(0),
                sessions: AtomicUsize::new(0),
                leases: AtomicUsize::new(0),
                calls: AtomicUsize::new(0),
                quiet_since: Mutex::new(Instant::now()),
                used_since: Mutex::new(Instant::now()),
            }),
        }
    }

    fn counter(&self, holder: Holder) -> &AtomicUsize {
        match holder {
            Holder::Agent => &self.inner.agents,
            Holder::Session => &self.inner.sessions,
            Holder::Lease => &self.inner.leases,
            Holder::Call => &self.inner.calls,
        }
    }

    /// Notes a use (the clock of [`Self::unused_for`]); an agent's attachment is not one.
    fn used(&self, holder: Holder) {
        if holder != Holder::Agent
            && let Ok(mut since) = self.inner.used_since.lock()
        {
            *since = Instant::now();
        }
    }

    /// Records a holder until the returned guard drops.
    pub fn attach(&self, holder: Holder) -> Attachment {
        self.counter(holder).fetch_add(1, Ordering::SeqCst);
        self.touch();
        self.used(holder);
        Attachment {
            activity: self.clone(),
            holder,
        }
    }

    /// Notes activity: idleness is measured from the last touch.
    pub fn touch(&self) {
        if let Ok(mut since) = self.inner.quiet_since.lock() {
            *since = Instant::now();
        }
    }

    /// How many of `holder` are attached.
    pub fn count(&self, holder: Holder) -> usize {
        self.counter(holder).load(Ordering::SeqCst)
    }

    /// How long the daemon has been idle: `None` while anything is attached.
    pub fn idle_for(&self) -> Option<Duration> {
        let busy = [Holder::Agent, Holder::Session, Holder::Lease, Holder::Call]
            .iter()
            .any(|h| self.count(*h) > 0);
        if busy {
            return None;
        }
        self.inner.quiet_since.lock().ok().map(|s| s.elapsed())
    }

    /// How long the daemon has gone unused, agents attached or not: `None` while a page, a
    /// lease or a running call holds it.
    pub fn unused_for(&self) -> Option<Duration> {
        let used = [Holder::Session, Holder::Lease, Holder::Call]
            .iter()
            .any(|h| self.count(*h) > 0);
        if used {
            return None;
        }
        self.inner.used_since.lock().ok().map(|s| s.elapsed())
    }
}

impl Drop for Attachment {
    fn drop(&mut self) {
        self.activity
            .counter(self.holder)
            .fetch_sub(1, Ordering::SeqCst);
        self.activity.touch();
        self.activity.used(self.holder);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_attachment_means_not_idle_and_dropping_restores_idle() {
        let activity = Activity::new();
        assert!(activity.idle_for().is_some());
        for holder in [Holder::Agent, Holder::Session, Holder::Lease, Holder::Call] {
            let guard = activity.attach(holder);
            assert_eq!(
                activity.idle_for(),
                None,
                "{holder:?} must keep the daemon busy"
            );
            drop(guard);
            assert!(activity.idle_for().is_some());
        }
    }
}
