//! `reticle_flow_save_recorded`: save the latest person's recording the page sent as a flow, its
//! elements named as a user would and typed secrets as placeholders.

use serde_json::{Value, json};

use super::flow_save::store_flow;
use super::recorded::{NOTHING_TO_SAVE, recorded_steps, unnamed_acts};
use crate::flow::model::Flow;
use crate::tools::call::Call;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::{FlowSaveRecordedArgs, RecordSource};
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};

fn flow_save_recorded(call: &Call<'_>, a: FlowSaveRecordedArgs) -> Result<Value, Refusal> {
    let session = call.session()?;
    let Some(recorded) = call.ctx.bridge.latest_recorded(session.id()) else {
        return Err(Refusal::new(
            format!(
                "no person's recording has arrived from session {}; nothing was saved",
                session.id()
            ),
            "start one with reticle_record {\"action\":\"start\",\"source\":\"person\"}, let the person click and type, then stop it with reticle_record {\"action\":\"stop\"}",
        )
        .with("cause", "no_recording"));
    };
    let unreadable = |why: String| {
        Refusal::new(
            format!("the page's latest recording could not be read: {why}; nothing was saved"),
            "record again; if it repeats, report it with reticle_feedback",
        )
    };
    let (steps, notes) = recorded_steps(&recorded.data).map_err(unreadable)?;
    let flow = recorded.data.get("flow");
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_string);
    let name = a
        .name
        .or_else(|| text(recorded.data.get("name")))
        .unwrap_or_else(|| "recorded-flow".into());
    let start_path = a
        .start_path
        .or_else(|| text(flow.and_then(|f| f.get("startPath"))))
        .unwrap_or_else(|| "/".into());
    if !notes.is_empty() {
        return Err(unnamed_acts(notes.len(), &json!(steps), &notes));
    }
    if steps.is_empty() {
        return Ok(json!({
            "ok": true,
            "saved": false,
            "stepCount": 0,
            "why": NOTHING_TO_SAVE,
            "recordedAt": recorded.received_at,
        }));
    }
    let (flow, secrets) = Flow::checked(name, start_path, Vec::new(), steps)
        .map_err(|problem| Refusal::bad_arguments(call.tool.as_str(), &problem))?;
    let mut answer = store_flow(
        call.ctx.workspace(),
        &flow,
        &secrets,
        a.overwrite == Some(true),
    )?;
    answer["saved"] = json!(true);
    answer["source"] = json!(RecordSource::Person);
    answer["recordedAt"] = json!(recorded.received_at);
    Ok(answer)
}

/// `reticle_flow_save_recorded`, as the registry knows it.
pub struct FlowSaveRecorded;

impl Tool for FlowSaveRecorded {
    const NAME: ToolName = ToolName::FlowSaveRecorded;
    const TITLE: &'static str = "Save a recorded flow";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str = "Save the latest person's recording the page sent (reticle_record with source person) as a flow in .reticle/flows/, its elements named as a user would and typed secrets as placeholders.";
    const OUTPUT: &'static [&'static str] = &["name", "path", "stepCount", "assertions", "secrets"];
    const SESSION: SessionUse = SessionUse::Bound;
    type Args = FlowSaveRecordedArgs;

    fn run<'a>(call: &'a Call<'a>, a: FlowSaveRecordedArgs) -> Answer<'a> {
        Box::pin(std::future::ready(flow_save_recorded(call, a)))
    }
}
