//! `reticle_feedback`: leave feedback about Reticle in a local outbox in the state dir (the
//! newest [`OUTBOX_KEPT`] kept); nothing leaves this machine.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use crate::store;
use crate::tools::call::Call;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::FeedbackArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, Tool};

/// How many feedback entries the outbox keeps.
pub const OUTBOX_KEPT: usize = 500;

/// The outbox folder in the state dir.
pub const OUTBOX_DIR: &str = "feedback-outbox";

static NEXT: AtomicU64 = AtomicU64::new(1);

fn feedback(call: &Call<'_>, a: FeedbackArgs) -> Result<Value, Refusal> {
    let dir = call.ctx.host.state_dir.join(OUTBOX_DIR);
    let millis = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
    let name = format!(
        "{millis}-{}-{}.json",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let entry = json!({
        "at": crate::daemon::log::now_rfc3339(),
        "kind": serde_json::to_value(a.kind).unwrap_or(Value::Null),
        "text": a.text,
        "need": a.need,
        "impact": a.impact,
        "rating": a.rating,
        "version": crate::VERSION,
    });
    let bytes = serde_json::to_vec_pretty(&entry).unwrap_or_default();
    store::write_atomic(&dir, &name, &bytes).map_err(|e| {
        Refusal::new(
            format!(
                "the feedback could not be written to the outbox in the state dir ({})",
                e.kind()
            ),
            "check that the Reticle state dir is writable (reticle doctor names the problem)",
        )
    })?;
    store::keep_newest(&dir, OUTBOX_KEPT, ".json");
    Ok(json!({
        "ok": true,
        "saved": format!("{OUTBOX_DIR}/{name}"),
        "note": "written to a local outbox in the Reticle state dir; nothing leaves this machine",
    }))
}

/// `reticle_feedback`, as the registry knows it.
pub struct Feedback;

impl Tool for Feedback {
    const NAME: ToolName = ToolName::Feedback;
    const TITLE: &'static str = "Send feedback";
    const EFFECT: Effect = Effect::Adds;
    const DESCRIPTION: &'static str =
        "Leave feedback about Reticle, kept in a local outbox; nothing leaves this machine.";
    const OUTPUT: &'static [&'static str] = &["saved", "note"];
    type Args = FeedbackArgs;

    fn run<'a>(call: &'a Call<'a>, a: FeedbackArgs) -> Answer<'a> {
        Box::pin(std::future::ready(feedback(call, a)))
    }
}
