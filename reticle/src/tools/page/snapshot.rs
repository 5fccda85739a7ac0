//! `reticle_snapshot`: the page as an outline, with its cost, and with `diff` the lines added and
//! removed since the last snapshot of the same page, mode and scope. It reads; it must not act.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use crate::tools::call::Call;
use crate::tools::commands::{ask, put};
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::{SnapshotArgs, SnapshotMode};
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};
use crate::wire::CommandName;

async fn snapshot(call: &Call<'_>, a: SnapshotArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let mode = a.mode.unwrap_or(SnapshotMode::Full).as_str();
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
    if result.get("truncated") == Some(&Value::Bool(true)) {
        let nodes = result.get("nodes").and_then(Value::as_u64).unwrap_or(0);
        result["cut"] = json!(format!(
            "the outline stops at {nodes} nodes, the page SDK's cap; give `scope` (a ref or a CSS selector) or mode `interactive` to see the rest"
        ));
    }
    let bytes = serde_json::to_vec(&result).map(|b| b.len()).unwrap_or(0);
    result["cost"] = json!({ "bytes": bytes, "tokens": bytes.div_ceil(4) });
    Ok(result)
}

/// `reticle_snapshot`, as the registry knows it.
pub struct Snapshot;

impl Tool for Snapshot {
    const NAME: ToolName = ToolName::Snapshot;
    const TITLE: &'static str = "Page outline";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str = "The page as an outline, a line per node: role, \"name\", ref (e4), [states]; at most 400 nodes (`cut` says so). With its cost in bytes and tokens. Reads only.";
    const OUTPUT: &'static [&'static str] = &[
        "tree",
        "status",
        "mode",
        "nodes",
        "truncated",
        "cut",
        "cost",
        "diff",
    ];
    const SESSION: SessionUse = SessionUse::Bound;
    type Args = SnapshotArgs;

    fn run<'a>(call: &'a Call<'a>, a: SnapshotArgs) -> Answer<'a> {
        Box::pin(snapshot(call, a))
    }
}
