//! Transport faults: every toxic of the nemesis (latency with jitter, bandwidth, slicer,
//! slow_close, limit_data, timeout 0, reset_peer), on each direction, on every TCP hop the
//! harness can put a fault proxy on, with every call answered exactly once.
//!
//! - The MCP link (`reticle mcp` → daemon, POST + SSE): the proxy is given the fault proxy's
//!   port and takes it for the daemon's. Calls are counted on the raw stdout of `reticle mcp`;
//!   the judge is H2.7's ([`gates::rows::hop2::h2_7_limits_on_the_link::judge_rounds`]): a
//!   call under a degrading toxic must succeed, a call under a cutting one must be answered by
//!   its result or -32001, and after each heal the link serves again.
//! - The bridge (page → daemon WebSocket): a protocol-1 page ([`WirePage`]) connects through a
//!   fault proxy in front of the daemon, and commands are run through the daemon's
//!   `/bridge/commands` (directly). Every command must end in a named outcome (`answered`,
//!   `observation_lost`, `timed_out`), none may reach the page twice, and after each heal a page
//!   (reconnected if its socket died) is driven again.
//! - `--toxiproxy URL`: `reticle gate` run with a Toxiproxy-compatible server of the test's own
//!   routes its TCP faults there and says so in the scorecard evidence.
//!
//! That each toxic's effect is distinguishable from every other's (and from no toxic at all) is
//! shown once, in the nemesis's own self-tests: `toxics/tests/no_toxic.rs` (the control),
//! `latency.rs`, `bandwidth.rs`, `slicer.rs`, `slow_close.rs`, `limit_data.rs`, `timeout.rs`
//! and `reset_peer.rs`, each naming what sets its effect apart. They are not repeated here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gates::judge::RowOutcome;
use gates::nemesis::{LinkProxy, Nemesis};
use gates::rows::hop2::h2_7_limits_on_the_link::{self as link, Effect, Round};
use gates::scenarios::GateEnv;
use harness::wire_page::Responder;
use harness::{BridgeClient, OwnedDaemon, WirePage, poll};
use serde_json::{Value, json};
use toxics::toxic::{Bandwidth, Latency, LimitData, ResetPeer, Slicer, SlowClose, Timeout};
use toxics::{Direction, ToxicSpec};

const BOUND: Duration = Duration::from_secs(20);

fn env() -> GateEnv {
    GateEnv {
        reticle: harness::binaries::reticle(),
    }
}

/// Both directions of one toxic, from the rounds the gates define.
fn rounds_of(kind: &str) -> Vec<Round> {
    let rounds: Vec<Round> = link::every_toxic()
        .into_iter()
        .filter(|r| r.spec.kind == kind)
        .collect();
    assert_eq!(rounds.len(), 2, "{kind} on each direction");
    rounds
}

async fn mcp_link(kind: &str) {
    let ran =
        link::rounds_on_the_link(&env(), &rounds_of(kind), harness::mcp_client::CALL_BOUND).await;
    assert_eq!(
        ran.judgement.outcome,
        RowOutcome::Survived,
        "{kind} on the MCP link: {:?}\nhistory: {:#?}",
        ran.judgement,
        ran.history.ops()
    );
    // A cutting toxic must be seen to cut: some call under it lost its answer and was answered
    // -32001 (else the round proved nothing about cuts).
    for (toxic, lost, of) in link::cuts_per_toxic(&ran.history.ops()) {
        assert!(
            lost >= 1,
            "{toxic} cut nothing in {of} calls: {:?}",
            ran.judgement
        );
    }
}

#[tokio::test]
async fn mcp_link_latency_with_jitter() {
    mcp_link("latency").await;
}

#[tokio::test]
async fn mcp_link_bandwidth() {
    mcp_link("bandwidth").await;
}

#[tokio::test]
async fn mcp_link_slicer() {
    mcp_link("slicer").await;
}

