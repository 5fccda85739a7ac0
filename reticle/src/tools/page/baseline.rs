//! Semantic baselines: `reticle_baseline` {save, list, diff}. A baseline is the page's outline as
//! lines (route, the snapshot's roles, names and states without refs, the console errors of its
//! current life), read through protocol 1's `snapshot` only and stored in `baselines/`; a diff
//! gives added and removed lines. A baseline is replaced only with `overwrite: true`.
//!
//! It outlines, stores and compares; it must not judge the app (a diff is not a verdict).

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::bridge::{Cursor, Session};
use crate::flow::redact::names_a_secret;
use crate::store::workspace::Folder;
use crate::tools::call::Call;
use crate::tools::commands::ask;
use crate::tools::refusal::{Refusal, store_refusal};
use crate::tools::surface::args::{BaselineAction, BaselineFamilyArgs};
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, Registration, SessionUse, Tool};
use crate::wire::{CommandName, KnownEventType};

/// The query parameters a page reads its daemon connection from (`?reticlePort=..&
/// reticleToken=..&session=..`): they change per run, so a route leaves them out.
const CONNECTION_PARAMS: &[&str] = &["reticlePort", "reticleToken", "session"];

/// How an outline line names the route.
const ROUTE_LINE: &str = "route: ";

/// How an outline line names a console error.
const CONSOLE_ERROR_LINE: &str = "console error: ";

/// The page's outline now: the route line, the snapshot's lines without refs, then each
/// distinct console error of the page's current life.
async fn outline(session: &Session) -> Result<(String, Vec<String>), Refusal> {
    let snapshot = ask(session, CommandName::Snapshot, json!({ "mode": "full" })).await?;
    let tree = snapshot.get("tree").and_then(Value::as_str).unwrap_or("");
    let route = route_of(&session.identity().url);
    let mut lines = vec![format!("{ROUTE_LINE}{route}")];
    lines.extend(
        tree.lines()
            .map(outline_line)
            .filter(|l| !l.trim().is_empty()),
    );
    let life = Cursor {
        life: session.life(),
        seq: 0,
    };
    let read = session.events_since(Some(life), crate::bridge::registry::MAX_READ_EVENTS);
    let mut errors: Vec<String> = read
        .events
        .iter()
        .filter(|e| e.kind.known().and_then(KnownEventType::console_level) == Some("error"))
        .filter_map(|e| e.data.get("message").and_then(Value::as_str))
        .map(|m| format!("{CONSOLE_ERROR_LINE}{m}"))
        .collect();
    errors.sort();
    errors.dedup();
    lines.extend(errors);
    Ok((route, lines))
}

/// A snapshot line as a baseline keeps it: one space per level, no bullet, no ref (refs change
/// between page lives, the outline must not). It reads both outlines, ours (` button "Save" e12
/// [disabled]`) and the published 2.0.0 SDK's (`  - button "Save" (ref=e12) [disabled]`, the form
/// baselines were saved in before), so a baseline from either compares with either.
fn outline_line(line: &str) -> String {
    if line.starts_with(ROUTE_LINE) || line.starts_with(CONSOLE_ERROR_LINE) {
        return line.to_string();
    }
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    let (depth, rest) = match rest.strip_prefix("- ") {
        Some(rest) => (indent / 2, rest),
        None => (indent, rest),
    };
    format!("{}{}", " ".repeat(depth), without_ref(rest))
}

/// A line's content without its ref: ` (ref=eN)` anywhere, or the bare `eN` that follows the
/// role and its quoted name.
fn without_ref(rest: &str) -> String {
    if let Some(start) = rest.find(" (ref=")
        && let Some(end) = rest[start..].find(')')
    {
        return format!("{}{}", &rest[..start], &rest[start + end + 1..]);
    }
    let role_end = rest.find(' ').unwrap_or(rest.len());
    let mut at = role_end;
    if rest[at..].starts_with(" \"") {
        // Past the quoted name (JSON-quoted: a `\"` inside does not end it).
        let mut escaped = false;
        let close = rest[at + 2..].char_indices().find(|&(_, c)| {
            let ends = c == '"' && !escaped;
            escaped = c == '\\' && !escaped;
            ends
        });
        match close {
            Some((i, _)) => at += 2 + i + 1,
            None => return rest.to_string(),
        }
    }
    let after = &rest[at..];
    let Some(token) = after.strip_prefix(" e") else {
        return rest.to_string();
    };
    let digits = token.len() - token.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let ends = token[digits..].is_empty() || token[digits..].starts_with(' ');
    if digits == 0 || !ends {
        return rest.to_string();
    }
    format!("{}{}", &rest[..at], &token[digits..])
}

