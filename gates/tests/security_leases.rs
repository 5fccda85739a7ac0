//! Leases through the real stack: two real `reticle mcp` processes (two agents) on one daemon,
//! the fixture app in Chromium. A held lease refuses the other agent's act naming the holder and
//! the expiry, reads stay open, release frees it, an expired lease (a short TTL, waited by
//! polling) frees it, the holder's `reticle mcp` exiting frees it, and a reconnect of the holder's
//! link (its worker killed, the daemon alive) keeps it. Negative control: the stand-in daemon
//! that ignores leases (`RETICLE_TEST_STAND_IN_IGNORE_LEASES`) lets the second act through, so
//! the refusal check (S12's, `gates::scenarios::leases`) goes red.

mod support;

use gates::rows::security::s12_leases::refusal_names_the_holder;
use harness::mcp_client::worker_of;
use harness::{McpClient, ProxyOptions, Tab, poll};
use reticle::config::env;
use serde_json::{Value, json};
use support::tools::{BOUND, ToolRig, assert_structured_refusal};

const CLICK: &str = r#"{"target": {"testid": "counter-increment"}, "action": "click"}"#;

fn click() -> Value {
    serde_json::from_str(CLICK).unwrap()
}

/// The rig (its own client is agent A) with `env` on the daemon, and agent B: a second
/// `reticle mcp` on the same daemon.
async fn two_agents(env: &[(&str, &str)]) -> (ToolRig, McpClient) {
    let mut env = env.to_vec();
    env.push(("RETICLE_ADVERTISE_ALL_TOOLS", "1"));
    let rig = ToolRig::start(&env).await;
    let b = McpClient::start(ProxyOptions::new(rig.daemon.port(), rig.daemon.state_dir()))
        .await
        .expect("a second reticle mcp starts");
    (rig, b)
}

/// Agent B's call on `session`: the whole result.
async fn b_call(b: &McpClient, tool: &str, session: &str, mut args: Value) -> Value {
    args["sessionId"] = json!(session);
    b.call_tool(tool, args)
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e:?}"))
}

/// The lease `reticle_sessions` (asked by `b`) shows on `session`.
async fn lease_shown(b: &McpClient, session: &str) -> Value {
    let listed = b
        .call_tool("reticle_sessions", json!({}))
        .await
        .expect("reticle_sessions answers");
    listed["structuredContent"]["sessions"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["sessionId"] == session))
        .map(|s| s["lease"].clone())
        .unwrap_or_else(|| panic!("{session} listed: {listed}"))
}

/// [`two_agents`] with the fixture app open as `session`, which A has leased by its page URL:
/// the rig, B, the tab, and A's agent id.
async fn leased_by_a(env: &[(&str, &str)], session: &str) -> (ToolRig, McpClient, Tab, String) {
    let (rig, b) = two_agents(env).await;
    let tab = rig.open(session).await;
    let holder = a_acquires_by_url(&rig, session).await;
    (rig, b, tab, holder)
}

/// A leases `session` by its page URL; its agent id.
async fn a_acquires_by_url(rig: &ToolRig, session: &str) -> String {
    let entry = rig.wait_session(session).await;
    let url = entry["url"].as_str().expect("a page url").to_string();
    let leased = rig
        .ok("reticle_lease", json!({"action": "acquire", "url": url}))
        .await;
    assert_eq!(leased["sessionId"], session, "{leased}");
    assert_eq!(leased["leased"], true, "{leased}");
    leased["lease"]["holder"]["agent"]
        .as_str()
        .expect("the holder's agent id")
        .to_string()
}

#[tokio::test]
async fn a_held_lease_refuses_the_other_agents_act_reads_stay_open_and_release_frees_it() {
    let (rig, b, _tab, holder) = leased_by_a(&[], "lease-held").await;

    // B's acts are refused by any route, and so are a family action that changes the page and
    // B taking or letting go of A's lease.
    for (tool, args) in [
        ("reticle_act", click()),
        (
            "reticle_run",
            json!({"tool": "reticle_act", "args": click()}),
        ),
        ("reticle_session", json!({"action": "yield"})),
        ("reticle_lease", json!({"action": "acquire"})),
        ("reticle_lease", json!({"action": "release"})),
    ] {
        let answer = b_call(&b, tool, "lease-held", args).await;
        refusal_names_the_holder(&answer, &holder).unwrap_or_else(|why| panic!("{tool}: {why}"));
        assert_structured_refusal(&answer["structuredContent"]);
    }
    // Reads stay open to B.
    let read = b_call(
        &b,
        "reticle_query",
        "lease-held",
        json!({"testid": "counter-increment"}),
    )
    .await;
    assert_ne!(read["isError"], true, "a read on a leased session: {read}");
    // reticle_sessions names the holder and the expiry; A drives the session.
    let shown = lease_shown(&b, "lease-held").await;
    assert_eq!(shown["holder"]["agent"], holder.as_str(), "{shown}");
    assert!(shown["expiresInMs"].as_u64().is_some_and(|ms| ms > 0));
    rig.ok("reticle_act", click()).await;

    // A releases: B drives it, and can lease it in turn.
    let released = rig.ok("reticle_lease", json!({"action": "release"})).await;
    assert_eq!(released["released"], json!(["lease-held"]), "{released}");
    assert_eq!(lease_shown(&b, "lease-held").await, Value::Null);
    let act = b_call(&b, "reticle_act", "lease-held", click()).await;
    assert_ne!(act["isError"], true, "after release: {act}");
    let leased = b_call(
        &b,
        "reticle_lease",
        "lease-held",
        json!({"action": "acquire"}),
    )
    .await;
    assert_eq!(leased["structuredContent"]["leased"], true, "{leased}");
    // A cannot let B's lease go.
    let nothing = rig
        .refused(
            "reticle_lease",
            json!({"action": "release", "sessionId": "lease-held"}),
        )
        .await;
    assert!(
        nothing["reason"].as_str().unwrap().contains("leased by"),
        "{nothing}"
    );
}

