//! The client layer: `reticle mcp` works with the MCP clients agents are built on.
//!
//! (a) A matrix of the handshakes real clients send, written line by line to the real proxy
//! (`RawMcp`): protocol versions 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25 and one from the
//! future (the answer must be a version Reticle speaks, as the MCP spec requires), with and
//! without `notifications/initialized`, a `ping` before it, and the capability shapes clients
//! declare. Each profile must get a valid `initialize` result, `tools/list` naming
//! `reticle_sessions`, and a working `tools/call reticle_sessions`; the proxy must then exit 0
//! when the client closes stdin.
//!
//! (b) A second, independent client implementation: the official TypeScript SDK
//! (`@modelcontextprotocol/sdk`, a dev dependency of `sdk/`) spawning `reticle mcp` through its
//! `StdioClientTransport` (`sdk/test-support/mcp-sdk-client.mjs`).
//!
//! (c) The daemon's Streamable HTTP endpoint (`/mcp`) with the same TypeScript SDK's
//! `StreamableHTTPClientTransport`: handshake, list, call, and the session ended with DELETE; a
//! cross-origin POST to it is refused 403 and opens no session (the same POST without the
//! foreign `Origin` opens one, so the refusal is the page check's).
//!
//! (d) JSON-RPC ids echoed as the text they were sent as (`1e3`, `-0`, a huge integer), through
//! the proxy and from `/mcp`.
//!
//! Negative controls: handshakes no compatible client sends (no params, a numeric version, no
//! client info), a line that is not JSON, and a tool call before any `initialize` are each
//! refused with a JSON-RPC error, never a hang or a dead proxy, and the same proxy then serves a
//! correct client; the TypeScript client pointed at a program that is not an MCP server reports
//! the failure instead of hanging.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use harness::fixture_app::repo_root;
use harness::{OwnedDaemon, ProxyOptions, RawMcp, binaries, marker, poll};
use reticle::config::env;
use reticle::mcp::protocol::SUPPORTED_VERSIONS;
use serde_json::{Value, json};

/// How long one step may take before it counts as a hang.
const STEP_BOUND: Duration = Duration::from_secs(20);
/// How long the TypeScript client may take from spawn to exit.
const NODE_BOUND: Duration = Duration::from_secs(90);

/// One handshake a client may open with.
#[derive(Debug, Clone)]
struct Profile {
    /// Unique per proxy: request ids are derived from it.
    name: &'static str,
    /// The `initialize` params (`None`: the request carries none).
    params: Option<Value>,
    /// Sends `ping` after `initialize` and before `notifications/initialized`.
    ping_before_initialized: bool,
    /// Sends `notifications/initialized` (some clients never do).
    sends_initialized: bool,
}

/// `initialize` params for `version` with the client's declared `capabilities`.
fn params(version: &str, capabilities: Value, client: Value) -> Option<Value> {
    Some(json!({ "protocolVersion": version, "capabilities": capabilities, "clientInfo": client }))
}

/// The handshakes the matrix covers.
fn matrix() -> Vec<Profile> {
    let plain = |name| json!({ "name": name, "version": "1.0.0" });
    vec![
        Profile {
            name: "2024-11-05, roots, initialized",
            params: params(
                "2024-11-05",
                json!({ "roots": { "listChanged": true } }),
                plain("old-client"),
            ),
            ping_before_initialized: false,
            sends_initialized: true,
        },
        Profile {
            name: "2025-03-26, roots and sampling, initialized",
            params: params(
                "2025-03-26",
                json!({ "roots": { "listChanged": true }, "sampling": {} }),
                plain("mid-client"),
            ),
            ping_before_initialized: false,
            sends_initialized: true,
        },
        Profile {
            name: "2025-03-26, ping before initialized",
            params: params("2025-03-26", json!({}), plain("pinging-client")),
            ping_before_initialized: true,
            sends_initialized: true,
        },
        Profile {
            name: "2025-06-18, elicitation and a titled client, initialized",
            params: params(
                "2025-06-18",
                json!({ "roots": {}, "sampling": {}, "elicitation": {} }),
                json!({ "name": "new-client", "title": "New Client", "version": "2.3.4" }),
            ),
            ping_before_initialized: false,
            sends_initialized: true,
        },
        Profile {
            name: "2025-06-18, never sends initialized",
            params: params("2025-06-18", json!({}), plain("terse-client")),
            ping_before_initialized: false,
            sends_initialized: false,
        },
        Profile {
            name: "2025-11-25, initialized",
            params: params("2025-11-25", json!({ "roots": {} }), plain("latest-client")),
            ping_before_initialized: false,
            sends_initialized: true,
        },
        Profile {
            name: "a version from the future, initialized",
            params: params("2099-01-01", json!({}), plain("future-client")),
            ping_before_initialized: false,
            sends_initialized: true,
        },
    ]
}

