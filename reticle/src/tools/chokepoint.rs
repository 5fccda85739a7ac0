//! [`run_tool`]: the one path every tool call takes, by any route (MCP `tools/call`,
//! `reticle_run`, a family `action`). In order: one root span `tool.handler`; concurrency
//! accounting and the settle hook in a guard that runs on every exit, returned or unwound; the
//! argument size cap; the catalogue; the schema check (a refusal naming the field); session
//! resolution (explicit, else the only one, else a refusal listing them, naming the family and
//! action when a family asked; the first calls after start wait briefly for a first page); the
//! lease check (a state-changing tool on a session another holder leased is refused naming the
//! holder; every call renews its caller's own leases); the handler; the `session` block on every
//! live result.
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

use super::args::{self, SESSION_ID};
use super::bounds::clip;
use super::call::{Call, Route, Sealed};
use super::catalogue::Catalogue;
use super::context::ToolContext;
use super::names::{Standing, ToolName};
use super::refusal::{Refusal, ToolRefusal};
use super::session_block::session_block;
use super::{
    act, baselines, capsule_replay, flows, heal, leases, look, meta, observe, record, replay,
    run_export, session_family, sessions, suite, testing, verify,
};
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

/// Runs one tool call by `route` (`reticle_run` calls this for its target, with no `rpc_id`:
/// its span is not a root).
pub(super) fn run_routed<'a>(
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
    let parsed = match Parsed::parse(tool, &arguments) {
        Ok(parsed) => parsed,
        Err(problem) => {
            return Ok((None, Err(Refusal::bad_arguments(tool.as_str(), &problem))));
        }
    };
    let explicit = arguments.get(SESSION_ID).and_then(Value::as_str);
    let session = if tool.session_bound() {
        match resolve(ctx, explicit).await {
            Ok(session) => Some(session),
            Err(mut refusal) => {
                // A family's refusal names the family and the action it was asked for.
                if let Some(action) = arguments.get("action").and_then(Value::as_str) {
                    refusal.reason = format!("{tool} {}: {}", clip(action, 40), refusal.reason);
                }
                return Ok((None, Err(refusal)));
            }
        }
    } else if matches!(tool, ToolName::Session | ToolName::Baseline) {
        match resolve(ctx, explicit).await {
            Ok(session) => Some(session),
            Err(refusal) if explicit.is_some() => return Ok((None, Err(refusal))),
            Err(_) => None,
        }
    } else {
        None
    };
    if tool.drives_session()
        && let Some(session) = &session
        && let Err(held) = ctx.host.leases.admits(session.id(), ctx.caller.as_ref())
    {
        let what = match arguments.get("action").and_then(Value::as_str) {
            Some(action) => format!("{tool} {}", clip(action, 40)),
            None => tool.to_string(),
        };
        return Ok((
            None,
            Err(leases::held_refusal(&held, ctx.host.leases.ttl(), &what)),
        ));
    }
    let call = Call {
        ctx,
        catalogue,
        tool,
        session: session.clone(),
        arguments,
        _sealed: Sealed,
    };
    let result = dispatch(&call, parsed).await;
    Ok((session, result))
}

/// Every tool's arguments, parsed.
enum Parsed {
    None,
    Snapshot(args::SnapshotArgs),
    Query(args::QueryArgs),
    Inspect(args::InspectArgs),
    Navigate(args::NavigateArgs),
    Act(args::ActArgs),
    ActSequence(args::ActSequenceArgs),
    ActAndWait(args::ActAndWaitArgs),
    Observe(args::ObserveArgs),
    Wait(args::WaitArgs),
    Network(args::NetworkArgs),
    Console(args::ConsoleArgs),
    State(args::StateArgs),
    Feedback(args::FeedbackArgs),
    Session(args::SessionFamilyArgs),
    Tools(args::ToolsArgs),
    Run(args::RunArgs),
    Clock(args::ClockArgs),
    FlowSave(args::FlowSaveArgs),
    Flow(args::FlowFamilyArgs),
    Baseline(args::BaselineFamilyArgs),
    FlowReplay(args::FlowReplayArgs),
    Verify(args::VerifyArgs),
    RunExport(args::RunExportArgs),
    Lease(args::LeaseFamilyArgs),
    Record(args::RecordArgs),
    FlowSaveRecorded(args::FlowSaveRecordedArgs),
    FlowHeal(args::FlowHealArgs),
    Replay(args::ReplayArgs),
    Sleep(args::SleepArgs),
    Echo,
}

