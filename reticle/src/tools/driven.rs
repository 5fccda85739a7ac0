//! A driven tab's session coming up: waiting (bounded) for it to connect and recording where
//! its SDK came from; bringing back the tab of a session whose launched browser died, for the call
//! that needs it; an agent's `reticle mcp --drive` tab, opened per agent and closed when its links
//! are gone. It must not answer a tool.

use std::time::Duration;

use crate::bridge::ResolveError;
use crate::drive::{DriveState, DrivenTab, Drives, SdkSource, Want};
use crate::tools::context::ToolContext;
use crate::tools::refusal::Refusal;

/// How long a tab that loaded gets to connect its session (its own SDK, or the injected one).
const CONNECT_BOUND: Duration = Duration::from_secs(10);

/// How long the page gets to say, over DevTools, where its SDK came from.
const READ_BOUND: Duration = Duration::from_secs(2);

/// How long a driven tab whose session is gone gets for its browser to be seen dead.
const DEATH_SEEN: Duration = Duration::from_secs(1);

/// When a call finds no session `explicit` names (or none at all), and that session is a driven
/// tab whose browser died: opens it again (launching the browser again) and answers the note
/// the call carries. `None` when there is nothing to bring back.
pub async fn revive(
    ctx: &ToolContext,
    explicit: Option<&str>,
    err: &ResolveError,
) -> Option<Result<String, Refusal>> {
    let drives = &ctx.host.drives;
    let tab = match (explicit, err) {
        (Some(id), ResolveError::NotFound { .. }) => drives.tab(id).await?,
        (None, ResolveError::NoSessions { .. }) => {
            let tabs = drives.tabs().await;
            let mut tabs = tabs.into_values();
            match (tabs.next(), tabs.next()) {
                (Some(only), None) => only,
                _ => return None,
            }
        }
        _ => return None,
    };
    if !tab.died_within(DEATH_SEEN).await {
        return None;
    }
    let session = tab.session.clone();
    let reopened = drives
        .open(tab.want.clone(), &tab.url, &session, ctx.info.port)
        .await;
    Some(match reopened {
        Ok(_) => connected(drives, &ctx.bridge, &session).await.map(|_| {
            format!("the driven browser of session '{session}' had died; Reticle launched it again and reopened {}", tab.url)
        }),
        Err(why) => Err(Refusal::new(
            format!("the driven browser of session '{session}' died and could not be brought back: {why}"),
            "call reticle_session {\"action\":\"launch\",\"url\":...} for a new one",
        )),
    })
}

/// Waits (bounded) for `session` to connect, then records where its SDK came from; a session
/// that never connects is forgotten and refused with what the page said.
pub async fn connected(
    drives: &Drives,
    bridge: &crate::bridge::Bridge,
    session: &str,
) -> Result<(String, SdkSource), Refusal> {
    // An app that names its own session id connects under that one; its hello's URL still
    // carries the id the tab was opened for.
    let asked = |s: &std::sync::Arc<crate::bridge::Session>| {
        s.id() == session
            || crate::wire::session_param::asked_session(&s.identity().url).as_deref()
                == Some(session)
    };
    let arrived = bridge.wait_for_session(CONNECT_BOUND, asked).await;
    let session = match &arrived {
        Some(found) if found.id() != session => {
            drives.rename(session, found.id()).await;
            found.id().to_string()
        }
        _ => session.to_string(),
    };
    let session = session.as_str();
    let arrived = arrived.is_some();
    let tab = drives.tab(session).await;
    let said = match &tab {
        Some(tab) => match tab.page().await {
            Ok(page) => crate::drive::outcome(&page, READ_BOUND).await,
            Err(why) => Err(why),
        },
        None => Err("its tab is gone".into()),
    };
    match (arrived, said) {
        (true, Ok(sdk)) => {
            let sdk = if sdk == SdkSource::Pending {
                SdkSource::App
            } else {
                sdk
            };
            drives.mark_sdk(session, sdk).await;
            Ok((session.to_string(), sdk))
        }
        // Connected, but the page cannot say how (it is busy): the session is what counts.
        (true, Err(_)) => Ok((session.to_string(), SdkSource::Pending)),
        (false, said) => {
            drives.forget(session).await;
            let why = match said {
                Err(why) => why,
                Ok(_) => format!(
                    "the page loaded but its session did not connect within {} s",
                    CONNECT_BOUND.as_secs()
                ),
            };
            Err(Refusal::new(
                format!("the driven tab opened, but {why}"),
                "open the page in the driven browser to see what it does (reticle_session launch with headless:false), then call again",
            ))
        }
    }
}

/// How long a call waits for its agent's `--drive` tab that is still opening.
const AGENT_DRIVE_WAIT: Duration = Duration::from_secs(30);

