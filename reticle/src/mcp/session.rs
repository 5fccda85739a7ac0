//! One protocol session: a fresh one per stream, initialized by its own `initialize`. It answers
//! `initialize`, `ping`, `tools/list` and `tools/call` per JSON-RPC 2.0 (ids echoed,
//! notifications unanswered) and refuses anything else before `initialize` has been seen.
//! Protocol methods are answered before the POST that carried them returns, so a client that
//! waits for each POST knows its `initialize` was handled before its next call; tool calls run
//! on their own task.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use futures_util::FutureExt;
use rmcp::model::{CallToolRequestParams, ListToolsResult};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::jsonrpc::{self, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND};
use super::{McpState, protocol};
use crate::tools::{ToolContext, run_tool};

/// One client's protocol session.
#[derive(Debug)]
pub struct ProtocolSession {
    /// The id in the endpoint path.
    id: String,
    /// Lines to put on this session's stream as `message` events.
    outbound: mpsc::Sender<String>,
    /// The protocol version agreed by `initialize`; `None` until then.
    negotiated: Mutex<Option<&'static str>>,
}

type Refusal = (i32, String);

impl ProtocolSession {
    pub fn new(id: String, outbound: mpsc::Sender<String>) -> Self {
        Self {
            id,
            outbound,
            negotiated: Mutex::new(None),
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// Whether `initialize` has been answered.
    pub fn initialized(&self) -> bool {
        self.negotiated.lock().map(|n| n.is_some()).unwrap_or(false)
    }

    /// Puts one line on the stream; a closed stream drops it (its client is gone).
    pub async fn send(&self, line: String) {
        let _ = self.outbound.send(line).await;
    }

    /// Handles one posted message.
    pub async fn receive(self: &Arc<Self>, body: &[u8], mcp: &McpState, ctx: &ToolContext) {
        let Ok(text) = std::str::from_utf8(body) else {
            let answer = jsonrpc::error_response(
                &Value::Null,
                jsonrpc::PARSE_ERROR,
                "parse error: the message is not UTF-8",
                None,
            );
            return self.send(answer.to_string()).await;
        };
        let message = match jsonrpc::parse(text) {
            Ok(message) => message,
            Err(invalid) => return self.send(invalid.response().to_string()).await,
        };
        match &message.kind {
            jsonrpc::Kind::Request { id, method } => {
                self.request(id.clone(), method, message.params(), mcp, ctx)
                    .await;
            }
            // `notifications/initialized`, `notifications/cancelled` and the rest need no
            // answer; tool calls here are short enough to run to completion.
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
        let answer: Result<Value, Refusal> = match method {
            "initialize" => self.initialize(params),
            "ping" => Ok(json!({})),
            _ if !self.initialized() => {
                let reason = format!(
                    "this MCP session has not been initialized, so '{method}' was not run: send initialize first"
                );
                mcp.log_refusal(&self.id, method, "uninitialized");
                Err((INVALID_REQUEST, reason))
            }
            "tools/list" => list_tools(params, mcp),
            "tools/call" => match read_call(params) {
                Ok(call) => {
                    self.spawn_call(id, call, mcp.clone(), ctx.clone());
                    return;
                }
                Err(refusal) => Err(refusal),
            },
            _ => Err((
                METHOD_NOT_FOUND,
                format!(
                    "method not found: '{method}'; this server answers initialize, ping, tools/list and tools/call"
                ),
            )),
        };
        self.send(answer_line(&id, answer)).await;
    }

    fn initialize(&self, params: Option<&Value>) -> Result<Value, Refusal> {
        let params = protocol::read_initialize(params).map_err(|e| (INVALID_PARAMS, e))?;
        let asked = params.protocol_version.as_str();
        if let Ok(mut negotiated) = self.negotiated.lock() {
            *negotiated = Some(protocol::negotiate(Some(asked)));
        }
        Ok(protocol::initialize_result(Some(asked)))
    }

    fn spawn_call(
        self: &Arc<Self>,
        id: Value,
        call: CallToolRequestParams,
        mcp: McpState,
        ctx: ToolContext,
    ) {
        let session = self.clone();
        mcp.inner
            .in_flight
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        tokio::spawn(async move {
            let catalogue = mcp.catalogue();
            let arguments = call.arguments.unwrap_or_default();
            let run = run_tool(&ctx, &catalogue, &call.name, arguments);
            let answer = match AssertUnwindSafe(run).catch_unwind().await {
                Ok(Ok(result)) => serde_json::to_value(result).map_err(|e| {
                    (
                        INTERNAL_ERROR,
                        format!("the result could not be encoded: {e}"),
                    )
                }),
                Ok(Err(refusal)) => Err((INVALID_PARAMS, refusal.to_string())),
                Err(_) => Err((
                    INTERNAL_ERROR,
                    format!(
                        "the tool '{}' failed inside Reticle; the daemon is still serving",
                        call.name
                    ),
                )),
            };
            session.send(answer_line(&id, answer)).await;
            mcp.inner
                .in_flight
                .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        });
    }
}

fn answer_line(id: &Value, answer: Result<Value, Refusal>) -> String {
    match answer {
        Ok(result) => jsonrpc::result_response(id, result),
        Err((code, reason)) => jsonrpc::error_response(id, code, &reason, None),
    }
    .to_string()
}

fn list_tools(params: Option<&Value>, mcp: &McpState) -> Result<Value, Refusal> {
    if let Some(params) = params
        && !params.is_object()
    {
        return Err((INVALID_PARAMS, "tools/list params must be an object".into()));
    }
    let mut result = ListToolsResult::with_all_items(mcp.catalogue().tools());
    result.result_type = None;
    serde_json::to_value(result).map_err(|e| (INTERNAL_ERROR, e.to_string()))
}

fn read_call(params: Option<&Value>) -> Result<CallToolRequestParams, Refusal> {
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
    use crate::daemon::Activity;
    use crate::http::DaemonInfo;
    use crate::tools::Catalogue;

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
        let ctx = ToolContext {
            info: Arc::new(DaemonInfo {
                version: "0".into(),
                instance: "i".into(),
                pid: 1,
                port: 4400,
                started_at: "now".into(),
            }),
            bridge: crate::bridge::Bridge::new(
                Default::default(),
                None,
                Activity::new(),
                Default::default(),
                None,
            ),
            activity: Activity::new(),
        };
        (session, rx, McpState::new(catalogue, None), ctx)
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
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"reticle_sessions","arguments":{"x":1}}}"#,
                -32602,
                json!(4),
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

    #[tokio::test]
    async fn tools_list_serves_the_catalogue_and_a_swap_is_announced() {
        let (session, mut rx, mcp, ctx) = setup(Catalogue::standard());
        mcp.register(session.clone());
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
        assert_eq!(names, ["reticle_sessions"]);
        mcp.replace_catalogue(Catalogue::with_edits("+reticle_test_echo").unwrap())
            .await;
        let note: Value = serde_json::from_str(&rx.recv().await.unwrap()).unwrap();
        assert_eq!(note["method"], "notifications/tools/list_changed");
        assert!(note.get("id").is_none());
    }
}
