//! Flow replay: loads a saved flow and its secrets (a missing one is refused before anything
//! runs), brings the page afresh to its start path ([`go_to_start`]) and runs each step through
//! `reticle_act_and_wait`'s core ([`run_step`]), stopping at the first that is not `yes`. One
//! verdict per flow, with the failing step and its evidence; an assertion-free flow answers
//! `unknown`, never `yes`. Every replay writes a run artifact; a red one leaves a capsule.
//! It plays flows for the flow tools; it must not store or change them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use crate::bridge::Session;
use crate::flow::model::{Flow, Grade, placeholder_env};
use crate::flow::store::load_flow;
use crate::tools::acting::{
    DEFAULT_WAIT, Judged, JudgedAct, Unjudged, Unresolved, capsule_events, resolve_act_judge,
};
use crate::tools::arrival::{Arrival, arrive};
use crate::tools::bounds::bound;
use crate::tools::call::Call;
use crate::tools::commands::LivePage;
use crate::tools::refusal::Refusal;
use crate::tools::stand_ins::StoredRefs;
use crate::tools::surface::args::{Action, FlowStep, Target};
use crate::tools::{capsules, stand_ins};
use crate::verdict::Verified;
use crate::verdict::wait_until;
use crate::wire::CommandName;

/// Why a flow's replay came to its verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum FlowReason {
    /// Every step ran and its consequence was proved.
    Proved,
    /// Every step passed, but no step says what must follow: nothing about the app was shown.
    AssertionFree,
    /// A step was not `yes`; `failingStep` names it.
    StepFailed,
    /// The page did not arrive at the flow's start path.
    StartNotReached,
}

/// Why a step produced no verdict of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Unrun {
    /// No element matches the step's target now.
    TargetNotFound,
    /// Several elements match the step's target; nothing was guessed.
    TargetAmbiguous,
    /// The page would not say which element the target is.
    TargetUnreadable,
    /// The page refused the action (a destructive one without `confirmDangerous`...).
    ActionRefused,
}

/// A flow replayed: its verdict, its record (as answered and as a run stores it), the events
/// of the failing step's window for a capsule, and the page it ended on (a replay reloads or
/// navigates, so the page it started from is gone).
pub(super) struct Replayed {
    pub verified: Verified,
    pub record: Value,
    pub events: Value,
    pub page: Arc<Session>,
}

/// Fills each step's secret placeholders and `confirmDangerous`: the steps as they will run.
/// A secret neither given nor in the daemon's environment is a refusal naming it.
pub(super) fn steps_to_run(
    flow: &Flow,
    given: &BTreeMap<String, String>,
    confirm_dangerous: bool,
) -> Result<Vec<FlowStep>, Refusal> {
    let missing: Vec<Value> = flow
        .secret_sources()
        .into_iter()
        .filter(|s| !given.contains_key(&s.env) && std::env::var_os(&s.env).is_none())
        .map(|s| json!({ "step": s.step, "env": s.env }))
        .collect();
    if !missing.is_empty() {
        let names: Vec<&str> = missing.iter().filter_map(|m| m["env"].as_str()).collect();
        return Err(Refusal::new(
            format!(
                "the flow '{}' types secrets this daemon was not given: {}; nothing was run",
                flow.name,
                names.join(", ")
            ),
            "set each named variable in the daemon's environment (then restart it), or pass `secrets` {\"NAME\": \"value\"} with the replay",
        )
        .with("missing", missing));
    }
    let mut steps = flow.steps.clone();
    for step in &mut steps {
        let args = step.args.get_or_insert_default();
        if confirm_dangerous {
            args.confirm_dangerous = Some(true);
        }
        let Some(env) = args.value.as_ref().and_then(placeholder_env) else {
            continue;
        };
        let secret = given
            .get(&env)
            .cloned()
            .or_else(|| std::env::var(&env).ok())
            .unwrap_or_default();
        if step.action == Action::Type {
            args.value = None;
            args.text = Some(secret);
        } else {
            args.value = Some(json!(secret));
        }
    }
    Ok(steps)
}

/// How a replay may find its page: the bound the page gets to come back after a reload or a
/// navigation, and whether the caller opened it at the flow's start path in a fresh browser
/// context a moment ago (so that, when its route is the start path, loading it again would only
/// repeat that load).
#[derive(Debug, Clone, Copy)]
pub(super) struct Approach {
    pub bound: Duration,
    pub fresh_at_start: bool,
}

impl Approach {
    /// A page found as it is: it is always loaded afresh at the start path.
    pub fn as_found(bound: Duration) -> Self {
        Self {
            bound,
            fresh_at_start: false,
        }
    }
}

