//! Flow healing: `reticle_flow_heal` replays a saved flow with `reticle_flow_replay`'s core and,
//! at a step whose target matches nothing, tries the one clear candidate [`super::rebind`] ranks.
//! A rebinding holds only when that step and every later one pass and a consequence at or after
//! it was checked; `apply: true` writes the healed flow as version + 1, the old one kept in
//! `heals/`. It must not guess (an unproved rebinding is never written) nor write without
//! `apply: true`.

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::player::{Approach, Unrun, flow_to_run, go_to_start, run_step};
use super::rebind::{CONTROL_ROLES, CONTROLS, Ranking, rank};
use crate::bridge::Session;
use crate::flow::model::Flow;
use crate::store::workspace::{Folder, stamped_name};
use crate::tools::arrival::ARRIVAL_BOUND;
use crate::tools::call::Call;
use crate::tools::commands::ask;
use crate::tools::refusal::{Refusal, store_refusal};
use crate::tools::stand_ins;
use crate::tools::surface::args::{FlowHealArgs, FlowStep};
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};
use crate::verdict::Verified;
use crate::verdict::predicate::Predicate;
use crate::wire::CommandName;

/// The field a flow document keeps its version in (absent: version 1).
pub const VERSION_FIELD: &str = "version";

/// How many controls heal reads from the page at most.
const CONTROLS_READ: u64 = 500;

/// What a heal came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HealOutcome {
    /// Every rebinding was proved and the healed flow was written.
    Healed,
    /// Every rebinding was proved; `apply: true` would write it.
    Proposed,
    /// The flow replays as it is: nothing to heal.
    NothingToHeal,
    /// Several elements could be the step's control; they are listed, none was tried.
    Ambiguous,
    /// No element on the page is like the step's target.
    NoCandidate,
    /// The candidate was tried and the step's consequence did not follow.
    ConsequenceBroken,
    /// Every step passed, but no consequence after a rebinding proves it.
    Unproved,
    /// A step failed for another reason than its target (its consequence, the page...).
    NotATargetProblem,
    /// The page did not arrive at the flow's start path.
    StartNotReached,
}

/// One step's new target, as proposed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Rebinding {
    step: usize,
    from: Value,
    to: Value,
    similarity: f64,
    element: Value,
}

/// What a heal walk found.
struct Walk {
    outcome: HealOutcome,
    because: String,
    rebindings: Vec<Rebinding>,
    candidates: Vec<Value>,
    steps: Vec<Value>,
}

async fn flow_heal(call: &Call<'_>, a: FlowHealArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let (flow, steps) = flow_to_run(call, &a.name, a.secrets, a.confirm_dangerous)?;
    let walk = walk(call, session, &flow, steps).await;
    let apply = a.apply == Some(true);
    let mut answer = json!({
        "ok": true,
        "name": flow.name,
        "outcome": walk.outcome,
        "applied": false,
        "because": walk.because,
        "rebindings": walk.rebindings,
        "steps": walk.steps,
    });
    if !walk.candidates.is_empty() {
        answer["candidates"] = json!(walk.candidates);
    }
    let guessed = stand_ins::heal_guesses() && !walk.rebindings.is_empty();
    if (walk.outcome == HealOutcome::Proposed || guessed) && apply {
        let written = write_heal(call, &flow, &walk.rebindings)?;
        answer["outcome"] = json!(HealOutcome::Healed);
        answer["applied"] = json!(true);
        for (key, value) in written {
            answer[key] = value;
        }
    } else if apply && walk.outcome != HealOutcome::NothingToHeal {
        answer["notApplied"] = json!(format!(
            "nothing was written: a heal is applied only when each new target is proved by a consequence ({})",
            serde_json::to_value(walk.outcome)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        ));
    }
    Ok(answer)
}

