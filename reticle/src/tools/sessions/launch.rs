//! `reticle_session {action:"launch"|"attach"}`: a tab in a browser Reticle drives, on a local
//! app wired or not. It refuses what is not loopback before anything starts, opens the tab, waits
//! (bounded) for its session and says where the session's SDK came from; it must not drive the
//! page beyond opening it.

use serde_json::{Value, json};

use crate::drive::{Want, loopback_endpoint, loopback_url};
use crate::tools::call::Call;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::{SessionAction, SessionFamilyArgs};

/// What a driven browser is asked for, once its arguments are checked.
pub struct DriveAsk {
    pub want: Want,
    pub url: String,
}

/// Checks a launch's or an attach's arguments: a loopback URL (and endpoint), or the refusal.
pub fn ask_of(action: SessionAction, a: &SessionFamilyArgs) -> Result<DriveAsk, Refusal> {
    let verb = action.as_str();
    let refuse = |why: String| {
        Refusal::new(
            format!("reticle_session {verb}: {why}"),
            "give the address of an app running on this machine, e.g. http://localhost:5173/",
        )
    };
    let Some(url) = a.url.as_deref() else {
        return Err(Refusal::new(
            format!(
                "reticle_session {verb} needs `url`, the local page to open; nothing was started"
            ),
            format!(
                "call reticle_session {{\"action\":\"{verb}\",\"url\":\"http://localhost:5173/\"}}"
            ),
        ));
    };
    let url = loopback_url(url).map_err(refuse)?;
    let want = match action {
        SessionAction::Attach => {
            let Some(cdp) = a.cdp.as_deref() else {
                return Err(Refusal::new(
                    "reticle_session attach needs `cdp`, the DevTools endpoint of a Chromium started with --remote-debugging-port; nothing was started",
                    "start Chromium with --remote-debugging-port=9222, then call reticle_session {\"action\":\"attach\",\"cdp\":\"http://127.0.0.1:9222\",\"url\":...}",
                ));
            };
            let endpoint = loopback_endpoint(cdp).map_err(|why| {
                Refusal::new(
                    format!("reticle_session attach: {why}"),
                    "attach only to a Chromium on this machine, e.g. http://127.0.0.1:9222",
                )
            })?;
            Want::Attach { endpoint }
        }
        _ => Want::Launch {
            headless: a.headless.unwrap_or(true),
        },
    };
    Ok(DriveAsk { want, url })
}

/// Opens `ask` in a driven tab under a new session id and answers once its session is listed.
pub async fn open(call: &Call<'_>, ask: DriveAsk) -> Result<Value, Refusal> {
    let session = format!("drive-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let drives = &call.ctx.host.drives;
    let action = match ask.want {
        Want::Launch { .. } => "launch",
        Want::Attach { .. } => "attach",
    };
    let opened = drives
        .open(ask.want, &ask.url, &session, call.ctx.info.port)
        .await
        .map_err(|why| {
            Refusal::new(
                format!("reticle_session {action}: {why}"),
                "check that the app is running at that address (and, to attach, that Chromium listens on the endpoint), then call again",
            )
        })?;
    let connecting = std::time::Instant::now();
    let (session, sdk) =
        crate::tools::driven::connected(drives, &call.ctx.bridge, &session).await?;
    let session_ms = connecting.elapsed().as_millis() as u64;
    let tab = opened.tab;
    let mut answer = json!({
        "ok": true,
        "action": action,
        "sessionId": session,
        "driven": tab.driven.as_str(),
        "sdk": sdk.as_str(),
        "url": tab.url,
        "done": true,
        // Where the time went: the browser, the page's own load, and the session's coming up
        // after it (the app's SDK, or Reticle's injected one).
        "tookMs": { "browser": opened.browser_ms, "load": opened.load_ms, "session": session_ms },
    });
    if opened.relaunched {
        answer["relaunched"] = json!(true);
        answer["note"] =
            json!("the browser Reticle launched earlier had died; it was launched again");
    }
    Ok(answer)
}
