//! Idle shutdown: resolves once nothing has been attached for the whole bound. It decides when;
//! it must not perform the shutdown (the caller logs and exits).

use std::time::Duration;

use super::activity::Activity;

/// How often the watch looks, for a given bound: a tenth of it, between 20 ms and 1 s.
pub fn check_every(bound: Duration) -> Duration {
    (bound / 10).clamp(Duration::from_millis(20), Duration::from_secs(1))
}

/// Waits until `activity` has been idle for `bound`, looking every `check`; returns how long it
/// was idle. A zero bound never resolves.
pub async fn idle_for(activity: &Activity, bound: Duration, check: Duration) -> Duration {
    if bound.is_zero() {
        return std::future::pending().await;
    }
    let mut ticks = tokio::time::interval(check.max(Duration::from_millis(1)));
    loop {
        ticks.tick().await;
        if let Some(idle) = activity.idle_for()
            && idle >= bound
        {
            return idle;
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
