//! Seedable randomness for everything the proxy decides by chance: toxicity rolls, latency
//! jitter, slice sizes.
//!
//! It owns one small generator (SplitMix64) whose sequence is fixed by its seed, so a test that
//! seeds the server gets the same rolls on every run and every platform. It must not read the
//! clock or the OS for entropy except through [`Rng::from_entropy`], which only picks a seed.

use std::time::{SystemTime, UNIX_EPOCH};

/// A deterministic pseudo-random generator. Not for anything secret.
#[derive(Debug, Clone)]
pub struct Rng {
    /// The whole state: SplitMix64 advances it by a constant and scrambles the result.
    state: u64,
}

impl Rng {
    /// A generator whose sequence is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// A generator seeded from the clock and the process id, for runs that did not ask for a
    /// seed. The seed is reported by the server so a run can be replayed.
    pub fn from_entropy() -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        Self::new(nanos ^ (u64::from(std::process::id()) << 32))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform float in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        // 53 random bits give every representable step of an f64 in [0, 1).
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniform integer in `[0, bound)`; `0` when `bound` is 0.
    pub fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 {
            return 0;
        }
        // Multiply-shift keeps the bias below 2^-64 per draw, which is far below what a test can
        // observe, and never loops.
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }

    /// A uniform integer in `[-spread, spread)`, the shape Toxiproxy uses for jitter and slice
    /// variation; `0` when `spread` is 0.
    pub fn spread(&mut self, spread: u64) -> i64 {
        if spread == 0 {
            return 0;
        }
        self.below(spread.saturating_mul(2)) as i64 - spread as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_sequence() {
        let a: Vec<u64> = (0..8)
            .scan(Rng::new(7), |r, _| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..8)
            .scan(Rng::new(7), |r, _| Some(r.next_u64()))
            .collect();
        let c: Vec<u64> = (0..8)
            .scan(Rng::new(8), |r, _| Some(r.next_u64()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn draws_stay_in_their_ranges() {
        let mut r = Rng::new(1);
        for _ in 0..10_000 {
            let u = r.unit();
            assert!((0.0..1.0).contains(&u));
            assert!(r.below(10) < 10);
            let s = r.spread(5);
            assert!((-5..5).contains(&s));
        }
        assert_eq!(r.below(0), 0);
        assert_eq!(r.spread(0), 0);
    }
}
