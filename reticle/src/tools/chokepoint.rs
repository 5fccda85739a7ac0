//! [`run_tool`]: the one path every tool call takes, by any route (MCP `tools/call`,
//! `reticle_run`, a family `action`): root span, accounting and settle guard, size cap, schema
//! check, session resolution, lease check, the handler and the `session` block, in that order.
//! Every refusal is `{ok:false, reason, recovery}`.
//!
//! Handlers take a [`Call`], which only this module makes: no other path can reach one.

use std::sync::Arc;
use std::time::Instant;

use futures_util::future::BoxFuture;
use rmcp::model::CallToolResult;
use serde_json::{Map, Value, json};
use tracing::Instrument;
use tracing::field::Empty;

use super::bounds::clip;
use super::call::{Call, Route, Sealed};
use super::context::ToolContext;
use super::leases::lease::held_refusal;
use super::refusal::{Refusal, ToolRefusal};
use super::session_block::session_block;
use super::surface::aliases;
use super::surface::args::SESSION_ID;
use super::surface::catalogue::Catalogue;
use super::surface::names::{Standing, ToolName};
use super::surface::registration::SessionUse;
use crate::bridge::{ResolveError, Session};
use crate::wire::trace::{key, span};

/// The largest arguments object a call may carry, serialized.
pub const MAX_ARGUMENT_BYTES: usize = 64 * 1024;

/// Runs one tool call arriving by `tools/call`; `rpc_id` is the caller's JSON-RPC id of it (the
/// agent's own, when `reticle mcp` forwarded it), which its root span carries so a trace reader
/// can match every call to its root.
pub fn run_tool<'a>(
    ctx: &'a ToolContext,
    catalogue: &'a Catalogue,
    name: &'a str,
    arguments: Map<String, Value>,
    rpc_id: Option<&str>,
) -> BoxFuture<'a, Result<CallToolResult, ToolRefusal>> {
    run_routed(ctx, catalogue, name, arguments, Route::Direct, rpc_id)
}

/// Runs a call from inside another (`reticle_run`'s target): every check, span and decoration of
/// a direct call, reached by any catalogued name, with no `rpc_id` (its span is not a root).
/// Handed to handlers in their [`Call`], so no family imports this module.
fn run_nested<'a>(
    ctx: &'a ToolContext,
    catalogue: &'a Catalogue,
    name: &'a str,
    arguments: Map<String, Value>,
) -> BoxFuture<'a, Result<CallToolResult, ToolRefusal>> {
    run_routed(ctx, catalogue, name, arguments, Route::Run, None)
}

/// Runs one tool call by `route`.
fn run_routed<'a>(
    ctx: &'a ToolContext,
    catalogue: &'a Catalogue,
    name: &'a str,
    arguments: Map<String, Value>,
    route: Route,
    rpc_id: Option<&str>,
) -> BoxFuture<'a, Result<CallToolResult, ToolRefusal>> {
    let root = tracing::info_span!(
        span::TOOL_HANDLER,
        tool = clip(name, 80).as_str(),
        rpcId = Empty,
        ok = Empty,
        error = Empty
    );
    if let Some(rpc_id) = rpc_id {
        root.record(key::RPC_ID, clip(rpc_id, 80).as_str());
    }
    let inner = root.clone();
    Box::pin(
        async move {
            let mut settle = SettleGuard::begin(ctx, inner.clone());
            let outcome = call(ctx, catalogue, name, arguments, route).await;
            let failure = match &outcome {
                Err(unknown) => Some(unknown.to_string()),
                Ok((_, Err(refusal))) => Some(refusal.reason.clone()),
                Ok((_, Ok(_))) => None,
            };
            if let Some(error) = &failure {
                inner.record("ok", false);
                inner.record("error", clip(error, 300).as_str());
            }
            settle.refused = failure.is_some();
            settle.finished = true;
            drop(settle);
            let (session, result) = outcome?;
            Ok(encode(session.as_deref(), result))
        }
        .instrument(root),
    )
}

