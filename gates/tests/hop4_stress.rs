//! H4.6 (through its gate scenario) and the bridge's limits, against a live daemon with a
//! bystander page that must live on: a flood of 5000 events (excess dropped and counted, the
//! socket never closed), 60 aborted handshakes, an oversized frame (1009), malformed frames
//! (1008), the pending-handshake and session limits (1013), the cap on projects served (1008
//! naming it), and the hello timeout (1008). After
//! each, `/status` answers and the bystander still answers commands.

use std::time::Duration;

mod common;

use harness::wire_page::{self, echo_responder};
use harness::{BridgeClient, OwnedDaemon, WirePage, poll};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

const BOUND: Duration = Duration::from_secs(15);
const ORIGIN: Option<&str> = Some("http://127.0.0.1:3000");

/// A connected page that answers every command.
async fn page(daemon: &OwnedDaemon, id: &str) -> WirePage {
    let page = WirePage::open_with(daemon.port(), ORIGIN, Some(echo_responder()))
        .await
        .expect("the page connects");
    page.hello(id, Some(&daemon.token())).await;
    let client = BridgeClient::new(daemon.port());
    poll::until(&format!("session {id}"), BOUND, async || {
        client.session(id).await.map(|_| ())
    })
    .await;
    page
}

/// The bystander answers a command and the daemon answers `/status`.
async fn bystander_alive(daemon: &OwnedDaemon, id: &str) {
    assert!(
        daemon.status().await.is_some(),
        "the daemon answers /status"
    );
    let answer = BridgeClient::new(daemon.port())
        .command(Some(id), "query", json!({"role": "button"}), None)
        .await;
    assert_eq!(
        answer["outcome"], "answered",
        "the bystander is drivable: {answer}"
    );
}

async fn counters(client: &BridgeClient, id: &str) -> Value {
    client.session(id).await.expect("session connected")["counters"].clone()
}

/// H4.6 through its gate scenario (`gates::rows::hop4::h4_6_hostile_frames::hostile_frames`):
/// malformed frames closed 1008, an oversized one 1009, a flood over the cap dropped and counted,
/// never closed, and after each the daemon and a bystander still answer. The tests below cover
/// every case finer.
#[tokio::test]
async fn h4_6_hostile_frames_close_their_socket_and_the_bystander_lives_on() {
    common::row_meets_target("H4.6").await;
}

#[tokio::test]
async fn a_flood_is_capped_by_dropping_and_counting_never_by_closing() {
    let daemon = OwnedDaemon::builder()
        .env("RETICLE_MAX_EVENTS_PER_SECOND", "100")
        .start()
        .await;
    let client = BridgeClient::new(daemon.port());
    let _bystander = page(&daemon, "bystander").await;
    let mut flooder = page(&daemon, "flooder").await;
    let frames = (0..5000).map(|i| {
        wire_page::event(
            "flooder",
            "dom.text",
            json!({ "text": format!("tick {i}") }),
        )
        .to_string()
    });
    assert!(
        flooder.send_burst(frames).await,
        "the socket takes the whole flood"
    );
    let counted = poll::until("all 5000 events stored or dropped", BOUND, async || {
        let c = counters(&client, "flooder").await;
        let total = c["eventsStored"].as_u64()? + c["eventsDropped"].as_u64()?;
        (total == 5000).then_some(c)
    })
    .await;
    assert!(counted["eventsDropped"].as_u64().unwrap() > 0, "{counted}");
    assert!(
        counted["eventsStored"].as_u64().unwrap() >= 100,
        "{counted}"
    );
    // High-value evidence still gets through the spent window's reserve.
    flooder
        .event("flooder", "console.error", json!({"message": "boom"}))
        .await;
    poll::until("the console.error stored", BOUND, async || {
        let read = client.events("flooder", None).await;
        read["events"]
            .as_array()?
            .iter()
            .any(|e| e["type"] == "console.error")
            .then_some(())
    })
    .await;
    assert!(
        flooder.next(Duration::from_millis(50)).await.is_none(),
        "never closed for rate"
    );
    bystander_alive(&daemon, "flooder").await;
    bystander_alive(&daemon, "bystander").await;
    assert_eq!(counters(&client, "bystander").await["eventsDropped"], 0);
}

