//! `reticle_flow`, a family: `list` the saved flows with their grades, `load` one, `delete` one
//! (idempotent: `deleted` says whether there was one). A flow file that cannot be read is
//! reported by name with the fix, never replaced. It must not drive a page.

use serde_json::{Value, json};

use crate::flow::model::{self};
use crate::flow::store::load_flow;
use crate::store::workspace::Folder;
use crate::tools::call::Call;
use crate::tools::refusal::{Refusal, store_refusal};
use crate::tools::surface::args::{FlowAction, FlowFamilyArgs};
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, Registration, Tool};

fn flow(call: &Call<'_>, a: FlowFamilyArgs) -> Result<Value, Refusal> {
    let workspace = call.ctx.workspace();
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
                        .and_then(|d| model::Flow::from_document(&d))
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

/// `reticle_flow`, as the registry knows it.
pub struct Flow;

impl Tool for Flow {
    const NAME: ToolName = ToolName::Flow;
    const TITLE: &'static str = "Saved flows";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str = "The saved flows: action list (names, start paths, grades), load (one flow), delete (one flow).";
    const OUTPUT: &'static [&'static str] = &["action", "flows", "steps", "deleted"];
    type Args = FlowFamilyArgs;

    fn run<'a>(call: &'a Call<'a>, a: FlowFamilyArgs) -> Answer<'a> {
        Box::pin(std::future::ready(flow(call, a)))
    }
}

/// `reticle_flow_list`, a member of its family.
pub const FLOW_LIST: Registration = Registration::member::<FlowFamilyArgs>(
    ToolName::FlowList,
    "reticle_flow {action:\"list\"}: the saved flows with their grades.",
);

/// `reticle_flow_load`, a member of its family.
pub const FLOW_LOAD: Registration = Registration::member::<FlowFamilyArgs>(
    ToolName::FlowLoad,
    "reticle_flow {action:\"load\", name}: one saved flow.",
);

/// `reticle_flow_delete`, a member of its family.
pub const FLOW_DELETE: Registration = Registration::member::<FlowFamilyArgs>(
    ToolName::FlowDelete,
    "reticle_flow {action:\"delete\", name}: delete one saved flow.",
);

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