/// The checks and the handler; the session the call resolved comes back for the decoration.
/// Accounting and the settle hook sit in a guard that runs on every exit, returned or unwound.
/// A schema refusal names the field; a session refusal lists the sessions (and the family and
/// action, when a family asked); a state-changing tool on a session another holder leased is
/// refused naming the holder, and every call renews its caller's own leases.
async fn call(
    ctx: &ToolContext,
    catalogue: &Catalogue,
    name: &str,
    mut arguments: Map<String, Value>,
    route: Route,
) -> Result<(Option<Arc<Session>>, Result<Value, Refusal>), ToolRefusal> {
    let size = serde_json::to_vec(&arguments).map(|b| b.len()).unwrap_or(0);
    if size > MAX_ARGUMENT_BYTES {
        return Ok((
            None,
            Err(Refusal::new(
                format!(
                    "the arguments are {size} bytes, over the {MAX_ARGUMENT_BYTES}-byte limit; nothing was run"
                ),
                "send less: refer to elements by ref or testid, not by pasting content",
            )
            .with("limitBytes", MAX_ARGUMENT_BYTES)),
        ));
    }
    let Some(mut tool) = ToolName::parse(name) else {
        return Err(ToolRefusal::Unknown(name.to_string()));
    };
    // A family member by name is its family with the member's action.
    if let Standing::Member { family, action } = tool.standing() {
        if route == Route::Direct {
            return Ok((
                None,
                Err(Refusal::new(
                    format!("{tool} is reached through its family; nothing was run"),
                    format!("call {family} {{\"action\":\"{action}\", ...}}"),
                )),
            ));
        }
        arguments.insert("action".into(), json!(action));
        tool = family;
    }
    if !catalogue.callable(tool) {
        return Err(ToolRefusal::Unknown(name.to_string()));
    }
    if route == Route::Direct && !catalogue.advertises(tool) {
        return Ok((
            None,
            Err(Refusal::new(
                format!("{tool} exists but is not advertised on this surface; nothing was run"),
                format!(
                    "call reticle_run {{\"tool\":\"{tool}\",\"args\":{{...}}}}, or start the daemon with RETICLE_ADVERTISE_ALL_TOOLS=1"
                ),
            )),
        ));
    }
    if let Some(caller) = &ctx.caller {
        ctx.host.leases.touch(caller);
    }
    let Some(registration) = catalogue.registration(tool) else {
        return Ok((
            None,
            Err(Refusal::new(
                format!("{tool} has no implementation in this daemon"),
                "call reticle_tools for the tools this daemon has",
            )),
        ));
    };
    if let Err(problem) = aliases::to_canonical(tool, &mut arguments) {
        return Ok((None, Err(Refusal::bad_arguments(tool.as_str(), &problem))));
    }
    let prepared = match registration.prepare(&arguments) {
        Ok(prepared) => prepared,
        Err(problem) => {
            return Ok((None, Err(Refusal::bad_arguments(tool.as_str(), &problem))));
        }
    };
    let explicit = arguments.get(SESSION_ID).and_then(Value::as_str);
    let opens_its_own = arguments
        .get("action")
        .and_then(Value::as_str)
        .is_some_and(|action| registration.opening_actions.contains(&action));
    let session_use = if opens_its_own {
        SessionUse::None
    } else {
        registration.session
    };
    let mut revived = None;
    let session = match session_use {
        SessionUse::Bound => match resolve(ctx, explicit, &mut revived).await {
            Ok(session) => Some(session),
            Err(mut refusal) => {
                // A family's refusal names the family and the action it was asked for.
                if let Some(action) = arguments.get("action").and_then(Value::as_str) {
                    refusal.reason = format!("{tool} {}: {}", clip(action, 40), refusal.reason);
                }
                return Ok((None, Err(refusal)));
            }
        },
        SessionUse::Optional => match resolve(ctx, explicit, &mut revived).await {
            Ok(session) => Some(session),
            Err(refusal) if explicit.is_some() => return Ok((None, Err(refusal))),
            Err(_) => None,
        },
        SessionUse::None => None,
    };
    if registration.drives_session
        && let Some(session) = &session
        && let Err(held) = ctx.host.leases.admits(session.id(), ctx.caller.as_ref())
    {
        let what = match arguments.get("action").and_then(Value::as_str) {
            Some(action) => format!("{tool} {}", clip(action, 40)),
            None => tool.to_string(),
        };
        return Ok((None, Err(held_refusal(&held, ctx.host.leases.ttl(), &what))));
    }
    let call = Call {
        ctx,
        catalogue,
        tool,
        session: session.clone(),
        arguments,
        nested: run_nested,
        _sealed: Sealed,
    };
    let mut result = prepared.run(&call).await;
    if let (Some(note), Ok(Value::Object(answer))) = (revived, &mut result) {
        answer.insert("relaunched".into(), json!(note));
    }
    Ok((session, result))
}

