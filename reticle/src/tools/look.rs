//! Looking at the page and moving it: `reticle_snapshot` (with `diff` and `cost`),
//! `reticle_query` (a hint on zero matches), `reticle_inspect`, `reticle_navigate` (url or reload,
//! and whether arrival was confirmed), `reticle_state`, and the extended `reticle_capabilities`
//! and `reticle_clock`. None of these proves anything about the app.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::args::{
    ClockArgs, InspectArgs, NavigateArgs, QueryArgs, SnapshotArgs, SnapshotMode, StateArgs,
};
use super::call::Call;
use super::page::ask;
use super::refusal::Refusal;
use crate::bridge::Session;
use crate::wire::CommandName;
use crate::wire::state_path::StatePath;

/// How long navigate (and a flow replay, unless its caller gives a bound of its own) waits for
/// the page to come back on its new document: a dev server compiling a route on its first
/// request, or a loaded CI machine, easily takes more than 5 s (reloads of the fixture app took
/// up to 13 s under the flake hunt's load), and a page that never comes back is still named.
pub const ARRIVAL_BOUND: Duration = Duration::from_secs(15);

fn put(map: &mut Map<String, Value>, key: &str, value: Option<impl Into<Value>>) {
    if let Some(v) = value {
        map.insert(key.into(), v.into());
    }
}

pub(super) async fn snapshot(call: &Call<'_>, a: SnapshotArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let mode = match a.mode.unwrap_or(SnapshotMode::Full) {
        SnapshotMode::Full => "full",
        SnapshotMode::Interactive => "interactive",
        SnapshotMode::Status => "status",
    };
    let mut args = Map::new();
    args.insert("mode".into(), json!(mode));
    put(&mut args, "scope", a.scope.clone());
    let mut result = ask(session, CommandName::Snapshot, Value::Object(args)).await?;
    let tree = result
        .get("tree")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let key = format!(
        "{}|{mode}|{}",
        session.life(),
        a.scope.as_deref().unwrap_or("")
    );
    let previous = call
        .ctx
        .host
        .remember(session.id(), |m| m.snapshots.insert(key, tree.clone()));
    if a.diff == Some(true) {
        match previous {
            Some(before) => {
                let old: HashSet<&str> = before.lines().collect();
                let new: HashSet<&str> = tree.lines().collect();
                let added: Vec<&str> = tree.lines().filter(|l| !old.contains(l)).collect();
                let removed: Vec<&str> = before.lines().filter(|l| !new.contains(l)).collect();
                result["diff"] = json!({
                    "baseline": true,
                    "changed": !added.is_empty() || !removed.is_empty(),
                    "added": added,
                    "removed": removed,
                });
                if let Value::Object(map) = &mut result {
                    map.remove("tree");
                }
            }
            None => {
                result["diff"] = json!({
                    "baseline": false,
                    "note": "no earlier snapshot of this page, mode and scope: the whole tree is returned",
                });
            }
        }
    }
    let bytes = serde_json::to_vec(&result).map(|b| b.len()).unwrap_or(0);
    result["cost"] = json!({ "bytes": bytes, "tokens": bytes.div_ceil(4) });
    Ok(result)
}

pub(super) async fn query(call: &Call<'_>, a: QueryArgs) -> Result<Value, Refusal> {
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

pub(super) async fn inspect(call: &Call<'_>, a: InspectArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let element = ask(
        session,
        CommandName::Inspect,
        json!({ "ref": a.element_ref }),
    )
    .await?;
    Ok(json!({ "element": element }))
}

/// What `reticle_state` says when the page registered no store: how to register one.
pub const NO_STORE_REGISTERED: &str = "this page registered no store, so there is no app state to read. Register each store once in the app's development build, with registerStore imported from the module that connect() comes from (the daemon's /sdk/reticle.js, or @reticlehq/browser): registerStore('todos', () => useTodosStore().$state) for Pinia, registerStore('app', store.getState) for Redux, registerStore('app', useAppStore.getState) for Zustand; then call reticle_state again";

