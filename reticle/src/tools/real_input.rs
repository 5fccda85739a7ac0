//! Real input on a tab Reticle drives: the element scrolled into view (by the page's SDK),
//! looked at (its box, whether another element covers it, whether it is disabled or looks
//! destructive), then DevTools mouse and keyboard events at its box, so the page sees trusted
//! events as from a person. It says why an act fell back to synthetic; it must not judge.

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, DispatchMouseEventParams, DispatchMouseEventType,
    InsertTextParams, MouseButton,
};
use serde_json::{Value, json};

use super::commands::{COMMAND_BOUND, Outcome, command};
use super::driven::DEVTOOLS_BOUND;
use crate::bridge::Session;
use crate::drive::Drives;
use crate::flow::step::{Action, ActionArgs};
use crate::wire::CommandName;

/// The most characters `type` sends key by key.
const MAX_TYPED: usize = 2_000;

/// The words that make an element look destructive: sdk/src/commands/act.js's `DANGER_WORDS`,
/// which a unit test keeps equal, so a real click is guarded as the SDK's synthetic one is.
pub const DANGER_WORDS: &[&str] = &[
    "delete",
    "remove",
    "destroy",
    "drop",
    "erase",
    "purge",
    "wipe",
    "discard",
    "revoke",
    "terminate",
    "deactivate",
    "unsubscribe",
];

/// Does `action` on element `r` with real input when `session` is a driven tab and the action
/// has a real form; `Err` says why it must go through the SDK instead (synthetic).
pub async fn act(
    drives: &Drives,
    session: &Session,
    r: &str,
    action: Action,
    args: Option<&ActionArgs>,
) -> Result<Outcome, String> {
    let Some(tab) = drives.tab(session.id()).await else {
        return Err("a person's tab: Reticle has no DevTools there, so input is synthetic".into());
    };
    if !matches!(
        action,
        Action::Click
            | Action::Dblclick
            | Action::Hover
            | Action::Fill
            | Action::Type
            | Action::Press
    ) {
        return Err(format!(
            "{} has no real-input form; the SDK dispatched it",
            action.as_str()
        ));
    }
    let key = match (action, args.and_then(|a| a.key.as_deref())) {
        (Action::Press, Some(key)) => match key_of(key) {
            Some(key) => Some(key),
            None => {
                return Err(format!(
                    "the key '{key}' has no real-input form here; the SDK pressed it"
                ));
            }
        },
        (Action::Press, None) => return Err("press needs args.key".into()),
        _ => None,
    };
    let scrolled = command(
        session,
        CommandName::Act,
        json!({ "ref": r, "action": Action::ScrollIntoView.as_str(), "args": {} }),
        COMMAND_BOUND,
    )
    .await;
    if !matches!(scrolled, Outcome::Done(_)) {
        return Ok(scrolled);
    }
    let looked = command(
        session,
        CommandName::Inspect,
        json!({ "ref": r }),
        COMMAND_BOUND,
    )
    .await;
    let Outcome::Done(element) = looked else {
        return Ok(looked);
    };
    if let Some(why) = refusal_of(&element, action, args, key.as_ref()) {
        return Ok(Outcome::Refused(why));
    }
    let Some((x, y)) = centre(&element) else {
        return Ok(Outcome::Refused(format!(
            "ref '{r}' has no box on screen: a real click would hit nothing, so nothing was done"
        )));
    };
    let page = match tab.page().await {
        Ok(page) => page,
        Err(why) => return Ok(Outcome::Lost(why)),
    };
    let done = tokio::time::timeout(DEVTOOLS_BOUND * 2, async {
        match action {
            Action::Hover => mouse(&page, DispatchMouseEventType::MouseMoved, x, y, 0).await,
            Action::Click => click(&page, x, y, 1).await,
            Action::Dblclick => {
                click(&page, x, y, 1).await?;
                click(&page, x, y, 2).await
            }
            Action::Fill => {
                click(&page, x, y, 1).await?;
                select_all(&page).await?;
                let value = args
                    .and_then(|a| a.value.as_ref())
                    .map(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| v.to_string())
                    })
                    .unwrap_or_default();
                if value.is_empty() {
                    press(&page, &key_of("Backspace").unwrap_or_default()).await
                } else {
                    insert(&page, &value).await
                }
            }
            Action::Type => {
                click(&page, x, y, 1).await?;
                let text = args.and_then(|a| a.text.clone()).unwrap_or_default();
                for ch in text.chars().take(MAX_TYPED) {
                    press(&page, &Key::char(ch)).await?;
                }
                Ok(())
            }
            Action::Press => {
                click(&page, x, y, 1).await?;
                press(&page, key.as_ref().unwrap_or(&Key::default())).await
            }
            _ => Ok(()),
        }
    })
    .await;
    Ok(match done {
        Ok(Ok(())) => Outcome::Done(json!({ "dispatched": true })),
        Ok(Err(why)) => Outcome::Lost(format!("the driven tab's DevTools link failed: {why}")),
        Err(_) => Outcome::TimedOut(DEVTOOLS_BOUND * 2),
    })
}

