//! One protocol session: a fresh one per stream, initialized by its own `initialize`. It answers
//! `initialize`, `ping`, `tools/list` and `tools/call` per JSON-RPC 2.0, refuses anything else
//! before `initialize`, and gives every request one answer, except a call its client cancelled
//! (stopped, never answered). Every call runs as the session's agent, its lease holder.
//! It must not know the transport: answers go to the POST ([`super::inline`]) or the stream.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::task::Poll;

use futures_util::FutureExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use super::inline::{AnswerWaiter, WaitingPosts};
use super::jsonrpc::{self, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND};
use super::logging::{self, Level};
use super::{McpState, protocol};
use crate::tools::lease_book::LeaseHolder;
use crate::tools::progress::{self, Progress};
use crate::tools::{Catalogue, ToolContext, run_tool};
use crate::wire::trace::CLIENT_ID_META;

/// One client's protocol session. Protocol methods are answered before the POST that carried
/// them returns, so a client waiting on each POST knows its `initialize` was handled. A tool
/// call's first poll runs on its POST's task; a call that waits moves to its own task, which
/// `notifications/cancelled` naming it stops (and never answers, as MCP asks). A call reusing a
/// running call's id, or past the daemon's call cap, is refused -32600. Answers are encoded once
/// (`tools/list` is pre-encoded; structured content is written from its text block), and a
/// call's root span carries its JSON-RPC id (the agent's own, when forwarded in `_meta`).
#[derive(Debug)]
pub struct ProtocolSession {
    /// The id in the endpoint path.
    id: String,
    /// The agent this stream belongs to: the id its opener named, else the stream's own.
    agent: String,
    /// The directory of the agent's project, when its opener named one: its calls use that
    /// project's workspace.
    project: Option<std::path::PathBuf>,
    /// The client's name from `initialize`, a label for the agent.
    client: Mutex<Option<String>>,
    /// Lines to put on this session's stream as `message` events.
    outbound: mpsc::Sender<String>,
    /// The protocol version agreed by `initialize`; `None` until then.
    negotiated: Mutex<Option<&'static str>>,
    /// Tool calls still running, by their request id (as JSON text); whoever removes an entry
    /// (the call finishing, or a cancellation) answers it.
    running: Mutex<HashMap<String, Running>>,
    /// The POSTs waiting to carry their own request's answer.
    waiting_posts: WaitingPosts,
    /// The least severe `notifications/message` the client wants (`logging/setLevel`).
    log_level: Mutex<Level>,
}

/// A JSON-RPC error answer: its code and message.
type RpcFailure = (i32, String);

/// What became of a call handed to its own task.
#[derive(Debug, PartialEq, Eq)]
enum Handed {
    Running,
    CancelledMeanwhile,
}

/// Where a running call stands, for a cancellation.
#[derive(Debug)]
enum Running {
    /// Its first poll runs on the task of the POST that carried it: nothing can stop it there.
    FirstPoll,
    /// A cancellation came during the first poll: the call is stopped once it has a task.
    CancelAsked,
    /// It waits on its own task, which a cancellation aborts.
    Task(AbortHandle),
}

impl ProtocolSession {
    pub fn new(id: String, outbound: mpsc::Sender<String>) -> Self {
        Self {
            agent: id.clone(),
            project: None,
            client: Mutex::new(None),
            id,
            outbound,
            negotiated: Mutex::new(None),
            running: Mutex::new(HashMap::new()),
            waiting_posts: WaitingPosts::default(),
            log_level: Mutex::new(Level::DEFAULT),
        }
    }

    /// This session as one link of `agent` (a `reticle mcp` names itself on every stream it
    /// opens, so its reconnects stay one agent).
    pub fn for_agent(mut self, agent: Option<String>) -> Self {
        if let Some(agent) = agent {
            self.agent = agent;
        }
        self
    }

    /// This session as the link of an agent working in the project at `project`.
    pub fn in_project(mut self, project: Option<std::path::PathBuf>) -> Self {
        self.project = project;
        self
    }

