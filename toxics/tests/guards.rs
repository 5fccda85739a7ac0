//! The Rust API the harness uses: faults come back as guards that heal on drop.

mod common;

use std::time::Duration;

use common::*;
use toxics::toxic::{LimitData, Timeout};
use toxics::{ProxyConfig, Server, ToxicSpec};

/// Dropping a toxic guard removes the toxic: the API no longer lists it and the next
/// connection is whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_toxic_guard_heals() {
    let origin = Origin::start(Mode::Reply(1000)).await;
    let (_server, proxy) = proxied(&origin).await;
    let guard = proxy
        .inject(ToxicSpec::new(LimitData { bytes: 5 }))
        .await
        .unwrap();
    assert_eq!(guard.name(), "limit_data_downstream");
    assert_eq!(probe(at(&proxy), REQUEST, PATIENCE).await.bytes.len(), 5);
    drop(guard);
    assert!(proxy.toxics().is_empty());
    assert_eq!(probe(at(&proxy), REQUEST, PATIENCE).await.bytes.len(), 1000);
}

/// `forget` keeps the toxic installed on purpose.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forgotten_guard_leaves_the_toxic() {
    let origin = Origin::start(Mode::Reply(1000)).await;
    let (_server, proxy) = proxied(&origin).await;
    proxy
        .inject(ToxicSpec::new(LimitData { bytes: 5 }))
        .await
        .unwrap()
        .forget();
    assert_eq!(proxy.toxics().len(), 1);
    assert_eq!(probe(at(&proxy), REQUEST, PATIENCE).await.bytes.len(), 5);
}

/// A toxic removed behind the guard's back (by a reset) is still healed when the guard drops,
/// without error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guard_survives_a_reset() {
    let origin = Origin::start(Mode::Reply(10)).await;
    let (server, proxy) = proxied(&origin).await;
    let guard = proxy
        .inject(ToxicSpec::new(Timeout { timeout: 0 }))
        .await
        .unwrap();
    server.proxies().reset().unwrap().wait().await;
    drop(guard);
    assert_eq!(probe(at(&proxy), REQUEST, PATIENCE).await.bytes.len(), 10);
}

/// Down refuses new connections and cuts live ones; dropping the guard listens again on the
/// same address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_down_guard_refuses_then_restores() {
    let origin = Origin::start(Mode::Echo).await;
    let (_server, proxy) = proxied(&origin).await;
    let addr = at(&proxy);
    let mut live = tokio::net::TcpStream::connect(addr).await.unwrap();
    assert_eq!(exchange(&mut live, b"ping").await, b"ping");
    let down = proxy.down();
    assert!(!proxy.enabled());
    assert!(refused(addr).await);
    let cut = probe_on(&mut live, b"", PATIENCE).await;
    assert!(matches!(cut.end, End::Eof | End::Reset), "{cut:?}");
    drop(down);
    assert_eq!(proxy.listen_addr(), Some(addr));
    let out = probe(addr, b"pong", Duration::from_millis(500)).await;
    assert_eq!(out.bytes, b"pong");
}

/// `cut` closes live connections and keeps accepting new ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cut_closes_live_connections_only() {
    let origin = Origin::start(Mode::Echo).await;
    let (_server, proxy) = proxied(&origin).await;
    let mut live = tokio::net::TcpStream::connect(at(&proxy)).await.unwrap();
    assert_eq!(exchange(&mut live, b"one").await, b"one");
    proxy.cut();
    let cut = probe_on(&mut live, b"", PATIENCE).await;
    assert!(matches!(cut.end, End::Eof | End::Reset), "{cut:?}");
    let mut fresh = tokio::net::TcpStream::connect(at(&proxy)).await.unwrap();
    assert_eq!(exchange(&mut fresh, b"two").await, b"two");
}

/// Dropping the server stops the API and every proxy: both ports refuse.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_server_closes_everything() {
    let origin = Origin::start(Mode::Echo).await;
    let server = Server::start("127.0.0.1:0").await.unwrap();
    let api = server.addr();
    let proxy = server
        .proxies()
        .create(ProxyConfig::new("p", origin.addr))
        .unwrap();
    let listen = at(&proxy);
    drop(server);
    assert!(refused(listen).await);
    let api_gone = eventually(Duration::from_secs(5), || async {
        refused(api).await.then_some(())
    })
    .await;
    assert!(api_gone.is_some(), "the API still accepts connections");
}

/// The API binds loopback only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_refuses_a_non_loopback_address() {
    let err = Server::start("0.0.0.0:0").await.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
}
