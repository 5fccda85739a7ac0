//! Speaking MCP to `reticle mcp` over stdio, as an agent does, with every request and answer
//! timed into a [`History`].
//!
//! [`McpClient`] is the real `rmcp` client, one session held open for the whole run; [`RawMcp`]
//! stands beside it for the fault tests rmcp cannot express.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reticle::mcp::jsonrpc::{Ran, TRANSPORT_LOST, TransportLostData};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientConfig, ClientRequest, CustomRequest,
    Implementation, ListToolsRequest, PingRequest, ProtocolVersion, ServerResult,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin};
use tokio::sync::Notify;

use crate::history::{Actor, History, OpType};
use crate::{binaries, child_stderr, marker, poll};

/// The protocol version the harness asks for.
pub const PROTOCOL: &str = "2025-06-18";
/// How long one request may take before the history says `timeout`.
pub const CALL_BOUND: Duration = Duration::from_secs(60);

/// How to start `reticle mcp`.
#[derive(Debug, Clone)]
pub struct ProxyOptions {
    pub port: u16,
    pub state_dir: PathBuf,
    pub env: Vec<(String, String)>,
    /// The binary to run as `<program> mcp --port N`; the one under test
    /// ([`binaries::reticle`]) when `None` (a gate puts its `reticle` here, a negative control a
    /// stand-in).
    pub program: Option<PathBuf>,
    /// The arguments, exactly as a client's configuration names them (default:
    /// `mcp --port <port>`). `port` still names the proxy log, so it must be the port they give.
    pub args: Option<Vec<String>>,
}

impl ProxyOptions {
    /// `reticle mcp --port <port>` with a private state dir. Daemons it starts idle out after
    /// 20 s with no agent, so none outlives a test by much.
    pub fn new(port: u16, state_dir: &Path) -> Self {
        Self {
            port,
            state_dir: state_dir.to_path_buf(),
            env: vec![(
                reticle::config::env::IDLE_SHUTDOWN_MS.into(),
                "20000".into(),
            )],
            program: None,
            args: None,
        }
    }

    /// Runs `program` instead of the `reticle` under test.
    pub fn program(mut self, program: impl Into<PathBuf>) -> Self {
        self.program = Some(program.into());
        self
    }

    /// Runs the binary with these arguments instead of `mcp --port <port>`: what a client
    /// configuration says to run, spawned as the client would.
    pub fn args(mut self, args: &[String]) -> Self {
        self.args = Some(args.to_vec());
        self
    }

    /// Sets an environment variable for the proxy (and what it starts).
    pub fn env(mut self, key: &str, value: impl Into<String>) -> Self {
        self.env.push((key.to_string(), value.into()));
        self
    }

    /// The proxy's command, stdio not yet chosen: for a test that wires the agent's ends itself.
    pub fn command(&self) -> tokio::process::Command {
        let program = self.program.clone().unwrap_or_else(binaries::reticle);
        let mut command = tokio::process::Command::new(program);
        match &self.args {
            Some(args) => command.args(args),
            None => command.args(["mcp", "--port", &self.port.to_string()]),
        };
        command
            .env(reticle::config::env::STATE_DIR, &self.state_dir)
            .env(marker::MARKER_VAR, marker::marker())
            .kill_on_drop(true);
        for (key, value) in &self.env {
            command.env(key, value);
        }
        command
    }

    /// Starts the proxy on these agent ends, its stderr copied into the test's own
    /// ([`child_stderr`]: none of its processes holds the test runner's pipe).
    pub fn spawn(&self, stdin: impl Into<Stdio>, stdout: impl Into<Stdio>) -> Child {
        let mut child = self
            .command()
            .stdin(stdin)
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .expect("reticle mcp starts");
        child_stderr::forward(child.stderr.take());
        child
    }

    /// The proxy log.
    pub fn log_path(&self) -> PathBuf {
        self.state_dir.join(format!("proxy-{}.log", self.port))
    }

    /// The proxy log's events so far, parsed.
    pub fn log_events(&self) -> Vec<Value> {
        std::fs::read_to_string(self.log_path())
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }
}

/// How a request failed.
#[derive(Debug, Clone, PartialEq)]
pub enum McpFailure {
    /// A JSON-RPC error answer.
    Rpc {
        code: i32,
        message: String,
        data: Option<Value>,
    },
    /// The client could not send it or the session ended.
    Transport(String),
    /// No answer within [`CALL_BOUND`].
    Timeout,
}