/// What a profile got from the proxy.
#[derive(Debug, Clone, PartialEq)]
enum Compat {
    /// Every step was answered as the spec says; the version the server chose.
    Works { negotiated: String },
    /// A step was answered with a JSON-RPC error.
    Refused {
        step: &'static str,
        code: i64,
        message: String,
    },
    /// A step got no answer within the bound, a wrong one, or the proxy died.
    Broken { step: &'static str, why: String },
}

/// One request, and its answer: the result, or how the step failed.
async fn ask(
    raw: &mut RawMcp,
    profile: &Profile,
    step: &'static str,
    params: Option<Value>,
) -> Result<Value, Compat> {
    let id = json!(format!("{}: {step}", profile.name));
    let mut request = json!({ "jsonrpc": "2.0", "id": id, "method": step });
    if let Some(params) = params {
        request["params"] = params;
    }
    raw.write_line(&request.to_string()).await;
    answered(raw, &id, step).await
}

/// The answer carrying `id`, judged: its result, a refusal, or a hang.
async fn answered(raw: &RawMcp, id: &Value, step: &'static str) -> Result<Value, Compat> {
    let Some(answer) = raw.answer(id, STEP_BOUND).await else {
        return Err(Compat::Broken {
            step,
            why: format!("no answer within {STEP_BOUND:?}"),
        });
    };
    if answer["jsonrpc"] != "2.0" {
        return Err(Compat::Broken {
            step,
            why: format!("not a JSON-RPC 2.0 answer: {answer}"),
        });
    }
    if let Some(error) = answer.get("error") {
        return Err(Compat::Refused {
            step,
            code: error["code"].as_i64().unwrap_or(0),
            message: error["message"].as_str().unwrap_or_default().to_string(),
        });
    }
    Ok(answer["result"].clone())
}

/// Checks an `initialize` result against the spec: the version asked for when Reticle speaks
/// it, else one it speaks; tools offered; the server named.
fn check_initialize(asked: Option<&str>, result: &Value) -> Result<String, String> {
    let chosen = result["protocolVersion"]
        .as_str()
        .ok_or_else(|| format!("no protocolVersion: {result}"))?;
    if !SUPPORTED_VERSIONS.contains(&chosen) {
        return Err(format!("answered {chosen}, which Reticle does not speak"));
    }
    if let Some(asked) = asked
        && SUPPORTED_VERSIONS.contains(&asked)
        && chosen != asked
    {
        return Err(format!(
            "asked for {asked}, which Reticle speaks, and got {chosen}"
        ));
    }
    if !result["capabilities"]["tools"].is_object() {
        return Err(format!("no tools capability: {result}"));
    }
    if result["serverInfo"]["name"] != "reticle" || !result["serverInfo"]["version"].is_string() {
        return Err(format!("serverInfo does not name reticle: {result}"));
    }
    Ok(chosen.to_string())
}

/// Runs one profile's session on `raw` up to a working tool call.
async fn run_profile(raw: &mut RawMcp, profile: &Profile) -> Compat {
    match session(raw, profile).await {
        Ok(negotiated) => Compat::Works { negotiated },
        Err(compat) => compat,
    }
}

async fn session(raw: &mut RawMcp, profile: &Profile) -> Result<String, Compat> {
    let broken = |step, why| Compat::Broken { step, why };
    let initialized = ask(raw, profile, "initialize", profile.params.clone()).await?;
    let asked = profile
        .params
        .as_ref()
        .and_then(|p| p["protocolVersion"].as_str());
    let negotiated =
        check_initialize(asked, &initialized).map_err(|why| broken("initialize", why))?;
    if profile.ping_before_initialized {
        let pong = ask(raw, profile, "ping", None).await?;
        if pong != json!({}) {
            return Err(broken("ping", format!("ping answered {pong}, not {{}}")));
        }
    }
    if profile.sends_initialized {
        raw.notify("notifications/initialized").await;
    }
    let listed = ask(raw, profile, "tools/list", Some(json!({}))).await?;
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    if !names.contains(&"reticle_sessions") {
        return Err(broken(
            "tools/list",
            format!("no reticle_sessions in {listed}"),
        ));
    }
    let called = ask(
        raw,
        profile,
        "tools/call",
        Some(json!({ "name": "reticle_sessions", "arguments": {} })),
    )
    .await?;
    if called["isError"] == true || !called["structuredContent"]["sessions"].is_array() {
        return Err(broken(
            "tools/call",
            format!("reticle_sessions did not work: {called}"),
        ));
    }
    Ok(negotiated)
}

/// Closes the client's side and waits for the proxy to exit 0 (nothing owed).
async fn ends_cleanly(mut raw: RawMcp) -> Result<(), String> {
    raw.close_stdin();
    match raw.wait_exit(STEP_BOUND).await {
        Some(status) if status.success() => Ok(()),
        Some(status) => Err(format!("the proxy exited {status} when stdin closed")),
        None => Err(format!(
            "the proxy did not exit within {STEP_BOUND:?} of stdin closing"
        )),
    }
}

/// A daemon the test owns, and `reticle mcp` options for it.
async fn owned_daemon() -> (OwnedDaemon, ProxyOptions) {
    let daemon = OwnedDaemon::start().await;
    let options = ProxyOptions::new(daemon.port(), daemon.state_dir());
    (daemon, options)
}

#[tokio::test]
async fn every_handshake_profile_real_clients_use_gets_a_valid_answer_and_a_working_tool() {
    let (_daemon, options) = owned_daemon().await;
    let mut report = Vec::new();
    for profile in matrix() {
        let mut raw = RawMcp::start(options.clone());
        let compat = run_profile(&mut raw, &profile).await;
        let ended = ends_cleanly(raw).await;
        report.push((profile.name, compat, ended));
    }
    let failures: Vec<_> = report
        .iter()
        .filter(|(_, compat, ended)| !matches!(compat, Compat::Works { .. }) || ended.is_err())
        .collect();
    assert!(failures.is_empty(), "incompatible profiles: {failures:#?}");
    let negotiated = |name: &str| {
        report
            .iter()
            .find(|(n, ..)| *n == name)
            .map(|(_, compat, _)| compat.clone())
    };
    assert_eq!(
        negotiated("2024-11-05, roots, initialized"),
        Some(Compat::Works {
            negotiated: "2024-11-05".into()
        })
    );
    assert_eq!(
        negotiated("a version from the future, initialized"),
        Some(Compat::Works {
            negotiated: SUPPORTED_VERSIONS[0].into()
        }),
        "a version Reticle does not speak is answered with the newest it does"
    );
}

/// Negative control: handshakes no compatible client sends are refused with a JSON-RPC error,
/// and the same proxy then serves a correct client.
#[tokio::test]
async fn malformed_handshakes_are_refused_with_json_rpc_errors_and_the_proxy_carries_on() {
    let (_daemon, options) = owned_daemon().await;
    let client = json!({ "name": "broken-client", "version": "0" });
    let broken = [
        ("initialize without params", None),
        (
            "initialize with a numeric version",
            Some(json!({ "protocolVersion": 20250618, "capabilities": {}, "clientInfo": client })),
        ),
        (
            "initialize without client info",
            Some(json!({ "protocolVersion": "2025-06-18", "capabilities": {} })),
        ),
    ];
    let mut raw = RawMcp::start(options.clone());
    for (name, params) in broken {
        let profile = Profile {
            name,
            params,
            ping_before_initialized: false,
            sends_initialized: true,
        };
        match run_profile(&mut raw, &profile).await {
            Compat::Refused {
                step,
                code,
                message,
            } => {
                assert_eq!((step, code), ("initialize", -32602), "{name}: {message}");
                assert!(message.contains("initialize"), "{name}: {message}");
            }
            other => panic!("{name} must be refused with a JSON-RPC error, got {other:?}"),
        }
    }
    // A line that is not JSON at all: -32700, with a null id.
    raw.write_line("{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": ")
        .await;
    match answered(&raw, &Value::Null, "garbage").await {
        Err(Compat::Refused { code, .. }) => assert_eq!(code, -32700),
        other => panic!("a line that is not JSON must be refused -32700, got {other:?}"),
    }
    // The proxy survived all of it and serves a client that speaks properly.
    let good = &matrix()[3];
    assert!(
        matches!(run_profile(&mut raw, good).await, Compat::Works { .. }),
        "the proxy must serve a correct client after refusing broken ones"
    );
    ends_cleanly(raw).await.unwrap();
}

/// Negative control: a client that calls a tool before any `initialize` is refused, not served.
#[tokio::test]
async fn a_tool_call_before_initialize_is_refused_and_the_session_can_still_start() {
    let (_daemon, options) = owned_daemon().await;
    let mut raw = RawMcp::start(options);
    let rude = Profile {
        name: "no handshake",
        params: None,
        ping_before_initialized: false,
        sends_initialized: false,
    };
    match ask(
        &mut raw,
        &rude,
        "tools/call",
        Some(json!({ "name": "reticle_sessions", "arguments": {} })),
    )
    .await
    {
        Err(Compat::Refused { code, message, .. }) => {
            assert_eq!(code, -32600, "{message}");
            assert!(message.contains("initialize"), "{message}");
        }
        other => panic!("a call before initialize must be refused -32600, got {other:?}"),
    }
    let good = &matrix()[0];
    assert!(matches!(
        run_profile(&mut raw, good).await,
        Compat::Works { .. }
    ));
    ends_cleanly(raw).await.unwrap();
}

/// Runs the official TypeScript SDK client script with `command args`; its JSON report and
/// exit code.
async fn typescript_client(
    state_dir: &Path,
    command: &Path,
    args: &[String],
) -> (Value, Option<i32>) {
    let sdk = repo_root().join("sdk");
    let installed = sdk.join("node_modules/@modelcontextprotocol/sdk/package.json");
    assert!(
        installed.is_file(),
        "the official MCP SDK is not installed: run `cd sdk && npm ci` (scripts/test.sh does it)"
    );
    let mut node = tokio::process::Command::new("node");
    node.arg(sdk.join("test-support/mcp-sdk-client.mjs"))
        .arg(command)
        .args(args)
        .current_dir(&sdk)
        .env(env::STATE_DIR, state_dir)
        .env(env::IDLE_SHUTDOWN_MS, "20000")
        .env(marker::MARKER_VAR, marker::marker())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = node
        .spawn()
        .expect("node runs (it is installed with the SDK's tests)");
    harness::child_stderr::forward(child.stderr.take());
    let output = tokio::time::timeout(NODE_BOUND, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("the TypeScript client hung past {NODE_BOUND:?}"))
        .expect("the TypeScript client's output is read");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report = serde_json::from_str(stdout.trim()).unwrap_or_else(|err| {
        panic!("the TypeScript client printed no JSON report ({err}): {stdout}")
    });
    (report, output.status.code())
}

/// The TypeScript client's report says every step answered, on a version Reticle speaks.
fn assert_the_client_completed(report: &Value, code: Option<i32>) {
    assert_eq!(
        (report["ok"].as_bool(), code),
        (Some(true), Some(0)),
        "{report}"
    );
    let version = report["protocolVersion"].as_str().unwrap_or_default();
    assert!(SUPPORTED_VERSIONS.contains(&version), "{report}");
}

#[tokio::test]
async fn the_official_typescript_sdk_client_lists_and_calls_tools_through_reticle_mcp() {
    let daemon = OwnedDaemon::start().await;
    let args = ["mcp", "--port", &daemon.port().to_string()].map(str::to_string);
    let (report, code) = typescript_client(daemon.state_dir(), &binaries::reticle(), &args).await;
    assert_the_client_completed(&report, code);
    assert_eq!(report["server"]["name"], "reticle", "{report}");
    assert!(report["capabilities"]["tools"].is_object(), "{report}");
    assert!(
        report["instructions"]
            .as_str()
            .is_some_and(|text| text.contains("reticle_act_and_wait")),
        "{report}"
    );
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert!(tools.contains(&"reticle_sessions"), "{report}");
    assert_eq!(report["call"]["isError"], false, "{report}");
    assert!(
        report["call"]["structuredContent"]["sessions"].is_array(),
        "{report}"
    );
    assert_eq!(
        report["call"]["structuredContent"]["daemon"]["instance"],
        daemon.instance(),
        "the call was served by the daemon the test owns: {report}"
    );
}

/// Negative control: pointed at a program that is not an MCP server, the TypeScript client
/// reports the failed handshake (so the gate above can go red) instead of hanging.
#[tokio::test]
async fn the_typescript_client_reports_a_server_that_is_not_mcp() {
    let state = tempfile::tempdir().unwrap();
    let not_mcp: PathBuf = binaries::reticle();
    let (report, code) = typescript_client(state.path(), &not_mcp, &["version".to_string()]).await;
    assert_eq!(
        (report["ok"].as_bool(), code),
        (Some(false), Some(1)),
        "{report}"
    );
    assert_eq!(report["step"], "initialize", "{report}");
    assert!(
        report["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{report}"
    );
}

/// The daemon's Streamable HTTP endpoint.
fn streamable_url(daemon: &OwnedDaemon) -> String {
    format!(
        "http://127.0.0.1:{}{}",
        daemon.port(),
        reticle::mcp::streamable::STREAMABLE_PATH
    )
}

#[tokio::test]
async fn the_official_typescript_sdk_client_works_over_the_daemons_streamable_http_endpoint() {
    let daemon = OwnedDaemon::start().await;
    let url = streamable_url(&daemon);
    let (report, code) = typescript_client(
        daemon.state_dir(),
        Path::new("--url"),
        std::slice::from_ref(&url),
    )
    .await;
    assert_the_client_completed(&report, code);
    let tools = report["tools"].as_array().cloned().unwrap_or_default();
    assert!(tools.contains(&json!("reticle_sessions")), "{report}");
    assert_eq!(
        report["call"]["structuredContent"]["daemon"]["instance"],
        daemon.instance(),
        "the call was served by the daemon the test owns: {report}"
    );
    assert_eq!(report["terminated"], true, "{report}");
    // The session it ended is gone: a message naming it is answered 404.
    let session = report["session"].as_str().unwrap_or_default();
    let after = reqwest::Client::new()
        .post(&url)
        .header(reticle::mcp::streamable::SESSION_HEADER, session)
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), 404);
}

#[tokio::test]
async fn a_cross_origin_post_to_the_streamable_endpoint_is_refused_and_opens_no_session() {
    let daemon = OwnedDaemon::start().await;
    let url = streamable_url(&daemon);
    let initialize = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": { "name": "cross-origin", "version": "1" } }
    })
    .to_string();
    let post = |origin: Option<&str>| {
        let mut request = reqwest::Client::new()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(initialize.clone());
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.send()
    };
    let refused = post(Some("https://evil.example")).await.unwrap();
    assert_eq!(refused.status(), 403);
    assert!(
        refused
            .headers()
            .get(reticle::mcp::streamable::SESSION_HEADER)
            .is_none()
    );
    // Control: the same request without the foreign page opens a session.
    let served = post(None).await.unwrap();
    assert_eq!(served.status(), 200);
    assert!(
        served
            .headers()
            .get(reticle::mcp::streamable::SESSION_HEADER)
            .is_some()
    );
}

