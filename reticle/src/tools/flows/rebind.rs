//! Rebinding a flow step's target: given the target a step used (that matches nothing now) and
//! the elements the page shows now, ranks the ones that could be the same control and names the
//! new target as a user would, never by ref ([`Ranking`]: one clear best, several, or none).
//!
//! It only ranks; it must not drive a page nor decide that a rebinding holds (the step's
//! consequence, checked by heal, decides that).

use serde::Serialize;
use serde_json::{Value, json};

use crate::tools::surface::args::{Action, Target};

/// The least similarity a candidate must have to be proposed at all.
pub const LEAST_SIMILARITY: f64 = 0.6;
/// How close to the best another candidate must be for the choice to be ambiguous.
pub const AMBIGUITY_MARGIN: f64 = 0.1;
/// The CSS selector heal reads the page's controls with (a search, never stored in a flow).
pub const CONTROLS: &str = "button, a[href], input, select, textarea, summary, img[alt], [role], [data-testid], [data-test-id], [data-test], [aria-label], [contenteditable]";

/// The roles heal reads the page's controls by when the page's SDK answers no CSS query
/// (protocol 1, as the published 2.0.0 speaks it, queries by role but not by selector).
pub const CONTROL_ROLES: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "switch",
    "combobox",
    "listbox",
    "option",
    "slider",
    "spinbutton",
    "tab",
    "menuitem",
];

/// One element that could be the step's control now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    /// The target the step would use: named as a user names it.
    pub target: Target,
    /// How similar it is to the old target (0 to 1).
    pub similarity: f64,
    /// What the page says of it (role, name, testid...).
    pub element: Value,
}

/// What the page offers for a step's old target.
#[derive(Debug, Clone, PartialEq)]
pub enum Ranking {
    One(Box<Candidate>),
    Several(Vec<Candidate>),
    None,
}

/// Ranks `elements` as the new home of `old`, for `action`.
pub fn rank(old: &Target, action: Action, elements: &[Value]) -> Ranking {
    let mut scored: Vec<Candidate> = elements
        .iter()
        .filter(|e| suits(action, e))
        .filter_map(|e| {
            let similarity = similarity_to(old, e)?;
            (similarity >= LEAST_SIMILARITY).then(|| Candidate {
                target: target_for(old, e),
                similarity: (similarity * 100.0).round() / 100.0,
                element: summary(e),
            })
        })
        .filter(|c| &c.target != old)
        .collect();
    scored.sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
    let Some(best) = scored.first().map(|c| c.similarity) else {
        return Ranking::None;
    };
    let close: Vec<Candidate> = scored
        .into_iter()
        .filter(|c| c.similarity >= best - AMBIGUITY_MARGIN)
        .collect();
    match <[Candidate; 1]>::try_from(close) {
        Ok([one]) => Ranking::One(Box::new(one)),
        Err(several) => Ranking::Several(several),
    }
}

/// Whether an element can take `action` (a fill needs a field, a check a checkbox...).
fn suits(action: Action, element: &Value) -> bool {
    let role = element["role"].as_str().unwrap_or("");
    let tag = element["tag"].as_str().unwrap_or("");
    match action {
        Action::Fill | Action::Type | Action::Clear => {
            element.get("value").is_some()
                || matches!(role, "textbox" | "searchbox" | "combobox" | "spinbutton")
        }
        Action::Check | Action::Uncheck => {
            matches!(role, "checkbox" | "radio" | "switch" | "menuitemcheckbox")
        }
        Action::Select => tag == "select" || matches!(role, "combobox" | "listbox"),
        _ => true,
    }
}

/// How similar an element is to the old target: the mean similarity of each name the target
/// gave (testid to testid; name, label, text, placeholder, alt to what the page calls it);
/// `None` when the target gave a role the element does not have, or no name to compare.
fn similarity_to(old: &Target, element: &Value) -> Option<f64> {
    let field = |k: &str| element[k].as_str().unwrap_or("");
    if let Some(role) = &old.role
        && !role.trim().eq_ignore_ascii_case(field("role"))
    {
        return None;
    }
    let called = |k: &str| {
        let text = field(k);
        if text.is_empty() { field("name") } else { text }
    };
    let pairs = [
        (&old.testid, field("testid")),
        (&old.name, field("name")),
        (&old.label, field("name")),
        (&old.text, called("text")),
        (&old.placeholder, field("name")),
        (&old.alt, field("name")),
    ];
    let scores: Vec<f64> = pairs
        .iter()
        .filter_map(|(given, now)| given.as_deref().map(|g| similarity(g, now)))
        .collect();
    (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64)
}

/// The target for an element, in the terms the old target used where the page has them.
fn target_for(old: &Target, element: &Value) -> Target {
    let field = |k: &str| {
        element[k]
            .as_str()
            .filter(|s| !s.trim().is_empty())
            .map(str::to_string)
    };
    if old.testid.is_some()
        && let Some(testid) = field("testid")
    {
        return Target {
            testid: Some(testid),
            ..Target::default()
        };
    }
    if old.label.is_some() && field("name").is_some() {
        return Target {
            label: field("name"),
            ..Target::default()
        };
    }
    if old.text.is_some()
        && let Some(text) = field("text").or_else(|| field("name"))
    {
        return Target {
            text: Some(text),
            ..Target::default()
        };
    }
    match (field("role"), field("name"), field("testid")) {
        (Some(role), Some(name), _) => Target {
            role: Some(role),
            name: Some(name),
            ..Target::default()
        },
        (_, _, Some(testid)) => Target {
            testid: Some(testid),
            ..Target::default()
        },
        (role, name, None) => Target {
            role,
            name,
            ..Target::default()
        },
    }
}