#[tokio::test]
async fn control_a_flood_within_the_default_cap_loses_nothing() {
    let daemon = OwnedDaemon::start().await;
    let client = BridgeClient::new(daemon.port());
    let flooder = page(&daemon, "flooder").await;
    let frames = (0..5000).map(|i| {
        wire_page::event("flooder", "signal", json!({ "name": "n", "data": i })).to_string()
    });
    assert!(flooder.send_burst(frames).await);
    let counted = poll::until("5000 events stored", BOUND, async || {
        let c = counters(&client, "flooder").await;
        (c["eventsStored"].as_u64()? == 5000).then_some(c)
    })
    .await;
    assert_eq!(counted["eventsDropped"], 0);
    // The buffer keeps the newest 2000 and a read from the start says how many it lost.
    let read = client.events("flooder", None).await;
    assert_eq!(read["evicted"], 3000, "{}", read["evicted"]);
    assert_eq!(read["events"].as_array().unwrap().len(), 2000);
    assert_eq!(read["events"][0]["seq"], 3000);
    let next = read["next"].as_str().unwrap().to_string();
    let after = client.events("flooder", Some(&next)).await;
    assert_eq!(after["evicted"], 0, "control: a held cursor loses nothing");
    assert_eq!(after["events"].as_array().unwrap().len(), 0);
}

#[tokio::test]
async fn sixty_aborted_handshakes_leak_nothing() {
    let daemon = OwnedDaemon::start().await;
    let _bystander = page(&daemon, "bystander").await;
    let port = daemon.port();
    for i in 0..60 {
        match i % 3 {
            // TCP only.
            0 => drop(
                tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .unwrap(),
            ),
            // Half an upgrade request.
            1 => {
                let mut tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .unwrap();
                let _ = tcp
                    .write_all(
                        b"GET /reticle HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n",
                    )
                    .await;
                drop(tcp);
            }
            // A full upgrade, dropped before the hello.
            _ => {
                let page = WirePage::open(port, ORIGIN).await.unwrap();
                drop(page);
            }
        }
    }
    // Every pending-handshake place comes back once the daemon sees the drops.
    let client = BridgeClient::new(port);
    poll::until("no pending handshakes left", BOUND, async || {
        (client.sessions().await["pendingHandshakes"] == 0).then_some(())
    })
    .await;
    let mut held = Vec::new();
    for _ in 0..16 {
        held.push(WirePage::open(port, ORIGIN).await.unwrap());
    }
    poll::until("16 sockets waiting", BOUND, async || {
        (client.sessions().await["pendingHandshakes"] == 16).then_some(())
    })
    .await;
    for page in &mut held {
        assert!(
            page.next(Duration::from_millis(10)).await.is_none(),
            "none refused"
        );
    }
    held[0].hello("fresh", Some(&daemon.token())).await;
    poll::until("a fresh page accepted", BOUND, async || {
        client.session("fresh").await.map(|_| ())
    })
    .await;
    bystander_alive(&daemon, "bystander").await;
}

#[tokio::test]
async fn an_oversized_frame_is_closed_1009_and_a_large_one_is_not() {
    let daemon = OwnedDaemon::start().await;
    let client = BridgeClient::new(daemon.port());
    let _bystander = page(&daemon, "bystander").await;
    let mut big = page(&daemon, "big").await;
    // Control: a frame just under 1 MiB is stored.
    let mut frame = wire_page::event("big", "signal", json!({"blob": ""}));
    let pad = 1024 * 1024 - frame.to_string().len();
    frame["event"]["data"]["blob"] = json!("x".repeat(pad));
    assert_eq!(frame.to_string().len(), 1024 * 1024);
    big.send_json(&frame).await;
    poll::until("the 1 MiB event stored", BOUND, async || {
        (counters(&client, "big").await["eventsStored"] == 1).then_some(())
    })
    .await;
    // One byte more is closed 1009.
    frame["event"]["data"]["blob"] = json!("x".repeat(pad + 1));
    big.send_json(&frame).await;
    let (code, reason) = big.closed(BOUND).await.expect("closed");
    assert_eq!(code, Some(1009), "{reason}");
    assert!(reason.contains("too big"), "{reason}");
    poll::until("the big session gone", BOUND, async || {
        client.session("big").await.is_none().then_some(())
    })
    .await;
    bystander_alive(&daemon, "bystander").await;
}