/// Replays the flow, rebinding each step whose target is gone when the page offers one clear
/// candidate and the step then passes. Several close candidates are listed and never tried; a
/// candidate whose consequence does not fire is reported and never applied
/// ([`crate::tools::stand_ins`] breaks that rule, test only).
async fn walk(call: &Call<'_>, session: &Arc<Session>, flow: &Flow, steps: Vec<FlowStep>) -> Walk {
    let mut walk = Walk {
        outcome: HealOutcome::NothingToHeal,
        because: String::new(),
        rebindings: Vec::new(),
        candidates: Vec::new(),
        steps: Vec::new(),
    };
    let page = match go_to_start(call, session, flow, Approach::as_found(ARRIVAL_BOUND))
        .await
        .1
    {
        Ok(page) => page,
        Err(why) => {
            walk.outcome = HealOutcome::StartNotReached;
            walk.because = format!(
                "the page did not arrive at the flow's start path {}: {why}; no step ran",
                flow.start_path
            );
            return walk;
        }
    };
    let mut proved_from: Option<usize> = None;
    for (i, step) in steps.into_iter().enumerate() {
        let number = i + 1;
        let (verified, record, _) = run_step(call, &page, number, step.clone()).await;
        if verified == Verified::Yes {
            walk.steps.push(record);
            if checks_a_consequence(&step) {
                proved_from = Some(number);
            }
            continue;
        }
        let reason = record["reason"].clone();
        if reason == json!(Unrun::TargetAmbiguous) {
            walk.candidates = record["candidates"].as_array().cloned().unwrap_or_default();
            walk.steps.push(record);
            return stop(
                walk,
                HealOutcome::Ambiguous,
                format!(
                    "step {number}'s target matches several elements; they are listed and none was chosen"
                ),
            );
        }
        if reason != json!(Unrun::TargetNotFound) {
            let because = format!(
                "step {number} failed for another reason than its target ({}): {}; heal only rebinds a target that matches nothing",
                reason.as_str().unwrap_or("unknown"),
                record["because"].as_str().unwrap_or("")
            );
            walk.steps.push(record);
            return stop(walk, HealOutcome::NotATargetProblem, because);
        }
        let elements = match controls(&page).await {
            Ok(elements) => elements,
            Err(refusal) => {
                walk.steps.push(record);
                return stop(
                    walk,
                    HealOutcome::NoCandidate,
                    format!(
                        "step {number}'s target matches nothing and the page's controls could not be read: {}",
                        refusal.reason
                    ),
                );
            }
        };
        let candidate = match rank(&step.target, step.action, &elements) {
            Ranking::One(candidate) => *candidate,
            Ranking::Several(mut candidates) if stand_ins::heal_guesses() => candidates.remove(0),
            Ranking::Several(candidates) => {
                walk.candidates = candidates.iter().map(|c| json!(c)).collect();
                walk.steps.push(record);
                return stop(
                    walk,
                    HealOutcome::Ambiguous,
                    format!(
                        "step {number}'s target matches nothing and several elements are as likely to be its control; they are listed and none was tried"
                    ),
                );
            }
            Ranking::None => {
                walk.steps.push(record);
                return stop(
                    walk,
                    HealOutcome::NoCandidate,
                    format!(
                        "step {number}'s target matches nothing and no element on the page is like it"
                    ),
                );
            }
        };
        let mut trial = step.clone();
        trial.target = candidate.target.clone();
        let (verified, mut tried, _) = run_step(call, &page, number, trial).await;
        tried["healedFrom"] = json!(step.target);
        walk.steps.push(tried.clone());
        let rebinding = Rebinding {
            step: number,
            from: json!(step.target),
            to: json!(candidate.target),
            similarity: candidate.similarity,
            element: candidate.element.clone(),
        };
        walk.rebindings.push(rebinding);
        if verified != Verified::Yes {
            walk.candidates = vec![json!(candidate)];
            return stop(
                walk,
                HealOutcome::ConsequenceBroken,
                format!(
                    "step {number} on its proposed new target was {}: {}; the rebinding is not applied",
                    tried["verified"].as_str().unwrap_or("unknown"),
                    tried["because"].as_str().unwrap_or("")
                ),
            );
        }
        if checks_a_consequence(&step) {
            proved_from = Some(number);
        }
    }
    let Some(last_rebound) = walk.rebindings.last().map(|r| r.step) else {
        walk.because = "every step found its target: nothing to heal".into();
        return walk;
    };
    if proved_from.is_none_or(|proved| proved < last_rebound) {
        return stop(
            walk,
            HealOutcome::Unproved,
            "every step ran on the proposed targets, but no step at or after the last rebinding checks a consequence, so nothing proves it: add an `until` to that step".into(),
        );
    }
    walk.outcome = HealOutcome::Proposed;
    walk.because = format!(
        "{} step(s) rebound and every step passed with its consequence checked",
        walk.rebindings.len()
    );
    walk
}

fn stop(mut walk: Walk, outcome: HealOutcome, because: String) -> Walk {
    walk.outcome = outcome;
    walk.because = because;
    walk
}

