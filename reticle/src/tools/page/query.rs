//! `reticle_query`: elements as a user names them, held to `exact` and `limit` by the daemon
//! (protocol 1's query takes neither), with `countOnly` answering the count. It reads only.

use serde_json::{Map, Value, json};

use crate::tools::call::Call;
use crate::tools::commands::{ask, put};
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::QueryArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};
use crate::wire::CommandName;

async fn query(call: &Call<'_>, a: QueryArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let exact_words = (a.exact == Some(true))
        .then(|| a.text.clone().or_else(|| a.name.clone()))
        .flatten();
    let limit = a.limit;
    let mut args = Map::new();
    put(&mut args, "role", a.role);
    put(&mut args, "name", a.name);
    put(&mut args, "text", a.text);
    put(&mut args, "label", a.label);
    put(&mut args, "placeholder", a.placeholder);
    put(&mut args, "testid", a.testid);
    put(&mut args, "alt", a.alt);
    put(&mut args, "css", a.css);
    if args.is_empty() {
        return Err(Refusal::bad_arguments(
            call.tool.as_str(),
            "give at least one of role, name, text, label, placeholder, testid, alt, css",
        ));
    }
    put(&mut args, "scope", a.scope);
    put(&mut args, "exact", a.exact);
    put(&mut args, "limit", a.limit);
    let mut result = ask(session, CommandName::Query, Value::Object(args)).await?;
    hold_to_exact_and_limit(&mut result, exact_words.as_deref(), limit);
    if a.count_only == Some(true)
        && let Value::Object(map) = &mut result
    {
        // Protocol 1 guarantees `elements` only; `count` is our SDK's addition (it counts past
        // the limit). A page that sends none is counted from what it listed.
        let listed = map
            .remove("elements")
            .and_then(|e| e.as_array().map(Vec::len));
        if !map.contains_key("count") {
            map.insert("count".into(), json!(listed.unwrap_or(0)));
        }
    }
    Ok(result)
}

/// Protocol 1's `query` takes neither `exact` nor `limit` (our SDK honours both; the published
/// 2.0.0 ignores them), so the daemon holds the answer to them itself: with `exact`, only
/// elements whose name or text is the asked words; at most `limit` elements.
fn hold_to_exact_and_limit(result: &mut Value, exact: Option<&str>, limit: Option<u32>) {
    let Some(elements) = result.get_mut("elements").and_then(Value::as_array_mut) else {
        return;
    };
    if let Some(words) = exact {
        elements.retain(|e| {
            [&e["name"], &e["text"]]
                .iter()
                .any(|v| v.as_str().is_some_and(|t| t.trim() == words))
        });
    }
    if let Some(limit) = limit {
        elements.truncate(limit as usize);
    }
}

/// `reticle_query`, as the registry knows it.
pub struct Query;

impl Tool for Query {
    const NAME: ToolName = ToolName::Query;
    const TITLE: &'static str = "Find elements";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str = "Find elements as a user names them (role and name, text, label, testid...); returns refs. No match carries a hint (route, testids present). Reads only.";
    const OUTPUT: &'static [&'static str] = &["elements", "count", "hint"];
    const SESSION: SessionUse = SessionUse::Bound;
    type Args = QueryArgs;

    fn run<'a>(call: &'a Call<'a>, a: QueryArgs) -> Answer<'a> {
        Box::pin(query(call, a))
    }
}