#[tokio::test]
async fn malformed_frames_are_closed_1008_each_and_the_daemon_lives_on() {
    let daemon = OwnedDaemon::start().await;
    let _bystander = page(&daemon, "bystander").await;
    let cases: [(&str, Option<Value>, &str); 6] = [
        ("not json", None, "{\"kind\":"),
        ("unknown kind", Some(json!({"kind": "shout"})), ""),
        (
            "event without t",
            Some(json!({"kind":"event","event":{"type":"signal","sessionId":"m"}})),
            "",
        ),
        (
            "a result with a numeric id",
            Some(json!({"kind":"command_result","id":7,"ok":true})),
            "",
        ),
        (
            "a page sending a command",
            Some(json!({"kind":"command","id":"c1","name":"snapshot"})),
            "",
        ),
        (
            "second hello for another id",
            Some(wire_page::hello("someone-else", None)),
            "",
        ),
    ];
    for (what, value, raw) in cases {
        let mut page = page(&daemon, "malformed").await;
        match value {
            Some(value) => page.send_json(&value).await,
            None => page.send_text(raw).await,
        };
        let (code, reason) = page
            .closed(BOUND)
            .await
            .unwrap_or_else(|| panic!("{what}: closed"));
        assert_eq!(code, Some(1008), "{what}: {reason}");
        assert!(reason.len() <= 123);
        assert!(
            reason.contains("invalid message") || reason.contains("hello already received"),
            "{what}: {reason}"
        );
    }
    // Binary garbage, and garbage before any hello.
    let mut page = page(&daemon, "binary").await;
    page.send_binary(vec![0xff, 0xfe, 0x00]).await;
    assert_eq!(page.closed(BOUND).await.unwrap().0, Some(1008));
    let mut early = WirePage::open(daemon.port(), ORIGIN).await.unwrap();
    early.send_text("garbage").await;
    assert_eq!(early.closed(BOUND).await.unwrap().0, Some(1008));
    let mut early = WirePage::open(daemon.port(), ORIGIN).await.unwrap();
    early
        .send_json(&wire_page::event("x", "signal", json!({})))
        .await;
    let (code, reason) = early.closed(BOUND).await.unwrap();
    assert_eq!(code, Some(1008));
    assert!(reason.contains("first frame must be a hello"), "{reason}");
    bystander_alive(&daemon, "bystander").await;
}

#[tokio::test]
async fn the_seventeenth_pending_handshake_is_closed_1013() {
    let daemon = OwnedDaemon::start().await;
    let _bystander = page(&daemon, "bystander").await;
    let mut waiting = Vec::new();
    for _ in 0..16 {
        waiting.push(WirePage::open(daemon.port(), ORIGIN).await.unwrap());
    }
    let mut extra = WirePage::open(daemon.port(), ORIGIN).await.unwrap();
    let (code, reason) = extra.closed(BOUND).await.expect("closed");
    assert_eq!(code, Some(1013), "{reason}");
    assert!(reason.contains("too many pending handshakes"), "{reason}");
    // Control: once one of the 16 says hello, its place frees and a newcomer can wait too.
    waiting[0].hello("was-waiting", Some(&daemon.token())).await;
    let client = BridgeClient::new(daemon.port());
    poll::until("the waiting page admitted", BOUND, async || {
        client.session("was-waiting").await.map(|_| ())
    })
    .await;
    let mut newcomer = WirePage::open(daemon.port(), ORIGIN).await.unwrap();
    assert!(
        newcomer.next(Duration::from_millis(100)).await.is_none(),
        "not refused"
    );
    bystander_alive(&daemon, "bystander").await;
}

