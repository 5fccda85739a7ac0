//! Live reconfiguration: adding, updating and removing toxics on connections that are moving
//! data never drops, repeats or reorders a byte (the toxics are interrupted and resumed, and
//! whatever they held is handed on).

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toxics::toxic::{Bandwidth, Latency, Slicer, SlowClose};
use toxics::{ToxicPatch, ToxicSpec};

/// Stream through an echo, without pause, for as long as toxics come and go on both
/// directions (30 rounds of add, update, remove); the echo must equal what was sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn churning_toxics_lose_no_bytes() {
    let origin = Origin::start(Mode::Echo).await;
    let (_server, proxy) = proxied(&origin).await;
    let socket = tokio::net::TcpStream::connect(at(&proxy)).await.unwrap();
    let (mut rd, mut wr) = socket.into_split();
    let stop = Arc::new(AtomicBool::new(false));
    let stop_writing = stop.clone();
    let written = Arc::new(AtomicUsize::new(0));
    let progress = written.clone();
    let writer = tokio::spawn(async move {
        let block = pattern(251 * 16);
        let mut sent = 0usize;
        while !stop_writing.load(Ordering::Relaxed) {
            wr.write_all(&block).await.unwrap();
            sent += block.len();
            progress.store(sent, Ordering::Relaxed);
        }
        wr.shutdown().await.unwrap();
        sent
    });
    let reader = tokio::spawn(async move {
        let mut back = Vec::new();
        rd.read_to_end(&mut back).await.unwrap();
        back
    });

    let churn = async {
        // At least 30 rounds, and on until a few megabytes have crossed while churning (on a
        // loaded machine the writer may start late).
        let mut round = 0u64;
        while round < 30 || written.load(Ordering::Relaxed) < 4_000_000 {
            round += 1;
            assert!(round < 100_000, "the writer never got going");
            let specs = [
                ToxicSpec::new(Latency {
                    latency: 5 + round % 3,
                    jitter: 2,
                })
                .name("lat_down"),
                ToxicSpec::new(Slicer {
                    average_size: 700,
                    size_variation: 200,
                    delay: 100,
                })
                .upstream()
                .name("slice_up"),
                ToxicSpec::new(Bandwidth { rate: 20_000 }).name("bw_down"),
                ToxicSpec::new(SlowClose { delay: 1 })
                    .upstream()
                    .name("close_up"),
            ];
            let mut guards = Vec::new();
            for spec in specs {
                guards.push(proxy.inject(spec).await.unwrap());
            }
            proxy
                .update_toxic(
                    "lat_down",
                    ToxicPatch {
                        attributes: serde_json::json!({"latency": 1}),
                        toxicity: None,
                    },
                )
                .unwrap()
                .1
                .wait()
                .await;
            // Remove them in an order that takes middle stages out of the chain.
            guards.swap(0, 2);
            for g in guards {
                g.heal().await.unwrap();
            }
        }
    };
    churn.await;
    stop.store(true, Ordering::Relaxed);
    let sent = writer.await.unwrap();
    let back = tokio::time::timeout(Duration::from_secs(60), reader)
        .await
        .expect("the echo finished")
        .unwrap();
    assert_eq!(back.len(), sent);
    assert!(
        back == pattern(sent),
        "the echoed stream differs from what was sent"
    );
    assert!(
        sent > 1_000_000,
        "too little data moved to prove much: {sent}"
    );
}

/// Removing a latency toxic while it holds data delivers that data at once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_latency_releases_what_it_held() {
    let origin = Origin::start(Mode::Echo).await;
    let (_server, proxy) = proxied(&origin).await;
    let mut socket = tokio::net::TcpStream::connect(at(&proxy)).await.unwrap();
    let slow = proxy
        .inject(ToxicSpec::new(Latency {
            latency: 60_000,
            jitter: 0,
        }))
        .await
        .unwrap();
    socket.write_all(b"held back").await.unwrap();
    // Nothing comes back for a while: the echo is sitting in the latency stage.
    let mut buf = [0u8; 9];
    let early = tokio::time::timeout(Duration::from_millis(200), socket.read(&mut buf)).await;
    assert!(early.is_err(), "latency let data through early");
    slow.heal().await.unwrap();
    socket.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf, b"held back");
}
