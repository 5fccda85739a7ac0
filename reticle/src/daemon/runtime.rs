//! The daemon's async runtime: a multi-thread runtime with one worker thread. Every wake-up
//! inside the daemon (a POST arriving, a page's answer arriving, a timer armed) then stays on the
//! thread that is running anyway; with two workers each one also woke the other thread (a futex
//! or eventfd write and a context switch, about three a page call: docs/benchmarks.md, issue 16
//! round 11). What blocks (a store write's fsync) leaves the worker through
//! [`crate::store::off_the_runtime`], which hands the worker to a fresh thread meanwhile, and
//! `spawn_blocking` runs as before. `TOKIO_WORKER_THREADS`, when set, chooses the count instead
//! (for paired measurements). This module builds the runtime; it must not decide what runs on it.

use crate::config::env;

/// The daemon's runtime, with every driver (I/O, time) on.
pub fn build() -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if std::env::var_os(env::TOKIO_WORKER_THREADS).is_none() {
        builder.worker_threads(1);
    }
    builder.enable_all().build()
}
