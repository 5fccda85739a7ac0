//! The tool layer's view of one page: commands through the bridge (each in a `browser.command`
//! span, its outcome mapped to a refusal an agent can act on), windows of its events, and
//! [`LivePage`], the verdict's [`Observation`] over the bridge. A live read takes only what
//! protocol 1 guarantees or the page says it provides.
//!
//! It must not make up an answer: a published 2.0.0 page yields "unknown" where it cannot answer.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use serde_json::{Map, Value, json};
use tracing::Instrument;

use super::name_match::{Match, matches};
use super::published_ui;
use super::refusal::Refusal;
use crate::bridge::ring::StoredEvent;
use crate::bridge::{Bridge, CommandError, Cursor, Reply, Session};
use crate::verdict::Predicate;
use crate::verdict::predicate::ElementQuery;
use crate::verdict::probe::{AnimationFacts, ElementFacts, PageProbe, Read, StateFacts};
use crate::verdict::{CaptureLoss, Observation, ObservedEvent, Window};
use crate::wire::state_path::StatePath;
use crate::wire::trace::span;
use crate::wire::vocabulary::{EXACT_HONOURED, PROTOCOL_ELEMENT_STATES, STATES_REPORTED};
use crate::wire::{CommandName, EventFamily};

/// Puts `value` under `key` when there is one (a command's optional argument).
pub fn put(map: &mut Map<String, Value>, key: &str, value: Option<impl Into<Value>>) {
    if let Some(v) = value {
        map.insert(key.into(), v.into());
    }
}

/// The default bound of one command.
pub const COMMAND_BOUND: Duration = Duration::from_secs(8);
/// How long a wait gives a page whose connection dropped to come back under the same id.
pub const RECONNECT_GRACE: Duration = Duration::from_millis(2500);
/// Event families that count as the page doing something (for quiet time).
pub const ACTIVITY_FAMILIES: &[EventFamily] =
    &[EventFamily::Dom, EventFamily::Net, EventFamily::Route];

/// A command's outcome as the tool layer sees it.
#[derive(Debug)]
pub enum Outcome {
    Done(Value),
    /// The page answered `ok:false`.
    Refused(String),
    /// The page went away before it answered.
    Lost(String),
    /// No answer within the bound.
    TimedOut(Duration),
}