pub(super) async fn state(call: &Call<'_>, a: StateArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let path = a.path.as_deref().map(StatePath::parse);
    let mut args = Map::new();
    put(&mut args, "store", a.store);
    put(
        &mut args,
        "path",
        path.as_ref().map(|p| p.as_sent().to_string()),
    );
    put(&mut args, "depth", a.depth);
    let mut result = ask(session, CommandName::StateRead, Value::Object(args)).await?;
    if result.get("found") == Some(&json!(false)) {
        if result.get("availableKeys").is_none() {
            result["availableKeys"] = result.get("storeNames").cloned().unwrap_or(json!([]));
        }
        if let Some(path) = path.filter(|p| !p.absence_is_proved(&result)) {
            result["found"] = Value::Null;
            result["note"] = json!(path.why_unproved());
        }
    }
    let none_registered = result
        .get("storeNames")
        .and_then(Value::as_array)
        .is_some_and(|names| names.is_empty());
    if none_registered && result.get("note").is_none() {
        result["note"] = json!(NO_STORE_REGISTERED);
    }
    Ok(result)
}

pub(super) async fn capabilities(call: &Call<'_>) -> Result<Value, Refusal> {
    ask(call.session()?, CommandName::Capabilities, json!({})).await
}

pub(super) async fn clock(call: &Call<'_>, a: ClockArgs) -> Result<Value, Refusal> {
    let mut args = Map::new();
    put(&mut args, "freeze", a.freeze);
    put(&mut args, "advanceMs", a.advance_ms);
    put(&mut args, "reset", a.reset);
    ask(call.session()?, CommandName::Clock, Value::Object(args)).await
}

/// Origin and path of a URL (`http://h:1/a?b#c` → `http://h:1/a`), for arrival checks.
fn origin_and_path(url: &str) -> &str {
    let cut = url.find(['?', '#']).unwrap_or(url.len());
    &url[..cut]
}

/// Where a navigation ended: the page as it arrived on its new document (`None` when it did
/// not reconnect within the bound) and the URL it went to.
pub(super) struct Arrival {
    pub page: Option<Arc<Session>>,
    pub url: Option<String>,
}

/// Sends `command` (navigate or refresh) and waits up to `bound` for the page to reconnect on
/// its new document under the same session id, at `target` when one is given; the window of
/// later checks starts at the arrival.
pub(super) async fn arrive(
    call: &Call<'_>,
    session: &Arc<Session>,
    command: CommandName,
    args: Value,
    target: Option<String>,
    bound: Duration,
) -> Result<Arrival, Refusal> {
    let id = session.id().to_string();
    let old_life = session.life();
    let old_links = session.counters().links;
    let since = session.head();
    call.ctx.host.remember(&id, |m| m.last_act = Some(since));
    let answer = ask(session, command, args).await?;
    let target = answer
        .get("url")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or(target);
    // Arrival: the page reconnects on its new document under the same session id.
    let arrived = call
        .ctx
        .bridge
        .wait_for_session(bound, |s| {
            s.id() == id
                && (s.life() != old_life || s.counters().links > old_links)
                && target
                    .as_deref()
                    .is_none_or(|t| origin_and_path(&s.identity().url) == origin_and_path(t))
        })
        .await;
    if let Some(page) = &arrived {
        // A new life starts a new window; a socket swapped under the same life keeps counting.
        let start = if page.life() != old_life {
            crate::bridge::Cursor {
                life: page.life(),
                seq: 0,
            }
        } else {
            since
        };
        call.ctx.host.remember(&id, |m| m.last_act = Some(start));
    }
    Ok(Arrival {
        page: arrived,
        url: target,
    })
}

pub(super) async fn navigate(call: &Call<'_>, a: NavigateArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let reload = a.reload == Some(true);
    let (command, args) = match (&a.url, reload) {
        (Some(url), false) => (CommandName::Navigate, json!({ "url": url })),
        (None, true) => (
            CommandName::Refresh,
            json!({ "hard": a.hard == Some(true) }),
        ),
        _ => {
            return Err(Refusal::bad_arguments(
                call.tool.as_str(),
                "give exactly one of `url` and `reload: true`",
            ));
        }
    };
    let Arrival {
        page: arrived,
        url: target,
    } = arrive(call, session, command, args, a.url.clone(), ARRIVAL_BOUND).await?;
    if let Some(url) = &a.url {
        super::recording::note_navigation(call, session, url);
    }
    let mut result = json!({
        "dispatched": true,
        "confirmed": arrived.is_some(),
        "url": arrived.as_ref().map(|s| s.identity().url).or(target),
    });
    if arrived.is_none() {
        result["note"] = json!(format!(
            "the page did not reconnect on the new document within {} ms: it may still be loading, it may not load the Reticle SDK there, or the URL lost the SDK's connection settings; call reticle_sessions",
            ARRIVAL_BOUND.as_millis()
        ));
    }
    Ok(result)
}