    /// The agent's project directory, when its opener named one.
    pub fn project(&self) -> Option<&std::path::Path> {
        self.project.as_deref()
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The agent whose link this session is: the agent id its stream was opened with, else the
    /// stream itself, labelled with the `clientInfo` name its `initialize` gave.
    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// Who this session's calls run as.
    fn holder(&self) -> LeaseHolder {
        LeaseHolder {
            id: self.agent.clone(),
            client: self.client.lock().ok().and_then(|c| c.clone()),
        }
    }

    /// The protocol revision `initialize` agreed to; `None` until then.
    pub fn negotiated(&self) -> Option<&'static str> {
        self.negotiated.lock().ok().and_then(|n| *n)
    }

    /// Whether `initialize` has been answered.
    pub fn initialized(&self) -> bool {
        self.negotiated.lock().map(|n| n.is_some()).unwrap_or(false)
    }

    /// Puts one notification on the stream; a closed stream drops it (its client is gone), and
    /// so does a stream with no room for [`crate::config::MCP_STREAM_WAIT`] (its client stopped
    /// reading).
    pub async fn send(&self, line: String) {
        self.put(line).await;
    }

    /// Puts `note`, a `notifications/message`, on the stream when its level is one the client
    /// asked for (none before `initialize`).
    pub async fn send_log(&self, note: &Value) {
        let wanted = *self.log_level.lock().unwrap_or_else(|p| p.into_inner());
        if self.initialized() && logging::level_of(note).is_some_and(|level| level >= wanted) {
            self.put(note.to_string()).await;
        }
    }

    /// Hands the answer to request `id` to the POST waiting for it, if one is; else puts it on
    /// the stream, as [`Self::send`] does.
    async fn answer(&self, id: &Value, line: String) {
        let line = jsonrpc::as_sent(line);
        if let Err(line) = self.waiting_posts.hand_over(&jsonrpc::id_key(id), line) {
            self.put(line).await;
        }
    }

    async fn put(&self, line: String) {
        let _ = self
            .outbound
            .send_timeout(line, crate::config::MCP_STREAM_WAIT)
            .await;
    }

    /// Whether the stream's backlog of unread answers is full.
    pub fn backlog_full(&self) -> bool {
        self.outbound.capacity() == 0
    }

    /// Handles one posted message.
    pub async fn receive(self: &Arc<Self>, body: &[u8], mcp: &McpState, ctx: &ToolContext) {
        if let Some(message) = self.read(body).await {
            self.handle(message, mcp, ctx).await;
        }
    }

    /// Handles one posted message, as [`Self::receive`] does; a request's answer, when it comes
    /// within `bound`, is returned for the POST's own response instead of going on the stream.
    pub async fn receive_answering(
        self: &Arc<Self>,
        body: &[u8],
        mcp: &McpState,
        ctx: &ToolContext,
        bound: std::time::Duration,
    ) -> Option<String> {
        let message = self.read(body).await?;
        let waiter = match &message.kind {
            jsonrpc::Kind::Request { id, .. } => self.claim_answer(id),
            _ => None,
        };
        self.handle(message, mcp, ctx).await;
        waiter?.within(bound).await
    }

    /// A claim on the answer to request `id`, for the POST that carries it (register it before
    /// the request is handled); `None` while another POST claims that id.
    pub fn claim_answer(&self, id: &Value) -> Option<AnswerWaiter> {
        self.waiting_posts.register(jsonrpc::id_key(id))
    }

    /// Whether a POST waits for an answer on this session.
    pub fn answers_awaited(&self) -> bool {
        !self.waiting_posts.is_empty()
    }

    /// The message a body holds; a body that holds none is answered on the stream here.
    async fn read(&self, body: &[u8]) -> Option<jsonrpc::Message> {
        let Ok(text) = std::str::from_utf8(body) else {
            let answer = jsonrpc::error_response(
                &Value::Null,
                jsonrpc::PARSE_ERROR,
                "parse error: the message is not UTF-8",
                None,
            );
            self.answer(&Value::Null, answer.to_string()).await;
            return None;
        };
        match jsonrpc::parse(text) {
            Ok(message) => Some(message),
            Err(invalid) => {
                self.answer(&invalid.id, invalid.response().to_string())
                    .await;
                None
            }
        }
    }

