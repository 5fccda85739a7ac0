//! Where one MCP call's time goes, hop by hop, measured by difference on one daemon: the same
//! call through every hop (an agent on `reticle mcp`'s stdio: supervisor, worker, POST, daemon,
//! SSE, worker, supervisor), straight to the daemon's MCP endpoint as the worker speaks it (POSTs
//! on one kept-alive connection, the answer read off the SSE stream), the same with a fresh TCP
//! connection per POST (the worker's way before round 7), the daemon's Streamable HTTP endpoint
//! (`POST /mcp`, the answer in the POST's response, kept alive: no proxy, no SSE; skipped on a
//! binary without it), and the daemon's HTTP floor (`GET /status` on a kept-alive connection).
//! The all-hops `tools/list` is answered by the proxy from its cached list after the first (the
//! catalogue is unchanged). The paths alternate in blocks so the machine's load hits them alike.
//! It measures; it asserts nothing.
//!
//! Run (release binary under test):
//!   cargo build --release -p reticle
//!   RETICLE_BIN=$PWD/target/release/reticle cargo bench -p gates --bench mcp_hop_split

#[path = "common/stdio_agent.rs"]
mod stdio_agent;

use std::time::{Duration, Instant};

use harness::{StreamableClient, free_port, marker, poll};
use reticle::mcp::{ENDPOINT_EVENT, MESSAGE_EVENT, SSE_PATH};
use reticle::proxy::sse::SseParser;
use serde_json::{Value, json};
use stdio_agent::Agent;
use tokio::sync::mpsc;

const BOUND: Duration = Duration::from_secs(30);
const BLOCKS: usize = 6;
const PER_BLOCK: usize = 300;
const WARM_UP: usize = 300;

/// A client on the daemon's MCP endpoint, speaking it as the worker does.
struct Direct {
    post_url: String,
    fresh: reqwest::Client,
    kept: reqwest::Client,
    answers: mpsc::UnboundedReceiver<Value>,
    next: u64,
}

impl Direct {
    async fn open(port: u16) -> Self {
        let stream_client = reqwest::Client::builder().no_proxy().build().unwrap();
        let mut response = stream_client
            .get(format!("http://127.0.0.1:{port}{SSE_PATH}"))
            .send()
            .await
            .unwrap();
        let mut parser = SseParser::new();
        let mut endpoint = None;
        while endpoint.is_none() {
            let chunk = response.chunk().await.unwrap().expect("the stream is open");
            for frame in parser.feed(&chunk) {
                if frame.event == ENDPOINT_EVENT {
                    endpoint = Some(frame.data.trim().to_string());
                }
            }
        }
        let (tx, answers) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok(Some(chunk)) = response.chunk().await {
                for frame in parser.feed(&chunk) {
                    if frame.event == MESSAGE_EVENT
                        && let Ok(value) = serde_json::from_str::<Value>(&frame.data)
                    {
                        let _ = tx.send(value);
                    }
                }
            }
        });
        let client = |idle: usize| {
            reqwest::Client::builder()
                .no_proxy()
                .tcp_nodelay(true)
                .pool_max_idle_per_host(idle)
                .build()
                .unwrap()
        };
        let mut direct = Self {
            post_url: format!("http://127.0.0.1:{port}{}", endpoint.unwrap()),
            fresh: client(0),
            kept: client(1),
            answers,
            next: 1_000_000,
        };
        direct
            .call(
                false,
                "initialize",
                json!({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"split","version":"1"}}),
            )
            .await;
        direct
    }

    async fn call(&mut self, keep_alive: bool, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let body = json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}).to_string();
        let client = if keep_alive { &self.kept } else { &self.fresh };
        let status = client
            .post(&self.post_url)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap()
            .status();
        assert!(status.is_success(), "POST answered {status}");
        loop {
            let answer = tokio::time::timeout(BOUND, self.answers.recv())
                .await
                .expect("an answer within the bound")
                .expect("the stream is open");
            if answer["id"] == id {
                return answer;
            }
        }
    }
}

fn sessions_params() -> Value {
    json!({"name":"reticle_sessions","arguments":{}})
}

fn median_ms(mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1000.0
}

fn p99_ms(mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    samples[((samples.len() - 1) as f64 * 0.99).round() as usize].as_secs_f64() * 1000.0
}

/// The paths measured, in the order each block runs them.
#[derive(Clone, Copy)]
enum Path {
    StdioSessions,
    StdioList,
    FreshSessions,
    FreshList,
    KeptSessions,
    KeptList,
    StreamableSessions,
    StreamableList,
    Status,
}