#[tokio::test]
async fn mcp_link_slow_close() {
    mcp_link("slow_close").await;
}

#[tokio::test]
async fn mcp_link_limit_data() {
    mcp_link("limit_data").await;
}

#[tokio::test]
async fn mcp_link_timeout_blackhole() {
    mcp_link("timeout").await;
}

#[tokio::test]
async fn mcp_link_reset_peer() {
    mcp_link("reset_peer").await;
}

// ---- the bridge hop --------------------------------------------------------------------

const ORIGIN: Option<&str> = Some("http://localhost:5173");
/// The bound each command is run with; a page that never answers times out here.
const COMMAND_BOUND: Duration = Duration::from_secs(3);

/// How one bridge command on the page hop ended, for the assertion message.
#[derive(Debug)]
struct CommandEnding {
    id: usize,
    outcome: String,
    reason: String,
}

/// A page connected through the fault proxy, counting how often each command reaches it.
struct Page {
    _page: WirePage,
    deliveries: Arc<Mutex<HashMap<String, usize>>>,
}

async fn open_page(proxy: &LinkProxy, daemon: &OwnedDaemon, session: &str) -> Option<Page> {
    let deliveries: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let counted = deliveries.clone();
    let responder: Responder = Arc::new(move |command| {
        *counted
            .lock()
            .unwrap()
            .entry(command.id.to_string())
            .or_default() += 1;
        Some((true, json!({ "echo": command.name, "args": command.args })))
    });
    let page = WirePage::open_with(proxy.port(), ORIGIN, Some(responder))
        .await
        .ok()?;
    page.hello(session, Some(&daemon.token())).await;
    let client = BridgeClient::new(daemon.port());
    poll::within(BOUND, async || client.session(session).await.map(|_| ())).await?;
    Some(Page {
        _page: page,
        deliveries,
    })
}

/// The rounds of the page hop: every toxic on each direction, with `limit_data` sized to cut the
/// socket after its upgrade and a few frames.
fn page_rounds(kind: &str) -> Vec<(ToxicSpec, Effect, usize)> {
    let mut rounds = Vec::new();
    for direction in Direction::ALL {
        let on = |spec: ToxicSpec| spec.stream(direction);
        let round = match kind {
            "latency" => (
                on(ToxicSpec::new(Latency {
                    latency: 60,
                    jitter: 40,
                })),
                Effect::Degrades,
                4,
            ),
            "bandwidth" => (
                on(ToxicSpec::new(Bandwidth { rate: 8 })),
                Effect::Degrades,
                4,
            ),
            "slicer" => (
                on(ToxicSpec::new(Slicer {
                    average_size: 8,
                    size_variation: 4,
                    delay: 200,
                })),
                Effect::Degrades,
                4,
            ),
            "slow_close" => (
                on(ToxicSpec::new(SlowClose { delay: 300 })),
                Effect::Degrades,
                4,
            ),
            "limit_data" => (
                on(ToxicSpec::new(LimitData { bytes: 400 })),
                Effect::Cuts,
                6,
            ),
            "timeout" => (on(ToxicSpec::new(Timeout { timeout: 0 })), Effect::Cuts, 1),
            "reset_peer" => (
                on(ToxicSpec::new(ResetPeer { timeout: 0 })),
                Effect::Cuts,
                2,
            ),
            other => panic!("no page round for {other}"),
        };
        rounds.push(round);
    }
    rounds
}