    /// Handles one message already read (and checked) off a POST.
    pub async fn handle(
        self: &Arc<Self>,
        message: jsonrpc::Message,
        mcp: &McpState,
        ctx: &ToolContext,
    ) {
        match &message.kind {
            jsonrpc::Kind::Request { id, method } => {
                self.request(id.clone(), method, message.params(), mcp, ctx)
                    .await;
            }
            jsonrpc::Kind::Notification { method } if method == "notifications/cancelled" => {
                if let Some(id) = message.params().and_then(|p| p.get("requestId")) {
                    self.cancel(id, mcp).await;
                }
            }
            // `notifications/initialized` and the rest need no answer.
            jsonrpc::Kind::Notification { .. } => {}
            // Reticle sends no requests, so there is nothing for a response to complete.
            jsonrpc::Kind::Response { .. } => {}
        }
    }

    async fn request(
        self: &Arc<Self>,
        id: Value,
        method: &str,
        params: Option<&Value>,
        mcp: &McpState,
        ctx: &ToolContext,
    ) {
        let answer: Result<Value, RpcFailure> = match method {
            "initialize" => self.initialize(params),
            "ping" => Ok(json!({})),
            _ if !self.initialized() => {
                let reason = format!(
                    "this MCP session has not been initialized, so '{method}' was not run: send initialize first"
                );
                mcp.log_refusal(&self.id, method, "uninitialized");
                Err((INVALID_REQUEST, reason))
            }
            "tools/list" => match list_tools(params, mcp) {
                Ok(catalogue) => {
                    let line = jsonrpc::result_line(&id, catalogue.list_result());
                    return self.answer(&id, line).await;
                }
                Err(refusal) => Err(refusal),
            },
            "logging/setLevel" => logging::read_set_level(params)
                .map(|level| {
                    *self.log_level.lock().unwrap_or_else(|p| p.into_inner()) = level;
                    json!({})
                })
                .map_err(|reason| (INVALID_PARAMS, reason)),
            "tools/call" => match read_call(params) {
                Ok(call) => match self.start_call(&id, call, mcp, ctx.clone()).await {
                    Ok(()) => return,
                    Err(refusal) => Err(refusal),
                },
                Err(refusal) => Err(refusal),
            },
            _ => Err((
                METHOD_NOT_FOUND,
                format!(
                    "method not found: '{method}'; this server answers initialize, ping, tools/list, tools/call and logging/setLevel"
                ),
            )),
        };
        self.answer(&id, answer_line(&id, answer)).await;
    }

    fn initialize(&self, params: Option<&Value>) -> Result<Value, RpcFailure> {
        let params = protocol::read_initialize(params).map_err(|e| (INVALID_PARAMS, e))?;
        let asked = params.protocol_version.as_str();
        if let Ok(mut client) = self.client.lock() {
            *client = Some(crate::wire::messages::clip(&params.client_info.name, 80));
        }
        if let Ok(mut negotiated) = self.negotiated.lock() {
            *negotiated = Some(protocol::negotiate(Some(asked)));
        }
        Ok(protocol::initialize_result(Some(asked)))
    }

    /// Starts the call, unless its id is already running on this session or the daemon's call
    /// cap is reached (then the refusal to answer it with). Its first poll runs here, on the
    /// task of the POST that carried it: a call that needs no waiting (most that read the
    /// daemon's own state) is answered without a task or a timer of its own. A call
    /// that waits goes on its own task, which the POST's connection ending cannot stop.
    async fn start_call(
        self: &Arc<Self>,
        id: &Value,
        call: CallToolRequestParams,
        mcp: &McpState,
        ctx: ToolContext,
    ) -> Result<(), RpcFailure> {
        let session = self.clone();
        let key = id.to_string();
        let counted = self.book_call(&key, mcp)?;
        let catalogue = mcp.catalogue();
        let progress = progress_asked(&call)
            .map(|token| Progress::new(token, self.outbound.clone()))
            .unwrap_or_default();
        let ctx = ctx
            .in_project(self.project())
            .called_by(self.holder())
            .reporting_to(progress.clone());
        let (call_id, call_key) = (id.clone(), key.clone());
        let daemon = mcp.clone();
        let using = ctx.activity.attach(crate::daemon::activity::Holder::Call);
        let mut call = Box::pin(async move {
            let (_counted, _using) = (counted, using);
            let rpc_id = forwarded_client_id(&call).unwrap_or_else(|| call_key.clone());
            let arguments = call.arguments.unwrap_or_default();
            let tool = crate::tools::clip_name(&call.name);
            let run = run_tool(&ctx, &catalogue, &call.name, arguments, Some(&rpc_id));
            let run = progress::beating(&progress, &tool, run);
            let answer = match AssertUnwindSafe(run).catch_unwind().await {
                Ok(Ok(result)) => encode_call_result(told_skew(result, &daemon)).map_err(|e| {
                    (
                        INTERNAL_ERROR,
                        format!("the result could not be encoded: {e}"),
                        None,
                    )
                }),
                Ok(Err(refusal)) => {
                    Err((INVALID_PARAMS, refusal.to_string(), Some(refusal.data())))
                }
                Err(_) => Err((
                    INTERNAL_ERROR,
                    format!(
                        "the tool '{}' failed inside Reticle; the daemon is still serving",
                        crate::tools::clip_name(&call.name)
                    ),
                    None,
                )),
            };
            if session.finish(&call_key) {
                session
                    .answer(&call_id, call_answer_line(&call_id, answer))
                    .await;
            }
        });
        let first = std::future::poll_fn(|cx| Poll::Ready(call.as_mut().poll(cx))).await;
        if first.is_ready() {
            return Ok(());
        }
        // Polled again at once on its own task, which takes over every wake-up it registered.
        let task = tokio::spawn(call).abort_handle();
        if self.hand_to_task(&key, &task) == Handed::CancelledMeanwhile {
            task.abort();
            self.stopped_unanswered(id, mcp);
        }
        Ok(())
    }

