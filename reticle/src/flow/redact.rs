//! What a capsule must not persist: the value of any field whose name says it is a secret
//! (password, token, secret, authorization, cookie, API key, credential…), anywhere in it, and
//! the text an action typed when its target or the page's account of the action names a secret
//! field (a password box). Flows use the same words to store typed secrets as placeholders.
//! This module rewrites JSON; it must not decide when anything is written.

use serde_json::Value;

/// What a redacted value reads as.
pub const REDACTED: &str = "[redacted by Reticle]";

/// Words that mark a field name (or a target) as secret, compared lowercase with only letters
/// and digits kept (`api_key`, `API-Key` and `apiKey` are all `apikey`).
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "authorization",
    "cookie",
    "apikey",
    "credential",
    "privatekey",
];

/// The fields of an action's arguments that carry what was typed or chosen.
const TYPED_FIELDS: &[&str] = &["value", "text"];

/// Whether `word` names a secret.
pub fn names_a_secret(word: &str) -> bool {
    let folded: String = word
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    SECRET_WORDS.iter().any(|secret| folded.contains(secret))
}

/// Whether any string inside `value` names a secret.
pub fn mentions_a_secret(value: &Value) -> bool {
    match value {
        Value::String(text) => names_a_secret(text),
        Value::Array(items) => items.iter().any(mentions_a_secret),
        Value::Object(map) => map.values().any(mentions_a_secret),
        _ => false,
    }
}

/// Redacts every field named as a secret, at any depth, in place.
pub fn secret_fields(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                if names_a_secret(key) && !field.is_null() {
                    *field = Value::String(REDACTED.into());
                } else {
                    secret_fields(field);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(secret_fields),
        _ => {}
    }
}

/// Redacts a capsule `{arguments, verdict, events, …}` in place: secret fields everywhere, and
/// the typed value when the action's target, or the page's account of the action, names a
/// secret field.
pub fn capsule(capsule: &mut Value) {
    let typed_into_a_secret = mentions_a_secret(&capsule["arguments"]["target"])
        || mentions_a_secret(&capsule["verdict"]["act"]);
    if typed_into_a_secret && let Some(args) = capsule["arguments"]["args"].as_object_mut() {
        for field in TYPED_FIELDS {
            if let Some(typed) = args.get_mut(*field) {
                *typed = Value::String(REDACTED.into());
            }
        }
    }
    secret_fields(capsule);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_password_typed_into_a_password_field_is_redacted_and_the_rest_kept() {
        let mut typed = json!({
            "tool": "reticle_act_and_wait",
            "sessionId": "s1",
            "arguments": { "target": { "label": "Password" }, "action": "fill", "args": { "value": "hunter2" } },
            "verdict": { "verified": "no" },
            "events": [{ "type": "net", "data": { "headers": { "Authorization": "Bearer abc", "Accept": "*/*" }, "api_key": "k" } }],
        });
        capsule(&mut typed);
        let text = typed.to_string();
        for secret in ["hunter2", "Bearer abc", "\"k\""] {
            assert!(!text.contains(secret), "{secret} left in {text}");
        }
        assert_eq!(typed["sessionId"], "s1");
        assert_eq!(typed["events"][0]["data"]["headers"]["Accept"], "*/*");
        assert_eq!(typed["arguments"]["action"], "fill");
    }

    #[test]
    fn an_ordinary_field_keeps_what_was_typed() {
        let mut typed = json!({
            "arguments": { "target": { "label": "Search" }, "action": "fill", "args": { "value": "shoes" } },
            "verdict": { "act": { "ref": "e1" } },
        });
        capsule(&mut typed);
        assert_eq!(typed["arguments"]["args"]["value"], "shoes");
        let mut by_css = json!({
            "arguments": { "target": { "css": "input[type=password]" }, "args": { "text": "pw" } },
        });
        capsule(&mut by_css);
        assert_eq!(by_css["arguments"]["args"]["text"], REDACTED);
    }
}
