//! `reticle_wait_ready`: block (bounded) until a browser session is connected, and say how many
//! are. It never opens a page (`reticle_session launch` does); it proves nothing about the app.

use std::time::Duration;

use serde_json::{Value, json};

use crate::tools::call::Call;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::WaitReadyArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, Tool};

/// The wait when none is given, and the longest one accepted (the reference's).
const DEFAULT_WAIT_MS: u64 = 5_000;
const MAX_WAIT_MS: u64 = 30_000;

async fn wait_ready(call: &Call<'_>, a: WaitReadyArgs) -> Result<Value, Refusal> {
    let wait = a.timeout_ms.unwrap_or(DEFAULT_WAIT_MS);
    if wait > MAX_WAIT_MS {
        return Err(Refusal::bad_arguments(
            call.tool.as_str(),
            &format!("timeoutMs must be at most {MAX_WAIT_MS}"),
        ));
    }
    let bridge = &call.ctx.bridge;
    let ready = bridge
        .wait_for_session(Duration::from_millis(wait), |_| true)
        .await
        .is_some();
    let mut answer = json!({ "ready": ready, "sessionCount": bridge.session_count() });
    if !ready {
        answer["recovery"] = json!(format!(
            "no page connected within {wait} ms: open the app with the Reticle SDK (or call reticle_session {{\"action\":\"launch\",\"url\":...}}), then call reticle_sessions"
        ));
    }
    Ok(answer)
}

/// `reticle_wait_ready`, as the registry knows it.
pub struct WaitReady;

impl Tool for WaitReady {
    const NAME: ToolName = ToolName::WaitReady;
    const TITLE: &'static str = "Wait for a session";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str =
        "Wait (timeoutMs, at most 30000) until a browser session is connected. Reads only.";
    const OUTPUT: &'static [&'static str] = &["ready", "sessionCount"];
    type Args = WaitReadyArgs;

    fn run<'a>(call: &'a Call<'a>, a: WaitReadyArgs) -> Answer<'a> {
        Box::pin(wait_ready(call, a))
    }
}