/// Why the inspected `element` must not get real input: disabled, covered by another element
/// (the one a real click would hit), or destructive without `confirmDangerous`.
fn refusal_of(
    element: &Value,
    action: Action,
    args: Option<&ActionArgs>,
    key: Option<&Key>,
) -> Option<String> {
    let label = label_of(element);
    let disabled = element["states"]
        .as_array()
        .is_some_and(|s| s.iter().any(|v| v == "disabled"));
    if disabled && action != Action::Hover {
        return Some(format!("{label} is disabled"));
    }
    if element["occluded"] == true {
        let by = element["occludedBy"].as_str().unwrap_or("another element");
        return Some(format!(
            "{label} is covered by {by}: a real {} would hit that element, so nothing was done",
            action.as_str()
        ));
    }
    let confirmed = args.and_then(|a| a.confirm_dangerous) == Some(true);
    let pressing = key.is_some_and(|k| k.key == "Enter" || k.key == " ");
    let risky = matches!(action, Action::Click | Action::Dblclick) || pressing;
    if risky && !confirmed && looks_destructive(element) {
        return Some(format!(
            "potentially destructive action blocked ({} {label}); retry with args.confirmDangerous=true",
            if pressing {
                "pressing a key on"
            } else {
                "clicking"
            }
        ));
    }
    None
}

fn label_of(element: &Value) -> String {
    let role = element["role"].as_str().unwrap_or("element");
    match element["name"].as_str().filter(|n| !n.is_empty()) {
        Some(name) => format!("{role} \"{name}\""),
        None => role.to_string(),
    }
}

/// Whether an inspected element's name, test id, text, id or aria-label, or its form's action
/// and text for a submit button, holds a destructive word.
pub fn looks_destructive(element: &Value) -> bool {
    let attrs = &element["attributes"];
    let mut text = String::new();
    for part in [
        &element["name"],
        &element["testid"],
        &element["text"],
        &attrs["id"],
        &attrs["aria-label"],
        &attrs["action"],
    ] {
        if let Some(s) = part.as_str() {
            text.push(' ');
            text.push_str(&split_camel(s));
        }
    }
    let submit = element["tag"] == "button"
        && attrs["type"]
            .as_str()
            .is_none_or(|t| t.eq_ignore_ascii_case("submit"));
    if submit && let Some(form) = element["formText"].as_str() {
        text.push(' ');
        text.push_str(&split_camel(form));
    }
    if submit && let Some(action) = element["formAction"].as_str() {
        text.push(' ');
        text.push_str(&split_camel(action));
    }
    let text = text.to_lowercase();
    let bytes = text.as_bytes();
    DANGER_WORDS.iter().any(|word| {
        text.match_indices(word).any(|(at, _)| {
            let before = at == 0 || !bytes[at - 1].is_ascii_lowercase();
            let after = bytes
                .get(at + word.len())
                .is_none_or(|b| !b.is_ascii_lowercase());
            before && after
        })
    })
}

/// `deleteAll` as `delete All`, as the SDK reads names.
fn split_camel(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    let mut previous_lower = false;
    for ch in s.chars() {
        if ch.is_ascii_uppercase() && previous_lower {
            out.push(' ');
        }
        previous_lower = ch.is_ascii_lowercase();
        out.push(ch);
    }
    out
}

/// The centre of an inspected element's box, in viewport CSS pixels; `None` without a box.
fn centre(element: &Value) -> Option<(f64, f64)> {
    let b = &element["box"];
    let (x, y, w, h) = (
        b["x"].as_f64()?,
        b["y"].as_f64()?,
        b["width"].as_f64()?,
        b["height"].as_f64()?,
    );
    (w > 0.0 && h > 0.0).then_some((x + w / 2.0, y + h / 2.0))
}

async fn mouse(
    page: &Page,
    kind: DispatchMouseEventType,
    x: f64,
    y: f64,
    clicks: i64,
) -> Result<(), String> {
    let mut params = DispatchMouseEventParams::builder().r#type(kind).x(x).y(y);
    if clicks > 0 {
        params = params
            .button(MouseButton::Left)
            .buttons(1)
            .click_count(clicks);
    }
    let params = params.build().map_err(|e| e.to_string())?;
    page.execute(params)
        .await
        .map(drop)
        .map_err(|e| e.to_string())
}

async fn click(page: &Page, x: f64, y: f64, clicks: i64) -> Result<(), String> {
    mouse(page, DispatchMouseEventType::MouseMoved, x, y, 0).await?;
    mouse(page, DispatchMouseEventType::MousePressed, x, y, clicks).await?;
    mouse(page, DispatchMouseEventType::MouseReleased, x, y, clicks).await
}

/// One key: what DevTools needs to press it as a keyboard would.
#[derive(Debug, Clone, Default)]
struct Key {
    key: String,
    code: String,
    key_code: i64,
    text: Option<String>,
}

