//! `reticle_tools`: every catalogued tool (family members with the action reaching each), or
//! the full parameters of the tools named. It reads the catalogue; it must not run a tool.

use serde_json::{Value, json};

use crate::tools::bounds::clip;
use crate::tools::call::Call;
use crate::tools::refusal::Refusal;
use crate::tools::surface::aliases;
use crate::tools::surface::args::ToolsArgs;
use crate::tools::surface::catalogue::{Catalogue, counts};
use crate::tools::surface::names::{Standing, ToolName};
use crate::tools::surface::registration::{Answer, Effect, Tool};
use crate::verdict::predicate::KINDS;

fn summary(catalogue: &Catalogue, tool: ToolName) -> String {
    let text = catalogue.description(tool);
    let first = text
        .split(". ")
        .next()
        .unwrap_or(text)
        .trim_end_matches('.');
    format!("{}.", clip(first, 160).trim_end_matches('.'))
}

fn tools(call: &Call<'_>, a: ToolsArgs) -> Result<Value, Refusal> {
    let catalogue = call.catalogue;
    match a.names {
        None => {
            let listed: Vec<Value> = catalogue
                .callable_tools()
                .iter()
                .map(|t| {
                    let mut entry = json!({
                        "name": t.as_str(),
                        "summary": summary(catalogue, *t),
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
                "counts": counts(),
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
                        let schema = catalogue.input_schema(t);
                        with_predicate |= Value::Object(schema.clone())
                            .to_string()
                            .contains("#/$defs/Predicate");
                        let mut entry = json!({
                            "name": t.as_str(),
                            "description": catalogue.description(t),
                            "inputSchema": schema,
                        });
                        let reached = match t.standing() {
                            Standing::Member { family, action } => {
                                entry["reachedAs"] =
                                    json!({ "tool": family.as_str(), "action": action });
                                family
                            }
                            _ => t,
                        };
                        let spelled = aliases::of(reached);
                        if !spelled.is_empty() {
                            entry["aliases"] = json!(spelled
                                .iter()
                                .map(|(alias, canonical)| json!({ "alias": alias, "for": canonical }))
                                .collect::<Vec<_>>());
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

/// `reticle_tools`, as the registry knows it.
pub struct Tools;

impl Tool for Tools {
    const NAME: ToolName = ToolName::Tools;
    const TITLE: &'static str = "Tool catalogue";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str = "Every catalogued tool (family members with the action reaching each), or the parameters of the tools in `names`.";
    const OUTPUT: &'static [&'static str] = &["total", "tools"];
    type Args = ToolsArgs;

    fn run<'a>(call: &'a Call<'a>, a: ToolsArgs) -> Answer<'a> {
        Box::pin(std::future::ready(tools(call, a)))
    }
}
