//! `reticle_session`, a family: `yield` hands the page to its human (the page shows it),
//! `resume` takes it back, `end` ends the agent's session on the page, `messages` reads what the
//! human left (marks and control changes) since the last read. Each member is also a name
//! (`reticle_yield`, ...) reachable through `reticle_run`.

use serde_json::{Value, json};

use super::args::{SessionAction, SessionFamilyArgs, YieldMode};
use super::call::Call;
use super::page::ask;
use super::refusal::Refusal;
use crate::wire::{CommandName, KnownEventType as K};

pub(super) async fn session(call: &Call<'_>, a: SessionFamilyArgs) -> Result<Value, Refusal> {
    let action = a.action.as_str();
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
    }
    Ok(answer)
}
