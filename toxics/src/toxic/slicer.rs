//! `slicer`: cuts each chunk into pieces of about `average_size` bytes (± `size_variation`),
//! with `delay` microseconds between pieces.
//!
//! The cut points come from the stage's seeded generator. The bytes and their order are
//! unchanged; only the boundaries and the pacing move. On an interrupt the unsent remainder is
//! handed back whole.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Chunk, Kind, PipeFuture, Recv, Stub, Toxic};
use crate::rng::Rng;

/// Slices data into smaller packets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Slicer {
    /// Bytes in an average piece (0 is taken as 1).
    pub average_size: u64,
    /// Bytes a piece may differ from the average by; should be smaller than it.
    pub size_variation: u64,
    /// Microseconds between pieces.
    pub delay: u64,
}

impl Slicer {
    /// The piece lengths for `len` bytes, in order. They sum to `len`.
    pub fn pieces(&self, len: usize, rng: &mut Rng) -> Vec<usize> {
        let mut out = Vec::new();
        self.split(0, len, rng, &mut out);
        out
    }

    fn split(&self, start: usize, end: usize, rng: &mut Rng, out: &mut Vec<usize>) {
        let size = end - start;
        let average = self.average_size.max(1) as usize;
        let variation = self.size_variation as usize;
        if size <= average + variation || size < 2 {
            if size > 0 {
                out.push(size);
            }
            return;
        }
        // Halve around the middle, moved by up to the variation, but always leaving a byte on
        // each side so the recursion ends.
        let mid = (start + size / 2) as i64 + rng.spread(self.size_variation);
        let mid = (mid.max(start as i64 + 1) as usize).min(end - 1);
        self.split(start, mid, rng, out);
        self.split(mid, end, rng, out);
    }
}

impl Kind for Slicer {
    const NAME: &'static str = "slicer";
}

impl Toxic for Slicer {
    fn pipe<'a>(&'a self, stub: &'a mut Stub) -> PipeFuture<'a> {
        Box::pin(async move {
            loop {
                match stub.recv().await {
                    Recv::Chunk(mut chunk) => {
                        let pieces = self.pieces(chunk.data.len(), stub.rng());
                        let count = pieces.len();
                        for (i, n) in pieces.into_iter().enumerate() {
                            let piece = Chunk {
                                data: chunk.data.split_to(n),
                                at: chunk.at,
                            };
                            if stub.send(piece).await.is_err() {
                                stub.keep(chunk);
                                return;
                            }
                            if i + 1 < count
                                && stub.sleep(Duration::from_micros(self.delay)).await.is_err()
                            {
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
    fn pieces_cover_the_chunk_and_stay_near_the_average() {
        let t = Slicer {
            average_size: 10,
            size_variation: 4,
            delay: 0,
        };
        let mut rng = Rng::new(9);
        let pieces = t.pieces(1000, &mut rng);
        assert_eq!(pieces.iter().sum::<usize>(), 1000);
        assert!(pieces.len() > 50, "{pieces:?}");
        assert!(pieces.iter().all(|&n| n > 0 && n <= 14), "{pieces:?}");
        assert_eq!(pieces, t.pieces(1000, &mut Rng::new(9)));
    }

    #[test]
    fn degenerate_settings_still_terminate() {
        let t = Slicer::default();
        let pieces = t.pieces(17, &mut Rng::new(1));
        assert_eq!(pieces, vec![1; 17]);
        let wild = Slicer {
            average_size: 2,
            size_variation: 50,
            delay: 0,
        };
        assert_eq!(
            wild.pieces(500, &mut Rng::new(2)).iter().sum::<usize>(),
            500
        );
    }
}