/// Runs one command on `session` inside a `browser.command` span.
pub async fn command(
    session: &Session,
    name: CommandName,
    args: Value,
    bound: Duration,
) -> Outcome {
    let span = tracing::info_span!(
        span::BROWSER_COMMAND,
        command = name.as_str(),
        ok = tracing::field::Empty,
        error = tracing::field::Empty
    );
    let args = match args {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    // The published 2.0.0 SDK shows its own controls among the app's: kept out here, once.
    let asked = published_ui::applies(session).then(|| args.clone());
    let outcome = async {
        match session.command(name.as_str(), args, bound).await {
            Ok(answer) => match answer.reply {
                Reply::Done(mut value) => {
                    if let Some(asked) = &asked {
                        published_ui::hide(session, name, asked, &mut value, bound).await;
                    }
                    Outcome::Done(value)
                }
                Reply::Refused(sentence) => Outcome::Refused(sentence),
            },
            Err(CommandError::ObservationLost { reason }) => Outcome::Lost(reason),
            Err(CommandError::TimedOut { bound, .. }) => Outcome::TimedOut(bound),
            Err(CommandError::BadName) => Outcome::Refused("bad command name".into()),
        }
    }
    .instrument(span.clone())
    .await;
    let failure = match &outcome {
        Outcome::Done(_) => None,
        Outcome::Refused(why) => Some(format!("the page refused: {why}")),
        Outcome::Lost(why) => Some(format!("observation lost: {why}")),
        Outcome::TimedOut(bound) => Some(format!("no answer within {} ms", bound.as_millis())),
    };
    if let Some(error) = failure {
        span.record("ok", false);
        span.record("error", error.as_str());
    }
    outcome
}

/// Runs one command and turns anything but an answer into a refusal.
pub async fn ask(session: &Session, name: CommandName, args: Value) -> Result<Value, Refusal> {
    match command(session, name, args, COMMAND_BOUND).await {
        Outcome::Done(value) => Ok(value),
        other => Err(refusal_for(name.as_str(), other)),
    }
}

/// The refusal for a command that was not answered with a result.
pub fn refusal_for(command: &str, outcome: Outcome) -> Refusal {
    match outcome {
        Outcome::Done(_) => Refusal::new("the page answered out of turn", "call again"),
        Outcome::Refused(why) => {
            let stale = why.contains("stale") || why.contains("ref '");
            Refusal::new(
                format!("the page refused {command}: {why}"),
                if stale {
                    "take a fresh ref with reticle_query or reticle_snapshot (a ref dies when its element is re-rendered or the page reloads), then retry"
                } else {
                    "fix what the page named and retry; reticle_snapshot shows the page as it is now"
                },
            )
            .with("pageError", why)
        }
        Outcome::Lost(why) => Refusal::new(
            format!(
                "observation lost: the page went away before it answered {command} ({why}); this says nothing about the app"
            ),
            "call reticle_sessions to see whether the page came back, then retry",
        )
        .with("observationLost", true),
        Outcome::TimedOut(bound) => Refusal::new(
            format!(
                "the page did not answer {command} within {} ms (a frozen or busy tab, or a long handler)",
                bound.as_millis()
            ),
            "check that the tab is in the foreground (reticle_sessions shows throttled), then retry",
        ),
    }
}

/// Converts stored events to the evaluator's shape.
pub fn observed(events: &[StoredEvent]) -> Vec<ObservedEvent> {
    events
        .iter()
        .map(|e| ObservedEvent {
            cursor: e.seq,
            t: e.t,
            kind: e.kind.clone(),
            data: Value::Object(e.data.clone()),
        })
        .collect()
}

/// Milliseconds since the page last did something (DOM, network, route), on its life's clock.
pub fn quiet_for(session: &Session) -> u64 {
    let now = session.clock_ms();
    let last = session.last_event_t(|e| {
        e.kind
            .family()
            .is_some_and(|f| ACTIVITY_FAMILIES.contains(&f))
    });
    now.saturating_sub(last.unwrap_or(0))
}

/// The page a wait observes, from a cursor on.
pub struct LivePage {
    bridge: Bridge,
    session: Arc<Session>,
    /// Where the window starts in the current life.
    from: Cursor,
    /// Events from earlier lives of the session inside the window.
    earlier: Vec<ObservedEvent>,
    /// Losses found so far (evictions of earlier lives, reconnections).
    losses: Vec<CaptureLoss>,
    /// When every read must be answered by (the wait's bound and its overrun); unset, each
    /// read has [`COMMAND_BOUND`].
    answer_by: Option<Instant>,
}

impl LivePage {
    /// Observes `session` from `from`. A cursor from an earlier life of the session id means
    /// the window already spans a reconnection: that is a loss from the start.
    pub fn new(bridge: Bridge, session: Arc<Session>, from: Cursor) -> Self {
        let mut losses = Vec::new();
        let from = if from.life == session.life() {
            from
        } else {
            losses.push(CaptureLoss::Reconnected {
                from_life: from.life,
                to_life: session.life(),
            });
            Cursor {
                life: session.life(),
                seq: 0,
            }
        };
        Self {
            bridge,
            session,
            from,
            earlier: Vec::new(),
            losses,
            answer_by: None,
        }
    }

    /// Asks the page for what `predicate` needs beyond its usual reporting before the wait
    /// begins: response bodies, for `bound` (plus a command's bound). A page that cannot (the
    /// published 2.0.0 SDK) refuses; its requests then carry no body and the check says unknown.
    pub async fn prepare(&self, predicate: &Predicate, bound: Duration) {
        if predicate.needs_bodies() {
            let for_ms = (bound + COMMAND_BOUND).as_millis() as u64;
            let _ = command(
                &self.session,
                CommandName::NetBodies,
                json!({ "forMs": for_ms }),
                COMMAND_BOUND,
            )
            .await;
        }
    }

    /// The session being observed now (it changes when the page comes back).
    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// The longest the next read or reconnection may take: `most`, cut to what is left
    /// before [`Self::answer_by`].
    fn left(&self, most: Duration) -> Duration {
        self.answer_by.map_or(most, |by| {
            by.saturating_duration_since(Instant::now()).min(most)
        })
    }

    async fn read(&self, name: CommandName, args: Value) -> Read<Value> {
        let bound = self.left(COMMAND_BOUND);
        if bound.is_zero() {
            return Read::Unreadable(format!(
                "the wait's bound ran out before {name} could be asked"
            ));
        }
        match command(&self.session, name, args, bound).await {
            Outcome::Done(value) => Read::Seen(value),
            Outcome::Refused(why) => Read::Unreadable(format!("the page refused {name}: {why}")),
            Outcome::Lost(_) => Read::Lost,
            Outcome::TimedOut(bound) => Read::Unreadable(format!(
                "the page did not answer {name} within {} ms",
                bound.as_millis()
            )),
        }
    }
}

impl Observation for LivePage {
    fn answer_by(&mut self, deadline: Instant) {
        self.answer_by = Some(deadline);
    }

    fn window(&mut self) -> Window {
        let read = self
            .session
            .events_since(Some(self.from), crate::bridge::registry::MAX_READ_EVENTS);
        let mut events = self.earlier.clone();
        events.extend(observed(&read.events));
        let mut window = Window::new(events, read.evicted, quiet_for(&self.session));
        window.losses.extend(self.losses.iter().cloned());
        window
    }

    async fn changed(&mut self, poll: Duration) {
        let changed = self.session.changed();
        if self.session.is_closed() {
            return;
        }
        let _ = tokio::time::timeout(poll, changed).await;
    }

    async fn recover(&mut self) -> bool {
        if !self.session.is_closed() {
            return true;
        }
        let id = self.session.id().to_string();
        let old_life = self.session.life();
        let Some(next) = self
            .bridge
            .wait_for_session(self.left(RECONNECT_GRACE), |s| {
                s.id() == id && s.life() != old_life
            })
            .await
        else {
            return false;
        };
        // Keep what the old life reported inside the window, then follow the new life.
        let read = self
            .session
            .events_since(Some(self.from), crate::bridge::registry::MAX_READ_EVENTS);
        self.earlier.extend(observed(&read.events));
        if read.evicted > 0 {
            self.losses.push(CaptureLoss::BufferLoss {
                evicted: read.evicted,
            });
        }
        self.losses.push(CaptureLoss::Reconnected {
            from_life: old_life,
            to_life: next.life(),
        });
        self.from = Cursor {
            life: next.life(),
            seq: 0,
        };
        self.session = next;
        true
    }
}

fn query_of(query: &ElementQuery) -> Value {
    let mut map = Map::new();
    for (key, value) in [
        ("role", &query.role),
        ("name", &query.name),
        ("text", &query.text),
        ("label", &query.label),
        ("placeholder", &query.placeholder),
        ("testid", &query.testid),
        ("alt", &query.alt),
        ("css", &query.css),
    ] {
        if let Some(v) = value {
            map.insert(key.into(), json!(v));
        }
    }
    if let Some(exact) = query.exact {
        map.insert("exact".into(), json!(exact));
    }
    Value::Object(map)
}

fn describe(element: &Value) -> String {
    let role = element
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("element");
    let name = element.get("name").and_then(Value::as_str).unwrap_or("");
    let r = element.get("ref").and_then(Value::as_str).unwrap_or("");
    format!("{role} \"{name}\" ({r})")
}

fn states_of(element: &Value) -> Vec<String> {
    words(element.get("states"))
}

fn words(list: Option<&Value>) -> Vec<String> {
    list.and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|w| w.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn text_value(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// Holds a `match` answer to the name asked, whole unless `exact` is false (the published 2.0.0
/// SDK ignores `exact`, so the daemon does not rely on how a page matched): elements named
/// otherwise are dropped, and the count with them; a cut name, or a count past the listed ones,
/// it can't tell is an error.
fn hold_to_name(
    elements: &mut Vec<Value>,
    count: &mut usize,
    name: &str,
    exact: bool,
) -> Result<(), String> {
    let name_of = |e: &Value| matches(e["name"].as_str().unwrap_or(""), name, exact);
    let named = if exact {
        format!("named \"{name}\"")
    } else {
        format!("with \"{name}\" in its name")
    };
    if elements.iter().any(|e| name_of(e) == Match::CantTell) {
        return Err(format!(
            "the page cut an element's name short, so whether it is {named} can't be told"
        ));
    }
    let listed = elements.len();
    elements.retain(|e| name_of(e) == Match::Yes);
    if elements.len() < listed {
        if *count > listed {
            return Err(format!(
                "the page matched more elements than it listed, some not {named}, so they can't be counted"
            ));
        }
        *count = elements.len();
    }
    Ok(())
}

impl PageProbe for LivePage {
    async fn element(&mut self, query: &ElementQuery) -> Read<ElementFacts> {
        match self
            .read(CommandName::Match, json!({ "query": query_of(query) }))
            .await
        {
            Read::Seen(result) => {
                if let Some(reason) = result.get("reason").and_then(Value::as_str) {
                    return Read::Unreadable(reason.to_string());
                }
                let mut elements = result
                    .get("elements")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let mut count = result.get("count").and_then(Value::as_u64).unwrap_or(0) as usize;
                let exact = query.exact != Some(false);
                if let Some(name) = &query.name {
                    if let Err(why) = hold_to_name(&mut elements, &mut count, name, exact) {
                        return Read::Unreadable(why);
                    }
                    // A page that matched the name whole when a part was asked for found no
                    // element by a part of its name only because it never looked.
                    let honoured = result.get(EXACT_HONOURED) == Some(&Value::Bool(true));
                    if !exact && count == 0 && !honoured {
                        return Read::Unreadable(format!(
                            "the page's SDK matches a name whole only (the published @reticlehq/browser 2.0.0 ignores `exact`), so whether an element has \"{name}\" in its name can't be told; this needs Reticle's SDK"
                        ));
                    }
                }
                let first = elements.first();
                let reported_states = match result.get(STATES_REPORTED) {
                    Some(list) => words(Some(list)),
                    None => PROTOCOL_ELEMENT_STATES
                        .iter()
                        .map(|s| s.to_string())
                        .collect(),
                };
                Read::Seen(ElementFacts {
                    count,
                    value: first.and_then(|e| e.get("value")).and_then(text_value),
                    description: first.map(describe),
                    states: elements.iter().map(states_of).collect(),
                    reported_states,
                })
            }
            Read::Lost => Read::Lost,
            Read::Unreadable(why) => Read::Unreadable(why),
        }
    }

    async fn text(&mut self, text: &str) -> Read<bool> {
        // A text predicate reads "contains": the substring match, asked for by name.
        let args =
            json!({ "query": { "text": text, "exact": false }, "state": { "visible": true } });
        match self.read(CommandName::Match, args).await {
            Read::Seen(result) => {
                Read::Seen(result.get("count").and_then(Value::as_u64).unwrap_or(0) > 0)
            }
            Read::Lost => Read::Lost,
            Read::Unreadable(why) => Read::Unreadable(why),
        }
    }

    async fn state(&mut self, store: &str, path: &str) -> Read<StateFacts> {
        let path = StatePath::parse(path);
        let args = json!({ "store": store, "path": path.as_sent() });
        match self.read(CommandName::StateRead, args).await {
            Read::Seen(result) if !store_registered(&result, store) => Read::Unreadable(format!(
                "no store named '{store}' is registered in the page (registered: {}): the page must register it (registerStore) before its state can prove anything",
                result["storeNames"]
            )),
            Read::Seen(result)
                if result.get("found") != Some(&Value::Bool(true))
                    && !path.absence_is_proved(&result) =>
            {
                Read::Unreadable(path.why_unproved())
            }
            Read::Seen(result) => Read::Seen(StateFacts {
                found: result
                    .get("found")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                value: result.get("value").cloned().unwrap_or(Value::Null),
                available_keys: result
                    .get("availableKeys")
                    .and_then(Value::as_array)
                    .map(|keys| {
                        keys.iter()
                            .filter_map(|k| k.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
            }),
            Read::Lost => Read::Lost,
            Read::Unreadable(why) => Read::Unreadable(why),
        }
    }

    async fn route(&mut self) -> Read<String> {
        if self.session.is_closed() {
            return Read::Lost;
        }
        Read::Seen(self.session.identity().url)
    }

    async fn animations(&mut self) -> Read<AnimationFacts> {
        match self.read(CommandName::Animations, json!({})).await {
            Read::Seen(result) => {
                let Some(list) = result.get("animations").and_then(Value::as_array) else {
                    return Read::Unreadable("the page's animations answer had no list".into());
                };
                let running = list
                    .iter()
                    .filter(|a| a.get("playState").and_then(Value::as_str) == Some("running"))
                    .map(|a| {
                        a.get("name")
                            .and_then(Value::as_str)
                            .filter(|n| !n.is_empty())
                            .unwrap_or("unnamed")
                            .to_string()
                    })
                    .collect();
                Read::Seen(AnimationFacts {
                    total: list.len(),
                    running,
                })
            }
            Read::Lost => Read::Lost,
            Read::Unreadable(why) => Read::Unreadable(why),
        }
    }
}

/// Whether a state_read answer shows `store` registered. Both SDKs list the page's stores in
/// `storeNames`; an answer without the list is taken at its word.
fn store_registered(answer: &Value, store: &str) -> bool {
    answer["storeNames"]
        .as_array()
        .is_none_or(|names| names.iter().any(|name| name == store))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_the_page_never_registered_is_not_read_as_absent_state() {
        let answer = json!({ "found": false, "storeNames": ["app"] });
        assert!(store_registered(&answer, "app"));
        assert!(!store_registered(&answer, "cart"));
        assert!(store_registered(&json!({ "found": false }), "cart"));
    }
}
