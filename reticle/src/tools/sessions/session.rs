//! `reticle_session`, a family: `yield` hands the page to its human (the page shows it),
//! `resume` takes it back, `end` ends the agent's session on the page, `messages` reads what the
//! human left (marks and control changes) since the last read; `launch`/`attach` open a tab in a
//! browser Reticle drives (`launch`). Each member is also a name (`reticle_yield`, ...).

use serde_json::{Value, json};

use crate::tools::call::Call;
use crate::tools::commands::ask;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::{NoArgs, SessionAction, SessionFamilyArgs, YieldMode};
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, Registration, SessionUse, Tool};
use crate::wire::{CommandName, KnownEventType as K};

async fn session(call: &Call<'_>, a: SessionFamilyArgs) -> Result<Value, Refusal> {
    let action = a.action.as_str();
    if matches!(a.action, SessionAction::Launch | SessionAction::Attach) {
        let ask = super::launch::ask_of(a.action, &a)?;
        return super::launch::open(call, ask).await;
    }
    let Some(session) = call.session.as_ref() else {
        return Err(Refusal::new(
            format!("reticle_session {action}: no browser session is connected; nothing was done"),
            "open the app in a browser with the Reticle SDK, then call reticle_sessions",
        ));
    };
    let presenter = |state: &str, text: Option<String>, tone: &str| {
        let mut args = json!({ "state": state, "tone": tone });
        if let Some(text) = text {
            args["text"] = json!(text);
        }
        args
    };
    let mut answer = json!({ "ok": true, "action": action, "sessionId": session.id() });
    match a.action {
        SessionAction::Yield => {
            let mode = match a.mode.unwrap_or(YieldMode::Waiting) {
                YieldMode::Waiting => "waiting",
                YieldMode::Ask => "ask",
            };
            let text = a
                .note
                .clone()
                .or(Some("Your turn: the agent is waiting for you.".into()));
            ask(
                session,
                CommandName::Presenter,
                presenter("paused", text, mode),
            )
            .await?;
            answer["mode"] = json!(mode);
            answer["done"] = json!(true);
        }
        SessionAction::Resume => {
            ask(
                session,
                CommandName::Presenter,
                presenter("active", None, "calm"),
            )
            .await?;
            answer["done"] = json!(true);
        }
        SessionAction::End => {
            let text = a.summary.clone().or(Some("The agent has finished.".into()));
            ask(
                session,
                CommandName::Presenter,
                presenter("ended", text, "calm"),
            )
            .await?;
            answer["done"] = json!(true);
        }
        SessionAction::Messages => {
            let from = call.ctx.host.remember(session.id(), |m| m.messages_from);
            let read = session.events_since(from, crate::bridge::registry::MAX_READ_EVENTS);
            let messages: Vec<Value> = read
                .events
                .iter()
                .filter(|e| matches!(e.kind.known(), Some(K::HumanMark | K::HumanControl)))
                .map(|e| json!({ "seq": e.seq, "t": e.t, "type": e.kind.as_str(), "data": e.data }))
                .collect();
            call.ctx
                .host
                .remember(session.id(), |m| m.messages_from = Some(read.next));
            answer["messages"] = json!(messages);
            answer["done"] = json!(true);
        }
        // Answered above: they open a session of their own.
        SessionAction::Launch | SessionAction::Attach => {}
    }
    Ok(answer)
}

/// `reticle_session`, as the registry knows it.
pub struct Session;

impl Tool for Session {
    const NAME: ToolName = ToolName::Session;
    const TITLE: &'static str = "Share a session";
    const EFFECT: Effect = Effect::Adds;
    const DESCRIPTION: &'static str = "Share the page with its human, by `action`.";
    const OUTPUT: &'static [&'static str] = &["action", "done"];
    const SESSION: SessionUse = SessionUse::Optional;
    const DRIVES_SESSION: bool = true;
    const OPENING_ACTIONS: &'static [&'static str] = &["launch", "attach"];
    type Args = SessionFamilyArgs;

    fn run<'a>(call: &'a Call<'a>, a: SessionFamilyArgs) -> Answer<'a> {
        Box::pin(session(call, a))
    }
}

/// `reticle_yield`, a member of its family.
pub const YIELD: Registration = Registration::member::<NoArgs>(
    ToolName::Yield,
    "reticle_session {action:\"yield\"}: hand the page to its human.",
);

/// `reticle_resume`, a member of its family.
pub const RESUME: Registration = Registration::member::<NoArgs>(
    ToolName::Resume,
    "reticle_session {action:\"resume\"}: take the page back.",
);

/// `reticle_end_session`, a member of its family.
pub const END_SESSION: Registration = Registration::member::<NoArgs>(
    ToolName::EndSession,
    "reticle_session {action:\"end\"}: end the agent's session on the page.",
);

/// `reticle_messages`, a member of its family.
pub const MESSAGES: Registration = Registration::member::<NoArgs>(
    ToolName::Messages,
    "reticle_session {action:\"messages\"}: read what the human left on the page.",
);