/// The path and query of `url`, without connection parameters or parameters naming a secret.
fn route_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path_and_query = rest.find('/').map_or("/", |i| &rest[i..]);
    let without_hash = path_and_query.split('#').next().unwrap_or("/");
    let (path, query) = without_hash.split_once('?').unwrap_or((without_hash, ""));
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .filter(|pair| {
            let name = pair.split('=').next().unwrap_or("");
            !CONNECTION_PARAMS.contains(&name) && !names_a_secret(name)
        })
        .collect();
    if kept.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{}", kept.join("&"))
    }
}

/// The lines of `after` not in `before` and of `before` not in `after`, counting repeats (a
/// list that lost one of three identical items shows one removed line), in page order.
fn line_diff(before: &[String], after: &[String]) -> (Vec<String>, Vec<String>) {
    fn only_in(ours: &[String], theirs: &[String]) -> Vec<String> {
        let mut left: HashMap<&str, usize> = HashMap::new();
        for line in theirs {
            *left.entry(line).or_default() += 1;
        }
        ours.iter()
            .filter(|line| match left.get_mut(line.as_str()) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    false
                }
                _ => true,
            })
            .cloned()
            .collect()
    }
    (only_in(after, before), only_in(before, after))
}

fn lines_of(document: &Value) -> Vec<String> {
    document
        .get("outline")
        .and_then(Value::as_array)
        .map(|lines| {
            lines
                .iter()
                .filter_map(|l| l.as_str().map(outline_line))
                .collect()
        })
        .unwrap_or_default()
}

fn needs_page(call: &Call<'_>, action: &str) -> Result<(), Refusal> {
    call.session().map(|_| ()).map_err(|_| {
        Refusal::new(
            format!("reticle_baseline {action} reads the page, and this call has no browser page"),
            "open the app in a browser with the Reticle SDK (reticle_sessions says which pages are connected), then call again, naming sessionId if there are several",
        )
    })
}

async fn baseline(call: &Call<'_>, a: BaselineFamilyArgs) -> Result<Value, Refusal> {
    let workspace = call.ctx.workspace();
    let action = match a.action {
        BaselineAction::Save => "save",
        BaselineAction::List => "list",
        BaselineAction::Diff => "diff",
    };
    let named = || {
        a.name
            .clone()
            .ok_or_else(|| Refusal::missing_name(ToolName::Baseline.as_str(), action, "baseline"))
    };
    match a.action {
        BaselineAction::List => {
            let baselines: Vec<Value> = workspace
                .list(Folder::Baselines)
                .into_iter()
                .map(|listed| match listed.document {
                    Ok(document) => json!({
                        "name": listed.name,
                        "route": document.get("route").cloned().unwrap_or(Value::Null),
                        "lineCount": lines_of(&document).len(),
                    }),
                    Err(why) => json!({ "name": listed.name, "unreadable": why.to_string() }),
                })
                .collect();
            Ok(json!({
                "ok": true,
                "action": "list",
                "workspace": workspace.root().display().to_string(),
                "count": baselines.len(),
                "baselines": baselines,
            }))
        }
        BaselineAction::Save => {
            let name = named()?;
            needs_page(call, action)?;
            let existing = workspace
                .load(Folder::Baselines, &name)
                .map_err(store_refusal)?;
            if existing.is_some() && a.overwrite != Some(true) {
                return Err(Refusal::new(
                    format!("a baseline named '{name}' is already saved; nothing was written"),
                    "pass overwrite:true to replace it, diff against it, or choose another name",
                ));
            }
            let (route, lines) = outline(call.session()?).await?;
            let mut document = Map::new();
            document.insert("name".into(), json!(name));
            document.insert("route".into(), json!(route));
            document.insert("outline".into(), json!(lines));
            let path = workspace
                .save(Folder::Baselines, &name, &document)
                .map_err(store_refusal)?;
            Ok(json!({
                "ok": true,
                "action": "save",
                "name": name,
                "path": path.display().to_string(),
                "route": route,
                "lineCount": lines.len(),
                "replaced": existing.is_some(),
            }))
        }
        BaselineAction::Diff => {
            let name = named()?;
            needs_page(call, action)?;
            let document = workspace
                .load(Folder::Baselines, &name)
                .map_err(store_refusal)?
                .ok_or_else(|| {
                    Refusal::new(
                        format!("no baseline named '{name}' is saved in this workspace"),
                        "call reticle_baseline {\"action\":\"list\"} for the saved baselines, or save one with {\"action\":\"save\"}",
                    )
                })?;
            let before = lines_of(&document);
            let (route, now) = outline(call.session()?).await?;
            let (added, removed) = line_diff(&before, &now);
            Ok(json!({
                "ok": true,
                "action": "diff",
                "name": name,
                "changed": !added.is_empty() || !removed.is_empty(),
                "route": { "baseline": document.get("route").cloned().unwrap_or(Value::Null), "now": route },
                "added": added,
                "removed": removed,
                "note": "a diff shows what changed on the page; it is not a verdict about the app",
            }))
        }
    }
}

