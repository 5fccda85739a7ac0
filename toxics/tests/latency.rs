//! `latency`: the data is whole and the stream ends cleanly (unlike timeout, reset_peer and
//! limit_data), and the delay sits *before the first byte* (slow_close delays only the end;
//! bandwidth and slicer spread the data out instead).

mod common;

use common::*;
use toxics::ToxicSpec;
use toxics::toxic::Latency;

/// Downstream latency delays the reply by at least its setting and loses nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downstream_latency_delays_the_first_byte() {
    let origin = Origin::start(Mode::Reply(50_000)).await;
    let (_server, proxy) = proxied(&origin).await;
    let _slow = proxy
        .inject(ToxicSpec::new(Latency {
            latency: 300,
            jitter: 0,
        }))
        .await
        .unwrap();
    let out = probe(at(&proxy), REQUEST, PATIENCE).await;
    assert_eq!(out.end, End::Eof);
    assert_eq!(out.bytes, pattern(50_000));
    at_least(out.first_byte_at().unwrap(), 300, "first byte");
}

/// Upstream latency delays the request on its way to the origin, so the round trip is at least
/// as long, and the origin still receives the request intact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_latency_delays_the_request() {
    let origin = Origin::start(Mode::Reply(1000)).await;
    let (_server, proxy) = proxied(&origin).await;
    let _slow = proxy
        .inject(
            ToxicSpec::new(Latency {
                latency: 250,
                jitter: 0,
            })
            .upstream(),
        )
        .await
        .unwrap();
    let out = probe(at(&proxy), REQUEST, PATIENCE).await;
    assert_eq!(out.bytes, pattern(1000));
    at_least(out.first_byte_at().unwrap(), 250, "round trip");
    assert_eq!(origin.wait_finished(1).await[0].bytes, REQUEST);
}

/// Jitter never takes the delay below `latency - jitter`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jitter_keeps_within_its_lower_bound() {
    let origin = Origin::start(Mode::Reply(10)).await;
    let (_server, proxy) = proxied(&origin).await;
    let _slow = proxy
        .inject(ToxicSpec::new(Latency {
            latency: 200,
            jitter: 100,
        }))
        .await
        .unwrap();
    for _ in 0..3 {
        let out = probe(at(&proxy), REQUEST, PATIENCE).await;
        assert_eq!(out.bytes, pattern(10));
        at_least(out.first_byte_at().unwrap(), 100, "first byte with jitter");
    }
}

/// Two latency toxics on one direction add up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chained_latencies_add_up() {
    let origin = Origin::start(Mode::Reply(10)).await;
    let (_server, proxy) = proxied(&origin).await;
    let _a = proxy
        .inject(
            ToxicSpec::new(Latency {
                latency: 150,
                jitter: 0,
            })
            .name("a"),
        )
        .await
        .unwrap();
    let _b = proxy
        .inject(
            ToxicSpec::new(Latency {
                latency: 150,
                jitter: 0,
            })
            .name("b"),
        )
        .await
        .unwrap();
    let out = probe(at(&proxy), REQUEST, PATIENCE).await;
    assert_eq!(out.bytes, pattern(10));
    at_least(out.first_byte_at().unwrap(), 300, "two latencies");
}