impl McpFailure {
    /// The JSON-RPC code, if it was an error answer.
    pub fn code(&self) -> Option<i32> {
        match self {
            McpFailure::Rpc { code, .. } => Some(*code),
            _ => None,
        }
    }

    pub fn message(&self) -> String {
        match self {
            McpFailure::Rpc { message, .. } => message.clone(),
            McpFailure::Transport(text) => text.clone(),
            McpFailure::Timeout => "timed out".into(),
        }
    }
}

/// The rmcp client's handler: records what the server tells it unasked.
#[derive(Clone)]
struct Recorder {
    history: History,
    list_changed: Arc<AtomicUsize>,
}

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            Default::default(),
            Implementation::new("reticle-harness", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::V_2025_06_18)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
        self.history.record(
            Actor::Client,
            OpType::Info,
            "notifications/tools/list_changed",
            json!({}),
        );
    }
}

/// One held-open MCP session to `reticle mcp`, through the rmcp client. It sends plain
/// `tools/list` / `tools/call` requests (not rmcp's cached helpers), so every answer the proxy
/// gives reaches the history.
pub struct McpClient {
    service: RunningService<RoleClient, Recorder>,
    history: History,
    list_changed: Arc<AtomicUsize>,
    options: ProxyOptions,
    pid: u32,
    seq: AtomicUsize,
}

impl McpClient {
    /// Starts `reticle mcp` and completes the MCP handshake (recorded as `initialize`).
    pub async fn start(options: ProxyOptions) -> Result<Self, McpFailure> {
        Self::start_recording(options, History::new()).await
    }

