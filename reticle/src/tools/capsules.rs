//! Capsules: every red `reticle_act_and_wait` (and every red flow replay) leaves its inputs and
//! evidence in the workspace's `capsules/<epoch ms>-<pid>-<n>.json`, written atomically and
//! readable by its owner only, with secrets redacted first ([`crate::flow::redact`]); the workspace
//! keeps only the newest ([`Folder::Capsules`]). [`load`] reads one back by the name a verdict
//! answered (`capsuleSaved`), refusing a missing or unreadable one by name.

use serde_json::Value;

use super::refusal::{Refusal, store_refusal};
use crate::flow::redact;
use crate::store::workspace::{DIR_NAME, Folder, Workspace, stamped_name};

/// How many window events a capsule keeps (the most recent).
pub const EVENTS_KEPT: usize = 200;

/// Writes one capsule; its file name on success, a sentence on failure.
pub fn save(workspace: &Workspace, capsule: &Value) -> Result<String, String> {
    let mut capsule = capsule.clone();
    redact::capsule(&mut capsule);
    let Value::Object(document) = capsule else {
        return Err("a capsule must be a JSON object".into());
    };
    let name = stamped_name();
    workspace
        .save(Folder::Capsules, &name, &document)
        .map_err(|e| format!("the capsule could not be written: {e}"))?;
    Ok(format!(
        "{DIR_NAME}/{}/{name}.json",
        Folder::Capsules.dir_name()
    ))
}

/// Reads the capsule `given` names: its `capsuleSaved` path, its file name or its stem.
pub fn load(workspace: &Workspace, given: &str) -> Result<(String, Value), Refusal> {
    let file = given.rsplit('/').next().unwrap_or(given);
    let name = file.strip_suffix(".json").unwrap_or(file);
    let capsule = workspace
        .load(Folder::Capsules, name)
        .map_err(store_refusal)?
        .ok_or_else(|| {
            let newest: Vec<String> = workspace
                .list(Folder::Capsules)
                .into_iter()
                .rev()
                .take(5)
                .map(|l| l.name)
                .collect();
            Refusal::new(
                format!("no capsule named '{name}' is in this workspace (the newest {} are kept); nothing was run", Folder::Capsules.kept().unwrap_or(0)),
                "pass the `capsuleSaved` a red verdict answered; `newest` lists the capsules there are",
            )
            .with("newest", newest)
        })?;
    Ok((name.to_string(), capsule))
}