/// `reticle_baseline`, as the registry knows it.
pub struct Baseline;

impl Tool for Baseline {
    const NAME: ToolName = ToolName::Baseline;
    const TITLE: &'static str = "UI baselines";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str = "Semantic baselines of a page, kept in .reticle/baselines/: action save (the page's outline now: route, roles, names, states, console errors), list, diff (the page now against a saved one, as added and removed lines; not a verdict).";
    const OUTPUT: &'static [&'static str] = &["action", "baselines", "changed", "added", "removed"];
    const SESSION: SessionUse = SessionUse::Optional;
    type Args = BaselineFamilyArgs;

    fn run<'a>(call: &'a Call<'a>, a: BaselineFamilyArgs) -> Answer<'a> {
        Box::pin(baseline(call, a))
    }
}

/// `reticle_baseline_save`, a member of its family.
pub const BASELINE_SAVE: Registration = Registration::member::<BaselineFamilyArgs>(
    ToolName::BaselineSave,
    "reticle_baseline {action:\"save\", name, overwrite?}: save the page's outline.",
);

/// `reticle_baseline_list`, a member of its family.
pub const BASELINE_LIST: Registration = Registration::member::<BaselineFamilyArgs>(
    ToolName::BaselineList,
    "reticle_baseline {action:\"list\"}: the saved baselines.",
);

/// `reticle_baseline_diff`, a member of its family.
pub const BASELINE_DIFF: Registration = Registration::member::<BaselineFamilyArgs>(
    ToolName::BaselineDiff,
    "reticle_baseline {action:\"diff\", name}: the page now against a saved outline.",
);

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &[&str]) -> Vec<String> {
        text.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn refs_and_connection_parameters_stay_out_of_an_outline() {
        // Ours and the published SDK's outline, and a line saved before, read alike.
        for line in [
            r#"  button "Save" e12 [disabled]"#,
            r#"    - button "Save" (ref=e12) [disabled]"#,
            r#"    - button "Save" [disabled]"#,
        ] {
            assert_eq!(
                outline_line(line),
                r#"  button "Save" [disabled]"#,
                "{line}"
            );
        }
        assert_eq!(outline_line("- main"), "main");
        assert_eq!(outline_line("main"), "main");
        assert_eq!(outline_line(" textbox e3"), " textbox");
        // A name holding what looks like a ref, or a word after the name, is kept.
        assert_eq!(
            outline_line(r#"button "Go \" e4 now" e5"#),
            r#"button "Go \" e4 now""#
        );
        assert_eq!(outline_line(r#"text "Row e7""#), r#"text "Row e7""#);
        assert_eq!(outline_line("heading e12x"), "heading e12x");
        assert_eq!(outline_line("route: /e5"), "route: /e5");
        assert_eq!(
            route_of("http://127.0.0.1:5/?reticlePort=9&reticleToken=t&session=s&view=details#x"),
            "/?view=details"
        );
        assert_eq!(route_of("http://h/a/b?apiKey=1&session=s"), "/a/b");
        assert_eq!(route_of("http://h"), "/");
    }

    #[test]
    fn a_diff_counts_repeated_lines_and_keeps_page_order() {
        let before = lines(&["route: /", "- item", "- item", "- item", "- button \"Old\""]);
        let after = lines(&[
            "route: /",
            "- item",
            "- item",
            "- button \"New\"",
            "- alert",
        ]);
        let (added, removed) = line_diff(&before, &after);
        assert_eq!(added, lines(&["- button \"New\"", "- alert"]));
        assert_eq!(removed, lines(&["- item", "- button \"Old\""]));
        assert_eq!(line_diff(&before, &before), (vec![], vec![]));
    }
}
