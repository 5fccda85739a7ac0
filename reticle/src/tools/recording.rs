//! A recording in progress on one session, kept in the session's memory: whose acts it records
//! ([`RecordSource`]), the path it began on and the agent's steps so far, each naming its target
//! by locator ([`super::locate`], never a ref), secrets replaced by placeholders at once. A check
//! that held becomes the `until` of the step it follows ([`attach_check`]). Replays are never
//! recorded.
//! It keeps recordings; it must not answer tools (record.rs does) nor store flows.

use std::sync::Arc;

use serde_json::{Value, json};

use super::call::Call;
use super::locate::{Located, Unlocated, locate};
use super::surface::args::{Action, ActionArgs, FlowStep, PredicateArg, RecordSource, Target};
use super::surface::names::ToolName;
use crate::bridge::Session;
use crate::flow::model::{hide_typed_value, names_an_element};
use crate::flow::redact;

/// The most steps one recording keeps (a flow's own limit).
pub const MAX_RECORDED_STEPS: usize = crate::flow::model::MAX_STEPS;

/// A recording in progress. While the agent records, `reticle_act`, `reticle_act_sequence` and
/// `reticle_act_and_wait` resolve their ref into a locator before acting and append a step once
/// the page took the action; a value typed into a password or secret-named field is replaced by
/// its placeholder at once, so the secret is never held. A navigation before the first step
/// moves the start path; one after it is noted, since a flow's steps act on one page.
#[derive(Debug, Clone)]
pub struct Recording {
    pub source: RecordSource,
    /// The path the recording began on (a flow's start path).
    pub start_path: String,
    /// The agent's steps so far, as a flow keeps them.
    pub steps: Vec<FlowStep>,
    /// Acts that could not become steps (each with the locators `tried`), and navigations
    /// after the first step.
    pub notes: Vec<Value>,
    /// For a person's recording: the id the page was asked to record under.
    pub person_id: Option<String>,
}

impl Recording {
    pub fn new(source: RecordSource, page_url: &str) -> Self {
        Self {
            source,
            start_path: path_of(page_url),
            steps: Vec::new(),
            notes: Vec::new(),
            person_id: None,
        }
    }
}

/// The path of a URL (`/` when it has none), without its query or fragment.
pub fn path_of(url: &str) -> String {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let rest = &url[after_scheme..];
    let path = rest.find('/').map_or("", |i| &rest[i..]);
    let path = path.split(['?', '#']).next().unwrap_or("");
    if path.is_empty() {
        "/".into()
    } else {
        path.to_string()
    }
}

/// Whether this call's acts are recorded (the agent's own act tools; never a replay).
fn records(tool: ToolName) -> bool {
    matches!(
        tool,
        ToolName::Act | ToolName::ActSequence | ToolName::ActAndWait
    )
}

/// Whether the agent records on `session` now.
fn agent_recording(call: &Call<'_>, session: &Session) -> bool {
    records(call.tool)
        && call.ctx.host.remember(session.id(), |m| {
            m.recording
                .as_ref()
                .is_some_and(|r| r.source == RecordSource::Agent)
        })
}

/// Where an act's element stands for a recording: located, or why not.
pub(super) type Whereabouts = Result<Located, Unlocated>;

/// While the agent records on `session`, the user-facing locator of the element `element_ref`
/// (the agent's own `target` first when it names the element as a user would); `None` when
/// nothing records. Read before the act, since an act may remove its element.
pub(super) async fn locate_for_recording(
    call: &Call<'_>,
    session: &Session,
    given: Option<&Target>,
    element_ref: &str,
) -> Option<Whereabouts> {
    if !agent_recording(call, session) {
        return None;
    }
    let preferred = given.filter(|t| names_an_element(t)).cloned();
    Some(match locate(session, element_ref, preferred).await {
        Ok(found) => found,
        Err(refusal) => Err(Unlocated {
            why: format!(
                "the page would not describe {element_ref}: {}",
                refusal.reason
            ),
            tried: Vec::new(),
        }),
    })
}

/// One act the page took, for the recording.
pub(super) struct TakenAct {
    pub action: Action,
    pub args: Option<ActionArgs>,
    pub until: Option<Value>,
    pub timeout_ms: Option<u64>,
}

