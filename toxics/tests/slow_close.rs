//! `slow_close`: the data arrives whole and promptly, and the *end* of the stream is held back
//! (latency delays the data itself; timeout and limit_data cut it).

mod common;

use common::*;
use toxics::ToxicSpec;
use toxics::toxic::SlowClose;

/// The FIN comes at least `delay` after the last byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_end_lags_the_data() {
    let origin = Origin::start(Mode::Reply(20_000)).await;
    let (_server, proxy) = proxied(&origin).await;
    let _lingering = proxy
        .inject(ToxicSpec::new(SlowClose { delay: 400 }))
        .await
        .unwrap();
    let out = probe(at(&proxy), REQUEST, PATIENCE).await;
    assert_eq!(out.end, End::Eof);
    assert_eq!(out.bytes, pattern(20_000));
    let gap = out.ended_at.unwrap() - out.last_byte_at().unwrap();
    at_least(gap, 400, "gap between the last byte and the end");
}

/// Upstream, the origin's end of the request is what lags: the client's half close reaches the
/// origin late, while the data reached it at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_slow_close_delays_the_client_half_close() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let origin = Origin::start(Mode::Echo).await;
    let (_server, proxy) = proxied(&origin).await;
    let _lingering = proxy
        .inject(ToxicSpec::new(SlowClose { delay: 300 }).upstream())
        .await
        .unwrap();
    let mut s = tokio::net::TcpStream::connect(at(&proxy)).await.unwrap();
    s.write_all(b"hello").await.unwrap();
    let mut echo = [0u8; 5];
    s.read_exact(&mut echo).await.unwrap();
    assert_eq!(&echo, b"hello");
    let closed_at = tokio::time::Instant::now();
    s.shutdown().await.unwrap();
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).await.unwrap();
    assert!(rest.is_empty());
    at_least(closed_at.elapsed(), 300, "half close round trip");
}