async fn page_hop(kind: &str) {
    let nemesis = Nemesis::from_env().await.expect("a nemesis");
    let daemon = OwnedDaemon::start().await;
    let proxy = nemesis
        .proxy(daemon.port())
        .await
        .expect("a fault proxy in front of the daemon");
    let client = BridgeClient::new(daemon.port());
    let session = format!("page-{kind}");
    let mut pages = vec![
        open_page(&proxy, &daemon, &session)
            .await
            .expect("the page connects through the fault proxy"),
    ];
    let mut next = 0usize;
    let mut run = async |n: usize| -> Vec<CommandEnding> {
        let mut done = Vec::new();
        for _ in 0..n {
            next += 1;
            let answer = client
                .command(
                    Some(&session),
                    "query",
                    json!({ "n": next }),
                    Some(COMMAND_BOUND),
                )
                .await;
            // A session already gone is a refusal (404) that names it, not an outcome.
            let (outcome, reason) = match answer["outcome"].as_str() {
                Some(outcome) => (outcome, answer["reason"].as_str().unwrap_or("")),
                None => ("refused", answer["error"].as_str().unwrap_or("")),
            };
            done.push(CommandEnding {
                id: next,
                outcome: outcome.to_string(),
                reason: reason.to_string(),
            });
        }
        done
    };
    let control = run(1).await;
    assert_eq!(
        control[0].outcome, "answered",
        "the page answers before any toxic: {control:?}"
    );
    for (spec, effect, calls) in page_rounds(kind) {
        let name = proxy
            .inject(&spec)
            .await
            .expect("the toxic is installed and listed");
        let under = run(calls).await;
        if effect == Effect::Cuts {
            assert!(
                under.iter().any(|c| c.outcome != "answered"),
                "{name} cut nothing: {under:?}"
            );
        }
        for command in &under {
            match (effect, command.outcome.as_str()) {
                (_, "answered") => {}
                (Effect::Cuts, "observation_lost" | "timed_out" | "refused") => {
                    assert!(
                        !command.reason.is_empty(),
                        "{name}: an outcome without a reason: {command:?}"
                    );
                }
                _ => panic!(
                    "{name} ({effect:?}): command {} ended {command:?}",
                    command.id
                ),
            }
        }
        proxy.heal(&name).await.expect("the toxic is removed");
        // The page's socket may have died with the toxic (the daemon may learn it a moment
        // later): a page reconnects, here by hand, whenever its session is gone.
        let mut served = false;
        for _ in 0..20 {
            if client.session(&session).await.is_none() {
                pages.push(
                    open_page(&proxy, &daemon, &session)
                        .await
                        .expect("a page reconnects once the toxic is gone"),
                );
            }
            if run(1).await[0].outcome == "answered" {
                served = true;
                break;
            }
        }
        assert!(
            served,
            "{name}: the page hop never served again after the heal"
        );
        for page in &pages {
            let twice: Vec<(String, usize)> = page
                .deliveries
                .lock()
                .unwrap()
                .iter()
                .filter(|(_, n)| **n > 1)
                .map(|(id, n)| (id.clone(), *n))
                .collect();
            assert!(
                twice.is_empty(),
                "{name}: commands reached a page more than once: {twice:?}"
            );
        }
    }
    proxy.close().await;
}

#[tokio::test]
async fn page_hop_latency_with_jitter() {
    page_hop("latency").await;
}

#[tokio::test]
async fn page_hop_bandwidth() {
    page_hop("bandwidth").await;
}

#[tokio::test]
async fn page_hop_slicer() {
    page_hop("slicer").await;
}

#[tokio::test]
async fn page_hop_slow_close() {
    page_hop("slow_close").await;
}

#[tokio::test]
async fn page_hop_limit_data() {
    page_hop("limit_data").await;
}

#[tokio::test]
async fn page_hop_timeout_blackhole() {
    page_hop("timeout").await;
}

#[tokio::test]
async fn page_hop_reset_peer() {
    page_hop("reset_peer").await;
}

// ---- the nemesis itself ------------------------------------------------------------------

