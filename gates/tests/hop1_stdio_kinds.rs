//! `reticle mcp` serves whatever an agent's stdio is: pipes (every other proxy test), a socket
//! pair (what libuv, so Node, gives a child), and plain files (a script's redirections, which the
//! runtime's poller cannot watch, so the proxy reads and writes them on threads). Each case makes
//! a real call and reads its answer off the agent's end.

mod support;

use std::os::unix::net::UnixStream;
use std::process::Stdio;
use std::time::Duration;

use harness::{ProxyOptions, Stage, poll};
use serde_json::{Value, json};
use support::BOUND;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn request(id: u64, method: &str, params: Value) -> String {
    format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    )
}

fn initialize(id: u64) -> String {
    request(
        id,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "stdio-kinds", "version": "1"}}),
    )
}

const INITIALIZED: &str = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

#[tokio::test]
async fn a_socket_pair_for_stdin_and_stdout_is_served() {
    let stage = Stage::default();
    let (agent_in, proxy_in) = UnixStream::pair().expect("a socket pair for stdin");
    let (agent_out, proxy_out) = UnixStream::pair().expect("a socket pair for stdout");
    let mut child = ProxyOptions::new(stage.port, stage.state.path()).spawn(
        Stdio::from(std::os::fd::OwnedFd::from(proxy_in)),
        Stdio::from(std::os::fd::OwnedFd::from(proxy_out)),
    );
    for end in [&agent_in, &agent_out] {
        end.set_nonblocking(true)
            .expect("the agent's ends go async");
    }
    let mut to_proxy = tokio::net::UnixStream::from_std(agent_in).expect("stdin end");
    let mut answers =
        BufReader::new(tokio::net::UnixStream::from_std(agent_out).expect("stdout end")).lines();
    let call = request(
        2,
        "tools/call",
        json!({"name": "reticle_sessions", "arguments": {}}),
    );
    let sent = [initialize(1), INITIALIZED.to_string(), call].concat();
    to_proxy
        .write_all(sent.as_bytes())
        .await
        .expect("the proxy reads");
    let mut seen = Vec::new();
    let answered = tokio::time::timeout(BOUND, async {
        while let Ok(Some(line)) = answers.next_line().await {
            let answer: Value = serde_json::from_str(&line).expect("a JSON line");
            let last = answer["id"] == 2;
            seen.push(answer);
            if last {
                return true;
            }
        }
        false
    })
    .await
    .unwrap_or(false);
    drop(to_proxy);
    let _ = tokio::time::timeout(BOUND, child.wait()).await;
    assert!(
        answered,
        "no answer to the call on a socket stdout: {seen:?}"
    );
    let call = seen.last().expect("the call's answer");
    assert!(
        call["result"]["structuredContent"]["sessions"].is_array()
            && call["result"]["isError"] != true,
        "reticle_sessions answered over a socket pair: {call}"
    );
}

#[tokio::test]
async fn files_for_stdin_and_stdout_are_served_to_the_end_of_the_input() {
    let stage = Stage::default();
    let dir = tempfile::tempdir().expect("a dir for the agent's files");
    let input = dir.path().join("in.jsonl");
    let output = dir.path().join("out.jsonl");
    std::fs::write(
        &input,
        [
            initialize(1),
            INITIALIZED.to_string(),
            request(2, "ping", json!({})),
        ]
        .concat(),
    )
    .expect("the input file");
    let mut child = ProxyOptions::new(stage.port, stage.state.path()).spawn(
        std::fs::File::open(&input).expect("open the input"),
        std::fs::File::create(&output).expect("create the output"),
    );
    let exited = tokio::time::timeout(BOUND, child.wait()).await;
    assert!(
        matches!(exited, Ok(Ok(status)) if status.success()),
        "reticle mcp ends once its input file is read and answered: {exited:?}"
    );
    let written = poll::until(
        "both answers in the output file",
        Duration::from_secs(1),
        async || {
            let text = std::fs::read_to_string(&output).ok()?;
            let ids: Vec<Value> = text
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|a| a.get("result").is_some())
                .map(|a| a["id"].clone())
                .collect();
            (ids == [json!(1), json!(2)]).then_some(text)
        },
    )
    .await;
    assert!(written.contains("protocolVersion"), "{written}");
}

/// An agent that sends many calls before reading a byte fills the pipe: the proxy goes on
/// writing through its writer thread, and every answer arrives, in the order asked.
#[tokio::test]
async fn an_agent_that_reads_late_gets_every_answer_in_order() {
    const CALLS: u64 = 60;
    let stage = Stage::default();
    // Spawned here, not through `RawMcp`: its reader drains stdout at once, and the pipe must
    // fill for the writer thread to be needed.
    let mut child =
        ProxyOptions::new(stage.port, stage.state.path()).spawn(Stdio::piped(), Stdio::piped());
    let mut to_proxy = child.stdin.take().expect("stdin");
    let mut answers = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut sent = vec![initialize(1), INITIALIZED.to_string()];
    // tools/list answers are about 14 KB each: a few fill a 64 KiB pipe.
    sent.extend((2..2 + CALLS).map(|id| request(id, "tools/list", json!({}))));
    to_proxy
        .write_all(sent.concat().as_bytes())
        .await
        .expect("the proxy reads");
    let mut ids = Vec::new();
    let read = tokio::time::timeout(BOUND, async {
        while ids.len() < (CALLS + 1) as usize {
            let Ok(Some(line)) = answers.next_line().await else {
                break;
            };
            let answer: Value = serde_json::from_str(&line).expect("a JSON line");
            assert!(answer.get("result").is_some(), "{answer}");
            ids.push(answer["id"].as_u64().expect("an id"));
        }
    })
    .await;
    drop(to_proxy);
    let _ = tokio::time::timeout(BOUND, child.wait()).await;
    assert!(
        read.is_ok(),
        "answers stopped after {} of {}",
        ids.len(),
        CALLS + 1
    );
    assert_eq!(ids, (1..2 + CALLS).collect::<Vec<_>>());
}

/// Where `pid`'s file descriptor 2 leads (`pipe:[inode]`, a tty, a file).
fn stderr_of(pid: &str) -> std::path::PathBuf {
    std::fs::read_link(format!("/proc/{pid}/fd/2")).expect("the process's stderr")
}

/// A proxy the harness starts writes its stderr into a pipe of this test's, and so does the
/// worker it starts: neither can hold the test runner's pipe once the test has ended (a worker
/// exits a moment after its supervisor is killed; with the runner's pipe inherited, nextest
/// would count that moment as a leak).
#[tokio::test]
async fn a_harness_proxy_and_its_worker_hold_the_tests_stderr_pipe_not_the_runners() {
    let stage = Stage::default();
    let ours = stderr_of("self");
    let client = harness::McpClient::start(ProxyOptions::new(stage.port, stage.state.path()))
        .await
        .expect("reticle mcp starts");
    let supervisor = client.pid();
    let worker = poll::until("the proxy's worker", BOUND, async || {
        harness::mcp_client::worker_of(supervisor)
    })
    .await;
    for pid in [supervisor, worker] {
        assert_ne!(stderr_of(&pid.to_string()), ours, "process {pid}");
    }
    // Control: a proxy started with its stderr inherited holds exactly the runner's pipe.
    let mut inherited = ProxyOptions::new(stage.port, stage.state.path())
        .command()
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("reticle mcp starts");
    let pid = inherited.id().expect("its pid").to_string();
    assert_eq!(stderr_of(&pid), ours);
    drop(inherited.stdin.take());
    let _ = tokio::time::timeout(BOUND, inherited.wait()).await;
    client.close().await;
}