    /// Like [`McpClient::start`], recording into a history the caller already holds.
    pub async fn start_recording(
        options: ProxyOptions,
        history: History,
    ) -> Result<Self, McpFailure> {
        let list_changed = Arc::new(AtomicUsize::new(0));
        let (transport, stderr) = TokioChildProcess::builder(options.command())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| McpFailure::Transport(format!("cannot start reticle mcp: {e}")))?;
        child_stderr::forward(stderr);
        let pid = transport.id().unwrap_or(0);
        let recorder = Recorder {
            history: history.clone(),
            list_changed: list_changed.clone(),
        };
        history.invoke(
            "initialize",
            json!({ "id": 0, "protocolVersion": PROTOCOL }),
        );
        let service = match tokio::time::timeout(CALL_BOUND, recorder.serve(transport)).await {
            Ok(Ok(service)) => service,
            Ok(Err(err)) => {
                let failure = McpFailure::Transport(err.to_string());
                history.complete(
                    OpType::Fail,
                    "initialize",
                    json!({ "id": 0, "error": failure.message() }),
                );
                return Err(failure);
            }
            Err(_) => {
                history.complete(
                    OpType::Info,
                    "initialize",
                    json!({ "id": 0, "timeout": true }),
                );
                return Err(McpFailure::Timeout);
            }
        };
        let info = service
            .peer()
            .peer_info()
            .map(|i| serde_json::to_value(&*i).unwrap_or_default());
        history.complete(OpType::Ok, "initialize", json!({ "id": 0, "result": info }));
        Ok(Self {
            service,
            history,
            list_changed,
            options,
            pid,
            seq: AtomicUsize::new(1),
        })
    }

    /// `tools/list`; the tool names on success.
    pub async fn list_tools(&self) -> Result<Vec<String>, McpFailure> {
        let request = ClientRequest::ListToolsRequest(ListToolsRequest {
            method: Default::default(),
            params: None,
            extensions: Default::default(),
        });
        let result = self.request("tools/list", json!({}), request).await?;
        Ok(result["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| t["name"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default())
    }

    /// `tools/call`; the result object on success.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<Value, McpFailure> {
        let mut params = CallToolRequestParams::new(name.to_string());
        params.arguments = arguments.as_object().cloned();
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        self.request(
            "tools/call",
            json!({ "name": name, "arguments": arguments }),
            request,
        )
        .await
    }

    /// `ping`.
    pub async fn ping(&self) -> Result<(), McpFailure> {
        let request = ClientRequest::PingRequest(PingRequest {
            method: Default::default(),
            extensions: Default::default(),
        });
        self.request("ping", json!({}), request).await.map(|_| ())
    }

    /// Any other method, as a custom request.
    pub async fn custom(&self, method: &str, params: Value) -> Result<Value, McpFailure> {
        let request =
            ClientRequest::CustomRequest(CustomRequest::new(method, Some(params.clone())));
        self.request(method, params, request).await
    }

    async fn request(
        &self,
        f: &str,
        value: Value,
        request: ClientRequest,
    ) -> Result<Value, McpFailure> {
        let op = json!(self.seq.fetch_add(1, Ordering::SeqCst));
        self.history.invoke(f, json!({ "id": op, "params": value }));
        let outcome =
            tokio::time::timeout(CALL_BOUND, self.service.peer().send_request(request)).await;
        let result = match outcome {
            Err(_) => Err(McpFailure::Timeout),
            Ok(Ok(result)) => Ok(server_result(result)),
            Ok(Err(ServiceError::McpError(error))) => Err(McpFailure::Rpc {
                code: error.code.0,
                message: error.message.to_string(),
                data: error.data.clone(),
            }),
            Ok(Err(other)) => Err(McpFailure::Transport(other.to_string())),
        };
        match &result {
            Ok(value) => {
                let (op_type, recorded) = completion_of_result(op, value);
                self.history.complete(op_type, f, recorded)
            }
            Err(McpFailure::Timeout) => {
                self.history
                    .complete(OpType::Info, f, json!({ "id": op, "timeout": true }))
            }
            Err(McpFailure::Rpc {
                code,
                message,
                data,
            }) => self.history.complete(
                completion_of_error(*code, data.as_ref()),
                f,
                json!({ "id": op, "code": code, "message": message, "data": data }),
            ),
            Err(McpFailure::Transport(text)) => {
                self.history
                    .complete(OpType::Info, f, json!({ "id": op, "transport": text }))
            }
        };
        result
    }

    /// Calls `tools/call` until one succeeds (each attempt is in the history), within `bound`.
    pub async fn call_until_ok(&self, name: &str, arguments: Value, bound: Duration) -> Value {
        poll::until(
            &format!("{name} to succeed through reticle mcp"),
            bound,
            async || self.call_tool(name, arguments.clone()).await.ok(),
        )
        .await
    }

    pub fn history(&self) -> &History {
        &self.history
    }

    /// How many `notifications/tools/list_changed` arrived.
    pub fn list_changed(&self) -> usize {
        self.list_changed.load(Ordering::SeqCst)
    }

    /// The `reticle mcp` (supervisor) process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    pub fn options(&self) -> &ProxyOptions {
        &self.options
    }

    /// Ends the session (closes the proxy's stdin) and waits for the client to wind down.
    pub async fn close(self) {
        let _ = tokio::time::timeout(Duration::from_secs(10), self.service.cancel()).await;
    }
}

/// How an error answer completes its call in the history: `info` (unknown) when the proxy says
/// the call may have run ([`TRANSPORT_LOST`] whose data does not say it did not run), else `fail`
/// (it definitely did not happen, and said so). Every client that records MCP answers (here and
/// the gates' agents) classifies through this one function.
pub fn completion_of_error(code: i32, data: Option<&Value>) -> OpType {
    let ran = data.and_then(TransportLostData::read).map(|lost| lost.ran);
    if code == TRANSPORT_LOST && ran != Some(Ran::No) {
        OpType::Info
    } else {
        OpType::Fail
    }
}

/// The reason a tool result says `isError` (the tool refused: `structuredContent.reason`, else
/// its first text block), or `None` for a result that is not an error.
pub fn refusal_of(result: &Value) -> Option<String> {
    if result["isError"] != true {
        return None;
    }
    let reason = result["structuredContent"]["reason"]
        .as_str()
        .or_else(|| result["content"][0]["text"].as_str())
        .unwrap_or("unnamed");
    Some(reason.to_string())
}

