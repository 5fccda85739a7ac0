//! Capsules: every red `reticle_act_and_wait` (and every red flow replay) leaves its inputs and
//! evidence in the workspace's `capsules/<epoch ms>-<pid>-<n>.json`, written atomically and
//! readable by its owner only, with secrets redacted first ([`super::redact`]); the workspace
//! keeps only the newest ([`Folder::Capsules`]).

use serde_json::Value;

use super::redact;
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