/// Appends an act the page took to the agent's recording on `session` (a no-op when
/// `whereabouts` is `None`: nothing records).
pub(super) fn capture(
    call: &Call<'_>,
    session: &Arc<Session>,
    whereabouts: Option<Whereabouts>,
    act: TakenAct,
) {
    let Some(whereabouts) = whereabouts else {
        return;
    };
    call.ctx.host.remember(session.id(), |m| {
        let Some(recording) = m.recording.as_mut() else {
            return;
        };
        let number = recording.steps.len() + 1;
        if number > MAX_RECORDED_STEPS {
            recording.notes.push(json!({
                "act": act.action.as_str(),
                "why": format!("the recording already holds {MAX_RECORDED_STEPS} steps, a flow's most"),
            }));
            return;
        }
        match whereabouts {
            Ok(Located { target, secret }) => {
                let mut args = act.args;
                if let Some(args) = args.as_mut() {
                    args.confirm_dangerous = None;
                    if secret || redact::mentions_a_secret(&json!(target)) {
                        hide_typed_value(args, &target, number);
                    }
                }
                recording.steps.push(FlowStep {
                    target,
                    action: act.action,
                    args: args.filter(|a| *a != ActionArgs::default()),
                    until: act.until.map(|mut until| {
                        redact::secret_fields(&mut until);
                        PredicateArg(until)
                    }),
                    timeout_ms: act.timeout_ms,
                });
            }
            Err(Unlocated { why, tried }) => recording.notes.push(json!({
                "afterStep": number - 1,
                "act": act.action.as_str(),
                "why": why,
                "tried": tried,
            })),
        }
    });
}

/// A check the agent made while recording (`reticle_assert` or `reticle_wait_for`), as the
/// consequence of the step it follows.
pub(super) struct TakenCheck<'a> {
    /// The predicate as the agent wrote it.
    pub predicate: &'a Value,
    pub timeout_ms: Option<u64>,
    /// Whether it held when the agent made it.
    pub held: bool,
}

/// Attaches a check the agent made while recording on `session` to the step it follows, as
/// that step's `until`, so the recorded flow asserts what the agent checked. A check that did
/// not hold, one before the first step, or one after a step that already checks a consequence
/// is noted instead (a flow's step has one consequence, and a failed check proves nothing).
pub(super) fn attach_check(call: &Call<'_>, session: &Session, check: TakenCheck<'_>) {
    call.ctx.host.remember(session.id(), |m| {
        let Some(recording) = m.recording.as_mut() else {
            return;
        };
        if recording.source != RecordSource::Agent {
            return;
        }
        let tool = call.tool.as_str();
        let number = recording.steps.len();
        let why = match recording.steps.last_mut() {
            _ if !check.held => Some("the check did not hold when it was made, so it is not a consequence the flow can expect"),
            None => Some("a check before the first step follows no step; a flow's consequences follow its acts"),
            Some(step) if step.until.as_ref().is_some_and(|u| !settles_only(&u.0)) => {
                Some("the step it follows already checks a consequence (a step has one)")
            }
            Some(step) => {
                let mut until = check.predicate.clone();
                redact::secret_fields(&mut until);
                step.until = Some(PredicateArg(until));
                step.timeout_ms = check.timeout_ms.or(step.timeout_ms);
                None
            }
        };
        if let Some(why) = why {
            recording.notes.push(json!({ "afterStep": number, "check": tool, "why": why }));
        }
    });
}

/// Whether an `until` asks only that the page settles (what an act without one waits for).
fn settles_only(until: &Value) -> bool {
    matches!(
        crate::verdict::parse(until),
        Ok(crate::verdict::predicate::Predicate::Settled { .. })
    )
}

/// Notes a navigation the agent made while recording: before the first step it moves the start
/// path; after it, it is noted (a flow's steps act on the page the previous ones lead to).
pub(super) fn note_navigation(call: &Call<'_>, session: &Session, url: &str) {
    call.ctx.host.remember(session.id(), |m| {
        let Some(recording) = m.recording.as_mut() else {
            return;
        };
        if recording.source != RecordSource::Agent {
            return;
        }
        if recording.steps.is_empty() {
            recording.start_path = path_of(url);
        } else {
            recording.notes.push(json!({
                "afterStep": recording.steps.len(),
                "navigated": path_of(url),
                "why": "a flow starts from one path and its steps act on the page the previous ones lead to; a navigation between steps is not replayed",
            }));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_the_url_without_origin_query_or_fragment() {
        assert_eq!(path_of("http://127.0.0.1:5/?reticlePort=9"), "/");
        assert_eq!(path_of("http://h:1"), "/");
        assert_eq!(path_of("https://app.test/a/b?x=1#top"), "/a/b");
        assert_eq!(path_of("/login"), "/login");
    }
}