/// How a result answering the call `id` completes it in the history: `ok`, or `fail` when the
/// result is a tool's refusal ([`refusal_of`]; the recorded value names its `reason`), so that a
/// judge reading `ok` as success never counts a refusal. Every client that records MCP results
/// (here and the gates' agents) classifies through this one function.
pub fn completion_of_result(id: Value, result: &Value) -> (OpType, Value) {
    match refusal_of(result) {
        Some(reason) => (
            OpType::Fail,
            json!({ "id": id, "result": result, "reason": reason,
                    "message": format!("the tool refused: {reason}") }),
        ),
        None => (OpType::Ok, json!({ "id": id, "result": result })),
    }
}

/// Whether a line read from the proxy is an answer (a result or an error) to `id`.
fn is_answer_to(line: &Value, id: &Value) -> bool {
    line.get("id") == Some(id) && (line.get("result").is_some() || line.get("error").is_some())
}

fn server_result(result: ServerResult) -> Value {
    serde_json::to_value(result).unwrap_or(Value::Null)
}

/// `reticle mcp` driven line by line, for faults a real client cannot produce: garbage lines and
/// half objects, stdin closed with calls in flight, and a duplicate answer (rmcp drops an answer
/// for an id it no longer waits on, so "exactly once" can only be checked on the raw stream).
pub struct RawMcp {
    child: Child,
    stdin: Option<ChildStdin>,
    received: Arc<std::sync::Mutex<Vec<Value>>>,
    /// Every line read from stdout, as its text.
    lines: Arc<std::sync::Mutex<Vec<String>>>,
    arrived: Arc<Notify>,
    reader: Option<tokio::task::JoinHandle<()>>,
    history: History,
    options: ProxyOptions,
    next_id: u64,
}

impl RawMcp {
    /// Starts `reticle mcp` with piped stdio; nothing is sent yet.
    pub fn start(options: ProxyOptions) -> Self {
        let mut child = options.spawn(Stdio::piped(), Stdio::piped());
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let received = Arc::new(std::sync::Mutex::new(Vec::new()));
        let texts = Arc::new(std::sync::Mutex::new(Vec::new()));
        let arrived = Arc::new(Notify::new());
        let history = History::new();
        let reader = {
            let received = received.clone();
            let texts = texts.clone();
            let arrived = arrived.clone();
            let history = history.clone();
            tokio::spawn(async move {
                let mut lines = tokio::io::BufReader::new(stdout).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    texts.lock().unwrap().push(line.clone());
                    let value: Value = serde_json::from_str(&line).unwrap_or(Value::String(line));
                    let kind = if let Some(error) = value.get("error") {
                        let code = error["code"].as_i64().unwrap_or(0) as i32;
                        completion_of_error(code, error.get("data"))
                    } else if value.get("result").is_some() {
                        OpType::Ok
                    } else {
                        OpType::Info
                    };
                    let f = value["method"].as_str().unwrap_or("answer").to_string();
                    history.record(Actor::Client, kind, &f, value.clone());
                    received.lock().unwrap().push(value);
                    arrived.notify_waiters();
                }
                arrived.notify_waiters();
            })
        };
        Self {
            child,
            stdin,
            received,
            lines: texts,
            arrived,
            reader: Some(reader),
            history,
            options,
            next_id: 1,
        }
    }

    /// Writes one raw line (a newline is added).
    pub async fn write_line(&mut self, line: &str) {
        self.try_write_line(line)
            .await
            .expect("write to reticle mcp");
    }

    /// Writes one raw line, saying whether the proxy took it (a dead proxy is an error, not a
    /// panic, so a gate can score it).
    pub async fn try_write_line(&mut self, line: &str) -> std::io::Result<()> {
        self.history.record(
            Actor::Client,
            OpType::Info,
            "write",
            json!({ "bytes": line.len() }),
        );
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::other("stdin is closed"))?;
        stdin.write_all(line.as_bytes()).await?;
        stdin.write_all(b"\n").await?;
        stdin.flush().await
    }

    /// Sends a request with a fresh numeric id; returns the id.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        self.history
            .invoke(method, json!({ "id": id, "params": params }));
        let line =
            json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string();
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("write to reticle mcp");
        id
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str) {
        let line = json!({ "jsonrpc": "2.0", "method": method }).to_string();
        self.write_line(&line).await;
    }

    /// `initialize` then `notifications/initialized`; the initialize answer.
    pub async fn initialize(&mut self) -> Value {
        let id = self
            .request(
                "initialize",
                json!({ "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": { "name": "reticle-harness-raw", "version": "1" } }),
            )
            .await;
        let answer = self
            .answer(&id, Duration::from_secs(10))
            .await
            .expect("initialize is answered");
        self.notify("notifications/initialized").await;
        answer
    }

    /// A fresh proxy on `options`, initialized, that calls `tool` once: the whole JSON-RPC
    /// answer within `bound` (panics when none comes; a test then names what it waited for).
    pub async fn call_once(
        options: ProxyOptions,
        tool: &str,
        arguments: Value,
        bound: Duration,
    ) -> Value {
        let mut agent = Self::start(options);
        agent.initialize().await;
        let id = agent
            .request(
                "tools/call",
                json!({ "name": tool, "arguments": arguments }),
            )
            .await;
        agent
            .answer(&id, bound)
            .await
            .unwrap_or_else(|| panic!("{tool} was not answered within {bound:?}"))
    }

    /// Waits (bounded) for the first answer carrying `id`.
    pub async fn answer(&self, id: &Value, bound: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + bound;
        loop {
            // Registered before the look, so a line that arrives in between still wakes it.
            let notified = self.arrived.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            // Searched in place: cloning everything received (every catalogue listing included)
            // on each look made each wait cost more than the one before.
            let found = self
                .received
                .lock()
                .unwrap()
                .iter()
                .find(|v| is_answer_to(v, id))
                .cloned();
            if found.is_some() {
                return found;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return None;
            }
        }
    }

    /// How many answers carried `id` so far.
    pub fn answers_for(&self, id: &Value) -> usize {
        self.received
            .lock()
            .unwrap()
            .iter()
            .filter(|v| is_answer_to(v, id))
            .count()
    }

    /// Every line read from stdout so far, as its text (what a parse would re-encode).
    pub fn raw_lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// Everything read from stdout so far.
    pub fn received(&self) -> Vec<Value> {
        self.received.lock().unwrap().clone()
    }

    /// Closes stdin (the agent going away).
    pub fn close_stdin(&mut self) {
        self.history
            .record(Actor::Harness, OpType::Info, "close_stdin", json!({}));
        self.stdin = None;
    }

    /// Waits (bounded) for the proxy to exit and its stdout to be read to the end.
    pub async fn wait_exit(&mut self, bound: Duration) -> Option<std::process::ExitStatus> {
        let status = tokio::time::timeout(bound, self.child.wait())
            .await
            .ok()?
            .ok()?;
        if let Some(reader) = self.reader.take() {
            let _ = tokio::time::timeout(bound, reader).await;
        }
        Some(status)
    }

    pub fn pid(&self) -> u32 {
        self.child.id().unwrap_or(0)
    }

    pub fn history(&self) -> &History {
        &self.history
    }

    pub fn options(&self) -> &ProxyOptions {
        &self.options
    }
}

