//! `reticle_run`: run any catalogued tool or family member by name, through the same chokepoint
//! as a direct call (the call's [`Call::run_nested`], given it by the chokepoint, so this file
//! imports no dispatcher), and answer the target's result naming it.

use serde_json::{Map, Value, json};

use crate::tools::bounds::clip;
use crate::tools::call::Call;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::{RunArgs, SESSION_ID};
use crate::tools::surface::names::{Standing, ToolName};
use crate::tools::surface::registration::{Answer, Effect, Tool};

async fn run(call: &Call<'_>, a: RunArgs) -> Result<Value, Refusal> {
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
    let forwards = call
        .catalogue
        .registration(target)
        .is_some_and(|r| r.session_bound())
        || matches!(target, ToolName::Session)
        || matches!(target.standing(), Standing::Member { .. });
    if let Some(id) = a.session_id
        && forwards
        && !args.contains_key(SESSION_ID)
    {
        args.insert(SESSION_ID.into(), json!(id));
    }
    let result = call
        .run_nested(target.as_str(), args)
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

/// `reticle_run`, as the registry knows it.
pub struct Run;

impl Tool for Run {
    const NAME: ToolName = ToolName::Run;
    const TITLE: &'static str = "Run any tool";
    const EFFECT: Effect = Effect::Dispatches;
    const DESCRIPTION: &'static str =
        "Run any catalogued tool or family member by name, with the same checks as a direct call.";
    const OUTPUT: &'static [&'static str] = &["tool"];
    type Args = RunArgs;

    fn run<'a>(call: &'a Call<'a>, a: RunArgs) -> Answer<'a> {
        Box::pin(run(call, a))
    }
}
