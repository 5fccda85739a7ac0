//! Toxicity: the chance a connection gets a toxic, rolled once per connection from the seeded
//! generator. 0 never applies, 1 always does, and a fixed seed gives the same connections the
//! same fate on every run.

mod common;

use common::*;
use toxics::ToxicSpec;
use toxics::toxic::LimitData;

/// Which of `n` sequential connections were cut by a limit_data toxic of this toxicity.
async fn fates(seed: u64, toxicity: f32, n: usize) -> Vec<bool> {
    let origin = Origin::start(Mode::Reply(1000)).await;
    let (_server, proxy) = proxied_with_seed(&origin, seed).await;
    let _cap = proxy
        .inject(ToxicSpec::new(LimitData { bytes: 10 }).toxicity(toxicity))
        .await
        .unwrap();
    let mut cut = Vec::with_capacity(n);
    for _ in 0..n {
        let out = probe(at(&proxy), REQUEST, PATIENCE).await;
        match out.bytes.len() {
            10 => cut.push(true),
            1000 => cut.push(false),
            other => panic!("a connection got {other} bytes"),
        }
    }
    cut
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn toxicity_zero_never_applies() {
    assert!(fates(1, 0.0, 20).await.iter().all(|&cut| !cut));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn toxicity_one_always_applies() {
    assert!(fates(1, 1.0, 20).await.iter().all(|&cut| cut));
}

/// Half the connections, roughly, and the very same ones again with the same seed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixed_seed_replays_the_same_fates() {
    let first = fates(7, 0.5, 30).await;
    let again = fates(7, 0.5, 30).await;
    assert_eq!(first, again);
    let hits = first.iter().filter(|&&c| c).count();
    assert!(
        hits > 0 && hits < 30,
        "0.5 should split 30 connections: {first:?}"
    );
}

/// The roll is kept per connection, so raising toxicity on a live connection reaches it: an
/// open connection that missed at 0 is hit after an update to 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raising_toxicity_reaches_live_connections() {
    let origin = Origin::start(Mode::Echo).await;
    let (_server, proxy) = proxied(&origin).await;
    let _cap = proxy
        .inject(ToxicSpec::new(LimitData { bytes: 4 }).toxicity(0.0))
        .await
        .unwrap();
    let mut socket = tokio::net::TcpStream::connect(at(&proxy)).await.unwrap();
    let before = probe_on(
        &mut socket,
        b"abcdefgh",
        std::time::Duration::from_millis(300),
    )
    .await;
    assert_eq!(before.bytes, b"abcdefgh");
    proxy
        .update_toxic(
            "limit_data_downstream",
            toxics::ToxicPatch {
                attributes: serde_json::Value::Null,
                toxicity: Some(1.0),
            },
        )
        .unwrap()
        .1
        .wait()
        .await;
    let after = probe_on(&mut socket, b"ijklmnop", PATIENCE).await;
    assert_eq!(after.bytes, b"ijkl");
    assert_eq!(after.end, End::Eof);
}