/// Whether a step's `until` checks something the app did or shows (not only that it settled).
fn checks_a_consequence(step: &FlowStep) -> bool {
    step.until
        .as_ref()
        .map(|u| crate::verdict::parse(&u.0))
        .is_some_and(|p| matches!(p, Ok(p) if !matches!(p, Predicate::Settled { .. })))
}

/// The page's controls now, as query descriptors: by one CSS query where the page's SDK reads
/// selectors (ours), else by a query per control role, which protocol 1 guarantees (the
/// published 2.0.0 answers a `css` query with no element, which would read as "nothing alike").
async fn controls(page: &Session) -> Result<Vec<Value>, Refusal> {
    let elements_of = |found: Value| found["elements"].as_array().cloned().unwrap_or_default();
    let by_css = ask(
        page,
        CommandName::Query,
        json!({ "css": CONTROLS, "limit": CONTROLS_READ }),
    )
    .await?;
    let found = elements_of(by_css);
    if !found.is_empty() {
        return Ok(found);
    }
    let mut by_role: Vec<Value> = Vec::new();
    for role in CONTROL_ROLES {
        let answer = ask(page, CommandName::Query, json!({ "role": role })).await?;
        for element in elements_of(answer) {
            let seen = by_role.iter().any(|e| e["ref"] == element["ref"]);
            if !seen && by_role.len() < CONTROLS_READ as usize {
                by_role.push(element);
            }
        }
    }
    Ok(by_role)
}

/// Writes an applied heal: the old document and the diff to `heals/`, then the new version of
/// the flow. Each write is atomic; the old version is kept before the flow is replaced.
fn write_heal(
    call: &Call<'_>,
    flow: &Flow,
    rebindings: &[Rebinding],
) -> Result<Map<String, Value>, Refusal> {
    let workspace = call.ctx.workspace();
    let previous = workspace
        .load(Folder::Flows, &flow.name)
        .map_err(store_refusal)?
        .unwrap_or_else(|| Value::Object(flow.to_document()));
    let version = previous[VERSION_FIELD].as_u64().unwrap_or(1);
    let mut healed = flow.clone();
    for r in rebindings {
        if let (Some(step), Ok(target)) = (
            healed.steps.get_mut(r.step - 1),
            serde_json::from_value(r.to.clone()),
        ) {
            step.target = target;
        }
    }
    let record_name = format!("{}-v{version}-{}", flow.name, stamped_name());
    let mut record = Map::new();
    record.insert("flow".into(), json!(flow.name));
    record.insert("fromVersion".into(), json!(version));
    record.insert("toVersion".into(), json!(version + 1));
    record.insert("diff".into(), json!(rebindings));
    record.insert("previous".into(), previous);
    let kept = workspace
        .save(Folder::Heals, &record_name, &record)
        .map_err(store_refusal)?;
    let mut document = healed.to_document();
    document.insert(VERSION_FIELD.into(), json!(version + 1));
    document.insert("healedBy".into(), json!(record_name));
    let path = workspace
        .save(Folder::Flows, &flow.name, &document)
        .map_err(store_refusal)?;
    let mut written = Map::new();
    written.insert("version".into(), json!(version + 1));
    written.insert("path".into(), json!(path.display().to_string()));
    written.insert("previousKept".into(), json!(kept.display().to_string()));
    written.insert("diff".into(), json!(rebindings));
    Ok(written)
}

/// `reticle_flow_heal`, as the registry knows it.
pub struct FlowHeal;

impl Tool for FlowHeal {
    const NAME: ToolName = ToolName::FlowHeal;
    const TITLE: &'static str = "Heal a flow";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str = "Heal a saved flow whose step no longer finds its element (a renamed testid, a reworded button): replay it, propose the element the page shows now for that step, and try it; apply:true writes a new version (the old one kept, the diff recorded) only when the step's consequence fires with the new target. Ambiguous candidates are listed, never applied.";
    const OUTPUT: &'static [&'static str] = &[
        "outcome",
        "applied",
        "because",
        "rebindings",
        "candidates",
        "diff",
        "version",
    ];
    const SESSION: SessionUse = SessionUse::Bound;
    const DRIVES_SESSION: bool = true;
    type Args = FlowHealArgs;

    fn run<'a>(call: &'a Call<'a>, a: FlowHealArgs) -> Answer<'a> {
        Box::pin(flow_heal(call, a))
    }
}
