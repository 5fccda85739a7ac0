//! `latency`: delays every chunk by `latency` ± `jitter` milliseconds.
//!
//! The delay is measured from when the proxy read the chunk, so chunks queued behind each other
//! are not delayed twice, and its input holds 1024 chunks so reading goes on while it waits.
//! It must not drop, reorder or split data; an interrupt hands the waiting chunk back.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Buffered, Kind, PipeFuture, Recv, Stub, Toxic};
use crate::rng::Rng;

/// Adds a delay to all data going through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Latency {
    /// Milliseconds added to every chunk.
    pub latency: u64,
    /// Milliseconds of uniform variation, drawn per chunk from `[-jitter, jitter)`.
    pub jitter: u64,
}

impl Latency {
    /// The delay for one chunk.
    pub fn delay(&self, rng: &mut Rng) -> Duration {
        let ms = self.latency as i64 + rng.spread(self.jitter);
        Duration::from_millis(ms.max(0) as u64)
    }
}

impl Kind for Latency {
    const NAME: &'static str = "latency";
}

impl Buffered for Latency {
    fn buffer_size(&self) -> usize {
        1024
    }
}

impl Toxic for Latency {
    fn pipe<'a>(&'a self, stub: &'a mut Stub) -> PipeFuture<'a> {
        Box::pin(async move {
            loop {
                match stub.recv().await {
                    Recv::Chunk(mut chunk) => {
                        let due = chunk.at + self.delay(stub.rng());
                        if stub.sleep_until(due).await.is_err() {
                            stub.keep(chunk);
                            return;
                        }
                        chunk.at = due;
                        if stub.send(chunk).await.is_err() {
                            return;
                        }
                    }
                    Recv::End => {
                        stub.close().await;
                        return;
                    }
                    Recv::Stopped => return,
                }
            }
        })
    }

    fn buffered(&self) -> Option<&dyn Buffered> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_is_seeded_and_bounded() {
        let t = Latency {
            latency: 100,
            jitter: 20,
        };
        let draw = |seed| {
            let mut rng = Rng::new(seed);
            (0..32).map(|_| t.delay(&mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(draw(3), draw(3));
        assert_ne!(draw(3), draw(4));
        for d in draw(5) {
            assert!(d >= Duration::from_millis(80) && d < Duration::from_millis(120));
        }
        let none = Latency {
            latency: 7,
            jitter: 0,
        };
        assert_eq!(none.delay(&mut Rng::new(1)), Duration::from_millis(7));
    }
}
