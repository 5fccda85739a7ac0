//! `reticle_sessions`: which browser sessions this daemon has, and when there are none, why.

use rmcp::model::CallToolResult;
use serde_json::{Map, Value, json};

use super::{ToolContext, refuse_unknown};

pub const NAME: &str = "reticle_sessions";
pub const DESCRIPTION: &str = "List the browser sessions (app tabs running the Reticle SDK) connected to this daemon. \
Reads only; proves nothing about the app. When the list is empty, `why` says what to do.";

pub fn schema() -> Value {
    json!({ "type": "object", "properties": {}, "additionalProperties": false })
}

pub fn run(ctx: &ToolContext, arguments: &Map<String, Value>) -> Result<CallToolResult, String> {
    refuse_unknown(arguments, &[])?;
    let sessions = ctx.bridge.summaries();
    let count = sessions.len();
    let mut answer = json!({
        "sessions": sessions,
        "count": count,
        "daemon": { "instance": ctx.info.instance, "port": ctx.info.port, "version": ctx.info.version },
    });
    if count == 0 {
        answer["why"] = json!(format!(
            "no browser session is connected to the Reticle daemon on port {}: open the app in a browser with the Reticle SDK connecting to ws://127.0.0.1:{}/reticle, then call reticle_sessions again",
            ctx.info.port, ctx.info.port
        ));
    }
    Ok(CallToolResult::structured(answer))
}
