//! `bandwidth`: the data is whole and ends cleanly, but arrives *spread out* over many reads
//! at the configured rate (latency delays it in one block; slicer cuts it fine but quickly
//! when its delay is small).

mod common;

use common::*;
use toxics::ToxicSpec;
use toxics::toxic::Bandwidth;

/// 6000 bytes at 10 KB/s take at least 600 ms and come in several pieces.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_is_paced_at_the_rate() {
    let origin = Origin::start(Mode::Reply(6000)).await;
    let (_server, proxy) = proxied(&origin).await;
    let _narrow = proxy
        .inject(ToxicSpec::new(Bandwidth { rate: 10 }))
        .await
        .unwrap();
    let out = probe(at(&proxy), REQUEST, PATIENCE).await;
    assert_eq!(out.end, End::Eof);
    assert_eq!(out.bytes, pattern(6000));
    at_least(out.last_byte_at().unwrap(), 600, "last byte");
    assert!(
        out.reads.len() >= 3,
        "expected a paced stream, got {:?}",
        out.reads
    );
}

/// Upstream, the origin receives the request no faster than the rate allows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_bandwidth_paces_the_request() {
    let origin = Origin::start(Mode::Reply(10)).await;
    let (_server, proxy) = proxied(&origin).await;
    let _narrow = proxy
        .inject(ToxicSpec::new(Bandwidth { rate: 1 }).upstream())
        .await
        .unwrap();
    // 400 bytes at 1 KB/s: 400 ms.
    let mut request = vec![b'x'; 399];
    request.push(b'\n');
    let out = probe(at(&proxy), &request, PATIENCE).await;
    assert_eq!(out.bytes, pattern(10));
    at_least(out.first_byte_at().unwrap(), 400, "round trip");
    assert_eq!(origin.wait_finished(1).await[0].bytes, request);
}

/// Rate 0 means unlimited: the control case of this toxic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_zero_is_unlimited() {
    let origin = Origin::start(Mode::Reply(200_000)).await;
    let (_server, proxy) = proxied(&origin).await;
    let _open = proxy
        .inject(ToxicSpec::new(Bandwidth { rate: 0 }))
        .await
        .unwrap();
    let out = probe(at(&proxy), REQUEST, PATIENCE).await;
    assert_eq!(out.end, End::Eof);
    assert_eq!(out.bytes, pattern(200_000));
}
