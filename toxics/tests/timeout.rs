//! `timeout`: *nothing* gets through. With a timeout the connection is then closed (a clean
//! end with zero bytes, unlike reset_peer's RST); with 0 it stays open and silent (a
//! blackhole), until the toxic is removed, which closes it.

mod common;

use std::time::Duration;

use common::*;
use toxics::ToxicSpec;
use toxics::toxic::Timeout;

/// No data, then a clean close no sooner than the timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_is_swallowed_then_the_connection_closes() {
    let origin = Origin::start(Mode::Reply(1000)).await;
    let (_server, proxy) = proxied(&origin).await;
    let _cut = proxy
        .inject(ToxicSpec::new(Timeout { timeout: 300 }))
        .await
        .unwrap();
    let out = probe(at(&proxy), REQUEST, PATIENCE).await;
    assert!(out.bytes.is_empty(), "{} bytes leaked", out.bytes.len());
    assert_eq!(out.end, End::Eof);
    at_least(out.ended_at.unwrap(), 300, "close");
}

/// Timeout 0 holds the connection open and silent; removing the toxic then closes it, because
/// the swallowed bytes can never be delivered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zero_is_a_blackhole_until_removed() {
    let origin = Origin::start(Mode::Reply(1000)).await;
    let (_server, proxy) = proxied(&origin).await;
    let hole = proxy
        .inject(ToxicSpec::new(Timeout { timeout: 0 }))
        .await
        .unwrap();
    let mut socket = tokio::net::TcpStream::connect(at(&proxy)).await.unwrap();
    let out = probe_on(&mut socket, REQUEST, Duration::from_millis(500)).await;
    assert_eq!(out.end, End::Silent);
    assert!(out.bytes.is_empty());
    // The origin did answer: the blackhole is downstream.
    assert_eq!(origin.wait_finished(1).await[0].bytes, REQUEST);

    hole.heal().await.unwrap();
    let after = probe_on(&mut socket, b"", PATIENCE).await;
    assert!(after.bytes.is_empty());
    assert_eq!(after.end, End::Eof);
}

/// Upstream, the origin never sees the request and the client never gets a reply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_timeout_keeps_the_request_from_the_origin() {
    let origin = Origin::start(Mode::Sink).await;
    let (_server, proxy) = proxied(&origin).await;
    let _cut = proxy
        .inject(ToxicSpec::new(Timeout { timeout: 200 }).upstream())
        .await
        .unwrap();
    let out = probe(at(&proxy), REQUEST, PATIENCE).await;
    assert_eq!(out.end, End::Eof);
    let seen = origin.wait_finished(1).await;
    assert!(seen[0].bytes.is_empty(), "origin got {:?}", seen[0].bytes);
}
