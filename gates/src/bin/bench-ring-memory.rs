//! Benchmark of what the bridge's event rings hold in memory under the worst case: a real daemon,
//! 32 sessions over the real WebSocket, each sending 1 MiB frames of `[0,0,…]` (the shape that
//! costs the most once parsed), then the daemon's resident memory from `/proc/<pid>/status`
//! (VmRSS). Run with `RETICLE_BIN=target/release/reticle target/release/bench-ring-memory`;
//! prints a Markdown table. The flood itself is the S7 scenario's ([`security::flood`]).

use gates::rows::security::s7_ring_memory_is_bounded as security;
use gates::scenarios::memory::resident_kb;
use harness::OwnedDaemon;
use reticle::config::env;

const SESSIONS: usize = 32;
const FRAMES: usize = 12;

#[tokio::main]
async fn main() {
    let daemon = OwnedDaemon::builder()
        .env(env::HARNESS_ROUTES, "1")
        .env(env::MAX_EVENTS_PER_SECOND, "100000")
        .start()
        .await;
    let token = daemon.token();
    let before = resident_kb(daemon.pid()).expect("the daemon's VmRSS");
    let pages = security::flood(&daemon, &token, SESSIONS, FRAMES)
        .await
        .expect("every session takes its frames");
    let after = resident_kb(daemon.pid()).expect("the daemon's VmRSS");
    drop(pages);
    daemon.shutdown().await;
    let mib = |kb: u64| kb as f64 / 1024.0;
    println!("| measure | value |");
    println!("| --- | --- |");
    println!("| daemon VmRSS before | {:.1} MiB |", mib(before));
    println!(
        "| daemon VmRSS after {SESSIONS} sessions × {FRAMES} worst-case 1 MiB frames | {:.1} MiB |",
        mib(after)
    );
    println!("| growth | {:.1} MiB |", mib(after.saturating_sub(before)));
}