#[tokio::test]
async fn negative_control_a_daemon_ignoring_leases_fails_the_refusal_check() {
    let (_rig, b, _tab, holder) =
        leased_by_a(&[(env::TEST_STAND_IN_IGNORE_LEASES, "1")], "lease-control").await;
    let act = b_call(&b, "reticle_act", "lease-control", click()).await;
    let judged = refusal_names_the_holder(&act, &holder);
    assert!(
        judged.is_err(),
        "the stand-in that ignores leases passed the refusal check: {act}"
    );
}

#[tokio::test]
async fn a_lease_without_calls_from_its_holder_expires_after_the_configured_bound() {
    let (_rig, b, _tab, holder) = leased_by_a(&[(env::LEASE_TTL_MS, "4000")], "lease-ttl").await;
    let act = b_call(&b, "reticle_act", "lease-ttl", click()).await;
    refusal_names_the_holder(&act, &holder).unwrap();
    let recovery = act["structuredContent"]["recovery"].as_str().unwrap();
    assert!(
        recovery.contains("4000 ms"),
        "the bound is stated: {recovery}"
    );
    // B's calls do not renew A's lease: it ends on its own.
    poll::until("the lease to expire", BOUND, async || {
        lease_shown(&b, "lease-ttl").await.is_null().then_some(())
    })
    .await;
    let act = b_call(&b, "reticle_act", "lease-ttl", click()).await;
    assert_ne!(act["isError"], true, "after expiry: {act}");
}

#[tokio::test]
async fn the_holders_reticle_mcp_exiting_frees_its_lease() {
    let (rig, b) = two_agents(&[(env::LEASE_LINK_GRACE_MS, "500")]).await;
    let _tab = rig.open("lease-exit").await;
    // Here B holds, and the rig's own client (A) is the other agent; B's process exits.
    let leased = b_call(
        &b,
        "reticle_lease",
        "lease-exit",
        json!({"action": "acquire"}),
    )
    .await;
    let holder = leased["structuredContent"]["lease"]["holder"]["agent"]
        .as_str()
        .unwrap_or_else(|| panic!("{leased}"))
        .to_string();
    let act = rig.result("reticle_act", click()).await.unwrap();
    refusal_names_the_holder(&act, &holder).unwrap();
    b.close().await;
    poll::until("the exited holder's lease to end", BOUND, async || {
        let listed = rig.call("reticle_sessions", json!({})).await;
        let all = listed["sessions"].as_array()?.clone();
        all.iter()
            .find(|s| s["sessionId"] == "lease-exit")
            .filter(|s| s["lease"].is_null())
            .map(|_| ())
    })
    .await;
    rig.ok("reticle_act", click()).await;
}

#[tokio::test]
async fn a_reconnect_of_the_holders_link_keeps_its_lease() {
    // A grace long enough that the lease outlives the gap; what proves the identity is that the
    // holder's new stream is counted as its link again and its calls still run as the holder.
    let (rig, b, _tab, holder) =
        leased_by_a(&[(env::LEASE_LINK_GRACE_MS, "60000")], "lease-relink").await;
    let streams = |log: &str, event: &str| {
        log.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["event"] == event && e["agent"] == holder.as_str())
            .count()
    };
    assert_eq!(streams(&rig.daemon_log(), "mcp_client_connected"), 1);
    let worker = worker_of(rig.client.pid()).expect("the holder's worker process");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(worker as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("the worker is killed");
    poll::until(
        "the holder's old stream closed and a new one opened",
        BOUND,
        async || {
            let log = rig.daemon_log();
            (streams(&log, "mcp_client_disconnected") >= 1
                && streams(&log, "mcp_client_connected") >= 2)
                .then_some(())
        },
    )
    .await;
    // Still the holder: its act runs, B's is refused, and the lease shows it linked.
    let act = rig.result("reticle_act", click()).await.unwrap();
    assert_ne!(
        act["isError"], true,
        "the holder after its reconnect: {act}"
    );
    let refused = b_call(&b, "reticle_act", "lease-relink", click()).await;
    refusal_names_the_holder(&refused, &holder).unwrap();
    let shown = lease_shown(&b, "lease-relink").await;
    assert_eq!(shown["holder"]["agent"], holder.as_str(), "{shown}");
    assert_eq!(shown["linked"], true, "{shown}");
}