/// The worker of `reticle mcp` supervisor `pid`: its child whose command line says
/// `mcp-worker` (it has one while its link is up).
pub fn worker_of(pid: u32) -> Option<u32> {
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let child: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).ok()?;
            let parent: u32 = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            let cmdline = std::fs::read(format!("/proc/{child}/cmdline")).ok()?;
            (parent == pid && String::from_utf8_lossy(&cmdline).contains("mcp-worker"))
                .then_some(child)
        })
}

#[cfg(test)]
mod tests {
    use reticle::mcp::jsonrpc::LostPopulation;

    use super::*;

    #[test]
    fn an_error_is_unknown_only_when_the_proxy_says_the_call_may_have_run() {
        let lost = |ran: Ran| {
            serde_json::to_value(TransportLostData {
                population: LostPopulation::InFlightLost,
                ran,
                reason: "sse_ended".into(),
                port: 4400,
            })
            .unwrap()
        };
        assert_eq!(
            completion_of_error(TRANSPORT_LOST, Some(&lost(Ran::Unknown))),
            OpType::Info
        );
        assert_eq!(completion_of_error(TRANSPORT_LOST, None), OpType::Info);
        assert_eq!(
            completion_of_error(TRANSPORT_LOST, Some(&lost(Ran::No))),
            OpType::Fail
        );
        // Only the link's own code leaves the outcome open: a refusal did not run.
        assert_eq!(
            completion_of_error(-32602, Some(&lost(Ran::Unknown))),
            OpType::Fail
        );
    }
}
