//! Merging Reticle's server entry into the text of a client's JSON config ([`super::merge_toml`]
//! is the TOML one), and what a merge reports ([`Change`], [`Merged`], [`ConfigRefusal`]). Keys
//! keep their order (serde_json's `preserve_order`), what is not Reticle's is kept as it was,
//! and a config already wired is left byte for byte.
//!
//! Pure: it decides the new text; it must not read or write files.

use serde_json::{Map, Value};

use super::clients::SERVER_NAME;

/// What the merge did to the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// There was no config: a new one holds only Reticle's entry.
    Created,
    /// The config existed without Reticle's entry; it was added beside the others.
    Added,
    /// Reticle's entry existed with other values in the fields Reticle owns.
    Updated,
    /// Reticle's entry already says what it should; the text is returned as it was.
    Unchanged,
}

/// The config after the merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    pub change: Change,
    /// What the file should hold: the existing text when [`Change::Unchanged`].
    pub text: String,
    /// How many other servers the config lists beside Reticle.
    pub other_servers: usize,
}

/// Why an existing config was left alone.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigRefusal {
    #[error("is not valid JSON ({detail})")]
    NotJson { detail: String },
    #[error("is not valid TOML ({detail})")]
    NotToml { detail: String },
    #[error("holds {found} where a JSON object is expected")]
    NotAnObject { found: &'static str },
    #[error("has \"{key}\" as {found}, where an object of servers by name is expected")]
    ServersNotAnObject { key: String, found: &'static str },
    #[error("has \"{key}\".\"{name}\" as {found}, where a server entry (an object) is expected", name = SERVER_NAME)]
    EntryNotAnObject { key: String, found: &'static str },
    #[error("has [{key}] as {found}, where a table of servers by name is expected")]
    ServersNotATable { key: String, found: &'static str },
    #[error("has [{key}.{name}] as {found}, where a server entry (a table) is expected", name = SERVER_NAME)]
    EntryNotATable { key: String, found: &'static str },
}

/// Merges `fields` into the entry `SERVER_NAME` of the servers of `existing` (`None`: no file).
/// The servers are at the first key path of `servers_at` the document holds as an object, else
/// at the last one (created). A document created here starts with `new_file`'s string fields.
/// Fields Reticle does not own, in its entry or anywhere else, are kept.
pub fn merge(
    existing: Option<&str>,
    servers_at: &[&[&str]],
    new_file: &[(&str, &str)],
    fields: &Map<String, Value>,
) -> Result<Merged, ConfigRefusal> {
    let (mut document, change_if_new) = match existing {
        None => {
            let preamble = new_file
                .iter()
                .map(|(key, value)| (key.to_string(), Value::String(value.to_string())))
                .collect();
            (preamble, Change::Created)
        }
        Some(text) if text.trim().is_empty() => (Map::new(), Change::Added),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(document)) => (document, Change::Added),
            Ok(other) => {
                return Err(ConfigRefusal::NotAnObject {
                    found: kind_of(&other),
                });
            }
            Err(err) => {
                return Err(ConfigRefusal::NotJson {
                    detail: err.to_string(),
                });
            }
        },
    };
    let path = servers_at
        .iter()
        .find(|path| object_at(&document, path).is_some())
        .or(servers_at.last())
        .expect("a client names where its servers are");
    let key = path.join("\".\"");
    let servers = servers_object(&mut document, path)?;
    let other_servers = servers.keys().filter(|name| *name != SERVER_NAME).count();
    let change = match servers.get_mut(SERVER_NAME) {
        None => {
            servers.insert(SERVER_NAME.to_string(), Value::Object(fields.clone()));
            change_if_new
        }
        Some(Value::Object(entry)) => {
            let before = entry.clone();
            for (field, value) in fields {
                entry.insert(field.clone(), value.clone());
            }
            if *entry == before {
                Change::Unchanged
            } else {
                Change::Updated
            }
        }
        Some(other) => {
            return Err(ConfigRefusal::EntryNotAnObject {
                key,
                found: kind_of(other),
            });
        }
    };
    let text = match (change, existing) {
        (Change::Unchanged, Some(text)) => text.to_string(),
        _ => render(&Value::Object(document)),
    };
    Ok(Merged {
        change,
        text,
        other_servers,
    })
}

/// The object at key path `path` of `document`, if every step is one.
fn object_at<'a>(
    document: &'a Map<String, Value>,
    path: &[&str],
) -> Option<&'a Map<String, Value>> {
    path.iter()
        .try_fold(document, |object, key| object.get(*key)?.as_object())
}