/// Finds the session a call is for: the explicit id, else the only one, else the clearly most
/// recent; while the daemon is young, waits briefly for a first page rather than refusing.
/// A session that is a driven tab whose browser died is brought back first, and `revived`
/// gets the note saying so.
async fn resolve(
    ctx: &ToolContext,
    explicit: Option<&str>,
    revived: &mut Option<String>,
) -> Result<Arc<Session>, Refusal> {
    let span = tracing::info_span!(span::SESSION_RESOLVE, ok = Empty, error = Empty);
    let outcome = async {
        let bridge = &ctx.bridge;
        let mut found = bridge.resolve(explicit);
        if matches!(found, Err(ResolveError::NoSessions { .. })) {
            let young = ctx.host.started.elapsed();
            let wait = ctx.host.first_session_wait.saturating_sub(young);
            if !wait.is_zero() && bridge.wait_for_session(wait, |_| true).await.is_some() {
                found = bridge.resolve(explicit);
            }
        }
        if matches!(
            found,
            Err(ResolveError::NoSessions { .. } | ResolveError::NotFound { .. })
        ) && let Some(came) = super::driven::await_agent_drive(ctx).await
        {
            came?;
            found = bridge.resolve(explicit);
        }
        if let Err(err) = &found
            && let Some(brought) = super::driven::revive(ctx, explicit, err).await
        {
            *revived = Some(brought?);
            found = bridge.resolve(explicit);
        }
        found.map_err(|err| no_session(ctx, err))
    }
    .instrument(span.clone())
    .await;
    if let Err(refusal) = &outcome {
        span.record("ok", false);
        span.record("error", clip(&refusal.reason, 300).as_str());
    }
    outcome
}

fn no_session(ctx: &ToolContext, err: ResolveError) -> Refusal {
    let listed: Vec<Value> = ctx
        .bridge
        .summaries()
        .into_iter()
        .map(|s| json!({ "sessionId": s.id, "url": s.url, "title": s.title, "lastSeenMs": s.last_seen_ms }))
        .collect();
    let port = ctx.info.port;
    let refusal = match err {
        ResolveError::NoSessions { .. } => Refusal::new(
            format!("{err}; nothing was run"),
            format!(
                "open the app in a browser with the Reticle SDK connecting to ws://127.0.0.1:{port}/reticle, then call reticle_sessions"
            ),
        ),
        ResolveError::NotFound { .. } => Refusal::new(
            format!("{err}; nothing was run"),
            "pass one of the connected session ids (reticle_sessions lists them), or omit sessionId when only one page is open",
        ),
        ResolveError::Ambiguous { .. } => Refusal::new(
            format!("{err}; nothing was run"),
            "pass sessionId with one of the listed sessions",
        ),
    };
    refusal.with("sessions", listed)
}

