//! `slicer`: the data is whole, in order, and ends cleanly, but arrives in *many small
//! pieces* (latency keeps it in one block; bandwidth paces by rate, not by size).

mod common;

use common::*;
use toxics::ToxicSpec;
use toxics::toxic::Slicer;

/// 2000 bytes cut into ~100-byte pieces 10 ms apart reach the client in many reads, intact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_arrives_in_pieces() {
    let origin = Origin::start(Mode::Reply(2000)).await;
    let (_server, proxy) = proxied(&origin).await;
    let _sliced = proxy
        .inject(ToxicSpec::new(Slicer {
            average_size: 100,
            size_variation: 20,
            delay: 10_000,
        }))
        .await
        .unwrap();
    let out = probe(at(&proxy), REQUEST, PATIENCE).await;
    assert_eq!(out.end, End::Eof);
    assert_eq!(out.bytes, pattern(2000));
    assert!(
        out.reads.len() >= 4,
        "expected many reads, got {:?}",
        out.reads
    );
    assert!(
        out.reads.iter().all(|&(_, n)| n < 2000),
        "a read carried everything: {:?}",
        out.reads
    );
}

/// Upstream, the origin receives the request in pieces and intact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_slicing_keeps_the_request_whole() {
    let origin = Origin::start(Mode::Reply(10)).await;
    let (_server, proxy) = proxied(&origin).await;
    let _sliced = proxy
        .inject(
            ToxicSpec::new(Slicer {
                average_size: 3,
                size_variation: 1,
                delay: 1000,
            })
            .upstream(),
        )
        .await
        .unwrap();
    let out = probe(at(&proxy), REQUEST, PATIENCE).await;
    assert_eq!(out.bytes, pattern(10));
    assert_eq!(origin.wait_finished(1).await[0].bytes, REQUEST);
}
