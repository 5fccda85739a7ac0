//! Benchmark of the daemon's lifecycle hop (hop 3): `reticle serve` until `/status` answers with
//! the new instance, the `/status` round trip on loopback, and an idle daemon's resident memory.
//! Run with `cargo run --release -p gates --bin bench-daemon`; prints a Markdown table.

use std::time::{Duration, Instant};

use harness::{OwnedDaemon, cli, free_port};

const SERVE_RUNS: usize = 30;
const STATUS_CALLS: usize = 5000;

#[tokio::main]
async fn main() {
    let serve = serve_to_status().await;
    let daemon = OwnedDaemon::start().await;
    let status = status_round_trip(daemon.port()).await;
    let rss = resident_kib(daemon.pid());
    println!("| measure | median | p99 | runs |");
    println!("| --- | --- | --- | --- |");
    println!(
        "| `reticle serve` to its own `/status` answer | {:.2} ms | {:.2} ms | {SERVE_RUNS} |",
        ms(percentile(&serve, 50.0)),
        ms(percentile(&serve, 99.0))
    );
    println!(
        "| `/status` round trip (keep-alive, loopback) | {:.3} ms | {:.3} ms | {STATUS_CALLS} |",
        ms(percentile(&status, 50.0)),
        ms(percentile(&status, 99.0))
    );
    println!(
        "| idle daemon resident memory (after {STATUS_CALLS} requests) | {:.1} MiB | | 1 |",
        rss as f64 / 1024.0
    );
}

async fn serve_to_status() -> Vec<Duration> {
    let mut samples = Vec::with_capacity(SERVE_RUNS);
    for _ in 0..SERVE_RUNS {
        let state = tempfile::tempdir().expect("state dir");
        let port = free_port().to_string();
        let started = Instant::now();
        let ran = cli::run(state.path(), &["serve", "--port", &port]).await;
        let took = started.elapsed();
        assert!(ran.ok(), "serve failed: {ran:?}");
        samples.push(took);
        let stop = cli::run(state.path(), &["stop", "--port", &port]).await;
        assert!(stop.ok(), "stop failed: {stop:?}");
    }
    samples
}

async fn status_round_trip(port: u16) -> Vec<Duration> {
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    let url = format!("http://127.0.0.1:{port}/status");
    let mut samples = Vec::with_capacity(STATUS_CALLS);
    for _ in 0..STATUS_CALLS {
        let started = Instant::now();
        let body = client.get(&url).send().await.expect("answer").bytes().await;
        samples.push(started.elapsed());
        assert!(body.is_ok());
    }
    samples
}

fn resident_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn percentile(samples: &[Duration], p: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