#[tokio::test]
async fn the_thirty_third_session_is_closed_1013_and_a_replacement_still_gets_in() {
    let daemon = OwnedDaemon::start().await;
    let client = BridgeClient::new(daemon.port());
    let mut pages = Vec::new();
    for i in 0..32 {
        pages.push(page(&daemon, &format!("s{i}")).await);
    }
    let mut extra = WirePage::open(daemon.port(), ORIGIN).await.unwrap();
    extra.hello("s32", Some(&daemon.token())).await;
    let (code, reason) = extra.closed(BOUND).await.expect("closed");
    assert_eq!(code, Some(1013));
    assert!(reason.contains("session limit"), "{reason}");
    // A replacement of a connected id is not a new session (the old s0 is dead: no pong).
    pages[0].freeze();
    let replacement = page(&daemon, "s0").await;
    poll::until("the new socket carries s0", BOUND, async || {
        (client.session("s0").await?["counters"]["links"] == 2).then_some(())
    })
    .await;
    pages[0].thaw();
    let (code, _) = pages[0]
        .closed(BOUND)
        .await
        .expect("the old s0 socket closed");
    assert_eq!(code, Some(1008));
    assert_eq!(client.status().await["sessionCount"], 32);
    // Control: once one leaves, a new id gets in.
    pages[5].close().await;
    poll::until("s5 gone", BOUND, async || {
        client.session("s5").await.is_none().then_some(())
    })
    .await;
    let _newcomer = page(&daemon, "s33").await;
    drop(replacement);
    bystander_alive(&daemon, "s1").await;
}

#[tokio::test]
async fn a_silent_socket_is_closed_1008_at_the_hello_timeout() {
    let daemon = OwnedDaemon::start().await;
    let mut silent = WirePage::open(daemon.port(), ORIGIN).await.unwrap();
    // Control first: a page that says hello at once is kept.
    let prompt = page(&daemon, "prompt").await;
    let (code, reason) = silent
        .closed(BOUND)
        .await
        .expect("closed by the hello bound");
    assert_eq!(code, Some(1008));
    assert!(reason.contains("hello timeout"), "{reason}");
    let client = BridgeClient::new(daemon.port());
    assert!(client.session("prompt").await.is_some());
    drop(prompt);
}

/// Says hello as `session` of `project` and waits until the bridge lists it or closes the socket.
async fn project_page(daemon: &OwnedDaemon, session: &str, project: &str) -> (WirePage, bool) {
    let client = BridgeClient::new(daemon.port());
    let mut page = WirePage::open(daemon.port(), ORIGIN).await.unwrap();
    let mut hello = wire_page::hello(session, Some(&daemon.token()));
    hello["projectId"] = json!(project);
    page.send_json(&hello).await;
    let admitted = poll::until(
        &format!("{session} admitted or refused"),
        BOUND,
        async || {
            if client.session(session).await.is_some() {
                return Some(true);
            }
            page.next(Duration::from_millis(20)).await.map(|_| false)
        },
    )
    .await;
    (page, admitted)
}

#[tokio::test]
async fn a_page_of_one_project_past_the_served_projects_cap_is_refused_naming_the_cap() {
    let daemon = OwnedDaemon::start().await;
    let cap = reticle::config::MAX_SERVED_PROJECTS;
    // Control: up to the cap, each new project's page is admitted (each then leaves).
    for i in 0..cap {
        let (page, admitted) =
            project_page(&daemon, &format!("p{i}"), &format!("project-{i}")).await;
        assert!(admitted, "project {i} of {cap} is within the cap");
        page.close().await;
        let client = BridgeClient::new(daemon.port());
        poll::until(&format!("p{i} gone"), BOUND, async || {
            client
                .session(&format!("p{i}"))
                .await
                .is_none()
                .then_some(())
        })
        .await;
    }
    let mut past = WirePage::open(daemon.port(), ORIGIN).await.unwrap();
    let mut hello = wire_page::hello("past", Some(&daemon.token()));
    hello["projectId"] = json!("project-past-the-cap");
    past.send_json(&hello).await;
    let (code, reason) = past.closed(BOUND).await.expect("refused");
    assert_eq!(code, Some(1008));
    assert!(
        reason.contains("project limit") && reason.contains(&cap.to_string()),
        "{reason}"
    );
    let refused = BridgeClient::new(daemon.port()).status().await["refused"].clone();
    assert!(refused.to_string().contains("project_limit"), "{refused}");
    // A page of a project already served still gets in.
    let (_known, admitted) = project_page(&daemon, "known", "project-0").await;
    assert!(admitted, "a served project is not refused");
}
