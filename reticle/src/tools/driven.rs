//! A driven tab's session coming up: waiting (bounded) for it to connect and recording where
//! its SDK came from, and bringing back the tab of a session whose launched browser died, for the
//! call that needs it. It must not open a first tab (that is `reticle_session launch`'s).

use std::time::Duration;

use crate::bridge::ResolveError;
use crate::drive::{Drives, SdkSource};
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
) -> Result<SdkSource, Refusal> {
    let arrived = bridge
        .wait_for_session(CONNECT_BOUND, |s| s.id() == session)
        .await
        .is_some();
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
            Ok(sdk)
        }
        // Connected, but the page cannot say how (it is busy): the session is what counts.
        (true, Err(_)) => Ok(SdkSource::Pending),
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
