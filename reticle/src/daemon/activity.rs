//! What keeps a daemon from being idle: attached agents (MCP streams), browser sessions and
//! leases. Each attachment is a guard that detaches on drop, so no exit path can leak a count.
//! This module counts; it must not decide when to shut down (that is [`super::idle`]).

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
    quiet_since: Mutex<Instant>,
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
                quiet_since: Mutex::new(Instant::now()),
            }),
        }
    }

    fn counter(&self, holder: Holder) -> &AtomicUsize {
        match holder {
            Holder::Agent => &self.inner.agents,
            Holder::Session => &self.inner.sessions,
            Holder::Lease => &self.inner.leases,
        }
    }

    /// Records a holder until the returned guard drops.
    pub fn attach(&self, holder: Holder) -> Attachment {
        self.counter(holder).fetch_add(1, Ordering::SeqCst);
        self.touch();
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
        let busy = [Holder::Agent, Holder::Session, Holder::Lease]
            .iter()
            .any(|h| self.count(*h) > 0);
        if busy {
            return None;
        }
        self.inner.quiet_since.lock().ok().map(|s| s.elapsed())
    }
}

impl Drop for Attachment {
    fn drop(&mut self) {
        self.activity
            .counter(self.holder)
            .fetch_sub(1, Ordering::SeqCst);
        self.activity.touch();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_attachment_means_not_idle_and_dropping_restores_idle() {
        let activity = Activity::new();
        assert!(activity.idle_for().is_some());
        for holder in [Holder::Agent, Holder::Session, Holder::Lease] {
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
