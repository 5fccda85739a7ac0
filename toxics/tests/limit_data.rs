//! `limit_data`: exactly the first `bytes` bytes arrive, then a clean close (timeout lets none
//! through, reset_peer ends with an RST, the others deliver everything).

mod common;

use common::*;
use toxics::ToxicSpec;
use toxics::toxic::LimitData;

/// The client gets exactly the first 100 bytes of a 4096-byte reply, then the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reply_is_cut_at_the_limit() {
    let origin = Origin::start(Mode::Reply(4096)).await;
    let (_server, proxy) = proxied(&origin).await;
    let _cap = proxy
        .inject(ToxicSpec::new(LimitData { bytes: 100 }))
        .await
        .unwrap();
    let out = probe(at(&proxy), REQUEST, PATIENCE).await;
    assert_eq!(out.bytes, pattern(100));
    assert_eq!(out.end, End::Eof);
}

/// The count is per connection: a second connection gets its own 100 bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_connection_has_its_own_allowance() {
    let origin = Origin::start(Mode::Reply(4096)).await;
    let (_server, proxy) = proxied(&origin).await;
    let _cap = proxy
        .inject(ToxicSpec::new(LimitData { bytes: 100 }))
        .await
        .unwrap();
    for _ in 0..2 {
        let out = probe(at(&proxy), REQUEST, PATIENCE).await;
        assert_eq!(out.bytes, pattern(100));
    }
}

/// Upstream, the origin receives exactly the first bytes of the request, then the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_limit_cuts_the_request() {
    let origin = Origin::start(Mode::Sink).await;
    let (_server, proxy) = proxied(&origin).await;
    let _cap = proxy
        .inject(ToxicSpec::new(LimitData { bytes: 10 }).upstream())
        .await
        .unwrap();
    let request = pattern(1000);
    let out = probe(at(&proxy), &request, PATIENCE).await;
    assert_eq!(out.end, End::Eof);
    let seen = origin.wait_finished(1).await;
    assert_eq!(seen[0].bytes, pattern(10));
}