    /// Books call `key`, whose first poll has just ended waiting, as running on `task`; unless
    /// a cancellation came during that poll, when the call is taken off the books for the
    /// caller to stop, unanswered.
    fn hand_to_task(&self, key: &str, task: &AbortHandle) -> Handed {
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        match running.get_mut(key) {
            Some(Running::CancelAsked) => {
                running.remove(key);
                Handed::CancelledMeanwhile
            }
            Some(standing) => {
                *standing = Running::Task(task.clone());
                Handed::Running
            }
            None => Handed::Running,
        }
    }

    /// Puts call `key` on the books as running, counted in flight; the refusal when its id is
    /// already running on this session or the daemon's call cap is reached.
    fn book_call(&self, key: &str, mcp: &McpState) -> Result<InFlight, RpcFailure> {
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        if running.contains_key(key) {
            mcp.log_refusal(&self.id, "tools/call", "duplicate_id");
            return Err((
                INVALID_REQUEST,
                format!(
                    "request id {} is already in use by a call still running on this session; send each request with a fresh id",
                    crate::wire::messages::clip(key, 80)
                ),
            ));
        }
        let Some(counted) = InFlight::begin(mcp) else {
            mcp.log_refusal(&self.id, "tools/call", "call_cap");
            return Err((INVALID_REQUEST, mcp.limits().calls_refusal()));
        };
        running.insert(key.to_string(), Running::FirstPoll);
        Ok(counted)
    }

    /// Takes a running call off the books; whoever gets it answers it.
    fn finish(&self, key: &str) -> bool {
        self.running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key)
            .is_some()
    }

    /// Stops the call `id` names, if it is still running, and leaves it unanswered; a call
    /// already answered (or unknown) is left alone, as the protocol asks.
    async fn cancel(&self, id: &Value, mcp: &McpState) {
        let handle = {
            let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
            let key = id.to_string();
            match running.get_mut(&key) {
                Some(standing @ Running::FirstPoll) => {
                    // Stopped by the POST's task once the call has a task of its own; a call
                    // that ends within its first poll is answered with its own result.
                    *standing = Running::CancelAsked;
                    return;
                }
                Some(Running::Task(_)) => match running.remove(&key) {
                    Some(Running::Task(handle)) => handle,
                    _ => return,
                },
                _ => return,
            }
        };
        handle.abort();
        self.stopped_unanswered(id, mcp);
    }

    /// Call `id`, stopped by its client's cancellation: logged, and the POST waiting for its
    /// answer released with none (the client has stopped waiting; MCP says not to answer).
    fn stopped_unanswered(&self, id: &Value, mcp: &McpState) {
        mcp.log(
            "mcp_call_cancelled",
            json!({ "session": self.id, "id": id, "answered": false }),
        );
        self.waiting_posts.withdraw(&jsonrpc::id_key(id));
    }
}

/// One tool call counted in flight for as long as its task lives, however it ends (returned,
/// unwound or aborted by a cancellation).
struct InFlight(McpState);

