//! A page's arrival on a new document after navigate or refresh: [`arrive`] sends the command
//! and waits, up to a bound, for the page to reconnect under the same session id (at the target
//! URL when one is given), and moves the window of later checks to the arrival. Shared by
//! navigate and the flow tools; it must not answer a tool.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::call::Call;
use super::commands::ask;
use super::refusal::Refusal;
use crate::bridge::Session;
use crate::wire::CommandName;

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
    call.ctx.host.remember(&id, |m| m.last_act = Some(since));
    let answer = ask(session, command, args).await?;
    let target = answer
        .get("url")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or(target);
    // Arrival: the page reconnects on its new document under the same session id.
    let arrived = call
        .ctx
        .bridge
        .wait_for_session(bound, |s| {
            s.id() == id
                && (s.life() != old_life || s.counters().links > old_links)
                && target
                    .as_deref()
                    .is_none_or(|t| origin_and_path(&s.identity().url) == origin_and_path(t))
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
    Ok(Arrival {
        page: arrived,
        url: target,
    })
}
