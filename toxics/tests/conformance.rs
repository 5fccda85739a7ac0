//! Conformance through the `toxiproxy_rust` client (0.1.6), the client the harness drives.
//!
//! One scenario body runs against the embedded server and, when `TOXIPROXY_URL` is set (for
//! example `http://127.0.0.1:8474`), against that server too, so a difference between our
//! proxy and a real Toxiproxy shows up as a failing arm. The client is blocking (reqwest's
//! blocking client), so these are plain tests that own a runtime for the origin and the
//! embedded server, and call the client from the test thread.
//!
//! The client has no `reset_peer` helper; that toxic is covered through the REST API tests.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::*;
use tokio::runtime::Runtime;
use toxiproxy_rust::client::Client;
use toxiproxy_rust::proxy::ProxyPack;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The whole scenario, against the server at `api` (host:port).
fn scenario(rt: &Runtime, api: &str, origin: SocketAddr, tag: &str) {
    let client = Client::new(api);
    assert!(client.is_running(), "{tag}: server not reachable at {api}");
    let version = client.version().expect("version");
    assert!(!version.is_empty(), "{tag}: empty version");

    let name = format!("reticle_conformance_{tag}");
    let proxies = client
        .populate(vec![ProxyPack::new(
            name.clone(),
            "127.0.0.1:0".into(),
            origin.to_string(),
        )])
        .expect("populate");
    assert_eq!(proxies.len(), 1, "{tag}: populate returned {proxies:?}");
    let listen: SocketAddr = proxies[0]
        .proxy_pack
        .listen
        .parse()
        .expect("a listen address");
    assert_ne!(listen.port(), 0, "{tag}: populate reports the real port");
    assert!(proxies[0].proxy_pack.enabled);

    let proxy = client.find_and_reset_proxy(&name).expect("find and reset");
    let whole = rt.block_on(probe(listen, REQUEST, PATIENCE));
    assert_eq!(whole.bytes, pattern(1000), "{tag}: control");
    assert_eq!(whole.end, End::Eof, "{tag}: control end");

    // latency: the first byte waits.
    proxy.with_latency("downstream".into(), 300, 0, 1.0);
    let toxics = proxy.toxics().expect("list toxics");
    assert_eq!(toxics.len(), 1, "{tag}: {toxics:?}");
    assert_eq!(toxics[0].name, "latency_downstream");
    assert_eq!(toxics[0].r#type, "latency");
    assert_eq!(toxics[0].stream, "downstream");
    assert_eq!(toxics[0].attributes.get("latency"), Some(&300));
    let out = rt.block_on(probe(listen, REQUEST, PATIENCE));
    assert_eq!(out.bytes, pattern(1000), "{tag}: latency keeps data");
    at_least(
        out.first_byte_at().unwrap(),
        300,
        "latency through the client",
    );
    proxy.delete_all_toxics().expect("delete toxics");
    assert!(proxy.toxics().unwrap().is_empty());

    // limit_data, through the client's apply(): the toxic is removed afterwards.
    proxy
        .with_limit_data("downstream".into(), 10, 1.0)
        .apply(|| {
            let out = rt.block_on(probe(listen, REQUEST, PATIENCE));
            assert_eq!(out.bytes, pattern(10), "{tag}: limit_data");
        })
        .expect("apply");
    assert!(
        proxy.toxics().unwrap().is_empty(),
        "{tag}: apply cleaned up"
    );

    // bandwidth, slicer, slow_close: data whole, shaped.
    proxy
        .with_bandwidth("downstream".into(), 5, 1.0)
        .apply(|| {
            let out = rt.block_on(probe(listen, REQUEST, PATIENCE));
            assert_eq!(out.bytes, pattern(1000), "{tag}: bandwidth keeps data");
            at_least(
                out.last_byte_at().unwrap(),
                200,
                "bandwidth through the client",
            );
        })
        .expect("apply");
    proxy
        .with_slicer("downstream".into(), 50, 10, 5000, 1.0)
        .apply(|| {
            let out = rt.block_on(probe(listen, REQUEST, PATIENCE));
            assert_eq!(out.bytes, pattern(1000), "{tag}: slicer keeps data");
            assert!(out.reads.len() >= 2, "{tag}: slicer {:?}", out.reads);
        })
        .expect("apply");
    proxy
        .with_slow_close("downstream".into(), 300, 1.0)
        .apply(|| {
            let out = rt.block_on(probe(listen, REQUEST, PATIENCE));
            assert_eq!(out.bytes, pattern(1000), "{tag}: slow_close keeps data");
            assert_eq!(out.end, End::Eof);
            at_least(
                out.ended_at.unwrap() - out.last_byte_at().unwrap(),
                300,
                "slow_close through the client",
            );
        })
        .expect("apply");

    // timeout: nothing arrives, then the connection closes.
    proxy
        .with_timeout("downstream".into(), 300, 1.0)
        .apply(|| {
            let out = rt.block_on(probe(listen, REQUEST, PATIENCE));
            assert!(out.bytes.is_empty(), "{tag}: timeout leaked data");
            at_least(
                out.ended_at.expect("it closes"),
                300,
                "timeout through the client",
            );
        })
        .expect("apply");

    // toxicity 0: installed but never applied.
    proxy.with_limit_data("downstream".into(), 10, 0.0);
    let out = rt.block_on(probe(listen, REQUEST, PATIENCE));
    assert_eq!(out.bytes, pattern(1000), "{tag}: toxicity 0");

    // reset clears toxics (and re-enables).
    client.reset().expect("reset");
    assert!(
        proxy.toxics().unwrap().is_empty(),
        "{tag}: reset removes toxics"
    );

    // down: refused inside the closure, back afterwards.
    proxy
        .with_down(|| {
            assert!(rt.block_on(refused(listen)), "{tag}: a down proxy refuses");
        })
        .expect("with_down");
    let out = rt.block_on(probe(listen, REQUEST, PATIENCE));
    assert_eq!(out.bytes, pattern(1000), "{tag}: back up after down");

    let all = client.all().expect("all proxies");
    assert!(all.contains_key(&name), "{tag}: all() lists the proxy");
    assert_eq!(all[&name].proxy_pack.upstream, origin.to_string());

    proxy.delete().expect("delete");
    assert!(client.find_proxy(&name).is_err(), "{tag}: deleted");
    let gone = rt.block_on(eventually(Duration::from_secs(5), || async {
        refused(listen).await.then_some(())
    }));
    assert!(gone.is_some(), "{tag}: a deleted proxy stops listening");
}

/// The embedded server, driven by the Toxiproxy client.
#[test]
fn the_toxiproxy_client_drives_the_embedded_server() {
    let rt = runtime();
    let origin = rt.block_on(Origin::start(Mode::Reply(1000)));
    let server = rt.block_on(toxics::Server::start("127.0.0.1:0")).unwrap();
    scenario(&rt, &server.addr().to_string(), origin.addr, "embedded");
    drop(server);
}

/// The same scenario against a real Toxiproxy, when `TOXIPROXY_URL` names one.
#[test]
fn the_same_scenario_holds_on_a_real_toxiproxy() {
    let Ok(url) = std::env::var("TOXIPROXY_URL") else {
        eprintln!("TOXIPROXY_URL is not set: the real-Toxiproxy arm did not run");
        return;
    };
    let api = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let rt = runtime();
    let origin = rt.block_on(Origin::start(Mode::Reply(1000)));
    scenario(&rt, &api, origin.addr, "real");
}