/// The MCP result: structured content plus its text; a refusal is an error result.
fn encode(session: Option<&Session>, result: Result<Value, Refusal>) -> CallToolResult {
    let (mut value, is_error) = match result {
        Ok(value) => (value, false),
        Err(refusal) => (refusal.to_value(), true),
    };
    if let (Some(session), Value::Object(map)) = (session, &mut value)
        && !map.contains_key("session")
    {
        let (block, warning) = session_block(session);
        map.insert("session".into(), block);
        if let Some(warning) = warning {
            map.entry("warning").or_insert(json!(warning));
        }
    }
    let mut result = if is_error {
        CallToolResult::structured_error(value)
    } else {
        CallToolResult::structured(value)
    };
    // Every protocol version Reticle speaks predates the result-type field.
    result.result_type = None;
    result
}

/// Concurrency accounting and the settle hook: built when a call starts, dropped on every
/// exit (returned, refused, unwound, or dropped unfinished when its caller cancelled it), when it
/// closes the `settle` span under the call's root.
struct SettleGuard<'a> {
    ctx: &'a ToolContext,
    root: tracing::Span,
    started: Instant,
    refused: bool,
    /// Set once the handler returned; dropped without it, the call was cancelled.
    finished: bool,
}

impl<'a> SettleGuard<'a> {
    fn begin(ctx: &'a ToolContext, root: tracing::Span) -> Self {
        ctx.host.stats.begin();
        Self {
            ctx,
            root,
            started: Instant::now(),
            refused: false,
            finished: false,
        }
    }
}