/// How a replay reaches its start path: the page used as opened when its caller opened it
/// there in a fresh context and its route is the start path; else a reload when the page is
/// already there (it keeps the page's own URL, which may carry the SDK's connection settings);
/// else a navigation to the start path on the page's origin.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Start {
    AsOpened,
    Reload,
    Navigate(String),
}

impl Start {
    /// The record's `startedBy`.
    fn label(&self) -> &'static str {
        match self {
            Start::AsOpened => "as_opened",
            Start::Reload => "reload",
            Start::Navigate(_) => "navigation",
        }
    }
}

fn start_of(page_url: &str, start_path: &str, fresh_at_start: bool) -> Start {
    let after_scheme = page_url.find("://").map_or(0, |i| i + 3);
    let origin_end = page_url[after_scheme..]
        .find(['/', '?', '#'])
        .map_or(page_url.len(), |i| after_scheme + i);
    let (origin, rest) = page_url.split_at(origin_end);
    let here = rest.split('#').next().unwrap_or("");
    let here = if start_path.contains('?') {
        here
    } else {
        here.split('?').next().unwrap_or("")
    };
    let here = if here.is_empty() { "/" } else { here };
    if here == start_path && fresh_at_start {
        Start::AsOpened
    } else if here == start_path {
        Start::Reload
    } else {
        Start::Navigate(format!("{origin}{start_path}"))
    }
}

/// Brings `session` to `flow`'s start path as `approach` allows: how it went about it, and the
/// page there or why it did not arrive. The page gets the caller's `arrivalTimeoutMs` to come
/// back, else [`crate::tools::arrival::ARRIVAL_BOUND`]; its route is checked, never trusted, and
/// the record's `startedBy` says which way it started.
pub(super) async fn go_to_start(
    call: &Call<'_>,
    session: &Arc<Session>,
    flow: &Flow,
    approach: Approach,
) -> (Start, Result<Arc<Session>, String>) {
    let bound = approach.bound;
    let start = start_of(
        &session.identity().url,
        &flow.start_path,
        approach.fresh_at_start,
    );
    let arrival = match &start {
        Start::AsOpened => return (start, Ok(Arc::clone(session))),
        Start::Reload => {
            arrive(
                call,
                session,
                CommandName::Refresh,
                json!({ "hard": false }),
                None,
                bound,
            )
            .await
        }
        Start::Navigate(url) => {
            arrive(
                call,
                session,
                CommandName::Navigate,
                json!({ "url": url }),
                Some(url.clone()),
                bound,
            )
            .await
        }
    };
    let page = match arrival {
        Ok(Arrival {
            page: Some(page), ..
        }) => Ok(page),
        Err(refusal) => Err(refusal.reason),
        Ok(missing) => Err(missing.missing_note(session.id(), bound)),
    };
    (start, page)
}

/// Replays `steps` of `flow` on `session` from its start path (reached as `approach` allows).
pub(super) async fn replay(
    call: &Call<'_>,
    session: &Arc<Session>,
    flow: &Flow,
    steps: Vec<FlowStep>,
    approach: Approach,
) -> Replayed {
    let clock = Instant::now();
    let grading = flow.grading();
    let mut record = json!({
        "name": flow.name,
        "startPath": flow.start_path,
        "grade": grading,
    });
    let (start, page) = go_to_start(call, session, flow, approach).await;
    record["startedBy"] = json!(start.label());
    let page = match page {
        Ok(page) => page,
        Err(why) => {
            record["verified"] = json!(Verified::Unknown);
            record["reason"] = json!(FlowReason::StartNotReached);
            record["because"] = json!(format!(
                "the page did not arrive at the flow's start path {}: {why}; no step ran",
                flow.start_path
            ));
            record["steps"] = json!([]);
            record["durationMs"] = json!(clock.elapsed().as_millis() as u64);
            return Replayed {
                verified: Verified::Unknown,
                record,
                events: json!([]),
                page: Arc::clone(session),
            };
        }
    };
    let mut ran = Vec::new();
    let mut failed: Option<(usize, Verified, Value)> = None;
    let total = steps.len() as u64;
    for (i, step) in steps.into_iter().enumerate() {
        let (verified, step_record, events) = run_step(call, &page, i + 1, step).await;
        let said = format!(
            "{} {}",
            step_record["action"].as_str().unwrap_or("step"),
            step_record["verified"].as_str().unwrap_or("")
        );
        call.ctx.progress.step(i as u64 + 1, total, &said);
        ran.push(step_record.clone());
        if verified != Verified::Yes {
            failed = Some((i + 1, verified, events));
            break;
        }
    }
    let (verified, reason, because, events) = match failed {
        Some((step, verified, events)) => {
            let failure = &ran[step - 1];
            record["failingStep"] = json!(step);
            record["failure"] = failure.clone();
            let because = format!(
                "step {step} of {} ({} {}) was {}: {}",
                flow.steps.len(),
                failure["action"].as_str().unwrap_or(""),
                failure["target"],
                failure["verified"].as_str().unwrap_or("unknown"),
                failure["because"].as_str().unwrap_or("")
            );
            (verified, FlowReason::StepFailed, because, events)
        }
        None if grading.grade == Grade::AssertionFree && !stand_ins::grades_asserted() => (
            Verified::Unknown,
            FlowReason::AssertionFree,
            format!(
                "all {} steps ran, but the flow is assertion-free: {}",
                ran.len(),
                grading.why
            ),
            json!([]),
        ),
        None => {
            if grading.grade == Grade::PresenceOnly {
                record["advice"] = json!(grading.why);
            }
            (
                Verified::Yes,
                FlowReason::Proved,
                format!(
                    "all {} steps ran and each consequence was proved",
                    ran.len()
                ),
                json!([]),
            )
        }
    };
    record["verified"] = json!(verified);
    record["reason"] = json!(reason);
    record["because"] = json!(because);
    record["steps"] = json!(ran);
    record["durationMs"] = json!(clock.elapsed().as_millis() as u64);
    Replayed {
        verified,
        record,
        events,
        page,
    }
}

