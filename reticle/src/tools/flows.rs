//! Saved flows: `reticle_flow_save` checks a flow ([`crate::flow::model`]) and stores it in the
//! workspace's `flows/` (the one store every saving tool, recordings too, goes through); `reticle_flow` {list, load, delete} reads and removes them (delete is
//! idempotent: `deleted` says whether there was one). A flow file
//! that cannot be read is reported by name with the fix, never replaced.
//!
//! This module stores and reads flows; it must not drive a page (replay does that).

use serde_json::{Value, json};

use super::args::{FlowAction, FlowFamilyArgs, FlowSaveArgs};
use super::call::Call;
use super::refusal::{Refusal, store_refusal};
use crate::flow::model::{Flow, SecretSource};
use crate::flow::store::load_flow;
use crate::store::workspace::{Folder, Workspace};

pub(super) fn flow_save(call: &Call<'_>, a: FlowSaveArgs) -> Result<Value, Refusal> {
    let (flow, secrets) = Flow::checked(a.name, a.start_path, a.paths.unwrap_or_default(), a.steps)
        .map_err(|problem| Refusal::bad_arguments(call.tool.as_str(), &problem))?;
    store_flow(
        &call.ctx.host.workspace,
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

pub(super) fn flow(call: &Call<'_>, a: FlowFamilyArgs) -> Result<Value, Refusal> {
    let workspace = &call.ctx.host.workspace;
    let named = || {
        let action = if a.action == FlowAction::Load {
            "load"
        } else {
            "delete"
        };
        a.name
            .clone()
            .ok_or_else(|| Refusal::missing_name(call.tool.as_str(), action, "flow"))
    };
    match a.action {
        FlowAction::List => {
            let flows: Vec<Value> = workspace
                .list(Folder::Flows)
                .into_iter()
                .map(|listed| {
                    match listed
                        .document
                        .map_err(|e| e.to_string())
                        .and_then(|d| Flow::from_document(&d))
                    {
                        Ok(flow) => json!({
                            "name": listed.name,
                            "startPath": flow.start_path,
                            "stepCount": flow.steps.len(),
                            "grade": flow.grading().grade,
                        }),
                        Err(why) => json!({ "name": listed.name, "unreadable": why }),
                    }
                })
                .collect();
            Ok(json!({
                "ok": true,
                "action": "list",
                "workspace": workspace.root().display().to_string(),
                "count": flows.len(),
                "flows": flows,
            }))
        }
        FlowAction::Load => {
            let flow = load_flow(workspace, &named()?)?;
            let mut answer = json!({ "ok": true, "action": "load" });
            for (key, value) in flow.to_document() {
                answer[key] = value;
            }
            Ok(answer)
        }
        FlowAction::Delete => {
            let name = named()?;
            // Idempotent: deleting a flow that is not there answers `deleted: false`.
            let deleted = workspace
                .delete(Folder::Flows, &name)
                .map_err(store_refusal)?;
            Ok(json!({ "ok": true, "action": "delete", "name": name, "deleted": deleted }))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use crate::tools::{Catalogue, Surface, ToolContext, run_tool};

    async fn call(ctx: &ToolContext, tool: &str, args: Value) -> (bool, Value) {
        let catalogue = Catalogue::for_surface(Surface::All);
        let arguments: Map<String, Value> = args.as_object().cloned().unwrap();
        let result = run_tool(ctx, &catalogue, tool, arguments, None)
            .await
            .unwrap();
        (
            result.is_error == Some(true),
            result.structured_content.unwrap_or(Value::Null),
        )
    }

    #[tokio::test]
    async fn a_flow_is_saved_listed_loaded_and_deleted_and_a_bad_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::detached(dir.path());
        let flow = json!({
            "name": "sign-in",
            "startPath": "/login",
            "steps": [
                {"target": {"label": "Password"}, "action": "fill", "args": {"value": "hunter2"}},
                {"target": {"role": "button", "name": "Sign in"}, "action": "click",
                 "until": {"kind": "signal", "name": "login.succeeded"}}
            ]
        });
        let (error, saved) = call(&ctx, "reticle_flow_save", flow.clone()).await;
        assert!(!error, "{saved}");
        assert_eq!(saved["assertions"]["grade"], "asserted");
        assert_eq!(saved["secrets"][0]["env"], "RETICLE_SECRET_PASSWORD");
        let file = std::fs::read_to_string(dir.path().join("project/.reticle/flows/sign-in.json"))
            .unwrap();
        assert!(
            !file.contains("hunter2") && file.contains("\"format\": 1"),
            "{file}"
        );

        let (error, again) = call(&ctx, "reticle_flow_save", flow).await;
        assert!(
            error && again["reason"].as_str().unwrap().contains("already saved"),
            "{again}"
        );

        std::fs::write(dir.path().join("project/.reticle/flows/broken.json"), "{").unwrap();
        let (error, listed) = call(&ctx, "reticle_flow", json!({"action": "list"})).await;
        assert!(!error, "{listed}");
        assert_eq!(listed["count"], 2);
        assert!(
            listed["flows"][0]["unreadable"]
                .as_str()
                .unwrap()
                .contains("broken.json")
        );
        assert_eq!(listed["flows"][1]["grade"], "asserted");

        let (error, loaded) = call(
            &ctx,
            "reticle_run",
            json!({"tool": "reticle_flow_load", "args": {"name": "sign-in"}}),
        )
        .await;
        assert!(!error, "{loaded}");
        assert_eq!(loaded["startPath"], "/login");
        assert_eq!(
            loaded["steps"][0]["args"]["value"],
            json!({"fromEnv": "RETICLE_SECRET_PASSWORD"})
        );

        let (error, bad) = call(
            &ctx,
            "reticle_flow",
            json!({"action": "load", "name": "broken"}),
        )
        .await;
        assert!(
            error && bad["reason"].as_str().unwrap().contains("not valid JSON"),
            "{bad}"
        );

        let (error, deleted) = call(
            &ctx,
            "reticle_flow",
            json!({"action": "delete", "name": "sign-in"}),
        )
        .await;
        assert!(!error && deleted["deleted"] == true, "{deleted}");
        let (error, again) = call(
            &ctx,
            "reticle_flow",
            json!({"action": "delete", "name": "sign-in"}),
        )
        .await;
        assert!(!error && again["deleted"] == false, "{again}");
        let (error, gone) = call(
            &ctx,
            "reticle_flow",
            json!({"action": "load", "name": "sign-in"}),
        )
        .await;
        assert!(error && gone["saved"] == json!(["broken"]), "{gone}");
    }
}
