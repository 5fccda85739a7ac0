//! The flow: a regression an agent can re-run without a model. A flow is a name, a start path,
//! optional `paths` globs (the pages it covers) and steps, each naming its element the way a
//! user does ([`Target`], never a ref), its action and the consequence that must follow. Its
//! [`Grade`] is computed, never stored as truth; typed secrets are stored as `{"fromEnv": NAME}`.
//!
//! It checks and shapes flows; it must not read or write files nor drive a page.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::redact;
use super::step::{ActionArgs, FlowStep, Target};
use crate::store::workspace::check_name;
use crate::verdict::predicate::Predicate;

/// The placeholder field a secret value is stored under.
pub const FROM_ENV: &str = "fromEnv";
/// The prefix of the environment variable a secret is read from at replay.
pub const SECRET_ENV_PREFIX: &str = "RETICLE_SECRET_";
/// The most steps one flow may have.
pub const MAX_STEPS: usize = 200;

/// A flow as saved.
#[derive(Debug, Clone, PartialEq)]
pub struct Flow {
    pub name: String,
    pub start_path: String,
    pub paths: Vec<String>,
    pub steps: Vec<FlowStep>,
}

/// How much a flow's replay can prove.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Grade {
    /// At least one step's consequence is something the app did (a signal, a request, a state,
    /// a route...), and every step's consequence is checked.
    Asserted,
    /// Every consequence only asks that something is on the page.
    PresenceOnly,
    /// No step says what must follow: a replay can show the steps ran, never that the app works.
    AssertionFree,
}

/// A flow's grade with the counts it rests on and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Grading {
    pub grade: Grade,
    pub total_steps: usize,
    pub consequence_steps: usize,
    pub presence_only_steps: usize,
    pub why: String,
}

/// A secret the flow reads at replay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SecretSource {
    /// The step (1-based) it is typed in.
    pub step: usize,
    /// The environment variable (or `secrets` replay argument) it comes from.
    pub env: String,
}

impl Flow {
    /// Checks a flow as given and shapes it for storage: names, start path, targets and
    /// predicates checked; secrets replaced by placeholders; `confirmDangerous` dropped.
    pub fn checked(
        name: String,
        start_path: String,
        paths: Vec<String>,
        steps: Vec<FlowStep>,
    ) -> Result<(Self, Vec<SecretSource>), String> {
        check_name(&name).map_err(|e| format!("field `name`: {e}"))?;
        if !start_path.starts_with('/') {
            return Err(format!(
                "field `startPath`: '{start_path}' must be a path on the app, starting with '/'"
            ));
        }
        if steps.is_empty() || steps.len() > MAX_STEPS {
            return Err(format!(
                "field `steps`: a flow has 1 to {MAX_STEPS} steps, not {}",
                steps.len()
            ));
        }
        let mut flow = Flow {
            name,
            start_path,
            paths,
            steps,
        };
        for (i, step) in flow.steps.iter().enumerate() {
            if !names_an_element(&step.target) {
                return Err(format!(
                    "field `steps[{i}].target`: name the element as a user would (testid, role and name, label, text, placeholder or alt); a flow never keeps a ref or css alone"
                ));
            }
            if let Some(until) = &step.until {
                crate::verdict::parse(&until.0)
                    .map_err(|e| format!("field `steps[{i}].until`: {e}"))?;
            }
        }
        let secrets = flow.hide_secrets();
        Ok((flow, secrets))
    }

    /// Reads a stored flow document back (its grade is recomputed, never trusted).
    pub fn from_document(document: &Value) -> Result<Self, String> {
        let field = |k: &str| document.get(k).cloned().unwrap_or(Value::Null);
        let name = field("name").as_str().map(str::to_string);
        let start_path = field("startPath").as_str().map(str::to_string);
        let (Some(name), Some(start_path)) = (name, start_path) else {
            return Err("the flow file has no `name` or `startPath`".into());
        };
        let paths: Vec<String> = serde_json::from_value(field("paths")).unwrap_or_default();
        let steps: Vec<FlowStep> =
            serde_json::from_value(field("steps")).map_err(|e| format!("its steps: {e}"))?;
        Ok(Flow {
            name,
            start_path,
            paths,
            steps,
        })
    }

