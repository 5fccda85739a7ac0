//! `reticle_query`: elements as a user names them, held to `exact` and `limit` by the daemon
//! (protocol 1's query takes neither), with `countOnly` answering the count. It reads only.

use serde_json::{Map, Value, json};

use crate::tools::call::Call;
use crate::tools::commands::{ask, put};
use crate::tools::name_match::{Match, matches};
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::QueryArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};
use crate::wire::CommandName;

async fn query(call: &Call<'_>, a: QueryArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let hold = Hold {
        name: a.name.clone(),
        text: a.text.clone(),
        exact: a.exact,
    };
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
    hold_to_exact_and_limit(&mut result, &hold, limit);
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

/// What the daemon holds a page's answer to.
struct Hold {
    name: Option<String>,
    text: Option<String>,
    exact: Option<bool>,
}

/// Protocol 1's `query` takes neither `exact` nor `limit` (our SDK honours both; the published
/// 2.0.0 ignores them), so the daemon holds the answer itself, whatever a page's matching:
/// a name is whole unless `exact: false` (a cut name it can't tell about stays listed); with
/// `exact: true`, text is whole too; at most `limit` elements.
fn hold_to_exact_and_limit(result: &mut Value, hold: &Hold, limit: Option<u32>) {
    let Some(elements) = result.get_mut("elements").and_then(Value::as_array_mut) else {
        return;
    };
    let before = elements.len();
    if let Some(name) = &hold.name
        && hold.exact != Some(false)
    {
        elements.retain(|e| {
            let actual = e["name"].as_str().unwrap_or("");
            matches(actual, name, true) != Match::No
        });
    }
    if let Some(words) = hold.text.as_deref().filter(|_| hold.exact == Some(true)) {
        elements.retain(|e| {
            [&e["name"], &e["text"]].iter().any(|v| {
                v.as_str()
                    .is_some_and(|t| matches(t, words, true) != Match::No)
            })
        });
    }
    let held = elements.len();
    if let Some(limit) = limit {
        elements.truncate(limit as usize);
    }
    if held < before
        && let Some(count) = result.get_mut("count")
    {
        // The page counted what it matched; the daemon held some of those back.
        *count = json!(held);
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
