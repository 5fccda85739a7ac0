//! Upstream and downstream are independent chains: a toxic disturbs only its own direction.

mod common;

use common::*;
use toxics::toxic::LimitData;
use toxics::{Direction, ToxicSpec};

/// Downstream limit: the origin gets the whole request, the client a cut reply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downstream_disturbs_only_the_reply() {
    let origin = Origin::start(Mode::Reply(1000)).await;
    let (_server, proxy) = proxied(&origin).await;
    let _cap = proxy
        .inject(ToxicSpec::new(LimitData { bytes: 10 }).stream(Direction::Downstream))
        .await
        .unwrap();
    let mut request = pattern(200);
    request.push(b'\n');
    let out = probe(at(&proxy), &request, PATIENCE).await;
    assert_eq!(out.bytes, pattern(10));
    assert_eq!(origin.wait_finished(1).await[0].bytes, request);
}

/// Upstream limit: the origin gets a cut request; the client's reply is not cut by it (the
/// origin never saw a full line, so there is no reply, and the connection just ends).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_disturbs_only_the_request() {
    let origin = Origin::start(Mode::Sink).await;
    let (_server, proxy) = proxied(&origin).await;
    let _cap = proxy
        .inject(ToxicSpec::new(LimitData { bytes: 10 }).stream(Direction::Upstream))
        .await
        .unwrap();
    let out = probe(at(&proxy), &pattern(200), PATIENCE).await;
    assert!(out.bytes.is_empty());
    assert_eq!(origin.wait_finished(1).await[0].bytes, pattern(10));
}

/// Toxics on both directions at once each do their part.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_directions_at_once() {
    let origin = Origin::start(Mode::Echo).await;
    let (_server, proxy) = proxied(&origin).await;
    let _up = proxy
        .inject(ToxicSpec::new(LimitData { bytes: 100 }).upstream())
        .await
        .unwrap();
    let _down = proxy
        .inject(ToxicSpec::new(LimitData { bytes: 30 }))
        .await
        .unwrap();
    let out = probe(at(&proxy), &pattern(50), PATIENCE).await;
    assert_eq!(out.bytes, pattern(30));
    assert_eq!(proxy.toxics().len(), 2);
}
