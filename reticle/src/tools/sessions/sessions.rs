//! `reticle_sessions`: which browser sessions this daemon has, and when there are none, why
//! (no page ever connected, a page connected and went away, a page that dialled and was
//! refused), what to do next in a sentence, and as a structured `next_action` (chosen by
//! `next_action` from what the daemon can see); each session's lease (holder and expiry, or
//! null), and for a tab Reticle drives, how (`driven`) and whose SDK (`sdk`); and which
//! workspace root (`.reticle/`) this daemon uses.

use serde_json::{Value, json};

use super::next_action;
use super::next_action::Seen;
use crate::tools::call::Call;
use crate::tools::refusal::Refusal;
use crate::tools::session_block::session_block;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, Tool};

async fn sessions(call: &Call<'_>) -> Result<Value, Refusal> {
    let ctx = call.ctx;
    let port = ctx.info.port;
    let driven = ctx.host.drives.tabs().await;
    let listed: Vec<Value> = ctx
        .bridge
        .sessions()
        .iter()
        .map(|s| {
            let identity = s.identity();
            let (block, warning) = session_block(s);
            let mut entry = json!({
                "sessionId": s.id(),
                "url": identity.url,
                "title": identity.title,
                "connectedAt": s.connected_at(),
                "lastSeenMs": s.last_seen_ms(),
                "focused": identity.focused,
                "hidden": identity.hidden,
                "throttled": block["throttled"],
                "idle": s.is_idle(),
                "head": s.head(),
                "lease": ctx.host.leases.lease_of(s.id()).map(|l| l.to_value()),
            });
            if let Some(tab) = driven.get(s.id()) {
                entry["driven"] = json!(tab.driven.as_str());
                entry["sdk"] = json!(tab.sdk.as_str());
            }
            if let Some(page) = s.adopted_from() {
                entry["pageSessionId"] = json!(page);
            }
            if let Some(project) = identity.project_id {
                entry["projectId"] = json!(project);
            }
            if let Some(skew) = identity.version_skew {
                entry["versionSkew"] = json!(skew);
            }
            if let Some(warning) = warning {
                entry["warning"] = json!(warning);
            }
            entry
        })
        .collect();
    let mut answer = json!({
        "sessions": listed,
        "count": listed.len(),
        "daemon": { "instance": ctx.info.instance, "port": port, "version": ctx.info.version },
        "workspace": ctx.workspace().root().display().to_string(),
    });
    if listed.is_empty() {
        let (why, next) = match ctx.bridge.refused().last() {
            Some(refused) => (
                format!(
                    "a page dialled this daemon (port {port}) and was refused: {}",
                    refused.reason
                ),
                "fix what the refusal names (usually the pairing token passed to connect()), then reload the app",
            ),
            None if ever_connected(call) => (
                format!(
                    "a page was connected to this daemon (port {port}) and went away: its tab was closed or reloaded without reconnecting"
                ),
                "reopen the app in the browser (or bring its tab back), then call reticle_sessions again",
            ),
            None => (
                format!(
                    "no page has connected to this daemon (port {port}) since it started: either the app is not open in a browser, or its tab was open before the daemon started and has not been reloaded, or it does not load the Reticle SDK, or its SDK dials another port"
                ),
                "open the app (or reload its tab) with the SDK connecting to ws://127.0.0.1:<port>/reticle (the port above), then call reticle_sessions again",
            ),
        };
        answer["why"] = json!(why);
        answer["next"] = json!(next);
        answer["next_action"] = json!(next_action::choose(&seen(call).await));
    }
    Ok(answer)
}

/// What the daemon can see of the pages that are not connected.
async fn seen(call: &Call<'_>) -> Seen {
    let bridge = &call.ctx.bridge;
    let refused = bridge
        .refused()
        .last()
        .map(|r| (r.kind.clone(), r.url.clone()));
    let gone_url = bridge.last_gone_url().filter(|url| !url.is_empty());
    let dev_server_up = match &gone_url {
        Some(url) => next_action::dev_server_up(url).await,
        None => None,
    };
    // Only when no page ever came: whether the app is wired tells a tab opened before the
    // daemon (reload it) from an app that does not load the SDK (wire it).
    let wiring = (refused.is_none() && gone_url.is_none())
        .then(|| {
            call.ctx
                .workspace()
                .root()
                .parent()
                .map(crate::wiring::wiring)
        })
        .flatten();
    Seen {
        refused,
        gone_url,
        dev_server_up,
        wiring,
        daemon_port: Some(call.ctx.info.port),
    }
}

fn ever_connected(call: &Call<'_>) -> bool {
    call.ctx.bridge.lives_started() > 0
}

/// `reticle_sessions`, as the registry knows it.
pub struct Sessions;

impl Tool for Sessions {
    const NAME: ToolName = ToolName::Sessions;
    const TITLE: &'static str = "Browser sessions";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str = "The browser sessions (app tabs running the Reticle SDK) connected to this daemon; when none, `why` names the case and the next step. Reads only.";
    const OUTPUT: &'static [&'static str] = &["sessions", "count", "why", "next"];
    type Args = crate::tools::surface::args::NoArgs;

    fn run<'a>(call: &'a Call<'a>, _: crate::tools::surface::args::NoArgs) -> Answer<'a> {
        Box::pin(sessions(call))
    }
}