/// The REST path every scenario uses (the one `TOXIPROXY_URL` selects) installs, lists and
/// removes each of the seven toxics on each direction, reading each change back, and refuses
/// what a server refuses instead of pretending.
#[tokio::test]
async fn the_nemesis_establishes_and_heals_every_toxic_through_the_rest_api() {
    let nemesis = Nemesis::embedded().await.unwrap();
    let daemon = OwnedDaemon::start().await;
    let proxy = nemesis.proxy(daemon.port()).await.unwrap();
    assert!(
        reticle::probe::fetch_status(proxy.port(), Duration::from_secs(2))
            .await
            .is_some_and(|s| s.instance == daemon.instance()),
        "with no toxic the proxy is transparent"
    );
    let mut kinds = Vec::new();
    for round in link::every_toxic() {
        let name = proxy.inject(&round.spec).await.unwrap();
        let listed = proxy.toxics().await.unwrap();
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert_eq!(listed[0]["type"], round.spec.kind.as_str());
        proxy.heal(&name).await.unwrap();
        assert!(proxy.toxics().await.unwrap().is_empty());
        kinds.push(round.spec.kind.clone());
    }
    kinds.sort();
    kinds.dedup();
    assert_eq!(
        kinds,
        [
            "bandwidth",
            "latency",
            "limit_data",
            "reset_peer",
            "slicer",
            "slow_close",
            "timeout"
        ]
    );
    let bogus = ToxicSpec::of_type("sigsegv", Value::Null);
    let refused = proxy.inject(&bogus).await.unwrap_err();
    assert!(refused.contains("HTTP 400"), "{refused}");
    assert!(proxy.heal("never_installed").await.is_err());
    let describe = nemesis.describe();
    assert_eq!(describe, "embedded toxics");
    assert_eq!(
        Nemesis::external("http://127.0.0.1:1/").describe(),
        "toxiproxy at http://127.0.0.1:1"
    );
    proxy.close().await;
}

/// `reticle gate --toxiproxy URL` puts its TCP faults on that server (here a Toxiproxy-compatible
/// server owned by this test), scores the rows as usual, and names the nemesis in the evidence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reticle_gate_routes_tcp_faults_through_the_toxiproxy_it_is_given() {
    let server = toxics::Server::start("127.0.0.1:0").await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let gate = env!("CARGO_BIN_EXE_reticle-gate");
    // The gate runs the `reticle` beside it; make sure it is built there.
    let reticle = harness::binaries::reticle();
    assert_eq!(
        reticle.parent(),
        std::path::Path::new(gate).parent(),
        "reticle-gate and reticle share a target dir"
    );
    let mut command = tokio::process::Command::new(gate);
    command
        .args(["--only", "H2.1,H2.3", "--toxiproxy", &server.url(), "--out"])
        .arg(out.path())
        .arg("--baseline")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/baseline.json"))
        .env(harness::marker::MARKER_VAR, harness::marker::marker())
        .env_remove(gates::nemesis::TOXIPROXY_URL)
        .kill_on_drop(true);
    let ran = tokio::time::timeout(Duration::from_secs(240), command.output())
        .await
        .expect("the gate finishes")
        .unwrap();
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert!(
        ran.status.success(),
        "{stderr}\n{}",
        String::from_utf8_lossy(&ran.stdout)
    );
    assert!(
        stderr.contains(&format!("Toxiproxy server at {}", server.url())),
        "{stderr}"
    );
    let card: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("scorecard.json")).unwrap())
            .unwrap();
    let rows = card["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert_eq!(row["outcome"], "surfaced", "{row}");
        assert!(
            row["evidence"]
                .as_str()
                .unwrap()
                .contains(&format!("nemesis: toxiproxy at {}", server.url())),
            "{row}"
        );
    }
    // Each row's history is kept beside the scorecard, the fault in it.
    for id in ["H2.1", "H2.3"] {
        let text = std::fs::read_to_string(out.path().join(format!("histories/{id}.jsonl")))
            .unwrap_or_else(|e| panic!("{id}'s history: {e}"));
        let ops: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(
            ops.iter().any(|op| op["actor"] == "nemesis"),
            "{id}: {text}"
        );
    }
    // Every proxy the gate made on the server is gone again.
    assert!(
        server.proxies().all().is_empty(),
        "{:?}",
        server.proxies().all()
    );
}