impl Parsed {
    fn parse(tool: ToolName, a: &Map<String, Value>) -> Result<Self, String> {
        use ToolName as T;
        Ok(match tool {
            T::Sessions => {
                args::parse::<args::NoArgs>(a)?;
                Parsed::None
            }
            T::Capabilities => {
                args::parse::<args::SessionOnly>(a)?;
                Parsed::None
            }
            T::Snapshot => Parsed::Snapshot(args::parse(a)?),
            T::Query => Parsed::Query(args::parse(a)?),
            T::Inspect => Parsed::Inspect(args::parse(a)?),
            T::Navigate => Parsed::Navigate(args::parse(a)?),
            T::Act => Parsed::Act(args::parse(a)?),
            T::ActSequence => Parsed::ActSequence(args::parse(a)?),
            T::ActAndWait => Parsed::ActAndWait(args::parse(a)?),
            T::Observe => Parsed::Observe(args::parse(a)?),
            T::WaitFor | T::Assert => Parsed::Wait(args::parse(a)?),
            T::Network => Parsed::Network(args::parse(a)?),
            T::Console => Parsed::Console(args::parse(a)?),
            T::State => Parsed::State(args::parse(a)?),
            T::Feedback => Parsed::Feedback(args::parse(a)?),
            T::Session => Parsed::Session(args::parse(a)?),
            T::Tools => Parsed::Tools(args::parse(a)?),
            T::Run => Parsed::Run(args::parse(a)?),
            T::Clock => Parsed::Clock(args::parse(a)?),
            T::FlowSave => Parsed::FlowSave(args::parse(a)?),
            T::Flow => Parsed::Flow(args::parse(a)?),
            T::Baseline => Parsed::Baseline(args::parse(a)?),
            T::FlowReplay => Parsed::FlowReplay(args::parse(a)?),
            T::Verify => Parsed::Verify(args::parse(a)?),
            T::RunExport => Parsed::RunExport(args::parse(a)?),
            T::Lease => Parsed::Lease(args::parse(a)?),
            T::Record => Parsed::Record(args::parse(a)?),
            T::FlowSaveRecorded => Parsed::FlowSaveRecorded(args::parse(a)?),
            T::FlowHeal => Parsed::FlowHeal(args::parse(a)?),
            T::Replay => Parsed::Replay(args::parse(a)?),
            T::TestSleep => Parsed::Sleep(args::parse(a)?),
            T::TestEcho => Parsed::Echo,
            T::Yield
            | T::Resume
            | T::EndSession
            | T::Messages
            | T::FlowList
            | T::FlowLoad
            | T::FlowDelete
            | T::BaselineSave
            | T::BaselineList
            | T::BaselineDiff
            | T::FlowVerify
            | T::LeaseAcquire
            | T::LeaseRelease
            | T::RecordStart
            | T::RecordStop => {
                return Err("a family member is reached through its family".into());
            }
        })
    }
}

/// The only place handlers are called.
async fn dispatch(call: &Call<'_>, parsed: Parsed) -> Result<Value, Refusal> {
    use ToolName as T;
    match (call.tool, parsed) {
        (T::Sessions, _) => sessions::sessions(call).await,
        (T::Snapshot, Parsed::Snapshot(a)) => look::snapshot(call, a).await,
        (T::Query, Parsed::Query(a)) => look::query(call, a).await,
        (T::Inspect, Parsed::Inspect(a)) => look::inspect(call, a).await,
        (T::Navigate, Parsed::Navigate(a)) => look::navigate(call, a).await,
        (T::State, Parsed::State(a)) => look::state(call, a).await,
        (T::Capabilities, _) => look::capabilities(call).await,
        (T::Clock, Parsed::Clock(a)) => look::clock(call, a).await,
        (T::Act, Parsed::Act(a)) => act::act(call, a).await,
        (T::ActSequence, Parsed::ActSequence(a)) => act::act_sequence(call, a).await,
        (T::ActAndWait, Parsed::ActAndWait(a)) => act::act_and_wait(call, a).await,
        (T::Observe, Parsed::Observe(a)) => observe::observe(call, a),
        (T::Network, Parsed::Network(a)) => observe::network(call, a),
        (T::Console, Parsed::Console(a)) => observe::console(call, a),
        (T::WaitFor, Parsed::Wait(a)) => verify::wait_for(call, a).await,
        (T::Assert, Parsed::Wait(a)) => verify::assert(call, a).await,
        (T::Feedback, Parsed::Feedback(a)) => meta::feedback(call, a),
        (T::Session, Parsed::Session(a)) => session_family::session(call, a).await,
        (T::Tools, Parsed::Tools(a)) => meta::tools(call, a),
        (T::Run, Parsed::Run(a)) => meta::run(call, a).await,
        (T::FlowSave, Parsed::FlowSave(a)) => flows::flow_save(call, a),
        (T::Flow, Parsed::Flow(a)) => flows::flow(call, a),
        (T::Baseline, Parsed::Baseline(a)) => baselines::baseline(call, a).await,
        (T::FlowReplay, Parsed::FlowReplay(a)) => replay::flow_replay(call, a).await,
        (T::Verify, Parsed::Verify(a)) => suite::verify(call, a).await,
        (T::RunExport, Parsed::RunExport(a)) => run_export::run_export(call, a),
        (T::Lease, Parsed::Lease(a)) => leases::lease(call, a),
        (T::Record, Parsed::Record(a)) => record::record(call, a).await,
        (T::FlowSaveRecorded, Parsed::FlowSaveRecorded(a)) => record::flow_save_recorded(call, a),
        (T::FlowHeal, Parsed::FlowHeal(a)) => heal::flow_heal(call, a).await,
        (T::Replay, Parsed::Replay(a)) => capsule_replay::replay(call, a).await,
        (T::TestSleep, Parsed::Sleep(a)) => testing::sleep(call, a).await,
        (T::TestEcho, _) => testing::echo(call),
        (tool, _) => Err(Refusal::new(
            format!("{tool} has no implementation in this daemon"),
            "call reticle_tools for the tools this daemon has",
        )),
    }
}