impl Drop for SettleGuard<'_> {
    fn drop(&mut self) {
        let unwinding = std::thread::panicking();
        let cancelled = !self.finished && !unwinding;
        self.ctx.host.stats.end(self.refused || unwinding);
        let settle = tracing::info_span!(
            parent: &self.root,
            span::SETTLE,
            ms = self.started.elapsed().as_millis() as u64,
            ok = Empty,
            error = Empty
        );
        let error = if unwinding {
            Some("the call failed inside Reticle")
        } else if cancelled {
            Some("the call was cancelled before it finished")
        } else {
            None
        };
        if let Some(error) = error {
            settle.record("ok", false);
            settle.record("error", error);
            self.root.record("ok", false);
            self.root.record("error", error);
        }
        drop(settle);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every source file of the tool layer, by its path under `tools/`.
    fn sources() -> Vec<(String, String)> {
        fn walk(dir: &std::path::Path, base: &std::path::Path, out: &mut Vec<(String, String)>) {
            let mut entries: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            entries.sort();
            for path in entries {
                if path.is_dir() {
                    walk(&path, base, out);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let name = path.strip_prefix(base).unwrap().display().to_string();
                    out.push((name, std::fs::read_to_string(&path).unwrap()));
                }
            }
        }
        let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tools");
        let mut out = Vec::new();
        walk(&base, &base, &mut out);
        out
    }

    /// The production part of a source file (before its tests).
    fn production(source: &str) -> &str {
        source.split("#[cfg(test)]").next().unwrap_or(source)
    }

    /// Every handler is reached only through its registration, which the chokepoint runs: each
    /// tool's handler is private to its file and called only by its `Tool::run`, every tool is
    /// registered once, and only the chokepoint builds a `Call`.
    #[test]
    fn no_handler_is_called_from_anywhere_else() {
        let sources = sources();
        let registry = sources
            .iter()
            .find(|(name, _)| name == "registry.rs")
            .map(|(_, s)| production(s))
            .unwrap();
        let mut tools = Vec::new();
        for (file, source) in &sources {
            let prod = production(source);
            for (at, _) in prod.match_indices("impl Tool for ") {
                let rest = &prod[at + "impl Tool for ".len()..];
                let tool = rest.split(' ').next().unwrap().to_string();
                let run = rest.split("fn run<").nth(1).unwrap();
                let handler = run
                    .split("Box::pin(")
                    .nth(1)
                    .unwrap()
                    .trim_start_matches("std::future::ready(")
                    .split('(')
                    .next()
                    .unwrap()
                    .to_string();
                tools.push((file.clone(), tool, handler));
            }
        }
        assert!(tools.len() >= 20, "{tools:?}");
        for (file, tool, handler) in &tools {
            assert!(
                file.contains('/'),
                "{tool} lives in a family folder, not {file}"
            );
            assert_eq!(
                registry.matches(&format!("::{tool}>()")).count(),
                1,
                "{tool} is registered once"
            );
            let prod = production(&sources.iter().find(|(f, _)| f == file).unwrap().1);
            let private = prod.contains(&format!("\nfn {handler}("))
                || prod.contains(&format!("\nasync fn {handler}("));
            assert!(
                private,
                "{file}: the handler {handler} is private to its file"
            );
            let uses = prod
                .split(&format!("{handler}("))
                .skip(1)
                .filter(|rest| {
                    rest.trim_start()
                        .trim_start_matches('_')
                        .starts_with("call")
                })
                .count();
            assert_eq!(
                uses, 2,
                "{file}: {handler} is defined once and called once, by its Tool::run"
            );
        }
        // Only the registration runs a tool, and only the chokepoint builds a Call.
        for (file, source) in &sources {
            let prod = production(source);
            if file != "surface/registration.rs" {
                assert!(!prod.contains("T::run("), "{file} runs a tool");
            }
            if file != "chokepoint.rs" && file != "call.rs" {
                assert!(!prod.contains("Call {"), "{file} builds a Call");
                assert!(!prod.contains("Sealed"), "{file} names the seal");
            }
        }
        let sealed: String = sources
            .iter()
            .filter(|(f, _)| f == "chokepoint.rs" || f == "call.rs")
            .map(|(_, s)| production(s))
            .collect();
        assert_eq!(sealed.matches("_sealed: Sealed,").count(), 2);
    }

    #[tokio::test]
    async fn refusals_are_structured_and_the_guard_settles_every_exit() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::detached(dir.path());
        let catalogue = Catalogue::standard();
        let call = |name: &'static str, args: Value| {
            let ctx = ctx.clone();
            let catalogue = catalogue.clone();
            async move {
                run_tool(
                    &ctx,
                    &catalogue,
                    name,
                    args.as_object().cloned().unwrap_or_default(),
                    None,
                )
                .await
            }
        };
        let big = call("reticle_query", json!({ "text": "x".repeat(70_000) }))
            .await
            .unwrap();
        assert_eq!(big.is_error, Some(true));
        let value = big.structured_content.unwrap();
        assert!(
            value["reason"].as_str().unwrap().contains("bytes"),
            "{value}"
        );
        let field = call("reticle_query", json!({ "testid": 3 })).await.unwrap();
        let value = field.structured_content.unwrap();
        assert!(
            value["reason"].as_str().unwrap().contains("`testid`"),
            "{value}"
        );
        let none = call("reticle_snapshot", json!({})).await.unwrap();
        let value = none.structured_content.unwrap();
        assert_eq!(value["ok"], false);
        assert!(value["sessions"].is_array(), "{value}");
        assert!(matches!(
            call("reticle_nope", json!({})).await,
            Err(ToolRefusal::Unknown(_))
        ));
        let member = call("reticle_yield", json!({})).await.unwrap();
        assert!(
            member.structured_content.unwrap()["recovery"]
                .as_str()
                .unwrap()
                .contains("reticle_session")
        );
        let hidden = call("reticle_capabilities", json!({})).await.unwrap();
        assert!(
            hidden.structured_content.unwrap()["recovery"]
                .as_str()
                .unwrap()
                .contains("reticle_run")
        );
        let stats = ctx.host.stats.summary();
        assert_eq!(stats.in_flight, 0, "{stats:?}");
        assert_eq!(stats.started, stats.settled);
        assert_eq!(stats.refused, 6);
    }
}