const PATHS: [(Path, &str); 9] = [
    (
        Path::StdioSessions,
        "reticle_sessions, all hops (agent -> reticle mcp -> daemon -> agent)",
    ),
    (Path::StdioList, "tools/list, all hops"),
    (
        Path::FreshSessions,
        "reticle_sessions, POST on a fresh connection + SSE answer",
    ),
    (Path::FreshList, "tools/list, POST fresh + SSE"),
    (
        Path::KeptSessions,
        "reticle_sessions, POST on a kept-alive connection + SSE answer (the worker's way)",
    ),
    (Path::KeptList, "tools/list, POST kept-alive + SSE"),
    (
        Path::StreamableSessions,
        "reticle_sessions, Streamable HTTP (POST /mcp kept alive, the answer in its response)",
    ),
    (Path::StreamableList, "tools/list, Streamable HTTP"),
    (
        Path::Status,
        "GET /status, kept-alive (the daemon's HTTP floor)",
    ),
];

/// Every client the paths use.
struct Clients {
    agent: Agent,
    direct: Direct,
    streamable: Option<StreamableClient>,
    status: reqwest::Client,
    port: u16,
}

/// Runs `path` once; `false` when this binary has no such path.
async fn once(path: Path, clients: &mut Clients) -> bool {
    let Clients {
        agent,
        direct,
        streamable,
        status,
        port,
    } = clients;
    let answer = match path {
        Path::StdioSessions => agent.call("tools/call", sessions_params()).await,
        Path::StdioList => agent.call("tools/list", json!({})).await,
        Path::FreshSessions => direct.call(false, "tools/call", sessions_params()).await,
        Path::FreshList => direct.call(false, "tools/list", json!({})).await,
        Path::KeptSessions => direct.call(true, "tools/call", sessions_params()).await,
        Path::KeptList => direct.call(true, "tools/list", json!({})).await,
        Path::StreamableSessions | Path::StreamableList => {
            let Some(streamable) = streamable else {
                return false;
            };
            let (method, params) = match path {
                Path::StreamableSessions => ("tools/call", sessions_params()),
                _ => ("tools/list", json!({})),
            };
            streamable.request(method, params).await.unwrap()
        }
        Path::Status => {
            let response = status
                .get(format!("http://127.0.0.1:{port}/status"))
                .send()
                .await
                .unwrap();
            json!({"result": response.bytes().await.unwrap().len()})
        }
    };
    assert!(answer.get("result").is_some(), "{answer}");
    true
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    println!(
        "binary under test: {}",
        harness::binaries::reticle().display()
    );
    let state = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut agent = Agent::start(port, state.path());
    agent.initialize().await;
    poll::until("a first call", BOUND, async || {
        agent
            .call("tools/call", sessions_params())
            .await
            .get("result")
            .map(|_| ())
    })
    .await;
    let mut clients = Clients {
        agent,
        direct: Direct::open(port).await,
        streamable: StreamableClient::open(port, "split").await,
        status: reqwest::Client::builder().no_proxy().build().unwrap(),
        port,
    };
    for (path, _) in PATHS {
        for _ in 0..WARM_UP / PATHS.len() + 1 {
            once(path, &mut clients).await;
        }
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); PATHS.len()];
    for _ in 0..BLOCKS {
        for (index, (path, _)) in PATHS.iter().enumerate() {
            for _ in 0..PER_BLOCK {
                let started = Instant::now();
                if once(*path, &mut clients).await {
                    samples[index].push(started.elapsed());
                }
            }
        }
    }
    let list = clients.agent.call("tools/list", json!({})).await;
    println!(
        "tools/list result: {} bytes",
        list["result"].to_string().len()
    );
    println!("| path | median | p99 | samples |\n| --- | --- | --- | --- |");
    let mut medians = Vec::new();
    for (index, (_, name)) in PATHS.iter().enumerate() {
        let taken = samples[index].clone();
        let n = taken.len();
        if n == 0 {
            println!("| {name} | n/a (not served by this binary) | | 0 |");
            medians.push(f64::NAN);
            continue;
        }
        let median = median_ms(taken.clone());
        medians.push(median);
        println!(
            "| {name} | {median:.3} ms | {:.3} ms | {n} |",
            p99_ms(taken)
        );
    }
    println!(
        "split of reticle_sessions (medians): proxy (stdio, supervisor, worker, pipes) {:.3} ms; MCP over kept-alive HTTP+SSE above the /status floor {:.3} ms; /status floor {:.3} ms; a fresh TCP connection per POST would add {:.3} ms",
        medians[0] - medians[4],
        medians[4] - medians[8],
        medians[8],
        medians[2] - medians[4]
    );
    println!(
        "tools/list (medians): all hops, answered from the proxy's cache {:.3} ms; straight to the daemon, kept-alive POST + SSE {:.3} ms",
        medians[1], medians[5]
    );
    println!(
        "Streamable HTTP against all hops (medians): reticle_sessions {:.3} ms vs {:.3} ms; tools/list {:.3} ms vs {:.3} ms",
        medians[6], medians[0], medians[7], medians[1]
    );
    drop(clients);
    marker::end_marked_listeners(port);
}
