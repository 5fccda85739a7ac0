//! The published `@reticlehq/browser` 2.0.0's own UI kept out of what an agent sees: its "Flag a
//! bug" button and presenter panel showed up in snapshots, queries and matches as if they were
//! the app's. Only a page whose hello names no SDK version is filtered.
//!
//! It must not touch answers of pages that report an SDK version, nor hide anything when the
//! proof of a container cannot be had (a failed read leaves the answer as the page gave it).

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::bridge::{Reply, Session};
use crate::wire::CommandName;

/// The accessible name of 2.0.0's "Flag a bug" button.
pub const FLAG_A_BUG: &str = "Flag a bug for the agent";

/// One of the SDK's containers, and the control that proves it is on the page.
struct Container {
    selector: &'static str,
    /// A button only this container has: its accessible name and its text.
    control_name: &'static str,
    control_text: Option<&'static str>,
}

/// The annotator's root (the "Flag a bug" button and its highlight) and the presenter panel.
const CONTAINERS: &[Container] = &[
    Container {
        selector: "[data-reticle-mark=\"root\"]",
        control_name: FLAG_A_BUG,
        control_text: Some("Flag a bug"),
    },
    Container {
        selector: "[data-reticle-hud]",
        control_name: "Minimise the panel",
        control_text: Some("\u{2304}"),
    },
];

/// Whether `session`'s page runs the published 2.0.0 SDK (no version in its hello; ours and
/// later ones say one).
pub fn applies(session: &Session) -> bool {
    session.identity().sdk_version.is_none()
}

/// Takes the SDK's own UI out of `result`, the page's answer to `name` with `args`.
pub async fn hide(
    session: &Session,
    name: CommandName,
    args: &Map<String, Value>,
    result: &mut Value,
    bound: Duration,
) {
    match name {
        CommandName::Snapshot => drop_flag_button_lines(result),
        CommandName::Query | CommandName::Match if !args.contains_key("scope") => {
            let scoped_in = if name == CommandName::Match {
                args.get("query")
                    .and_then(Value::as_object)
                    .is_some_and(|q| q.contains_key("scope"))
            } else {
                false
            };
            if !scoped_in && has_elements(result) {
                hide_elements(session, name, args, result, bound).await;
            }
        }
        _ => {}
    }
}

fn has_elements(result: &Value) -> bool {
    result
        .get("elements")
        .and_then(Value::as_array)
        .is_some_and(|e| !e.is_empty())
}

/// Drops the "Flag a bug" button's line, and the lines nested under it, from a snapshot tree.
fn drop_flag_button_lines(result: &mut Value) {
    let Some(tree) = result.get("tree").and_then(Value::as_str) else {
        return;
    };
    let marker = format!("button \"{FLAG_A_BUG}\"");
    let mut kept = Vec::new();
    let mut dropping_below: Option<usize> = None;
    let mut dropped = 0u64;
    for line in tree.lines() {
        let indent = line.len() - line.trim_start().len();
        if let Some(depth) = dropping_below {
            if indent > depth {
                dropped += 1;
                continue;
            }
            dropping_below = None;
        }
        if line.trim_start().starts_with(&format!("- {marker}")) {
            dropping_below = Some(indent);
            dropped += 1;
            continue;
        }
        kept.push(line);
    }
    if dropped == 0 {
        return;
    }
    result["tree"] = json!(kept.join("\n"));
    if let Some(nodes) = result.get("nodes").and_then(Value::as_u64) {
        result["nodes"] = json!(nodes.saturating_sub(dropped));
    }
}

/// Removes from a query or match answer every element the same query finds inside one of the
/// SDK's containers that is proved present.
async fn hide_elements(
    session: &Session,
    name: CommandName,
    args: &Map<String, Value>,
    result: &mut Value,
    bound: Duration,
) {
    let mut own: HashSet<String> = HashSet::new();
    for container in CONTAINERS {
        if !present(session, container, bound).await {
            continue;
        }
        let mut scoped = args.clone();
        if name == CommandName::Match {
            if let Some(Value::Object(query)) = scoped.get_mut("query") {
                query.insert("scope".into(), json!(container.selector));
            }
        } else {
            scoped.insert("scope".into(), json!(container.selector));
        }
        let Some(inside) = ask(session, name, scoped, bound).await else {
            continue;
        };
        own.extend(refs_of(&inside));
    }
    if own.is_empty() {
        return;
    }
    let Some(elements) = result.get_mut("elements").and_then(Value::as_array_mut) else {
        return;
    };
    elements.retain(|e| {
        e.get("ref")
            .and_then(Value::as_str)
            .is_none_or(|r| !own.contains(r))
    });
    let left = elements.len();
    if result.get("count").is_some() {
        result["count"] = json!(left);
    }
    if name == CommandName::Match && result.get("matched").is_some() {
        result["matched"] = json!(left > 0);
    }
}

/// Whether `container` is on the page: its control is found when a query is scoped to it. The
/// control is the proof, since 2.0.0 falls back to the whole body when a scoped query matches
/// nothing.
async fn present(session: &Session, container: &Container, bound: Duration) -> bool {
    let mut args = Map::new();
    args.insert("role".into(), json!("button"));
    args.insert("name".into(), json!(container.control_name));
    args.insert("scope".into(), json!(container.selector));
    let Some(found) = ask(session, CommandName::Query, args, bound).await else {
        return false;
    };
    found
        .get("elements")
        .and_then(Value::as_array)
        .is_some_and(|elements| {
            elements.iter().any(|e| {
                e.get("name").and_then(Value::as_str) == Some(container.control_name)
                    && container.control_text.is_none_or(|text| {
                        e.get("text").and_then(Value::as_str).map(str::trim) == Some(text)
                    })
            })
        })
}

async fn ask(
    session: &Session,
    name: CommandName,
    args: Map<String, Value>,
    bound: Duration,
) -> Option<Value> {
    match session.command(name.as_str(), args, bound).await {
        Ok(answer) => match answer.reply {
            Reply::Done(value) => Some(value),
            Reply::Refused(_) => None,
        },
        Err(_) => None,
    }
}

fn refs_of(answer: &Value) -> Vec<String> {
    answer
        .get("elements")
        .and_then(Value::as_array)
        .map(|elements| {
            elements
                .iter()
                .filter_map(|e| e.get("ref").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_button_and_its_text_leave_the_tree_and_the_count() {
        let mut result = json!({
            "tree": "- heading \"Todos\" (ref=e1)\n- button \"Add\" (ref=e2)\n- button \"Flag a bug for the agent\" (ref=e5)\n  - text \"Flag a bug\"\n- text \"After\"",
            "nodes": 5,
        });
        drop_flag_button_lines(&mut result);
        assert_eq!(
            result["tree"],
            "- heading \"Todos\" (ref=e1)\n- button \"Add\" (ref=e2)\n- text \"After\""
        );
        assert_eq!(result["nodes"], 3);
        let mut untouched =
            json!({"tree": "- button \"Flag a bug\" (ref=e1)\n  - text \"x\"", "nodes": 2});
        let before = untouched.clone();
        drop_flag_button_lines(&mut untouched);
        assert_eq!(
            untouched, before,
            "an app's own button of another name stays"
        );
    }
}
