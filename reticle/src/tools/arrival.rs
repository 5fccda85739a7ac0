//! A page's arrival on a new document after navigate or refresh: [`arrive`] sends the command,
//! waits up to a bound for the page to reconnect under the same session id (at the target URL
//! when given) and moves the window of later checks to the arrival. The URL asks for the
//! session's id (`__reticle_session`), so the new document keeps it whatever id its SDK picks.
//!
//! Shared by navigate and the flow tools; it must not answer a tool.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::call::Call;
use super::commands::ask;
use super::refusal::Refusal;
use crate::bridge::Session;
use crate::wire::CommandName;
use crate::wire::session_param::{asked_session, with_session};

/// How long navigate (and a flow replay, unless its caller gives a bound of its own) waits for
/// the page to come back on its new document: a dev server compiling a route on its first
/// request, or a loaded CI machine, easily takes more than 5 s (reloads of the fixture app took
/// up to 13 s under the flake hunt's load), and a page that never comes back is still named.
pub const ARRIVAL_BOUND: Duration = Duration::from_secs(15);

/// Origin and path of a URL (`http://h:1/a?b#c` → `http://h:1/a`), for arrival checks.
fn origin_and_path(url: &str) -> &str {
    let cut = url.find(['?', '#']).unwrap_or(url.len());
    &url[..cut]
}

/// Where a navigation ended: the page as it arrived on its new document (`None` when it did
/// not reconnect within the bound) and the URL it went to.
pub(super) struct Arrival {
    pub page: Option<Arc<Session>>,
    pub url: Option<String>,
    /// When the page did not arrive: the id of a session that connected since the command went
    /// out (at the target, when one was given), most likely the tab's new document under an id
    /// of its own.
    pub newcomer: Option<String>,
}

impl Arrival {
    /// Why the page did not arrive within `bound`, in words that are true of what was seen.
    pub fn missing_note(&self, id: &str, bound: Duration) -> String {
        match &self.newcomer {
            Some(other) => format!(
                "the page's new document connected as session '{other}', not '{id}': its SDK chose another id on that load, although the URL asked for '{id}' (`__reticle_session`); an app whose router drops that URL parameter loses it; continue with sessionId '{other}', or pass a fixed `session` to connect()"
            ),
            None => format!(
                "no page connected within {} ms of the navigation: it may still be loading, the URL may have lost the SDK's connection settings, or the app may not load the Reticle SDK there; call reticle_sessions",
                bound.as_millis()
            ),
        }
    }
}

/// The command that takes the tab to its next document with the URL asking for session `id`:
/// a navigation's URL gets the parameter. A reload stays a reload when the page keeps its id
/// across loads by itself (`keeps_id`: our SDK, which keeps it in the tab's sessionStorage and
/// whose URLs the daemon sees redacted) or its URL already asks; otherwise (the published 2.0.0,
/// whose `auto` id is new on every load and whose URLs arrive whole) it becomes a navigation to
/// the same URL, asking.
fn asking_for(
    id: &str,
    page_url: &str,
    keeps_id: bool,
    command: CommandName,
    args: Value,
    target: Option<String>,
) -> (CommandName, Value, Option<String>) {
    match command {
        CommandName::Navigate => {
            let mut args = args;
            if let Some(url) = args.get("url").and_then(Value::as_str) {
                args["url"] = Value::from(with_session(url, id));
            }
            (command, args, target)
        }
        CommandName::Refresh
            if !keeps_id
                && asked_session(page_url).as_deref() != Some(id)
                && page_url.contains("://") =>
        {
            (
                CommandName::Navigate,
                json!({ "url": with_session(page_url, id) }),
                target.or_else(|| Some(page_url.to_string())),
            )
        }
        _ => (command, args, target),
    }
}

/// Sends `command` (navigate or refresh) and waits up to `bound` for the page to reconnect on
/// its new document under the same session id, at `target` when one is given; the window of
/// later checks starts at the arrival.
pub(super) async fn arrive(
    call: &Call<'_>,
    session: &Arc<Session>,
    command: CommandName,
    args: Value,
    target: Option<String>,
    bound: Duration,
) -> Result<Arrival, Refusal> {
    let id = session.id().to_string();
    let old_life = session.life();
    let old_links = session.counters().links;
    let since = session.head();
    let lives_before = call.ctx.bridge.lives_started();
    let identity = session.identity();
    // Our SDK names its version in its hello; the published 2.0.0 does not.
    let keeps_id = identity.sdk_version.is_some();
    let (command, args, target) = asking_for(&id, &identity.url, keeps_id, command, args, target);
    call.ctx.host.remember(&id, |m| m.last_act = Some(since));
    let answer = ask(session, command, args).await?;
    let target = answer
        .get("url")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or(target);
    let at_target = |s: &Arc<Session>| {
        target
            .as_deref()
            .is_none_or(|t| origin_and_path(&s.identity().url) == origin_and_path(t))
    };
    // Arrival: the page reconnects on its new document under the same session id.
    let arrived = call
        .ctx
        .bridge
        .wait_for_session(bound, |s| {
            s.id() == id && (s.life() != old_life || s.counters().links > old_links) && at_target(s)
        })
        .await;
    if let Some(page) = &arrived {
        // A new life starts a new window; a socket swapped under the same life keeps counting.
        let start = if page.life() != old_life {
            crate::bridge::Cursor {
                life: page.life(),
                seq: 0,
            }
        } else {
            since
        };
        call.ctx.host.remember(&id, |m| m.last_act = Some(start));
    }
    let newcomer = match &arrived {
        Some(_) => None,
        None => call
            .ctx
            .bridge
            .sessions()
            .into_iter()
            .rev()
            .find(|s| s.life() > lives_before && s.id() != id && at_target(s))
            .map(|s| s.id().to_string()),
    };
    Ok(Arrival {
        page: arrived,
        url: target,
        newcomer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_document_is_asked_for_the_sessions_id() {
        let (command, args, _) = asking_for(
            "s1",
            "http://h:1/a",
            true,
            CommandName::Navigate,
            json!({"url": "http://h:1/b?x=1"}),
            None,
        );
        assert_eq!(command, CommandName::Navigate);
        assert_eq!(args["url"], "http://h:1/b?x=1&__reticle_session=s1");
        // A reload of a URL that does not ask becomes a navigation to it, asking.
        let (command, args, target) = asking_for(
            "s1",
            "http://h:1/a?y=2",
            false,
            CommandName::Refresh,
            json!({"hard": false}),
            None,
        );
        assert_eq!(command, CommandName::Navigate);
        assert_eq!(args["url"], "http://h:1/a?y=2&__reticle_session=s1");
        assert_eq!(target.as_deref(), Some("http://h:1/a?y=2"));
        // The controls: a reload of a URL that already asks for this id stays a reload, and so
        // does one of a page that keeps its id by itself.
        for (url, keeps_id) in [
            ("http://h:1/a?__reticle_session=s1", false),
            ("http://h:1/a", true),
        ] {
            let (command, _, _) = asking_for(
                "s1",
                url,
                keeps_id,
                CommandName::Refresh,
                json!({"hard": true}),
                None,
            );
            assert_eq!(command, CommandName::Refresh, "{url}");
        }
    }
}
