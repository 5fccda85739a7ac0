//! The user-facing locator of an element an agent acted on by ref: what a person would call it,
//! found by asking the page (`inspect`, then `query` per candidate) for the first locator that
//! matches exactly this element. A ref is never a locator: an element no candidate singles out
//! is reported so, with the candidates tried. It also says whether the element is a password.
//!
//! It reads the page; it must not act on it nor keep what it found.

use serde_json::{Value, json};

use super::commands::ask;
use super::name_match::hold_to_name;
use super::refusal::Refusal;
use super::surface::args::Target;
use crate::bridge::Session;
use crate::wire::CommandName;

/// Roles that say nothing a user would name an element by.
const GENERIC_ROLES: &[&str] = &["", "generic", "none", "presentation", "group"];
/// Tags whose accessible name is their label.
const LABELLED_TAGS: &[&str] = &["input", "select", "textarea"];

/// An element as a user names it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Located {
    pub target: Target,
    /// The element is a password field: what is typed into it is a secret.
    pub secret: bool,
}

/// Why no user-facing locator singles the element out.
#[derive(Debug, Clone)]
pub(super) struct Unlocated {
    pub why: String,
    pub tried: Vec<Target>,
}

/// The candidate locators an element's description allows, best first.
fn candidates(element: &Value) -> Vec<Target> {
    let text = |key: &str| {
        element
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    let attribute = |key: &str| {
        element["attributes"]
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    let role = text("role").filter(|r| !GENERIC_ROLES.contains(&r.as_str()));
    let name = text("name");
    let tag = text("tag").unwrap_or_default();
    let mut out = Vec::new();
    if let (Some(role), Some(name)) = (&role, &name) {
        out.push(Target {
            role: Some(role.clone()),
            name: Some(name.clone()),
            ..Target::default()
        });
    }
    if LABELLED_TAGS.contains(&tag.as_str())
        && let Some(label) = attribute("aria-label").or_else(|| name.clone())
    {
        out.push(Target {
            label: Some(label),
            ..Target::default()
        });
    }
    if let Some(testid) = text("testid") {
        out.push(Target {
            testid: Some(testid),
            ..Target::default()
        });
    }
    if let Some(placeholder) = attribute("placeholder") {
        out.push(Target {
            placeholder: Some(placeholder),
            ..Target::default()
        });
    }
    if let Some(words) = text("text").or(name) {
        out.push(Target {
            text: Some(words),
            ..Target::default()
        });
    }
    out
}

/// Whether the page's description is of a password field.
fn is_password(element: &Value) -> bool {
    element["attributes"]
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.eq_ignore_ascii_case("password"))
}

/// Whether `target` matches the element `element_ref` and no other.
async fn singles_out(
    session: &Session,
    target: &Target,
    element_ref: &str,
) -> Result<bool, Refusal> {
    let mut criteria = target.criteria();
    criteria.insert("limit".into(), json!(2));
    let found = ask(session, CommandName::Query, Value::Object(criteria)).await?;
    let mut elements = found["elements"].clone();
    let name = target
        .name
        .as_deref()
        .filter(|_| target.exact != Some(false));
    let held = hold_to_name(&mut elements, name);
    let elements = elements.as_array().cloned().unwrap_or_default();
    let count = found["count"]
        .as_u64()
        .filter(|_| !held)
        .unwrap_or(elements.len() as u64)
        .max(elements.len() as u64);
    Ok(count == 1 && elements[0]["ref"] == element_ref)
}

/// The best user-facing locator of the element `element_ref` on `session`'s page; `preferred`
/// (the agent's own target) is tried first.
pub(super) async fn locate(
    session: &Session,
    element_ref: &str,
    preferred: Option<Target>,
) -> Result<Result<Located, Unlocated>, Refusal> {
    let element = ask(session, CommandName::Inspect, json!({ "ref": element_ref })).await?;
    if let Some(error) = element.get("error").and_then(Value::as_str) {
        return Ok(Err(Unlocated {
            why: format!("the page could not describe {element_ref}: {error}"),
            tried: Vec::new(),
        }));
    }
    let secret = is_password(&element);
    let tried: Vec<Target> = preferred.into_iter().chain(candidates(&element)).collect();
    for target in &tried {
        if singles_out(session, target, element_ref).await? {
            return Ok(Ok(Located {
                target: target.clone(),
                secret,
            }));
        }
    }
    Ok(Err(Unlocated {
        why: format!(
            "no role and name, label, testid, placeholder or text the page reports for {element_ref} matches it alone"
        ),
        tried,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_prefer_what_a_user_reads_and_skip_generic_roles() {
        let field = json!({"ref": "e3", "role": "textbox", "name": "Username", "tag": "input",
                           "testid": "login-user", "attributes": {"placeholder": "ann"}});
        let kinds: Vec<Value> = candidates(&field).iter().map(|t| json!(t)).collect();
        assert_eq!(
            kinds,
            [
                json!({"role": "textbox", "name": "Username"}),
                json!({"label": "Username"}),
                json!({"testid": "login-user"}),
                json!({"placeholder": "ann"}),
                json!({"text": "Username"}),
            ]
        );
        let div =
            json!({"ref": "e4", "role": "generic", "name": "", "tag": "div", "text": "plain"});
        assert_eq!(
            candidates(&div)
                .iter()
                .map(|t| json!(t))
                .collect::<Vec<_>>(),
            [json!({"text": "plain"})]
        );
        assert!(is_password(&json!({"attributes": {"type": "Password"}})));
        assert!(!is_password(&json!({"attributes": {"type": "text"}})));
    }
}
