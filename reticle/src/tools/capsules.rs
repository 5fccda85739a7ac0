//! Capsules: every red `reticle_act_and_wait` leaves its inputs and evidence in
//! `<project>/.reticle/capsules/<epoch ms>-<n>.json`, written atomically and readable by its owner
//! only, with secrets redacted first ([`super::redact`]); only the newest [`KEPT`] are kept.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use super::redact;
use crate::store;

/// How many capsules a project keeps.
pub const KEPT: usize = 50;
/// How many window events a capsule keeps (the most recent).
pub const EVENTS_KEPT: usize = 200;

static NEXT: AtomicU64 = AtomicU64::new(1);

/// Writes one capsule; its file name on success, a sentence on failure.
pub fn save(project: &Path, capsule: &Value) -> Result<String, String> {
    let mut capsule = capsule.clone();
    redact::capsule(&mut capsule);
    let dir = project.join(".reticle").join("capsules");
    let millis = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
    let name = format!(
        "{millis}-{}-{}.json",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let bytes = serde_json::to_vec_pretty(&capsule).map_err(|e| e.to_string())?;
    store::write_atomic(&dir, &name, &bytes)
        .map_err(|e| format!("the capsule could not be written under .reticle/capsules: {e}"))?;
    store::keep_newest(&dir, KEPT, ".json");
    Ok(format!(".reticle/capsules/{name}"))
}
