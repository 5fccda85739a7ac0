//! `reticle_flow_save`: check a flow ([`crate::flow::model`]) and store it in the workspace's
//! `flows/`, through [`store_flow`], the one path every saving tool (recordings too) takes; a
//! flow of the same name is replaced only when asked. It must not drive a page.

use serde_json::{Value, json};

use crate::flow::model::{Flow, SecretSource};
use crate::store::workspace::{Folder, Workspace};
use crate::tools::call::Call;
use crate::tools::refusal::{Refusal, store_refusal};
use crate::tools::surface::args::FlowSaveArgs;
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, Tool};

fn flow_save(call: &Call<'_>, a: FlowSaveArgs) -> Result<Value, Refusal> {
    let (flow, secrets) = Flow::checked(a.name, a.start_path, a.paths.unwrap_or_default(), a.steps)
        .map_err(|problem| Refusal::bad_arguments(call.tool.as_str(), &problem))?;
    store_flow(
        call.ctx.workspace(),
        &flow,
        &secrets,
        a.overwrite == Some(true),
    )
}

/// Stores a checked flow (refused when one of its name is saved and `overwrite` is not given);
/// the answer names its file, grade and secrets.
pub(super) fn store_flow(
    workspace: &Workspace,
    flow: &Flow,
    secrets: &[SecretSource],
    overwrite: bool,
) -> Result<Value, Refusal> {
    let existing = workspace
        .load(Folder::Flows, &flow.name)
        .map_err(store_refusal)?;
    if existing.is_some() && !overwrite {
        return Err(Refusal::new(
            format!(
                "a flow named '{}' is already saved; nothing was written",
                flow.name
            ),
            "pass overwrite:true to replace it, or choose another name",
        ));
    }
    let path = workspace
        .save(Folder::Flows, &flow.name, &flow.to_document())
        .map_err(store_refusal)?;
    let grading = flow.grading();
    let mut answer = json!({
        "ok": true,
        "name": flow.name,
        "path": path.display().to_string(),
        "stepCount": flow.steps.len(),
        "replaced": existing.is_some(),
        "assertions": grading,
    });
    if !secrets.is_empty() {
        answer["secrets"] = json!(secrets);
        answer["note"] = json!(
            "secrets are stored as placeholders: at replay each comes from the `secrets` argument or the daemon's environment variable named here"
        );
    }
    Ok(answer)
}

/// `reticle_flow_save`, as the registry knows it.
pub struct FlowSave;

impl Tool for FlowSave {
    const NAME: ToolName = ToolName::FlowSave;
    const TITLE: &'static str = "Save a flow";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str = "Save a flow: a name, the path it starts from, and steps (each element named as a user names it, the action, and the `until` consequence that must follow), to .reticle/flows/. Answers its assertion grade; typed secrets are stored as placeholders.";
    const OUTPUT: &'static [&'static str] = &["name", "path", "stepCount", "assertions", "secrets"];
    type Args = FlowSaveArgs;

    fn run<'a>(call: &'a Call<'a>, a: FlowSaveArgs) -> Answer<'a> {
        Box::pin(std::future::ready(flow_save(call, a)))
    }
}
