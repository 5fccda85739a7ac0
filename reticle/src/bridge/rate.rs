//! The per-socket event rate cap: a one-second window of `cap` events, plus a reserve of the
//! same size for high-value events (network, errors, routes, signals, loss markers). Excess
//! events are dropped and counted by the caller; the socket is never closed for it. Hellos and
//! command results never pass through here.

use std::time::{Duration, Instant};

const WINDOW: Duration = Duration::from_secs(1);

/// A fixed one-second window counter.
#[derive(Debug)]
pub struct RateCap {
    cap: u32,
    window_start: Instant,
    used: u32,
    reserve_used: u32,
}

impl RateCap {
    pub fn new(cap: u32, now: Instant) -> Self {
        Self {
            cap,
            window_start: now,
            used: 0,
            reserve_used: 0,
        }
    }

    /// Whether one more event may be stored at `now`.
    pub fn admit(&mut self, high_value: bool, now: Instant) -> bool {
        if now.saturating_duration_since(self.window_start) >= WINDOW {
            self.window_start = now;
            self.used = 0;
            self.reserve_used = 0;
        }
        if self.used < self.cap {
            self.used += 1;
            return true;
        }
        if high_value && self.reserve_used < self.cap {
            self.reserve_used += 1;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excess_is_refused_high_value_gets_a_reserve_and_the_window_resets() {
        let start = Instant::now();
        let mut cap = RateCap::new(3, start);
        assert_eq!((0..5).filter(|_| cap.admit(false, start)).count(), 3);
        assert_eq!((0..5).filter(|_| cap.admit(true, start)).count(), 3);
        assert!(!cap.admit(true, start));
        let later = start + Duration::from_millis(1001);
        assert!(cap.admit(false, later), "a new window admits again");
    }
}
