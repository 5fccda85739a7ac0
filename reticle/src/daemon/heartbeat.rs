//! The heartbeat: a `daemon_alive` line every interval, so a daemon killed without a word is
//! told apart from one that exited tidily. It only writes; [`super::life`] reads the silence.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::activity::{Activity, Holder};
use super::{DaemonLog, events};

/// Beats until the task is aborted. The first beat comes one interval after start.
pub async fn beat(log: Arc<DaemonLog>, activity: Activity, every: Duration) {
    let started = Instant::now();
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        log.event(
            events::ALIVE,
            json!({
                "uptimeMs": started.elapsed().as_millis() as u64,
                "everyMs": every.as_millis() as u64,
                "sessions": activity.count(Holder::Session),
                "agents": activity.count(Holder::Agent),
            }),
        );
    }
}
