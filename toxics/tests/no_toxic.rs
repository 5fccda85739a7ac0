//! The control: with no toxic the proxy is transparent. Every other toxic's test differs from
//! this one in the way its doc comment names.

mod common;

use common::*;

/// A reply arrives whole, in order, and ends with a clean FIN.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_passes_through_whole_and_ends_cleanly() {
    let origin = Origin::start(Mode::Reply(100_000)).await;
    let (_server, proxy) = proxied(&origin).await;
    let out = probe(at(&proxy), REQUEST, PATIENCE).await;
    assert_eq!(out.end, End::Eof);
    assert_eq!(out.bytes, pattern(100_000));
    let seen = origin.wait_finished(1).await;
    assert_eq!(seen[0].bytes, REQUEST);
}

/// Echo through the proxy: what goes up comes back down, byte for byte, and a half close from
/// the client reaches the origin and comes back as the end of the stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_echo_round_trips_and_a_half_close_is_passed_on() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let origin = Origin::start(Mode::Echo).await;
    let (_server, proxy) = proxied(&origin).await;
    let mut socket = tokio::net::TcpStream::connect(at(&proxy)).await.unwrap();
    let sent = pattern(300_000);
    let (mut rd, mut wr) = socket.split();
    let write = async {
        wr.write_all(&sent).await.unwrap();
        wr.shutdown().await.unwrap();
    };
    let mut back = Vec::new();
    let read = rd.read_to_end(&mut back);
    let ((), n) = tokio::join!(write, read);
    n.unwrap();
    assert_eq!(back, sent);
    let seen = origin.wait_finished(1).await;
    assert_eq!(seen[0].end, End::Eof);
    assert_eq!(seen[0].bytes.len(), sent.len());
}

/// Many connections at once each get their own bytes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_connections_do_not_mix() {
    let origin = Origin::start(Mode::Echo).await;
    let (_server, proxy) = proxied(&origin).await;
    let addr = at(&proxy);
    let mut tasks = Vec::new();
    for i in 0..20u8 {
        tasks.push(tokio::spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
            let msg = vec![i; 10_000];
            s.write_all(&msg).await.unwrap();
            s.shutdown().await.unwrap();
            let mut back = Vec::new();
            s.read_to_end(&mut back).await.unwrap();
            assert_eq!(back, msg);
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}
