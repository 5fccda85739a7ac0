//! Bounded polling: wait for a condition, never for a duration. A poll that runs out of time
//! says what it was waiting for.

use std::time::{Duration, Instant};

/// How often a poll looks.
pub const POLL_EVERY: Duration = Duration::from_millis(10);

/// Calls `check` until it returns `Some`, or panics after `bound` naming `what`.
pub async fn until<T>(what: &str, bound: Duration, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    match within(bound, &mut check).await {
        Some(value) => value,
        None => panic!("timed out after {bound:?} waiting for {what}"),
    }
}

/// Calls `check` until it returns `Some`; `None` when `bound` runs out.
pub async fn within<T>(bound: Duration, mut check: impl AsyncFnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + bound;
    loop {
        if let Some(value) = check().await {
            return Some(value);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(POLL_EVERY).await;
    }
}
