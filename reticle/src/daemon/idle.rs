//! Idle shutdown: resolves once nothing has been attached for the whole bound, or (when that
//! bound is set) once the daemon has gone unused with agents attached for the attached bound.
//! It decides when; it must not perform the shutdown (the caller logs and exits).

use std::time::Duration;

use super::activity::Activity;

/// How often the watch looks, for a given bound: a tenth of it, between 20 ms and 1 s.
pub fn check_every(bound: Duration) -> Duration {
    (bound / 10).clamp(Duration::from_millis(20), Duration::from_secs(1))
}

/// Why the daemon is quiet enough to end, and for how long it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quiet {
    /// Nothing attached for the idle bound.
    Idle(Duration),
    /// Agents attached, but no call, page or lease for the attached bound.
    Unused(Duration),
}

impl Quiet {
    pub fn lasted(self) -> Duration {
        match self {
            Quiet::Idle(d) | Quiet::Unused(d) => d,
        }
    }
}

/// Waits until `activity` has been idle for `bound`, looking every `check`; returns how long it
/// was idle. A zero bound never resolves.
pub async fn idle_for(activity: &Activity, bound: Duration, check: Duration) -> Duration {
    until_quiet(activity, bound, Duration::ZERO, check)
        .await
        .lasted()
}

/// Waits until `activity` has been idle for `idle`, or unused (agents attached or not) for
/// `unused`, looking every `check`. A zero bound is never reached.
pub async fn until_quiet(
    activity: &Activity,
    idle: Duration,
    unused: Duration,
    check: Duration,
) -> Quiet {
    if idle.is_zero() && unused.is_zero() {
        return std::future::pending().await;
    }
    let mut ticks = tokio::time::interval(check.max(Duration::from_millis(1)));
    loop {
        ticks.tick().await;
        if let Some(quiet) = activity.idle_for()
            && !idle.is_zero()
            && quiet >= idle
        {
            return Quiet::Idle(quiet);
        }
        if let Some(quiet) = activity.unused_for()
            && !unused.is_zero()
            && quiet >= unused
        {
            return Quiet::Unused(quiet);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::activity::Holder;

    #[tokio::test(start_paused = true)]
    async fn fires_after_the_bound_and_not_while_attached() {
        let activity = Activity::new();
        let guard = activity.attach(Holder::Agent);
        let bound = Duration::from_millis(500);
        let waited = tokio::time::timeout(
            Duration::from_secs(60),
            idle_for(&activity, bound, check_every(bound)),
        )
        .await;
        assert!(
            waited.is_err(),
            "an attached agent must hold off idle shutdown"
        );
        drop(guard);
        let idle = idle_for(&activity, bound, check_every(bound)).await;
        assert!(idle >= bound);
    }

    #[tokio::test(start_paused = true)]
    async fn an_attached_agent_that_uses_nothing_ends_at_the_attached_bound() {
        let activity = Activity::new();
        let _agent = activity.attach(Holder::Agent);
        let (idle, unused) = (Duration::from_millis(300), Duration::from_secs(2));
        let started = tokio::time::Instant::now();
        // A call keeps it in use; the clock runs from the call's end.
        let call = activity.attach(Holder::Call);
        let during = tokio::time::timeout(
            Duration::from_secs(30),
            until_quiet(&activity, idle, unused, check_every(idle)),
        )
        .await;
        assert!(during.is_err(), "a running call is use");
        drop(call);
        let quiet = until_quiet(&activity, idle, unused, check_every(idle)).await;
        assert!(
            matches!(quiet, Quiet::Unused(d) if d >= unused),
            "{quiet:?}"
        );
        assert!(started.elapsed() >= Duration::from_secs(32));
        // Control: a page attached is use, however long.
        let _page = activity.attach(Holder::Session);
        let with_page = tokio::time::timeout(
            Duration::from_secs(60),
            until_quiet(&activity, idle, unused, check_every(idle)),
        )
        .await;
        assert!(with_page.is_err(), "a page is use");
    }

    #[tokio::test(start_paused = true)]
    async fn zero_never_fires() {
        let activity = Activity::new();
        let waited = tokio::time::timeout(
            Duration::from_secs(3600),
            idle_for(&activity, Duration::ZERO, Duration::from_millis(20)),
        )
        .await;
        assert!(waited.is_err());
    }
}