    /// The document stored for this flow (the workspace adds the format).
    pub fn to_document(&self) -> Map<String, Value> {
        let mut document = Map::new();
        document.insert("name".into(), json!(self.name));
        document.insert("startPath".into(), json!(self.start_path));
        if !self.paths.is_empty() {
            document.insert("paths".into(), json!(self.paths));
        }
        document.insert("steps".into(), json!(self.steps));
        document.insert("grade".into(), json!(self.grading()));
        document.insert("secrets".into(), json!(self.secret_sources()));
        document
    }

    /// How much a replay of this flow can prove.
    pub fn grading(&self) -> Grading {
        let mut consequence_steps = 0;
        let mut presence_only_steps = 0;
        for step in &self.steps {
            match step.until.as_ref().map(|u| crate::verdict::parse(&u.0)) {
                Some(Ok(p)) if p.presence_only() => presence_only_steps += 1,
                Some(Ok(Predicate::Settled { .. })) | None => {}
                Some(_) => consequence_steps += 1,
            }
        }
        let (grade, why) = if consequence_steps > 0 {
            (
                Grade::Asserted,
                format!(
                    "{consequence_steps} of {} steps check a consequence of the action; the others must settle",
                    self.steps.len()
                ),
            )
        } else if presence_only_steps > 0 {
            (
                Grade::PresenceOnly,
                "every check only asks that something is on the page, not that the app did something: add an `until` with a signal, net, state or route consequence".to_string(),
            )
        } else {
            (
                Grade::AssertionFree,
                "no step says what must follow it, so a replay can show the steps ran but never that the app worked: add an `until` to the steps that matter".to_string(),
            )
        };
        Grading {
            grade,
            total_steps: self.steps.len(),
            consequence_steps,
            presence_only_steps,
            why,
        }
    }

    /// The secrets this flow reads at replay.
    pub fn secret_sources(&self) -> Vec<SecretSource> {
        self.steps
            .iter()
            .enumerate()
            .filter_map(|(i, step)| {
                let args = step.args.as_ref()?;
                [args.value.as_ref()]
                    .into_iter()
                    .flatten()
                    .find_map(placeholder_env)
                    .map(|env| SecretSource { step: i + 1, env })
            })
            .collect()
    }

    /// Replaces what is typed into a secret field by a placeholder, redacts secret-named fields
    /// in consequences, drops `confirmDangerous`; returns where each secret comes from.
    fn hide_secrets(&mut self) -> Vec<SecretSource> {
        for (i, step) in self.steps.iter_mut().enumerate() {
            if let Some(until) = step.until.as_mut() {
                redact::secret_fields(&mut until.0);
            }
            let secret_target = redact::mentions_a_secret(&json!(step.target));
            let Some(args) = step.args.as_mut() else {
                continue;
            };
            args.confirm_dangerous = None;
            if !secret_target {
                continue;
            }
            hide_typed_value(args, &step.target, i + 1);
        }
        self.secret_sources()
    }
}

/// Replaces what `args` types (a `value`, or a `type` action's `text`) by the placeholder of the
/// secret typed into `target` at `step` (1-based); a placeholder already there is kept.
pub fn hide_typed_value(args: &mut ActionArgs, target: &Target, step: usize) {
    let env = secret_env(target, step);
    if args
        .value
        .as_ref()
        .is_some_and(|v| placeholder_env(v).is_none())
    {
        args.value = Some(json!({ FROM_ENV: env }));
    }
    if args.text.is_some() {
        args.text = None;
        args.value = Some(json!({ FROM_ENV: env }));
    }
}

/// Whether a target names an element the way a user would (not by css alone).
pub fn names_an_element(target: &Target) -> bool {
    [
        &target.testid,
        &target.role,
        &target.label,
        &target.text,
        &target.placeholder,
        &target.alt,
    ]
    .iter()
    .any(|f| f.as_deref().is_some_and(|v| !v.trim().is_empty()))
}

