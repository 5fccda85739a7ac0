//! The daemon's async runtime: multi-thread with one worker, so every wake-up stays on the
//! thread already running (docs/benchmarks.md, issue 16 round 11). Blocking work leaves the
//! worker through [`crate::store::off_the_runtime`]; `TOKIO_WORKER_THREADS` chooses another
//! count for paired measurements, and a bad one is refused by name.
//!
//! It builds the runtime; it must not decide what runs on it.

use crate::config::{self, ConfigError, env};

/// The daemon's worker threads: one, or what `TOKIO_WORKER_THREADS` says (read into the
/// daemon's settings, so every reader of them refuses a bad count rather than leave it to
/// tokio, which panics on it). With two workers every wake-up also woke the other thread,
/// about three context switches a page call.
pub fn workers_from_env() -> Result<usize, ConfigError> {
    config::count_from_env(env::TOKIO_WORKER_THREADS, 1).map(|n| n as usize)
}

/// The daemon's runtime on `workers` threads, with every driver (I/O, time) on.
pub fn build(workers: usize) -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
}
