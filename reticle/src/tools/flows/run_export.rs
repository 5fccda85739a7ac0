//! `reticle_run_export`: a run artifact (the newest, or the one `runId` names) read back as its
//! JSON document or as JUnit XML. The artifact itself is [`crate::flow::runs`]; this module
//! only answers the tool and must not write a run.

use serde_json::{Value, json};

use crate::flow::runs::{junit, newest};
use crate::store::workspace::Folder;
use crate::tools::call::Call;
use crate::tools::refusal::{Refusal, store_refusal};
use crate::tools::surface::args::{ExportFormat, RunExportArgs};
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, Tool};

fn run_export(call: &Call<'_>, a: RunExportArgs) -> Result<Value, Refusal> {
    let workspace = call.ctx.workspace();
    let id = match a.run_id {
        Some(id) => id,
        None => newest(workspace).ok_or_else(|| {
                Refusal::new(
                    "no run is saved in this workspace yet; nothing to export",
                    "replay a flow with reticle_flow_replay or run reticle_verify {\"action\":\"flows\"}, then export its runId",
                )
            })?,
    };
    let run = workspace
        .load(Folder::Runs, &id)
        .map_err(store_refusal)?
        .ok_or_else(|| {
            Refusal::new(
                format!("no run '{id}' is saved in this workspace (the newest 500 are kept)"),
                "omit runId for the newest run, or pass the runId a replay or verify answered",
            )
        })?;
    let format = a.format.unwrap_or(ExportFormat::Json);
    let mut answer = json!({ "ok": true, "runId": id });
    match format {
        ExportFormat::Json => {
            answer["format"] = json!("json");
            answer["run"] = run;
        }
        ExportFormat::Junit => {
            answer["format"] = json!("junit");
            answer["junit"] = json!(junit(&run));
        }
    }
    Ok(answer)
}

/// `reticle_run_export`, as the registry knows it.
pub struct RunExport;

impl Tool for RunExport {
    const NAME: ToolName = ToolName::RunExport;
    const TITLE: &'static str = "Export a run";
    const EFFECT: Effect = Effect::Adds;
    const DESCRIPTION: &'static str = "A run artifact (every replay and verify writes one, `runId`): format json (the run) or junit (JUnit XML, one testcase per flow, a failure naming the step). Omit runId for the newest run.";
    const OUTPUT: &'static [&'static str] = &["runId", "format", "run", "junit"];
    type Args = RunExportArgs;

    fn run<'a>(call: &'a Call<'a>, a: RunExportArgs) -> Answer<'a> {
        Box::pin(std::future::ready(run_export(call, a)))
    }
}
