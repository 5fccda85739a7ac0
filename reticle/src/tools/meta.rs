//! The meta tools and feedback. `reticle_tools` lists the catalogue (families with the action
//! that reaches each member) or the full parameters of named tools; `reticle_run` invokes any
//! catalogued tool or family member through the same chokepoint as a direct call (a nested
//! [`run_routed`], so its target gets every check, span and decoration); `reticle_feedback`
//! writes to a local outbox in the state dir.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value, json};

use super::args::{FeedbackArgs, RunArgs, SESSION_ID, ToolsArgs};
use super::bounds::clip;
use super::call::{Call, Route};
use super::catalogue::{self, description, input_schema};
use super::chokepoint::run_routed;
use super::names::{Standing, ToolName};
use super::refusal::Refusal;
use crate::store;
use crate::verdict::predicate::KINDS;

/// How many feedback entries the outbox keeps.
pub const OUTBOX_KEPT: usize = 500;
/// The outbox folder in the state dir.
pub const OUTBOX_DIR: &str = "feedback-outbox";

static NEXT: AtomicU64 = AtomicU64::new(1);

fn summary(tool: ToolName) -> String {
    let text = description(tool);
    let first = text
        .split(". ")
        .next()
        .unwrap_or(text)
        .trim_end_matches('.');
    format!("{}.", clip(first, 160).trim_end_matches('.'))
}

pub(super) fn tools(call: &Call<'_>, a: ToolsArgs) -> Result<Value, Refusal> {
    let catalogue = call.catalogue;
    match a.names {
        None => {
            let listed: Vec<Value> = catalogue
                .callable_tools()
                .iter()
                .map(|t| {
                    let mut entry = json!({
                        "name": t.as_str(),
                        "summary": summary(*t),
                        "advertised": catalogue.advertises(*t),
                    });
                    let members = t.members();
                    if !members.is_empty() {
                        entry["members"] =
                            json!(members
                            .iter()
                            .map(|(m, action)| json!({ "name": m.as_str(), "action": action }))
                            .collect::<Vec<_>>());
                    }
                    entry
                })
                .collect();
            Ok(json!({
                "ok": true,
                "total": listed.len(),
                "surface": catalogue.surface(),
                "counts": catalogue::counts(),
                "tools": listed,
                "next": "reticle_tools {\"names\":[...]} for full parameters; reticle_run {\"tool\",\"args\"} reaches any of them",
            }))
        }
        Some(names) => {
            let mut with_predicate = false;
            let found: Vec<Value> = names
                .iter()
                .take(64)
                .map(|name| match ToolName::parse(name) {
                    Some(t)
                        if catalogue.callable(t)
                            || matches!(t.standing(), Standing::Member { .. }) =>
                    {
                        let schema = input_schema(t);
                        with_predicate |= Value::Object(schema.clone())
                            .to_string()
                            .contains("#/$defs/Predicate");
                        let mut entry = json!({
                            "name": t.as_str(),
                            "description": description(t),
                            "inputSchema": schema,
                        });
                        if let Standing::Member { family, action } = t.standing() {
                            entry["reachedAs"] =
                                json!({ "tool": family.as_str(), "action": action });
                        }
                        entry
                    }
                    _ => json!({ "name": clip(name, 80), "error": "unknown tool" }),
                })
                .collect();
            let mut answer = json!({ "ok": true, "tools": found });
            if with_predicate {
                answer["predicateGrammar"] = json!(
                    KINDS
                        .iter()
                        .map(|(kind, fields)| json!({ "kind": kind, "accepts": fields }))
                        .collect::<Vec<_>>()
                );
            }
            Ok(answer)
        }
    }
}

pub(super) async fn run(call: &Call<'_>, a: RunArgs) -> Result<Value, Refusal> {
    let Some(target) = ToolName::parse(&a.tool) else {
        return Err(Refusal::new(
            format!(
                "reticle_run: unknown tool '{}'; nothing was run",
                clip(&a.tool, 80)
            ),
            "call reticle_tools for the tools this daemon has",
        )
        .with(
            "available",
            call.catalogue
                .callable_tools()
                .iter()
                .map(|t| t.as_str())
                .collect::<Vec<_>>(),
        ));
    };
    if target.is_meta() {
        return Err(Refusal::new(
            format!("reticle_run cannot run {target}; nothing was run"),
            format!("call {target} directly"),
        ));
    }
    let mut args: Map<String, Value> = a.args.unwrap_or_default();
    let forwards = target.session_bound()
        || matches!(target, ToolName::Session)
        || matches!(target.standing(), Standing::Member { .. });
    if let Some(id) = a.session_id
        && forwards
        && !args.contains_key(SESSION_ID)
    {
        args.insert(SESSION_ID.into(), json!(id));
    }
    let result = run_routed(
        call.ctx,
        call.catalogue,
        target.as_str(),
        args,
        Route::Run,
        None,
    )
    .await
    .map_err(|unknown| {
        Refusal::new(
            format!("reticle_run: {unknown}; nothing was run"),
            "call reticle_tools for the tools this daemon has",
        )
    })?;
    let mut value = result.structured_content.unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.insert("tool".into(), json!(target.as_str()));
    }
    if result.is_error == Some(true) {
        let reason = value
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or("the tool refused")
            .to_string();
        let recovery = value
            .get("recovery")
            .and_then(Value::as_str)
            .unwrap_or("fix the arguments and retry")
            .to_string();
        let mut refusal = Refusal::new(reason, recovery);
        if let Value::Object(map) = value {
            for (k, v) in map {
                if !matches!(k.as_str(), "ok" | "reason" | "recovery") {
                    refusal.extra.insert(k, v);
                }
            }
        }
        return Err(refusal);
    }
    Ok(value)
}

pub(super) fn feedback(call: &Call<'_>, a: FeedbackArgs) -> Result<Value, Refusal> {
    let dir = call.ctx.host.state_dir.join(OUTBOX_DIR);
    let millis = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
    let name = format!(
        "{millis}-{}-{}.json",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let entry = json!({
        "at": crate::daemon::log::now_rfc3339(),
        "kind": serde_json::to_value(a.kind).unwrap_or(Value::Null),
        "text": a.text,
        "need": a.need,
        "impact": a.impact,
        "rating": a.rating,
        "version": crate::VERSION,
    });
    let bytes = serde_json::to_vec_pretty(&entry).unwrap_or_default();
    store::write_atomic(&dir, &name, &bytes).map_err(|e| {
        Refusal::new(
            format!(
                "the feedback could not be written to the outbox in the state dir ({})",
                e.kind()
            ),
            "check that the Reticle state dir is writable (reticle doctor names the problem)",
        )
    })?;
    store::keep_newest(&dir, OUTBOX_KEPT, ".json");
    Ok(json!({
        "ok": true,
        "saved": format!("{OUTBOX_DIR}/{name}"),
        "note": "written to a local outbox in the Reticle state dir; nothing leaves this machine",
    }))
}