/// Runs one step through the shared core ([`crate::tools::acting::resolve_act_judge`]); its
/// verdict, its record, and its window's events. The target is resolved afresh, never a stale
/// ref, once it is on the page (waiting up to the step's bound: a page may still be rendering);
/// one matching none or several elements fails the step `no`, naming the candidates.
pub(super) async fn run_step(
    call: &Call<'_>,
    page: &Arc<Session>,
    number: usize,
    step: FlowStep,
) -> (Verified, Value, Value) {
    let clock = Instant::now();
    let mut record = json!({
        "step": number,
        "target": step.target,
        "action": step.action.as_str(),
    });
    let until = match step.until.as_ref().map(|u| crate::verdict::parse(&u.0)) {
        Some(Ok(predicate)) => Some(predicate),
        Some(Err(e)) => {
            record["verified"] = json!(Verified::Unknown);
            record["reason"] = json!("inconclusive");
            record["because"] = json!(format!("the step's consequence no longer parses: {e}"));
            return (Verified::Unknown, record, json!([]));
        }
        None => None,
    };
    let recalled = StoredRefs::recalled(&step.target);
    let kept_target = step.target.clone();
    let wait = bound(step.timeout_ms, DEFAULT_WAIT);
    if recalled.is_none() {
        target_shown(call, page, &step.target, wait).await;
    }
    let job = JudgedAct {
        target: recalled.is_none().then_some(step.target),
        element_ref: recalled,
        action: step.action,
        args: step.args,
        until,
        wait,
    };
    let (verified, events) = match resolve_act_judge(call, page, job).await {
        Ok(Judged {
            verdict,
            answer,
            window,
        }) => {
            record["verified"] = json!(verdict.verified);
            record["reason"] = json!(verdict.reason);
            record["because"] = json!(verdict.because);
            record["evidence"] = json!(verdict.evidence);
            if let Some(r) = answer["act"]["ref"].as_str() {
                StoredRefs::keep(&kept_target, r);
            }
            for key in ["advice", "lost", "waitedMs", "reaction"] {
                if let Some(v) = answer.get(key) {
                    record[key] = v.clone();
                }
            }
            (verdict.verified, json!(capsule_events(&window)))
        }
        Err(unjudged) => {
            let (verified, unrun, refusal) = match unjudged {
                Unjudged::Unresolved(Unresolved::Missing(r)) => {
                    (Verified::No, Unrun::TargetNotFound, r)
                }
                Unjudged::Unresolved(Unresolved::Ambiguous(r)) => {
                    (Verified::No, Unrun::TargetAmbiguous, r)
                }
                Unjudged::Unresolved(Unresolved::Refused(r)) => {
                    (Verified::Unknown, Unrun::TargetUnreadable, r)
                }
                Unjudged::ActRefused(r) => (Verified::Unknown, Unrun::ActionRefused, r),
            };
            record["verified"] = json!(verified);
            record["reason"] = json!(unrun);
            record["because"] = json!(refusal.reason);
            record["recovery"] = json!(refusal.recovery);
            for (key, value) in refusal.extra {
                record[key] = value;
            }
            (verified, json!([]))
        }
    };
    record["durationMs"] = json!(clock.elapsed().as_millis() as u64);
    (verified, record, events)
}

