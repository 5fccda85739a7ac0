//! `bench-bridge`: the bridge's performance figures for `docs/benchmarks.md`: command round trip
//! ([`round_trip`]), lossless event ingest ([`ingest`]) and daemon memory ([`memory`]). It
//! measures and prints; it must not judge a row or retry a sample.
//!
//! Run: `cargo build --release --bins && RETICLE_BIN=target/release/reticle \
//!       target/release/bench-bridge`

use std::time::{Duration, Instant};

use harness::wire_page::{self, echo_responder};
use harness::{BridgeClient, Browser, FixtureApp, OwnedDaemon, WirePage, poll};
use serde_json::{Value, json};

const BOUND: Duration = Duration::from_secs(60);
const ORIGIN: Option<&str> = Some("http://127.0.0.1:1");
/// Blocks per recording state in a round-trip measurement (500 samples each in all).
const BLOCKS: usize = 5;

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Command round trip daemon → SDK → daemon for `query` on the fixture app in Chromium, as the
/// daemon measures it (command out to result in). Taken with the tab's DevTools network
/// recording on (chromiumoxide leaves it on, so Chromium copies every WebSocket frame into a
/// DevTools event) and off (a browser without DevTools), alternating in blocks so that load
/// drift hits both alike.
async fn round_trip() {
    let daemon = OwnedDaemon::start().await;
    let client = BridgeClient::new(daemon.port());
    let app = FixtureApp::start().await;
    let browser = Browser::launch().await.expect("chromium launches");
    let url = app.url(&format!(
        "/?reticlePort={}&reticleToken={}&session=bench",
        daemon.port(),
        daemon.token()
    ));
    let tab = browser.open(&url).await.expect("the fixture opens");
    poll::until("the fixture's session", BOUND, async || {
        client.session("bench").await.map(|_| ())
    })
    .await;
    for (what, name, args) in [
        (
            "query {role: button, name: Sign in}",
            "query",
            json!({"role": "button", "name": "Sign in"}),
        ),
        (
            "query {testid: login-submit}",
            "query",
            json!({"testid": "login-submit"}),
        ),
        (
            "an unknown command (transport floor: the SDK refuses at once)",
            "nope",
            json!({}),
        ),
    ] {
        warm_up(&client, "bench", name, &args).await;
        let (mut recorded, mut unrecorded) = (Vec::new(), Vec::new());
        for _ in 0..BLOCKS {
            for (on, samples) in [(true, &mut recorded), (false, &mut unrecorded)] {
                tab.set_network_recording(on)
                    .await
                    .expect("devtools network recording switches");
                samples.extend(sample(&client, "bench", name, &args, 500 / BLOCKS).await);
            }
        }
        for (how, samples) in [("on", recorded), ("off", unrecorded)] {
            report(
                &format!("{what}, fixture app in Chromium, DevTools network recording {how}"),
                samples,
            );
        }
    }
    browser.close().await;
    // The daemon's own share: a raw protocol 1 client answering from Rust, no browser.
    let page = WirePage::open_with(daemon.port(), ORIGIN, Some(echo_responder()))
        .await
        .unwrap();
    page.hello("echo", Some(&daemon.token())).await;
    poll::until("the echo page", BOUND, async || {
        client.session("echo").await.map(|_| ())
    })
    .await;
    let args = json!({"role": "button"});
    warm_up(&client, "echo", "query", &args).await;
    let samples = sample(&client, "echo", "query", &args, 500).await;
    report(
        "query answered by a Rust echo client (daemon and WebSocket only)",
        samples,
    );
}

async fn warm_up(client: &BridgeClient, session: &str, name: &str, args: &Value) {
    for _ in 0..50 {
        client
            .command(Some(session), name, args.clone(), None)
            .await;
    }
}

/// `n` round trips, in the order they were taken.
async fn sample(
    client: &BridgeClient,
    session: &str,
    name: &str,
    args: &Value,
    n: usize,
) -> Vec<u64> {
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let answer = client
            .command(Some(session), name, args.clone(), None)
            .await;
        assert_eq!(answer["outcome"], "answered", "{answer}");
        samples.push(answer["roundTripUs"].as_u64().unwrap());
    }
    samples
}

