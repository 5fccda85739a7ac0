//! `reticle_lease`, a family: `acquire` leases a session (by id, or by its page URL) for the
//! calling agent, `release` lets it go (the one named, else every lease the agent holds; what
//! was let go is listed, empty with a note when nothing was, never a claim it did); and the refusal every other holder's state-changing call
//! on a leased session gets ([`held_refusal`], made by the chokepoint). The book itself is
//! [`crate::tools::lease_book`]; this module only speaks tools. It must not drive a page.

use serde_json::{Value, json};

use crate::bridge::ResolveError;
use crate::tools::bounds::clip;
use crate::tools::call::Call;
use crate::tools::lease_book::{LeaseError, LeaseView};
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::{LeaseAction, LeaseFamilyArgs};
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, Registration, Tool};

fn lease(call: &Call<'_>, a: LeaseFamilyArgs) -> Result<Value, Refusal> {
    let Some(me) = call.ctx.caller.as_ref() else {
        return Err(Refusal::new(
            "this call came on no MCP link, so there is no agent to hold a lease; nothing was done",
            "call reticle_lease through reticle mcp (or an MCP stream of the daemon)",
        ));
    };
    let book = &call.ctx.host.leases;
    match a.action {
        LeaseAction::Acquire => {
            let session = target(call, &a)?.ok_or_else(|| {
                Refusal::new(
                    "reticle_lease acquire needs the session: sessionId or url; nothing was leased",
                    "pass sessionId (reticle_sessions lists them) or the page's url",
                )
            })?;
            match book.acquire(&session, me) {
                Ok(view) => Ok(json!({
                    "ok": true,
                    "action": "acquire",
                    "sessionId": session,
                    "leased": true,
                    "lease": view.to_value(),
                    "ttlMs": book.ttl().as_millis() as u64,
                })),
                Err(view) => Err(held_refusal(&view, book.ttl(), "acquire")),
            }
        }
        LeaseAction::Release => {
            let asked = target(call, &a)?;
            let sessions = match &asked {
                Some(session) => vec![session.clone()],
                None => book.held_by(me),
            };
            let mut released = Vec::new();
            for session in sessions {
                match book.release(&session, me) {
                    Ok(()) => released.push(session),
                    Err(LeaseError::Held(view)) => {
                        return Err(held_refusal(&view, book.ttl(), "release"));
                    }
                    // Idempotent, and says so: nothing of yours was there to let go.
                    Err(LeaseError::NotHeld) => {}
                }
            }
            let mut answer = json!({ "ok": true, "action": "release", "released": released });
            if released.is_empty() {
                answer["note"] = json!(match asked {
                    Some(session) => format!(
                        "you held no lease on session {}: nothing was released",
                        clip(&session, 80)
                    ),
                    None => "you held no lease: nothing was released".to_string(),
                });
            }
            Ok(answer)
        }
    }
}

/// The session the call names: its `sessionId` (which must be connected), else the one whose
/// page URL is `url` (exactly, else by prefix, and then only one), else none.
fn target(call: &Call<'_>, a: &LeaseFamilyArgs) -> Result<Option<String>, Refusal> {
    let listed = || {
        call.ctx
            .bridge
            .summaries()
            .into_iter()
            .map(|s| json!({ "sessionId": s.id, "url": s.url }))
            .collect::<Vec<_>>()
    };
    if let Some(id) = &a.session_id {
        return match call.ctx.bridge.resolve(Some(id)) {
            Ok(session) => Ok(Some(session.id().to_string())),
            Err(err @ (ResolveError::NotFound { .. } | ResolveError::NoSessions { .. })) => {
                Err(Refusal::new(
                    format!("{err}; nothing was leased or released"),
                    "pass one of the connected session ids (reticle_sessions lists them)",
                )
                .with("sessions", listed()))
            }
            Err(err) => Err(Refusal::new(
                format!("{err}; nothing was leased or released"),
                "pass sessionId with one of the listed sessions",
            )
            .with("sessions", listed())),
        };
    }
    let Some(url) = &a.url else {
        return Ok(None);
    };
    let summaries = call.ctx.bridge.summaries();
    let exact: Vec<&String> = summaries
        .iter()
        .filter(|s| s.url == *url)
        .map(|s| &s.id)
        .collect();
    let matching = if exact.is_empty() {
        summaries
            .iter()
            .filter(|s| !url.is_empty() && s.url.starts_with(url.as_str()))
            .map(|s| &s.id)
            .collect()
    } else {
        exact
    };
    match matching.as_slice() {
        [only] => Ok(Some((*only).clone())),
        [] => Err(Refusal::new(
            format!(
                "no connected session's page URL is or starts with {}; nothing was leased or released",
                clip(url, 200)
            ),
            "open the app at that URL, or pass sessionId (reticle_sessions lists them)",
        )
        .with("sessions", listed())),
        several => Err(Refusal::new(
            format!(
                "{} sessions' page URLs match {}; nothing was leased or released",
                several.len(),
                clip(url, 200)
            ),
            "pass sessionId with one of the listed sessions, or a fuller url",
        )
        .with("sessions", listed())),
    }
}

/// The refusal of a call on a session another holder has leased: names the holder and when the
/// lease expires, and how a lease ends.
pub(in crate::tools) fn held_refusal(
    view: &LeaseView,
    ttl: std::time::Duration,
    what: &str,
) -> Refusal {
    let expires_ms = view.expires_in.as_millis() as u64;
    Refusal::new(
        format!(
            "session {} is leased by {}, which expires in {expires_ms} ms unless its holder calls again; {what} was refused, nothing was done",
            clip(&view.session, 80),
            view.holder.describe(),
        ),
        format!(
            "read-only tools (snapshot, query, observe, assert...) still work; to drive it, wait until the lease ends (it expires {} ms after its holder's last call, or when its reticle mcp exits) or ask its holder to call reticle_lease {{\"action\":\"release\"}}; or use another session",
            ttl.as_millis()
        ),
    )
    .with("lease", view.to_value())
    .with("sessionId", view.session.clone())
}

/// `reticle_lease`, as the registry knows it.
pub struct Lease;

impl Tool for Lease {
    const NAME: ToolName = ToolName::Lease;
    const TITLE: &'static str = "Lease a session";
    const EFFECT: Effect = Effect::Adds;
    const DESCRIPTION: &'static str = "Lease a browser session so only you drive it: action acquire (sessionId, or url: the session whose page URL matches) and release. While you hold it, other agents' acts on it are refused naming you and when the lease expires; reads stay open. It expires after a while without your calls and ends with your reticle mcp; leases live in the daemon's memory and do not survive its restart.";
    const OUTPUT: &'static [&'static str] = &["action", "sessionId", "lease", "released"];
    type Args = LeaseFamilyArgs;

    fn run<'a>(call: &'a Call<'a>, a: LeaseFamilyArgs) -> Answer<'a> {
        Box::pin(std::future::ready(lease(call, a)))
    }
}

/// `reticle_lease_acquire`, a member of its family.
pub const LEASE_ACQUIRE: Registration = Registration::member::<LeaseFamilyArgs>(
    ToolName::LeaseAcquire,
    "reticle_lease {action:\"acquire\", sessionId or url}: lease a session for yourself.",
);

/// `reticle_lease_release`, a member of its family.
pub const LEASE_RELEASE: Registration = Registration::member::<LeaseFamilyArgs>(
    ToolName::LeaseRelease,
    "reticle_lease {action:\"release\", sessionId?}: let your lease go (all of them without sessionId or url).",
);