/// What a candidate's answer shows of its element.
fn summary(element: &Value) -> Value {
    let mut out = json!({});
    for key in ["role", "name", "testid", "text", "tag"] {
        if let Some(v) = element.get(key).filter(|v| !v.is_null()) {
            out[key] = v.clone();
        }
    }
    out
}

/// How alike two names are, 0 to 1: the better of word overlap and letter-pair overlap, after
/// case and punctuation are set aside.
pub fn similarity(a: &str, b: &str) -> f64 {
    let (a, b) = (a.trim().to_lowercase(), b.trim().to_lowercase());
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    if a == b {
        return 1.0;
    }
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let pairs = |s: &str| -> Vec<(char, char)> {
        let chars: Vec<char> = s.chars().collect();
        chars.windows(2).map(|w| (w[0], w[1])).collect()
    };
    let overlap = |x: &[String], y: &[String]| {
        let shared = x.iter().filter(|w| y.contains(w)).count();
        let union = x.len() + y.iter().filter(|w| !x.contains(w)).count();
        if union == 0 {
            0.0
        } else {
            shared as f64 / union as f64
        }
    };
    let (pa, pb) = (pairs(&a), pairs(&b));
    let dice = if pa.is_empty() || pb.is_empty() {
        0.0
    } else {
        let shared = pa.iter().filter(|p| pb.contains(p)).count();
        (2 * shared) as f64 / (pa.len() + pb.len()) as f64
    };
    overlap(&words(&a), &words(&b)).max(dice).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn testid(id: &str) -> Target {
        Target {
            testid: Some(id.into()),
            ..Target::default()
        }
    }

    fn button(testid: &str, name: &str) -> Value {
        json!({"ref": format!("e-{testid}"), "role": "button", "name": name, "testid": testid, "tag": "button"})
    }

    fn page() -> Vec<Value> {
        vec![
            json!({"ref": "e1", "role": "textbox", "name": "Username", "testid": "login-user", "tag": "input", "value": ""}),
            json!({"ref": "e2", "role": "textbox", "name": "Password", "testid": "login-password", "tag": "input", "value": ""}),
            json!({"ref": "e3", "role": "form", "name": "Login", "testid": "login-form", "tag": "form"}),
            json!({"ref": "e4", "role": "status", "name": "", "testid": "login-status", "tag": "p"}),
            button("counter-increment", "Increment"),
            button("log-error", "Log a console error"),
        ]
    }

    #[test]
    fn a_renamed_testid_is_proposed_in_the_same_terms() {
        let mut elements = page();
        elements.push(button("login-submit-v2", "Sign in"));
        let Ranking::One(found) = rank(&testid("login-submit"), Action::Click, &elements) else {
            panic!("no single candidate");
        };
        assert_eq!(found.target, testid("login-submit-v2"));
        assert!(found.similarity > 0.8, "{found:?}");
        assert_eq!(found.element["name"], "Sign in");
    }

    #[test]
    fn two_equally_likely_controls_are_several_and_none_is_chosen() {
        let mut elements = page();
        elements.push(button("login-submit-v2", "Sign in"));
        elements.push(button("login-submit-v3", "Sign in"));
        let Ranking::Several(listed) = rank(&testid("login-submit"), Action::Click, &elements)
        else {
            panic!("an ambiguous page gave one candidate");
        };
        assert_eq!(listed.len(), 2);
    }

    #[test]
    fn nothing_alike_is_none_and_a_fill_only_considers_fields() {
        assert_eq!(
            rank(&testid("checkout-pay"), Action::Click, &page()),
            Ranking::None
        );
        let Ranking::One(found) = rank(&testid("login-username"), Action::Fill, &page()) else {
            panic!("the username field was not found");
        };
        assert_eq!(found.target, testid("login-user"));
        let reworded = Target {
            role: Some("button".into()),
            name: Some("Increment counter".into()),
            ..Target::default()
        };
        let Ranking::One(found) = rank(&reworded, Action::Click, &page()) else {
            panic!("the reworded button was not found");
        };
        assert_eq!(
            (found.target.role.as_deref(), found.target.name.as_deref()),
            (Some("button"), Some("Increment"))
        );
    }

    #[test]
    fn similarity_is_symmetric_bounded_and_exact_for_equals() {
        assert_eq!(similarity("Sign in", "sign in"), 1.0);
        assert_eq!(similarity("", "x"), 0.0);
        let (ab, ba) = (
            similarity("login-submit", "login-submit-v2"),
            similarity("login-submit-v2", "login-submit"),
        );
        assert_eq!(ab, ba);
        assert!(ab > 0.8 && ab < 1.0, "{ab}");
        assert!(similarity("login-submit", "counter-increment") < LEAST_SIMILARITY);
    }
}