/// The environment variable a secret placeholder names.
pub fn placeholder_env(value: &Value) -> Option<String> {
    let map = value.as_object()?;
    (map.len() == 1)
        .then(|| map.get(FROM_ENV)?.as_str().map(str::to_string))
        .flatten()
}

/// The variable a secret typed into `target` is read from: `RETICLE_SECRET_<LABEL>`.
fn secret_env(target: &Target, step: usize) -> String {
    let word = [
        &target.label,
        &target.name,
        &target.placeholder,
        &target.testid,
        &target.text,
    ]
    .into_iter()
    .flatten()
    .next()
    .map(|w| {
        w.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect::<String>()
    })
    .filter(|w| w.chars().any(|c| c.is_ascii_alphanumeric()))
    .unwrap_or_else(|| format!("STEP{step}"));
    format!("{SECRET_ENV_PREFIX}{word}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(v: Value) -> FlowStep {
        serde_json::from_value(v).unwrap()
    }

    fn sign_in(last_until: Option<Value>) -> Vec<FlowStep> {
        let mut submit = json!({"target": {"role": "button", "name": "Sign in"}, "action": "click", "args": {"confirmDangerous": true}});
        if let Some(until) = last_until {
            submit["until"] = until;
        }
        vec![
            step(
                json!({"target": {"label": "Email"}, "action": "fill", "args": {"value": "ada@example.com"}}),
            ),
            step(
                json!({"target": {"label": "Password"}, "action": "fill", "args": {"value": "hunter2"}}),
            ),
            step(submit),
        ]
    }

    #[test]
    fn a_password_is_stored_as_a_placeholder_and_confirm_dangerous_is_dropped() {
        let (flow, secrets) = Flow::checked(
            "sign-in".into(),
            "/login".into(),
            vec![],
            sign_in(Some(json!({"kind": "signal", "name": "login.succeeded"}))),
        )
        .unwrap();
        let text = Value::Object(flow.to_document()).to_string();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("ada@example.com"));
        assert!(!text.contains("confirmDangerous"));
        assert_eq!(
            secrets,
            [SecretSource {
                step: 2,
                env: "RETICLE_SECRET_PASSWORD".into()
            }]
        );
        assert_eq!(flow.grading().grade, Grade::Asserted);
        let back = Flow::from_document(&Value::Object(flow.to_document())).unwrap();
        assert_eq!(back, flow);
    }

    #[test]
    fn grades_follow_the_consequences() {
        let grade = |until: Option<Value>| {
            Flow::checked("f".into(), "/".into(), vec![], sign_in(until))
                .unwrap()
                .0
                .grading()
        };
        let free = grade(None);
        assert_eq!(free.grade, Grade::AssertionFree);
        assert!(free.why.contains("never that the app worked"));
        assert_eq!(
            grade(Some(json!({"kind": "settled"}))).grade,
            Grade::AssertionFree
        );
        assert_eq!(
            grade(Some(json!({"kind": "text", "contains": "Welcome"}))).grade,
            Grade::PresenceOnly
        );
        let asserted = grade(Some(
            json!({"kind": "net", "urlContains": "/api/login", "status": 200}),
        ));
        assert_eq!(
            (asserted.grade, asserted.consequence_steps),
            (Grade::Asserted, 1)
        );
    }

    #[test]
    fn a_flow_without_user_names_or_with_a_bad_predicate_is_refused() {
        let css_only = vec![step(json!({"target": {"css": "#go"}, "action": "click"}))];
        let e = Flow::checked("f".into(), "/".into(), vec![], css_only).unwrap_err();
        assert!(e.contains("steps[0].target"), "{e}");
        let bad = vec![step(
            json!({"target": {"testid": "go"}, "action": "click", "until": {"kind": "nope"}}),
        )];
        let e = Flow::checked("f".into(), "/".into(), vec![], bad).unwrap_err();
        assert!(e.contains("steps[0].until"), "{e}");
        let e = Flow::checked("../f".into(), "/".into(), vec![], sign_in(None)).unwrap_err();
        assert!(e.contains("name"), "{e}");
        let e = Flow::checked("f".into(), "login".into(), vec![], sign_in(None)).unwrap_err();
        assert!(e.contains("startPath"), "{e}");
    }
}