impl InFlight {
    /// Counts one more call, unless the call cap is reached.
    fn begin(mcp: &McpState) -> Option<Self> {
        let cap = mcp.limits().calls;
        mcp.inner
            .in_flight
            .fetch_update(
                std::sync::atomic::Ordering::SeqCst,
                std::sync::atomic::Ordering::SeqCst,
                |n| (n < cap).then_some(n + 1),
            )
            .ok()?;
        Some(Self(mcp.clone()))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0
            .inner
            .in_flight
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

fn call_answer_line(id: &Value, answer: Result<String, (i32, String, Option<Value>)>) -> String {
    match answer {
        Ok(result) => jsonrpc::result_line(id, &result),
        Err((code, reason, data)) => jsonrpc::error_response(id, code, &reason, data).to_string(),
    }
}

/// `result` carrying the version skew not yet told, as `version_skew` (a result with no
/// structured object leaves it for the next).
fn told_skew(mut result: CallToolResult, mcp: &McpState) -> CallToolResult {
    let Some(Value::Object(structured)) = result.structured_content.as_mut() else {
        return result;
    };
    let Some(skew) = mcp.take_skew() else {
        return result;
    };
    structured.insert("version_skew".into(), skew);
    if let Ok(text) = serde_json::to_string(&*structured) {
        result.content = vec![rmcp::model::ContentBlock::text(text)];
    }
    result
}

/// A tool result as JSON text, its structured content encoded once: a result built by rmcp's
/// `structured` constructors (every result `run_tool` returns) carries that content's JSON as
/// its one text block, so the text is written as `structuredContent` instead of encoding the
/// value again. A result of any other shape is encoded whole.
fn encode_call_result(mut result: CallToolResult) -> Result<String, serde_json::Error> {
    let Some(structured) = result.structured_content.take() else {
        return serde_json::to_string(&result);
    };
    let mut encoded = serde_json::to_string(&result)?;
    let text = match result.content.as_slice() {
        [only] => only.as_text().map(|t| t.text.as_str()),
        _ => None,
    };
    // `encoded` is an object: reopen it to add the field.
    encoded.pop();
    if !encoded.ends_with('{') {
        encoded.push(',');
    }
    encoded.push_str(r#""structuredContent":"#);
    match text {
        Some(text) => encoded.push_str(text),
        None => encoded.push_str(&serde_json::to_string(&structured)?),
    }
    encoded.push('}');
    Ok(encoded)
}

fn answer_line(id: &Value, answer: Result<Value, RpcFailure>) -> String {
    match answer {
        Ok(result) => jsonrpc::result_response(id, result),
        Err((code, reason)) => jsonrpc::error_response(id, code, &reason, None),
    }
    .to_string()
}

/// The catalogue whose pre-encoded list answers `tools/list`.
fn list_tools(params: Option<&Value>, mcp: &McpState) -> Result<Arc<Catalogue>, RpcFailure> {
    if let Some(params) = params
        && !params.is_object()
    {
        return Err((INVALID_PARAMS, "tools/list params must be an object".into()));
    }
    // Every tool is on one page and no answer carries a `nextCursor`, so no cursor is valid.
    if let Some(cursor) = params
        .and_then(|p| p.get("cursor"))
        .filter(|c| !c.is_null())
    {
        return Err((
            INVALID_PARAMS,
            format!(
                "tools/list: cursor {} was never given by this server (it lists every tool on one page, with no nextCursor); call tools/list without a cursor",
                crate::wire::messages::clip(&cursor.to_string(), 80)
            ),
        ));
    }
    Ok(mcp.catalogue())
}

/// The `progressToken` a call's `_meta` carries (as rmcp reads it: a string or a number), when
/// its client asked for progress.
fn progress_asked(call: &CallToolRequestParams) -> Option<Value> {
    let token = call.meta.as_ref()?.get_progress_token()?;
    serde_json::to_value(token).ok()
}

/// The agent's own request id that `reticle mcp` forwarded in the call's `_meta`, as JSON text.
fn forwarded_client_id(call: &CallToolRequestParams) -> Option<String> {
    let meta = call.meta.as_ref()?;
    meta.get(CLIENT_ID_META).map(Value::to_string)
}

fn read_call(params: Option<&Value>) -> Result<CallToolRequestParams, RpcFailure> {
    let params = params.ok_or((
        INVALID_PARAMS,
        "tools/call needs params with the tool's name and its arguments".to_string(),
    ))?;
    serde_json::from_value(params.clone()).map_err(|e| {
        (
            INVALID_PARAMS,
            format!("tools/call params are not valid ({e}): expected {{\"name\": <tool>, \"arguments\": {{..}}}}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{Catalogue, Surface};
    use tokio_util::sync::CancellationToken;

    fn setup(
        catalogue: Catalogue,
    ) -> (
        Arc<ProtocolSession>,
        mpsc::Receiver<String>,
        McpState,
        ToolContext,
    ) {
        let (tx, rx) = mpsc::channel(64);
        let session = Arc::new(ProtocolSession::new("s1".into(), tx));
        let dir = std::env::temp_dir().join(format!("reticle-session-test-{}", std::process::id()));
        let ctx = ToolContext::detached(&dir);
        (
            session,
            rx,
            McpState::new(
                catalogue,
                None,
                CancellationToken::new(),
                super::super::limits::McpLimits::default(),
            ),
            ctx,
        )
    }

    async fn ask(
        session: &Arc<ProtocolSession>,
        rx: &mut mpsc::Receiver<String>,
        mcp: &McpState,
        ctx: &ToolContext,
        line: &str,
    ) -> Value {
        session.receive(line.as_bytes(), mcp, ctx).await;
        let text = tokio::time::timeout(std::time::Duration::from_secs(5), rx.recv())
            .await
            .expect("an answer")
            .expect("the stream is open");
        serde_json::from_str(&text).unwrap()
    }

    const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

    #[tokio::test]
    async fn a_call_before_initialize_is_refused_and_after_it_runs() {
        let (session, mut rx, mcp, ctx) = setup(Catalogue::standard());
        let call = r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"reticle_sessions","arguments":{}}}"#;
        let refused = ask(&session, &mut rx, &mcp, &ctx, call).await;
        assert_eq!(refused["id"], "c");
        assert_eq!(refused["error"]["code"], INVALID_REQUEST);
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("initialize")
        );
        let init = ask(&session, &mut rx, &mcp, &ctx, INIT).await;
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
        let ran = ask(&session, &mut rx, &mcp, &ctx, call).await;
        assert_eq!(ran["id"], "c");
        assert_eq!(ran["result"]["structuredContent"]["count"], 0);
        assert!(ran["result"]["structuredContent"]["why"].is_string());
        assert!(ran["result"].get("resultType").is_none());
    }

    #[tokio::test]
    async fn an_answer_in_time_goes_back_to_its_post_and_a_later_one_on_the_stream() {
        use std::time::Duration;
        let catalogue = Catalogue::with_edits("+reticle_test_sleep", Surface::Default)
            .expect("the test catalogue");
        let (session, mut rx, mcp, ctx) = setup(catalogue);
        let answer_id = |line: Option<String>| -> Value {
            serde_json::from_str::<Value>(&line.expect("an inline answer")).unwrap()["id"].clone()
        };
        // initialize is answered before its POST returns: even no wait carries it back.
        let init = session
            .receive_answering(INIT.as_bytes(), &mcp, &ctx, Duration::ZERO)
            .await;
        assert_eq!(answer_id(init), json!(0));
        let call = |id: &str, tool: &str, arguments: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":"{id}","method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
            )
        };
        // A call that waits answers from its own task, after a zero wait has ended: its answer
        // goes on the stream.
        let late = session
            .receive_answering(
                call("late", "reticle_test_sleep", r#"{"ms":20}"#).as_bytes(),
                &mcp,
                &ctx,
                Duration::ZERO,
            )
            .await;
        assert_eq!(late, None);
        let streamed = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .unwrap()
            .unwrap();
        assert!(streamed.contains(r#""id":"late""#), "{streamed}");
        let in_time = session
            .receive_answering(
                call("soon", "reticle_test_sleep", r#"{"ms":20}"#).as_bytes(),
                &mcp,
                &ctx,
                Duration::from_secs(60),
            )
            .await;
        assert_eq!(answer_id(in_time), json!("soon"));
        // A call that needs no waiting is answered within its first poll, on the POST's own
        // task: even a zero wait carries its answer back.
        let at_once = session
            .receive_answering(
                call("now", "reticle_sessions", "{}").as_bytes(),
                &mcp,
                &ctx,
                Duration::ZERO,
            )
            .await;
        assert_eq!(answer_id(at_once), json!("now"));
        assert!(
            rx.try_recv().is_err(),
            "an answer carried inline is not streamed too"
        );
    }

    #[tokio::test]
    async fn a_cancellation_during_a_first_poll_stops_the_call_once_it_has_a_task() {
        let (session, mut rx, mcp, _ctx) = setup(Catalogue::standard());
        let idle = tokio::spawn(std::future::pending::<()>()).abort_handle();
        // No cancellation: the call is booked on its task, and a later cancellation finds it.
        session.book_call("1", &mcp).expect("booked");
        assert_eq!(session.hand_to_task("1", &idle), Handed::Running);
        assert!(matches!(
            session.running.lock().unwrap().get("1"),
            Some(Running::Task(_))
        ));
        // A cancellation while the first poll runs is kept for the hand-over, and answers
        // nothing yet (the call may still end within that poll, with its own answer).
        session.book_call("2", &mcp).expect("booked");
        session.cancel(&json!(2), &mcp).await;
        assert!(rx.try_recv().is_err(), "nothing is answered mid-poll");
        assert_eq!(session.hand_to_task("2", &idle), Handed::CancelledMeanwhile);
        assert!(!session.running.lock().unwrap().contains_key("2"));
        // A call that ended within its first poll took itself off the books: a late
        // cancellation finds nothing to stop or answer.
        session.book_call("3", &mcp).expect("booked");
        assert!(session.finish("3"));
        session.cancel(&json!(3), &mcp).await;
        assert!(
            rx.try_recv().is_err(),
            "a finished call is not answered twice"
        );
        // A call waiting on its task, cancelled: stopped, its POST released with no answer,
        // nothing on the stream (MCP: a cancelled request is not answered).
        let claim = session.claim_answer(&json!(4)).expect("a claim");
        session.book_call("4", &mcp).expect("booked");
        let task = tokio::spawn(std::future::pending::<()>()).abort_handle();
        assert_eq!(session.hand_to_task("4", &task), Handed::Running);
        session.cancel(&json!(4), &mcp).await;
        assert_eq!(
            claim.answer().await,
            super::super::inline::Outcome::Withdrawn
        );
        assert!(rx.try_recv().is_err(), "a cancelled call is not answered");
        assert!(!session.running.lock().unwrap().contains_key("4"));
        idle.abort();
    }

    #[tokio::test]
    async fn json_rpc_codes_for_each_kind_of_wrong() {
        let (session, mut rx, mcp, ctx) = setup(Catalogue::standard());
        ask(&session, &mut rx, &mcp, &ctx, INIT).await;
        let cases = [
            ("{not json", -32700, Value::Null),
            (r#"{"jsonrpc":"2.0","id":1}"#, -32600, json!(1)),
            (
                r#"{"jsonrpc":"2.0","id":2,"method":"nope"}"#,
                -32601,
                json!(2),
            ),
            (
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"missing"}}"#,
                -32602,
                json!(3),
            ),
            (
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/call"}"#,
                -32602,
                json!(5),
            ),
            (
                r#"{"jsonrpc":"2.0","id":6,"method":"initialize","params":{}}"#,
                -32602,
                json!(6),
            ),
        ];
        for (line, code, id) in cases {
            let answer = ask(&session, &mut rx, &mcp, &ctx, line).await;
            assert_eq!(answer["error"]["code"], code, "{line} -> {answer}");
            assert_eq!(answer["id"], id, "{line}");
        }
        // Arguments that do not fit are a structured refusal naming the field, not a protocol
        // error: the agent reads it like any other tool result.
        let refused = ask(
            &session,
            &mut rx,
            &mcp,
            &ctx,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"reticle_sessions","arguments":{"x":1}}}"#,
        )
        .await;
        assert_eq!(refused["id"], 4);
        assert_eq!(refused["result"]["isError"], true, "{refused}");
        let refusal = &refused["result"]["structuredContent"];
        assert_eq!(refusal["ok"], false);
        assert!(
            refusal["reason"].as_str().unwrap().contains("`x`"),
            "{refusal}"
        );
        assert!(refusal["recovery"].is_string());
        // Notifications are never answered: the next answer on the stream is the ping's.
        session
            .receive(
                br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                &mcp,
                &ctx,
            )
            .await;
        let pong = ask(
            &session,
            &mut rx,
            &mcp,
            &ctx,
            r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#,
        )
        .await;
        assert_eq!(pong["id"], "p");
        assert_eq!(pong["result"], json!({}));
    }

    #[test]
    fn a_result_encoded_once_is_the_result_encoded_whole() {
        let results = [
            CallToolResult::structured(
                json!({"ok": true, "count": 2, "why": "a \"quoted\" line\n"}),
            ),
            CallToolResult::structured_error(json!({"ok": false, "reason": "r", "recovery": "x"})),
            CallToolResult::success(vec![rmcp::model::ContentBlock::text("plain")]),
        ];
        for mut result in results {
            result.result_type = None;
            let whole = serde_json::to_value(&result).unwrap();
            let once: Value = serde_json::from_str(&encode_call_result(result).unwrap()).unwrap();
            assert_eq!(once, whole);
        }
    }

    #[tokio::test]
    async fn tools_list_refuses_a_cursor_it_never_gave() {
        let (session, mut rx, mcp, ctx) = setup(Catalogue::standard());
        mcp.register(session.clone()).unwrap();
        ask(&session, &mut rx, &mcp, &ctx, INIT).await;
        let refused = ask(
            &session,
            &mut rx,
            &mcp,
            &ctx,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"page-2"}}"#,
        )
        .await;
        assert_eq!(refused["error"]["code"], INVALID_PARAMS, "{refused}");
        assert!(refused["result"].is_null(), "{refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains("page-2") && message.contains("without a cursor"));
        // Control: no cursor, or a null one, is the first (and only) page.
        for params in ["{}", r#"{"cursor":null}"#] {
            let line =
                format!(r#"{{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{params}}}"#);
            let listed = ask(&session, &mut rx, &mcp, &ctx, &line).await;
            assert!(listed["result"]["tools"].is_array(), "{listed}");
        }
    }

    #[tokio::test]
    async fn tools_list_serves_the_catalogue_and_a_swap_is_announced() {
        let (session, mut rx, mcp, ctx) = setup(Catalogue::standard());
        mcp.register(session.clone()).unwrap();
        ask(&session, &mut rx, &mcp, &ctx, INIT).await;
        let listed = ask(
            &session,
            &mut rx,
            &mcp,
            &ctx,
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#,
        )
        .await;
        let names: Vec<&str> = listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names.len(), Catalogue::standard().tools().len());
        assert_eq!(names[0], "reticle_sessions");
        mcp.replace_catalogue(
            Catalogue::with_edits("+reticle_test_echo", crate::tools::Surface::Default).unwrap(),
            "a test edit",
        )
        .await;
        let note: Value = serde_json::from_str(&rx.recv().await.unwrap()).unwrap();
        assert_eq!(note["method"], "notifications/tools/list_changed");
        assert!(note.get("id").is_none());
        let said: Value = serde_json::from_str(&rx.recv().await.unwrap()).unwrap();
        assert_eq!(said["params"]["level"], "info", "{said}");
        assert_eq!(said["params"]["data"]["event"], "catalogue_changed");
        assert_eq!(said["params"]["data"]["why"], "a test edit");

        // A client that asked for warnings and worse is not told at info.
        let quiet =
            r#"{"jsonrpc":"2.0","id":10,"method":"logging/setLevel","params":{"level":"warning"}}"#;
        assert_eq!(
            ask(&session, &mut rx, &mcp, &ctx, quiet).await["result"],
            json!({})
        );
        mcp.replace_catalogue(Catalogue::standard(), "back to the standard catalogue")
            .await;
        let note: Value = serde_json::from_str(&rx.recv().await.unwrap()).unwrap();
        assert_eq!(note["method"], "notifications/tools/list_changed");
        assert!(
            rx.try_recv().is_err(),
            "no info message below the level asked"
        );
        let wrong =
            r#"{"jsonrpc":"2.0","id":11,"method":"logging/setLevel","params":{"level":"loud"}}"#;
        assert_eq!(
            ask(&session, &mut rx, &mcp, &ctx, wrong).await["error"]["code"],
            -32602
        );
    }
}