/// A `MCP-Protocol-Version` the daemon does not speak is refused 400 naming the header and the
/// revisions it speaks, and opens no session (control: a revision it speaks is served).
#[tokio::test]
async fn an_unknown_protocol_version_header_is_refused_400() {
    let daemon = OwnedDaemon::start().await;
    let url = streamable_url(&daemon);
    let initialize = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": { "name": "versions", "version": "1" } }
    })
    .to_string();
    let post = |version: &str| {
        reqwest::Client::new()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header(reticle::mcp::streamable::VERSION_HEADER, version)
            .body(initialize.clone())
            .send()
    };
    let refused = post("1999-01-01").await.unwrap();
    assert_eq!(refused.status(), 400);
    assert!(
        refused
            .headers()
            .get(reticle::mcp::streamable::SESSION_HEADER)
            .is_none()
    );
    let said = refused.text().await.unwrap();
    assert!(
        said.contains("1999-01-01") && said.contains("2025-06-18"),
        "{said}"
    );
    // Control: a revision it speaks opens a session.
    let served = post("2025-06-18").await.unwrap();
    assert_eq!(served.status(), 200);
}

/// JSON-RPC ids come back exactly as they were sent, through the proxy and from the daemon's
/// Streamable HTTP endpoint alike: a number serde would write back differently (`1e3` as
/// `1000.0`, `-0`, a huge integer as a float, `2.50`) is echoed as its own text, for a request
/// answered (ping, a tool call) and for one refused. Control: plain ids as they always were.
#[tokio::test]
async fn every_id_is_echoed_as_the_text_it_was_sent_as() {
    let (daemon, options) = owned_daemon().await;
    let exotic = ["1e3", "-0", "123456789012345678901234567890", "2.50", "12"];
    let echoed =
        |line: &str, id: &str| line.starts_with(&format!(r#"{{"jsonrpc":"2.0","id":{id},"#));

    let mut raw = RawMcp::start(options);
    raw.initialize().await;
    for (n, id) in exotic.iter().enumerate() {
        let (method, params) = if n % 2 == 0 {
            ("ping", json!({}))
        } else {
            (
                "tools/call",
                json!({"name": "reticle_sessions", "arguments": {}}),
            )
        };
        let line =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
        raw.write_line(&line).await;
    }
    raw.write_line(r#"{"jsonrpc":"2.0","id":7e1,"method":"no/such/method"}"#)
        .await;
    let all_answered = || {
        let lines = raw.raw_lines();
        exotic
            .iter()
            .chain(["7e1"].iter())
            .all(|id| lines.iter().any(|l| echoed(l, id)))
    };
    poll::until("every id echoed by the proxy", STEP_BOUND, async || {
        all_answered().then_some(())
    })
    .await;

    let client = harness::streamable_client::StreamableClient::open(daemon.port(), "ids")
        .await
        .expect("a session");
    for id in exotic {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let (status, answer) = client.post_text(body).await.unwrap();
        assert_eq!(status, 200, "{answer}");
        assert!(echoed(&answer, id), "{id}: {answer}");
    }
}
