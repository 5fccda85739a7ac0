//! A recording the page sent, read as flow steps: our SDK's and the published SDK's shapes, each
//! element as a user names it (an act naming none becomes a note) and typed secrets as
//! placeholders. Shared by record and flow_save_recorded; it must not store anything.

use serde_json::{Map, Value, json};

use crate::flow::model::hide_typed_value;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::{Action, ActionArgs, FlowStep, PredicateArg, Target};

/// Why a recording with no steps saves no flow (not an error: nothing was done to save).
pub(super) const NOTHING_TO_SAVE: &str =
    "the recording has no steps, so there is no flow to save (a flow has at least one step)";

/// What the published recorder writes in place of a sensitive field's value.
const PUBLISHED_REDACTED: &str = "[REDACTED]";

/// The refusal for a recording some of whose acts could not be named as a user would.
pub(super) fn unnamed_acts(count: usize, steps: &Value, notes: &[Value]) -> Refusal {
    Refusal::new(
        format!(
            "{count} recorded acts could not be named as a user would (see `notes`); no flow was saved"
        ),
        "save the steps you want with reticle_flow_save, naming the missing elements by testid, role and name or label",
    )
    .with("steps", steps.clone())
    .with("notes", json!(notes))
}

/// The steps of a page's `flow.recorded` data (`{name, id?, flow:{startPath?, steps}}`), each
/// step either Reticle's SDK's (`target`, `action`, `args`, `until`, `sensitive`) or the
/// published recorder's (`anchor` testid or role, `action`, `args`); a sensitive value becomes
/// its placeholder. Steps whose element has no user-facing name are returned as notes.
pub(super) fn recorded_steps(
    data: &Map<String, Value>,
) -> Result<(Vec<FlowStep>, Vec<Value>), String> {
    let steps = data
        .get("flow")
        .and_then(|f| f.get("steps"))
        .and_then(Value::as_array)
        .ok_or("it has no `flow.steps` list")?;
    let mut out = Vec::new();
    let mut notes = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let field = |key: &str| step.get(key).cloned().unwrap_or(Value::Null);
        let action: Action = serde_json::from_value(field("action"))
            .map_err(|e| format!("step {}: `action`: {e}", i + 1))?;
        let Some(target) = target_of(step)? else {
            notes.push(json!({
                "step": i + 1,
                "act": action.as_str(),
                "why": "the page could not name this element as a user would",
                "tried": [],
            }));
            continue;
        };
        let mut args: Option<ActionArgs> = match field("args") {
            Value::Null => None,
            other => Some(
                serde_json::from_value(other)
                    .map_err(|e| format!("step {}: `args`: {e}", i + 1))?,
            ),
        };
        let sensitive = step.get("sensitive") == Some(&Value::Bool(true))
            || args
                .as_ref()
                .and_then(|a| a.value.as_ref())
                .is_some_and(|v| v == PUBLISHED_REDACTED);
        if sensitive {
            let a = args.get_or_insert_default();
            if a.value.is_none() && a.text.is_none() {
                a.value = Some(Value::Null);
            }
            hide_typed_value(a, &target, out.len() + 1);
        }
        let until = match field("until") {
            Value::Null => None,
            other => Some(PredicateArg(other)),
        };
        out.push(FlowStep {
            target,
            action,
            args,
            until,
            timeout_ms: None,
        });
    }
    Ok((out, notes))
}

/// A recorded step's element as a user names it; `None` when the page could not name it.
fn target_of(step: &Value) -> Result<Option<Target>, String> {
    if let Some(target) = step.get("target") {
        let target: Target =
            serde_json::from_value(target.clone()).map_err(|e| format!("a `target`: {e}"))?;
        return Ok(crate::flow::model::names_an_element(&target).then_some(target));
    }
    let anchor = step.get("anchor").cloned().unwrap_or(Value::Null);
    let text = |key: &str| anchor.get(key).and_then(Value::as_str).map(str::to_string);
    Ok(match text("kind").as_deref() {
        Some("testid") => text("value").map(|testid| Target {
            testid: Some(testid),
            ..Target::default()
        }),
        Some("role") if text("role").is_some_and(|r| r != "unresolved") => Some(Target {
            role: text("role"),
            name: text("name"),
            ..Target::default()
        }),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recording_of_either_sdk_becomes_steps_with_secrets_as_placeholders() {
        let ours = json!({"name": "sign-in", "id": "r1", "flow": {"startPath": "/", "steps": [
            {"target": {"label": "Username"}, "action": "fill", "args": {"value": "ann"}},
            {"target": {"label": "Password"}, "action": "fill", "sensitive": true},
            {"target": {"role": "button", "name": "Sign in"}, "action": "click",
             "until": {"kind": "signal", "name": "login.succeeded"}},
            {"target": {"css": "#x"}, "action": "click"}
        ]}});
        let (steps, notes) = recorded_steps(ours.as_object().unwrap()).unwrap();
        assert_eq!(steps.len(), 3);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert_eq!(
            json!(steps[1].args),
            json!({"value": {"fromEnv": "RETICLE_SECRET_PASSWORD"}})
        );
        assert!(steps[2].until.is_some());

        let published = json!({"name": "x", "flow": {"version": 1, "steps": [
            {"tool": "reticle_act", "anchor": {"kind": "testid", "value": "login-password"},
             "action": "fill", "args": {"value": "[REDACTED]"}},
            {"tool": "reticle_act", "anchor": {"kind": "role", "role": "unresolved"},
             "action": "click", "degraded": true}
        ]}});
        let (steps, notes) = recorded_steps(published.as_object().unwrap()).unwrap();
        assert_eq!(
            json!(steps[0]),
            json!({"target": {"testid": "login-password"}, "action": "fill",
                   "args": {"value": {"fromEnv": "RETICLE_SECRET_LOGIN_PASSWORD"}}})
        );
        assert_eq!(notes.len(), 1);
        assert!(recorded_steps(json!({"name": "x"}).as_object().unwrap()).is_err());
    }
}