/// Finds the session a call is for: the explicit id, else the only one, else the clearly most
/// recent; while the daemon is young, waits briefly for a first page rather than refusing.
async fn resolve(ctx: &ToolContext, explicit: Option<&str>) -> Result<Arc<Session>, Refusal> {
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

    /// The handler modules of the tool layer, as compiled.
    const HANDLER_SOURCES: &[(&str, &str)] = &[
        ("sessions", include_str!("sessions.rs")),
        ("look", include_str!("look.rs")),
        ("act", include_str!("act.rs")),
        ("observe", include_str!("observe.rs")),
        ("verify", include_str!("verify.rs")),
        ("session_family", include_str!("session_family.rs")),
        ("meta", include_str!("meta.rs")),
        ("testing", include_str!("testing.rs")),
        ("flows", include_str!("flows.rs")),
        ("leases", include_str!("leases.rs")),
        ("record", include_str!("record.rs")),
    ];
    const CHOKEPOINT: &str = include_str!("chokepoint.rs");
    const CALL: &str = include_str!("call.rs");

    /// The production part of a source file (before its tests).
    fn production(source: &str) -> &str {
        source.split("#[cfg(test)]").next().unwrap_or(source)
    }

    /// Every handler is reached only by `dispatch` in this module: each takes a `Call` (which
    /// only this module can build), and no file but this one names a handler as a call.
    #[test]
    fn no_handler_is_called_from_anywhere_else() {
        let mut handlers = Vec::new();
        for (module, source) in HANDLER_SOURCES {
            for line in production(source).lines() {
                let line = line.trim();
                let Some(rest) = line
                    .strip_prefix("pub(super) async fn ")
                    .or_else(|| line.strip_prefix("pub(super) fn "))
                else {
                    continue;
                };
                let name = rest.split('(').next().unwrap();
                let params = rest.split_once('(').map(|(_, p)| p).unwrap_or("");
                if params.starts_with("call: &Call") || params.starts_with("_call: &Call") {
                    handlers.push((*module, name.to_string()));
                }
            }
        }
        assert!(handlers.len() >= 20, "{handlers:?}");
        let dispatch = production(CHOKEPOINT)
            .split("async fn dispatch(")
            .nth(1)
            .and_then(|rest| rest.split("\nasync fn ").next())
            .unwrap();
        for (module, name) in &handlers {
            let call = format!("{module}::{name}(");
            assert!(
                dispatch.contains(&call),
                "{call} is not dispatched by run_tool"
            );
            assert_eq!(
                production(CHOKEPOINT).matches(&call).count(),
                1,
                "{call} is called once, from dispatch"
            );
            for (other, source) in HANDLER_SOURCES {
                let prod = production(source);
                assert!(!prod.contains(&call), "{other} calls {call}");
                if other == module {
                    let uses = prod.matches(&format!("{name}(call")).count();
                    let definitions = prod.matches(&format!("fn {name}(call")).count();
                    assert_eq!(uses, definitions, "{module} calls its handler {name}");
                }
            }
        }
        // Only this module builds a Call.
        for (module, source) in HANDLER_SOURCES {
            assert!(
                !production(source).contains("Call {"),
                "{module} builds a Call"
            );
            assert!(
                !production(source).contains("Sealed"),
                "{module} names the seal"
            );
        }
        let sealed = production(CHOKEPOINT).to_string() + production(CALL);
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
