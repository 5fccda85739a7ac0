//! `bandwidth`: limits a direction to `rate` KB/s (1 KB = 1000 bytes, as in Toxiproxy).
//!
//! Data leaves in pieces of at most 100 ms worth, each released when the rate allows, so a
//! slow rate spreads one large write over many reads. Idle time earns no credit. It must not
//! drop data: on an interrupt the unsent remainder is handed back.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::{Chunk, Kind, PipeFuture, Recv, Stub, Toxic};

/// Limits throughput.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Bandwidth {
    /// Kilobytes (1000 bytes) per second; 0 means unlimited.
    pub rate: u64,
}

impl Bandwidth {
    /// The largest piece sent at once: 100 ms worth of bytes.
    fn piece(&self) -> usize {
        (self.rate.saturating_mul(100)).max(1) as usize
    }

    /// How long `bytes` take at this rate.
    pub fn cost(&self, bytes: usize) -> Duration {
        // rate KB/s is rate bytes per millisecond.
        Duration::from_micros((bytes as u64).saturating_mul(1000) / self.rate.max(1))
    }
}

impl Kind for Bandwidth {
    const NAME: &'static str = "bandwidth";
}

impl Toxic for Bandwidth {
    fn pipe<'a>(&'a self, stub: &'a mut Stub) -> PipeFuture<'a> {
        Box::pin(async move {
            let mut next = Instant::now();
            loop {
                match stub.recv().await {
                    Recv::Chunk(mut chunk) => {
                        if self.rate == 0 {
                            if stub.send(chunk).await.is_err() {
                                return;
                            }
                            continue;
                        }
                        while !chunk.data.is_empty() {
                            let n = chunk.data.len().min(self.piece());
                            next = next.max(Instant::now()) + self.cost(n);
                            if stub.sleep_until(next).await.is_err() {
                                stub.keep(chunk);
                                return;
                            }
                            let piece = Chunk {
                                data: chunk.data.split_to(n),
                                at: chunk.at,
                            };
                            if stub.send(piece).await.is_err() {
                                stub.keep(chunk);
                                return;
                            }
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_follows_kilobytes_per_second() {
        let t = Bandwidth { rate: 10 };
        assert_eq!(t.cost(10_000), Duration::from_secs(1));
        assert_eq!(t.piece(), 1000);
    }
}