/// Brings up agent `agent`'s `reticle mcp --drive` tab on `url` (each stream it opens asks;
/// one opening at a time, and none while its tab is up), and records how it came out.
pub async fn drive_for_agent(ctx: ToolContext, agent: String, want: Want, url: String) {
    let drives = &ctx.host.drives;
    let Some(drive) = drives.begin_agent(&agent, want, &url).await else {
        return;
    };
    if ctx.bridge.get(&drive.session).is_some() {
        drive.settle(DriveState::Ready);
        return;
    }
    let opened = drives
        .open(drive.want.clone(), &url, &drive.session, ctx.info.port)
        .await;
    let state = match opened {
        Ok(_) => match connected(drives, &ctx.bridge, &drive.session).await {
            Ok(_) => DriveState::Ready,
            Err(refusal) => DriveState::Failed(refusal.reason),
        },
        Err(why) => DriveState::Failed(why),
    };
    if let (Some(log), DriveState::Failed(why)) = (&ctx.host.log, &state) {
        log.event(
            "drive_failed",
            serde_json::json!({ "agent": agent, "url": url, "why": why }),
        );
    }
    drive.settle(state);
}

/// When a call of an agent whose `--drive` tab is still opening finds no session: waits for it
/// (bounded). `Some(Err)` names why it did not come up.
pub async fn await_agent_drive(ctx: &ToolContext) -> Option<Result<(), Refusal>> {
    let agent = &ctx.caller.as_ref()?.id;
    let drive = ctx.host.drives.agent(agent).await?;
    Some(match drive.settled(AGENT_DRIVE_WAIT).await {
        Some(DriveState::Ready) => Ok(()),
        Some(DriveState::Failed(why)) => Err(Refusal::new(
            format!("the browser `reticle mcp --drive` asked for did not come up: {why}"),
            "check the app runs at the --drive URL, then call reticle_session {\"action\":\"launch\",\"url\":...}",
        )),
        _ => Err(Refusal::new(
            format!(
                "the browser `reticle mcp --drive` asked for was still opening after {} s",
                AGENT_DRIVE_WAIT.as_secs()
            ),
            "call reticle_sessions in a moment",
        )),
    })
}

/// Once agent `agent`'s last link closed: after the link grace, unless it came back, its
/// `--drive` tab closes (and the launched browser, when no other tab is left).
pub fn release_when_gone(host: std::sync::Arc<crate::tools::context::ToolHost>, agent: String) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    runtime.spawn(async move {
        if host.drives.agent(&agent).await.is_none() {
            return;
        }
        tokio::time::sleep(host.leases.link_grace()).await;
        if !host.leases.link_open(&agent) {
            host.drives.release_agent(&agent).await;
        }
    });
}

/// How long a tool's DevTools request to a driven tab gets.
pub const DEVTOOLS_BOUND: Duration = Duration::from_secs(5);

/// The driven tab of the call's session; on a person's tab (no DevTools there) the refusal
/// names how to get one.
pub async fn driven_tab(call: &crate::tools::call::Call<'_>) -> Result<DrivenTab, Refusal> {
    let session = call.session()?;
    match call.ctx.host.drives.tab(session.id()).await {
        Some(tab) => Ok(tab),
        None => Err(Refusal::new(
            format!(
                "{} needs a tab Reticle drives over DevTools, and session '{}' is a person's tab; nothing was done",
                call.tool,
                session.id()
            ),
            "start the agent with `reticle mcp --drive <url>`, or call reticle_session {\"action\":\"launch\",\"url\":...} and use its sessionId",
        )),
    }
}

/// What a verdict's window owes to network mocks on `session`'s driven tab: the requests a rule
/// matched (by URL fragment and method), and whether every request of the window was one (then
/// the verdict rests on mocked traffic only). `None` when no mock is set or none matched.
pub async fn mocked_traffic(
    drives: &Drives,
    session: &str,
    window: &crate::verdict::Window,
) -> Option<serde_json::Value> {
    let (rules, _) = drives.mocks(session).await;
    if rules.is_empty() {
        return None;
    }
    let requests: Vec<&crate::verdict::ObservedEvent> = window
        .events
        .iter()
        .filter(|e| e.kind.known() == Some(crate::wire::KnownEventType::NetRequest))
        .collect();
    let matched: Vec<String> = requests
        .iter()
        .filter_map(|e| {
            let url = e.data.get("url").and_then(serde_json::Value::as_str)?;
            let method = e
                .data
                .get("method")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("GET");
            rules
                .iter()
                .any(|r| r.matches(url, method))
                .then(|| url.to_string())
        })
        .collect();
    if matched.is_empty() {
        return None;
    }
    let only = matched.len() == requests.len();
    let mut said = serde_json::json!({ "requests": matched.len(), "urls": matched.iter().take(10).collect::<Vec<_>>() });
    if only {
        said["note"] = serde_json::json!(
            "every request in this window was answered by a reticle_network_mock rule: the verdict rests on mocked traffic only, not on the app's real backend"
        );
    }
    Some(said)
}
