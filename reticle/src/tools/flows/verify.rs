//! `reticle_verify {action:"flows"}`: replays every saved flow (or those named), each `repeat`
//! times ([`super::player`]), and answers per flow and for the suite ([`crate::flow::suite`]),
//! in one run artifact. A flow that cannot run is `unknown` with why; with `repeat` 1 the answer
//! says a flake cannot be told from a steady verdict.
//!
//! It schedules replays; it must not replay a step itself.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::player::{Approach, Replayed, leave_capsule, replay, steps_to_run};
use crate::flow::runs::{Run, RunKind, RunVerdict};
use crate::flow::store::load_flow;
use crate::flow::suite::{COULD_NOT_RUN, MAX_REPEAT, Verified, flow_verdict, suite_verdict};
use crate::store::workspace::Folder;
use crate::tools::arrival::ARRIVAL_BOUND;
use crate::tools::call::Call;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::VerifyArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, Registration, SessionUse, Tool};

async fn verify(call: &Call<'_>, a: VerifyArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let workspace = call.ctx.workspace();
    let repeat = a.repeat.unwrap_or(1);
    if !(1..=MAX_REPEAT).contains(&repeat) {
        return Err(Refusal::bad_arguments(
            call.tool.as_str(),
            &format!("field `repeat`: 1 to {MAX_REPEAT}, not {repeat}"),
        ));
    }
    let names: Vec<String> = match a.flows {
        Some(names) => names,
        None => workspace
            .list(Folder::Flows)
            .into_iter()
            .map(|l| l.name)
            .collect(),
    };
    if names.is_empty() {
        return Err(Refusal::new(
            "no flow is saved in this workspace, so there is nothing to verify; nothing was run",
            "save a flow with reticle_flow_save, then call reticle_verify {\"action\":\"flows\"}",
        ));
    }
    let secrets: BTreeMap<String, String> = a.secrets.unwrap_or_default();
    let confirm = a.confirm_dangerous == Some(true);
    let run = Run::begin(RunKind::Verify);
    let mut records = Vec::new();
    let mut verdicts = Vec::new();
    let mut flaky = Vec::new();
    let mut answer = json!({ "ok": true, "action": "flows" });
    let mut page = Arc::clone(session);
    for (index, name) in names.iter().enumerate() {
        call.ctx
            .progress
            .part(index as u64, names.len() as u64, name);
        let planned = load_flow(workspace, name)
            .map_err(Refusal::from)
            .and_then(|flow| steps_to_run(&flow, &secrets, confirm).map(|steps| (flow, steps)));
        let (flow, steps) = match planned {
            Ok(planned) => planned,
            Err(refusal) => {
                verdicts.push(Verified::Unknown);
                records.push(json!({
                    "name": name,
                    "verified": Verified::Unknown,
                    "reason": COULD_NOT_RUN,
                    "because": refusal.reason,
                    "recovery": refusal.recovery,
                }));
                continue;
            }
        };
        let mut replays: Vec<Replayed> = Vec::new();
        for _ in 0..repeat {
            let replayed = replay(
                call,
                &page,
                &flow,
                steps.clone(),
                Approach::as_found(ARRIVAL_BOUND),
            )
            .await;
            page = Arc::clone(&replayed.page);
            replays.push(replayed);
        }
        let each: Vec<Verified> = replays.iter().map(|r| r.verified).collect();
        let (verified, is_flaky) = flow_verdict(&each);
        // The record kept is the first replay that was not yes, else the first.
        let shown = replays
            .iter()
            .find(|r| r.verified != Verified::Yes)
            .unwrap_or(&replays[0]);
        let mut record = shown.record.clone();
        if shown.verified != Verified::Yes {
            let mut capsule = json!({});
            leave_capsule(call, &page, shown, &mut capsule);
            if let Some(saved) = capsule.get("capsuleSaved") {
                record["capsuleSaved"] = saved.clone();
            }
        }
        if repeat > 1 {
            record["replays"] = json!(each);
        }
        if is_flaky {
            record["verified"] = json!(Verified::Unknown);
            record["flaky"] = json!(true);
            record["because"] = json!(format!(
                "flaky: {} of {repeat} identical replays passed; the first that did not: {}",
                each.iter().filter(|v| **v == Verified::Yes).count(),
                shown.record["because"].as_str().unwrap_or("")
            ));
            flaky.push(json!(name));
        }
        verdicts.push(verified);
        records.push(record);
    }
    let verified = suite_verdict(&verdicts);
    let count = |v: Verified| verdicts.iter().filter(|x| **x == v).count();
    let because = format!(
        "{} flow(s): {} yes, {} no, {} unknown{}",
        verdicts.len(),
        count(Verified::Yes),
        count(Verified::No),
        count(Verified::Unknown),
        if flaky.is_empty() {
            String::new()
        } else {
            format!(" ({} flaky)", flaky.len())
        }
    );
    answer["verified"] = json!(verified);
    answer["because"] = json!(because);
    answer["repeat"] = json!(repeat);
    if repeat == 1 {
        answer["note"] = json!(
            "each flow ran once, so a flaky flow cannot be told from a steady one: pass repeat 2 or more"
        );
    }
    answer["flaky"] = json!(flaky);
    answer["flows"] = json!(records);
    run.save_into(
        workspace,
        &RunVerdict {
            verified,
            because: &because,
            flows: &records,
        },
        &mut answer,
    );
    Ok(answer)
}

/// `reticle_verify`, as the registry knows it.
pub struct Verify;

impl Tool for Verify {
    const NAME: ToolName = ToolName::Verify;
    const TITLE: &'static str = "Verify saved flows";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str = "Verify the app: action flows replays every saved flow (or those named, `repeat` times each) and answers a suite verdict, yes only when every flow is yes; a flow whose replays disagree is flaky, not yes. Writes a run artifact.";
    const OUTPUT: &'static [&'static str] =
        &["action", "verified", "because", "flows", "flaky", "runId"];
    const SESSION: SessionUse = SessionUse::Bound;
    const DRIVES_SESSION: bool = true;
    type Args = VerifyArgs;

    fn run<'a>(call: &'a Call<'a>, a: VerifyArgs) -> Answer<'a> {
        Box::pin(verify(call, a))
    }
}

/// `reticle_flow_verify`, a member of its family.
pub const FLOW_VERIFY: Registration = Registration::member::<VerifyArgs>(
    ToolName::FlowVerify,
    "reticle_verify {action:\"flows\"}: replay saved flows and answer a suite verdict.",
);