/// Waits, up to `wait`, until `target` is on `page`, with the verdict machinery's `element`
/// predicate (its fields are a target's): a replayed step may meet a page still rendering (a
/// route whose view loads after the SDK connected). Whether it came is not judged here; the step
/// resolves its target afresh, and a target that never came is `target_not_found` there.
async fn target_shown(call: &Call<'_>, page: &Arc<Session>, target: &Target, wait: Duration) {
    let mut shown = target.criteria();
    if shown.is_empty() {
        return;
    }
    shown.insert("kind".into(), json!("element"));
    let Ok(predicate) = crate::verdict::parse(&Value::Object(shown)) else {
        return;
    };
    let mut live = LivePage::new(call.ctx.bridge.clone(), Arc::clone(page), page.head());
    let _ = wait_until(&predicate, &mut live, wait).await;
}

/// Leaves a capsule for a flow that is not `yes`; its name or why not, on the answer.
pub(super) fn leave_capsule(
    call: &Call<'_>,
    session: &Session,
    replayed: &Replayed,
    answer: &mut Value,
) {
    let capsule = json!({
        "tool": call.tool.as_str(),
        "sessionId": session.id(),
        "arguments": call.arguments,
        "flow": replayed.record["name"],
        "verdict": replayed.record,
        "events": replayed.events,
    });
    match capsules::save(call.ctx.workspace(), &capsule) {
        Ok(name) => answer["capsuleSaved"] = json!(name),
        Err(why) => answer["capsuleError"] = json!(why),
    }
}

/// The saved flow `name` and its steps as they will run (secrets filled, `confirmDangerous`
/// set); a missing flow or secret is a refusal naming it.
pub(super) fn flow_to_run(
    call: &Call<'_>,
    name: &str,
    secrets: Option<BTreeMap<String, String>>,
    confirm_dangerous: Option<bool>,
) -> Result<(Flow, Vec<FlowStep>), Refusal> {
    let flow = load_flow(call.ctx.workspace(), name)?;
    let steps = steps_to_run(
        &flow,
        &secrets.unwrap_or_default(),
        confirm_dangerous == Some(true),
    )?;
    Ok((flow, steps))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_at_the_start_path_is_reloaded_and_one_elsewhere_navigated() {
        let page = "http://127.0.0.1:5/?reticlePort=9&reticleToken=[redacted]#top";
        assert_eq!(start_of(page, "/", false), Start::Reload);
        assert_eq!(
            start_of(page, "/login", false),
            Start::Navigate("http://127.0.0.1:5/login".into())
        );
        assert_eq!(
            start_of("https://app.test/a/b?x=1", "/a/b?x=2", false),
            Start::Navigate("https://app.test/a/b?x=2".into())
        );
        assert_eq!(start_of("http://h:1", "/", false), Start::Reload);
    }

    #[test]
    fn a_fresh_page_is_used_as_opened_only_when_its_route_is_the_start_path() {
        let page = "http://127.0.0.1:5/login?reticlePort=9&__reticle_session=s#top";
        assert_eq!(start_of(page, "/login", true), Start::AsOpened);
        assert_eq!(
            start_of(page, "/", true),
            Start::Navigate("http://127.0.0.1:5/".into())
        );
        assert_eq!(
            start_of("https://app.test/a?x=1", "/a?x=2", true),
            Start::Navigate("https://app.test/a?x=2".into())
        );
    }

    #[test]
    fn a_missing_secret_is_refused_by_name_and_a_given_one_fills_the_step() {
        let steps: Vec<FlowStep> = serde_json::from_value(json!([
            {"target": {"label": "Password"}, "action": "fill", "args": {"value": "hunter2"}},
            {"target": {"testid": "go"}, "action": "click"}
        ]))
        .unwrap();
        let (flow, _) = Flow::checked("f".into(), "/".into(), vec![], steps).unwrap();
        let env = "RETICLE_SECRET_PASSWORD";
        assert!(std::env::var_os(env).is_none());
        let refused = steps_to_run(&flow, &BTreeMap::new(), false).unwrap_err();
        assert!(refused.reason.contains(env), "{refused}");
        assert_eq!(refused.extra["missing"], json!([{"step": 1, "env": env}]));
        let given = BTreeMap::from([(env.to_string(), "s3cret".to_string())]);
        let steps = steps_to_run(&flow, &given, true).unwrap();
        let args = steps[0].args.as_ref().unwrap();
        assert_eq!(args.value, Some(json!("s3cret")));
        assert_eq!(
            steps[1].args.as_ref().unwrap().confirm_dangerous,
            Some(true)
        );
    }
}
