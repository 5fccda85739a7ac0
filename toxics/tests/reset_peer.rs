//! `reset_peer`: the connection ends with a TCP RST (`ECONNRESET`) and no data, which no other
//! toxic produces: timeout and limit_data end with a clean FIN.

mod common;

use common::*;
use toxics::ToxicSpec;
use toxics::toxic::ResetPeer;

/// The reply triggers the reset: the client reads `ECONNRESET` and no bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_reads_a_reset() {
    let origin = Origin::start(Mode::Reply(1000)).await;
    let (_server, proxy) = proxied(&origin).await;
    let _rst = proxy
        .inject(ToxicSpec::new(ResetPeer { timeout: 0 }))
        .await
        .unwrap();
    let out = probe(at(&proxy), REQUEST, PATIENCE).await;
    assert_eq!(out.end, End::Reset);
    assert!(out.bytes.is_empty());
}

/// With a timeout the reset comes no sooner than that after the first data.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_delays_the_reset() {
    let origin = Origin::start(Mode::Reply(1000)).await;
    let (_server, proxy) = proxied(&origin).await;
    let _rst = proxy
        .inject(ToxicSpec::new(ResetPeer { timeout: 300 }))
        .await
        .unwrap();
    let out = probe(at(&proxy), REQUEST, PATIENCE).await;
    assert_eq!(out.end, End::Reset);
    assert!(out.bytes.is_empty());
    at_least(out.ended_at.unwrap(), 300, "reset");
}

/// Upstream, the request triggers it: the origin is reset too and never sees the request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_reset_reaches_both_peers() {
    let origin = Origin::start(Mode::Sink).await;
    let (_server, proxy) = proxied(&origin).await;
    let _rst = proxy
        .inject(ToxicSpec::new(ResetPeer { timeout: 0 }).upstream())
        .await
        .unwrap();
    let out = probe(at(&proxy), REQUEST, PATIENCE).await;
    assert_eq!(out.end, End::Reset);
    let seen = origin.wait_finished(1).await;
    assert_eq!(seen[0].end, End::Reset);
    assert!(seen[0].bytes.is_empty());
}