impl Key {
    fn char(ch: char) -> Self {
        let code = if ch.is_ascii_alphabetic() {
            format!("Key{}", ch.to_ascii_uppercase())
        } else if ch.is_ascii_digit() {
            format!("Digit{ch}")
        } else {
            String::new()
        };
        let key_code = if ch.is_ascii_alphanumeric() {
            i64::from(ch.to_ascii_uppercase() as u8)
        } else {
            0
        };
        Key {
            key: ch.to_string(),
            code,
            key_code,
            text: Some(ch.to_string()),
        }
    }
}

/// The named keys a person presses, and any single character.
fn key_of(name: &str) -> Option<Key> {
    let named = |key: &str, code: i64, text: Option<&str>| Key {
        key: key.to_string(),
        code: key.to_string(),
        key_code: code,
        text: text.map(str::to_string),
    };
    Some(match name {
        "Enter" => named("Enter", 13, Some("\r")),
        "Tab" => named("Tab", 9, None),
        "Escape" | "Esc" => named("Escape", 27, None),
        "Backspace" => named("Backspace", 8, None),
        "Delete" => named("Delete", 46, None),
        "ArrowUp" => named("ArrowUp", 38, None),
        "ArrowDown" => named("ArrowDown", 40, None),
        "ArrowLeft" => named("ArrowLeft", 37, None),
        "ArrowRight" => named("ArrowRight", 39, None),
        "Home" => named("Home", 36, None),
        "End" => named("End", 35, None),
        "PageUp" => named("PageUp", 33, None),
        "PageDown" => named("PageDown", 34, None),
        " " | "Space" => Key {
            key: " ".into(),
            code: "Space".into(),
            key_code: 32,
            text: Some(" ".into()),
        },
        other => {
            let mut chars = other.chars();
            let (Some(ch), None) = (chars.next(), chars.next()) else {
                return None;
            };
            Key::char(ch)
        }
    })
}

async fn key_event(page: &Page, kind: DispatchKeyEventType, key: &Key) -> Result<(), String> {
    let mut params = DispatchKeyEventParams::builder()
        .r#type(kind.clone())
        .key(key.key.clone())
        .code(key.code.clone())
        .windows_virtual_key_code(key.key_code)
        .native_virtual_key_code(key.key_code);
    if kind == DispatchKeyEventType::KeyDown
        && let Some(text) = &key.text
    {
        params = params.text(text.clone()).unmodified_text(text.clone());
    }
    let params = params.build().map_err(|e| e.to_string())?;
    page.execute(params)
        .await
        .map(drop)
        .map_err(|e| e.to_string())
}

async fn press(page: &Page, key: &Key) -> Result<(), String> {
    key_event(page, DispatchKeyEventType::KeyDown, key).await?;
    key_event(page, DispatchKeyEventType::KeyUp, key).await
}

/// Selects the field's content as Ctrl+A does.
async fn select_all(page: &Page) -> Result<(), String> {
    let down = DispatchKeyEventParams::builder()
        .r#type(DispatchKeyEventType::KeyDown)
        .key("a")
        .code("KeyA")
        .windows_virtual_key_code(65)
        .modifiers(2)
        .commands(vec!["selectAll".to_string()])
        .build()
        .map_err(|e| e.to_string())?;
    page.execute(down).await.map_err(|e| e.to_string())?;
    let up = DispatchKeyEventParams::builder()
        .r#type(DispatchKeyEventType::KeyUp)
        .key("a")
        .code("KeyA")
        .windows_virtual_key_code(65)
        .modifiers(2)
        .build()
        .map_err(|e| e.to_string())?;
    page.execute(up).await.map(drop).map_err(|e| e.to_string())
}

async fn insert(page: &Page, text: &str) -> Result<(), String> {
    page.execute(InsertTextParams::new(text))
        .await
        .map(drop)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_danger_words_are_the_sdks() {
        let sdk = include_str!("../../../sdk/src/commands/act.js");
        let line = sdk
            .lines()
            .find(|l| l.starts_with("const DANGER_WORDS"))
            .expect("the SDK defines DANGER_WORDS");
        let inner = line
            .split("|[^a-z])(")
            .nth(1)
            .unwrap()
            .split(')')
            .next()
            .unwrap();
        let theirs: Vec<&str> = inner.split('|').collect();
        assert_eq!(theirs, DANGER_WORDS);
    }

    #[test]
    fn destructive_names_are_caught_whole_words_only() {
        assert!(looks_destructive(&json!({"name": "Delete account"})));
        assert!(looks_destructive(&json!({"testid": "removeItem"})));
        assert!(!looks_destructive(&json!({"name": "Dropdown"})));
        assert!(!looks_destructive(&json!({"name": "Add to cart"})));
        assert!(looks_destructive(
            &json!({"tag": "button", "name": "Go", "attributes": {}, "formText": "Delete your data"})
        ));
    }
}
