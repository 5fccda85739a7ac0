//! The daemon's async runtime: a multi-thread runtime with one worker thread. Every wake-up
//! inside the daemon (a POST arriving, a page's answer arriving, a timer armed) then stays on the
//! thread that is running anyway; with two workers each one also woke the other thread (a futex
//! or eventfd write and a context switch, about three a page call: docs/benchmarks.md, issue 16
//! round 11). What blocks (a store write's fsync) leaves the worker through
//! [`crate::store::off_the_runtime`], which hands the worker to a fresh thread meanwhile, and
//! `spawn_blocking` runs as before. `TOKIO_WORKER_THREADS`, when set, chooses the count instead
//! (for paired measurements); it is read here, so a count that is not one is refused by name
//! rather than left to tokio, which panics on it. This module builds the runtime; it must not
//! decide what runs on it.

use crate::config::{self, ConfigError, env};

/// The daemon's worker threads: one, or what `TOKIO_WORKER_THREADS` says (read into the
/// daemon's settings, so every reader of them refuses a bad count).
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