fn report(what: &str, mut samples: Vec<u64>) {
    samples.sort_unstable();
    println!(
        "round trip daemon->page->daemon, {what}: median {} us, p95 {} us, p99 {} us, max {} us ({} samples after 50 warm-up)",
        percentile(&samples, 0.5),
        percentile(&samples, 0.95),
        percentile(&samples, 0.99),
        samples.last().unwrap(),
        samples.len()
    );
}

/// Events per second one page pushes into the bridge without loss: a raw protocol 1 client
/// bursting with the rate cap lifted (`cap`), or paced at `pace_per_sec` under the default cap
/// (at 25,000 events/s it must drop nothing).
async fn ingest(cap: Option<&str>, total: usize, pace_per_sec: Option<u64>) -> (f64, Value) {
    let mut builder = OwnedDaemon::builder();
    if let Some(cap) = cap {
        builder = builder.env(reticle::config::env::MAX_EVENTS_PER_SECOND, cap);
    }
    let daemon = builder.start().await;
    let client = BridgeClient::new(daemon.port());
    let page = WirePage::open(daemon.port(), ORIGIN).await.unwrap();
    page.hello("ingest", Some(&daemon.token())).await;
    poll::until("the page", BOUND, async || {
        client.session("ingest").await.map(|_| ())
    })
    .await;
    let frames: Vec<String> = (0..total)
        .map(|i| {
            wire_page::event(
                "ingest",
                "dom.text",
                json!({ "text": format!("row {i} changed") }),
            )
            .to_string()
        })
        .collect();
    let started = Instant::now();
    match pace_per_sec {
        None => {
            page.send_burst(frames).await;
        }
        Some(rate) => {
            // Batches of rate/100 every 10 ms.
            let batch = (rate / 100) as usize;
            let mut ticks = tokio::time::interval(Duration::from_millis(10));
            for chunk in frames.chunks(batch) {
                ticks.tick().await;
                page.send_burst(chunk.to_vec()).await;
            }
        }
    }
    let counters = poll::until("every event counted", BOUND, async || {
        let c = client.session("ingest").await?["counters"].clone();
        let seen = c["eventsStored"].as_u64()? + c["eventsDropped"].as_u64()?;
        (seen == total as u64).then_some(c)
    })
    .await;
    let elapsed = started.elapsed().as_secs_f64();
    (total as f64 / elapsed, counters)
}

/// Daemon resident memory, idle and with 32 sessions connected.
async fn memory() {
    let daemon = OwnedDaemon::start().await;
    let client = BridgeClient::new(daemon.port());
    let idle = rss_kib(daemon.pid());
    let mut pages = Vec::new();
    for i in 0..32 {
        let page = WirePage::open_with(daemon.port(), ORIGIN, Some(echo_responder()))
            .await
            .unwrap();
        page.hello(&format!("m{i}"), Some(&daemon.token())).await;
        let frames = (0..2000).map(|n| {
            wire_page::event(
                &format!("m{i}"),
                "dom.text",
                json!({ "text": format!("row {n} of page {i}") }),
            )
            .to_string()
        });
        pages.push(page);
        pages.last().unwrap().send_burst(frames).await;
    }
    poll::until("32 sessions with full buffers", BOUND, async || {
        let sessions = client.session_list().await;
        (sessions.len() == 32
            && sessions
                .iter()
                .all(|s| s["counters"]["eventsStored"] == 2000))
        .then_some(())
    })
    .await;
    let loaded = rss_kib(daemon.pid());
    println!(
        "daemon resident memory: idle {idle} KiB; 32 sessions connected, each with a full 2000-event buffer: {loaded} KiB"
    );
}

#[tokio::main]
async fn main() {
    println!(
        "bench-bridge on {} cores; reticle binary: {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        harness::binaries::reticle().display()
    );
    round_trip().await;
    let (rate, counters) = ingest(Some("1000000000"), 200_000, None).await;
    println!(
        "ingest, one page bursting 200000 events, rate cap lifted: {rate:.0} events/s (stored {}, dropped {})",
        counters["eventsStored"], counters["eventsDropped"]
    );
    let (rate, counters) = ingest(None, 100_000, Some(25_000)).await;
    println!(
        "ingest, one page paced at 25000 events/s for 4 s under the default cap: {rate:.0} events/s (stored {}, dropped {})",
        counters["eventsStored"], counters["eventsDropped"]
    );
    memory().await;
}