/// The object at key path `path` of `document`, created where absent; a step that is there but
/// is not an object is refused, naming the path up to it.
fn servers_object<'a>(
    document: &'a mut Map<String, Value>,
    path: &[&str],
) -> Result<&'a mut Map<String, Value>, ConfigRefusal> {
    let mut object = document;
    for (depth, key) in path.iter().enumerate() {
        let value = object
            .entry(key.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        let found = kind_of(value);
        object = value
            .as_object_mut()
            .ok_or_else(|| ConfigRefusal::ServersNotAnObject {
                key: path[..=depth].join("\".\""),
                found,
            })?;
    }
    Ok(object)
}

/// Two-space indented JSON ending in a newline.
fn render(document: &Value) -> String {
    let mut text =
        serde_json::to_string_pretty(document).expect("a serde_json::Value always serializes");
    text.push('\n');
    text
}

/// A JSON value's kind, as a sentence needs it.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::init::clients::{Client, Format};
    use serde_json::json;

    fn merge_for(client: Client, existing: Option<&str>) -> Result<Merged, ConfigRefusal> {
        let Format::Json {
            servers_at,
            new_file,
        } = client.format()
        else {
            panic!("{client:?} is not a JSON client")
        };
        merge(existing, servers_at, new_file, &client.entry_fields(4401))
    }

    fn parsed(merged: &Merged) -> Value {
        serde_json::from_str(&merged.text).unwrap()
    }

    #[test]
    fn no_file_gives_a_config_with_only_reticle() {
        let merged = merge_for(Client::ClaudeCode, None).unwrap();
        assert_eq!(merged.change, Change::Created);
        assert_eq!(merged.other_servers, 0);
        assert_eq!(
            parsed(&merged),
            json!({"mcpServers": {"reticle": {"command": "reticle", "args": ["mcp", "--port", "4401"]}}})
        );
        assert!(merged.text.ends_with("}\n"));
    }

    #[test]
    fn vs_code_gets_its_own_key_and_the_stdio_type() {
        let merged = merge_for(Client::VsCode, None).unwrap();
        assert_eq!(parsed(&merged)["servers"]["reticle"]["type"], "stdio");
        assert!(parsed(&merged).get("mcpServers").is_none());
    }

    #[test]
    fn an_empty_file_is_filled() {
        let merged = merge_for(Client::Cursor, Some(" \n")).unwrap();
        assert_eq!(merged.change, Change::Added);
        assert_eq!(
            parsed(&merged)["mcpServers"]["reticle"]["command"],
            "reticle"
        );
    }

    #[test]
    fn other_servers_and_keys_are_kept_in_their_order() {
        let existing = r#"{"zeta": 1, "mcpServers": {"other": {"command": "other-mcp", "args": ["x"], "env": {"A": "1"}}}, "alpha": [true]}"#;
        let merged = merge_for(Client::ClaudeCode, Some(existing)).unwrap();
        assert_eq!(merged.change, Change::Added);
        assert_eq!(merged.other_servers, 1);
        let after = parsed(&merged);
        assert_eq!(after["zeta"], 1);
        assert_eq!(after["alpha"], json!([true]));
        assert_eq!(
            after["mcpServers"]["other"],
            json!({"command": "other-mcp", "args": ["x"], "env": {"A": "1"}})
        );
        let keys: Vec<_> = after.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["zeta", "mcpServers", "alpha"]);
        let servers: Vec<_> = after["mcpServers"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(servers, ["other", "reticle"]);
    }

    #[test]
    fn a_second_merge_is_byte_identical_and_unchanged() {
        let first = merge_for(Client::VsCode, Some(r#"{"inputs": []}"#)).unwrap();
        let second = merge_for(Client::VsCode, Some(&first.text)).unwrap();
        assert_eq!(second.change, Change::Unchanged);
        assert_eq!(second.text, first.text);
    }

    #[test]
    fn an_already_wired_config_keeps_its_own_formatting() {
        let compact =
            r#"{"mcpServers":{"reticle":{"command":"reticle","args":["mcp","--port","4401"]}}}"#;
        let merged = merge_for(Client::Cursor, Some(compact)).unwrap();
        assert_eq!(merged.change, Change::Unchanged);
        assert_eq!(merged.text, compact);
    }

    #[test]
    fn a_stale_port_is_updated_and_the_users_fields_in_the_entry_are_kept() {
        let existing = r#"{"mcpServers": {"reticle": {"command": "reticle", "args": ["mcp", "--port", "9999"], "env": {"RETICLE_TRACE": "1"}}}}"#;
        let merged = merge_for(Client::ClaudeCode, Some(existing)).unwrap();
        assert_eq!(merged.change, Change::Updated);
        let entry = &parsed(&merged)["mcpServers"]["reticle"];
        assert_eq!(entry["args"], json!(["mcp", "--port", "4401"]));
        assert_eq!(entry["env"], json!({"RETICLE_TRACE": "1"}));
    }

    #[test]
    fn malformed_json_is_refused_with_where_it_breaks() {
        let refusal = merge_for(Client::ClaudeCode, Some("{\"mcpServers\": {,}")).unwrap_err();
        let ConfigRefusal::NotJson { detail } = &refusal else {
            panic!("{refusal:?}")
        };
        assert!(detail.contains("line 1"), "{detail}");
        // Comments (which VS Code tolerates) are not JSON either: refused, never overwritten.
        assert!(matches!(
            merge_for(Client::VsCode, Some("// mine\n{}")),
            Err(ConfigRefusal::NotJson { .. })
        ));
    }

    #[test]
    fn a_document_that_is_not_an_object_is_refused() {
        assert_eq!(
            merge_for(Client::Cursor, Some("[1, 2]")).unwrap_err(),
            ConfigRefusal::NotAnObject { found: "an array" }
        );
        assert_eq!(
            merge_for(Client::Cursor, Some("null")).unwrap_err(),
            ConfigRefusal::NotAnObject { found: "null" }
        );
    }

    #[test]
    fn a_server_list_or_entry_that_is_not_an_object_is_refused() {
        let refusal = merge_for(Client::ClaudeCode, Some(r#"{"mcpServers": []}"#)).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "has \"mcpServers\" as an array, where an object of servers by name is expected"
        );
        let refusal =
            merge_for(Client::VsCode, Some(r#"{"servers": {"reticle": "on"}}"#)).unwrap_err();
        assert_eq!(
            refusal,
            ConfigRefusal::EntryNotAnObject {
                key: "servers".into(),
                found: "a string"
            }
        );
    }

    #[test]
    fn opencode_entries_go_where_the_file_keeps_its_servers() {
        let created = merge_for(Client::OpenCode, None).unwrap();
        assert_eq!(
            parsed(&created),
            json!({"$schema": "https://opencode.ai/config.json", "mcp": {"reticle": {"type": "local", "command": ["reticle", "mcp", "--port", "4401"]}}})
        );
        let v1 =
            r#"{"mcp": {"docs": {"type": "local", "command": ["docs-mcp"], "enabled": true}}}"#;
        let merged = merge_for(Client::OpenCode, Some(v1)).unwrap();
        assert_eq!(merged.other_servers, 1);
        assert_eq!(parsed(&merged)["mcp"]["reticle"]["type"], "local");
        let v2 = r#"{"mcp": {"servers": {"docs": {"type": "local", "command": ["docs-mcp"]}}}}"#;
        let merged = merge_for(Client::OpenCode, Some(v2)).unwrap();
        assert_eq!(merged.other_servers, 1);
        let after = parsed(&merged);
        assert_eq!(after["mcp"]["servers"]["reticle"]["command"][0], "reticle");
        assert!(after["mcp"].get("reticle").is_none(), "{after}");
        let again = merge_for(Client::OpenCode, Some(&merged.text)).unwrap();
        assert_eq!(again.change, Change::Unchanged);
        // Only a file created by Reticle gets the schema line; an existing one is left its own.
        assert!(after.get("$schema").is_none());
    }

    #[test]
    fn an_opencode_mcp_key_that_is_not_an_object_is_refused_naming_it() {
        let refusal = merge_for(Client::OpenCode, Some(r#"{"mcp": true}"#)).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "has \"mcp\" as a boolean, where an object of servers by name is expected"
        );
    }
}
