//! Merging Reticle's server entry into the text of a TOML config (Codex's `config.toml`): a pure
//! function, tested without a disk. It edits the document with `toml_edit`, so every comment,
//! blank line, key order and other server stays as the user wrote it, and a config already wired
//! is returned byte for byte. It decides the new text; it must not read or write files.

use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, Value, value};

use super::clients::SERVER_NAME;
use super::merge::{Change, ConfigRefusal, Merged};

/// Merges `command` and `args` into the table `[<table>.reticle]` of `existing` (`None`: no file).
/// Any other key of that entry (`env`, `enabled`, ...) and of the document is kept.
pub fn merge(
    existing: Option<&str>,
    table: &str,
    command: &str,
    args: &[String],
) -> Result<Merged, ConfigRefusal> {
    let (mut document, change_if_new) = match existing {
        None => (DocumentMut::new(), Change::Created),
        Some(text) => {
            let document = text
                .parse::<DocumentMut>()
                .map_err(|err| ConfigRefusal::NotToml {
                    detail: err.to_string().trim().replace('\n', " "),
                })?;
            (document, Change::Added)
        }
    };
    let root = document.as_table_mut();
    if !root.contains_key(table) {
        // Implicit: the file says `[mcp_servers.reticle]`, not an empty `[mcp_servers]` first.
        let mut servers = Table::new();
        servers.set_implicit(true);
        root.insert(table, Item::Table(servers));
    }
    let servers = root.get_mut(table).expect("inserted above when absent");
    let inline = servers.is_inline_table();
    let found = kind_of(servers);
    let servers = servers
        .as_table_like_mut()
        .ok_or_else(|| ConfigRefusal::ServersNotATable {
            key: table.to_string(),
            found,
        })?;
    let other_servers = servers
        .iter()
        .filter(|(name, _)| *name != SERVER_NAME)
        .count();
    let args_value = || Array::from_iter(args.iter().map(String::as_str));
    let change = match servers.get_mut(SERVER_NAME) {
        None => {
            let entry = if inline {
                let mut entry = InlineTable::new();
                entry.insert("command", command.into());
                entry.insert("args", Value::Array(args_value()));
                Item::Value(Value::InlineTable(entry))
            } else {
                let mut entry = Table::new();
                entry.insert("command", value(command));
                entry.insert("args", value(args_value()));
                Item::Table(entry)
            };
            servers.insert(SERVER_NAME, entry);
            change_if_new
        }
        Some(entry) => {
            let found = kind_of(entry);
            let entry = entry
                .as_table_like_mut()
                .ok_or_else(|| ConfigRefusal::EntryNotATable {
                    key: table.to_string(),
                    found,
                })?;
            let written_args = entry.get("args").and_then(Item::as_array).map(|array| {
                array
                    .iter()
                    .map(|arg| arg.as_str().map(str::to_string))
                    .collect::<Vec<_>>()
            });
            let wanted_args: Vec<_> = args.iter().cloned().map(Some).collect();
            let same = entry.get("command").and_then(Item::as_str) == Some(command)
                && written_args == Some(wanted_args);
            if same {
                Change::Unchanged
            } else {
                entry.insert("command", value(command));
                entry.insert("args", value(args_value()));
                Change::Updated
            }
        }
    };
    let text = match (change, existing) {
        (Change::Unchanged, Some(text)) => text.to_string(),
        _ => document.to_string(),
    };
    Ok(Merged {
        change,
        text,
        other_servers,
    })
}

/// A TOML item's kind, as a sentence needs it.
fn kind_of(item: &Item) -> &'static str {
    match item {
        Item::None => "nothing",
        Item::Table(_) | Item::Value(Value::InlineTable(_)) => "a table",
        Item::ArrayOfTables(_) => "an array of tables",
        Item::Value(Value::String(_)) => "a string",
        Item::Value(Value::Integer(_)) => "an integer",
        Item::Value(Value::Float(_)) => "a float",
        Item::Value(Value::Boolean(_)) => "a boolean",
        Item::Value(Value::Datetime(_)) => "a date-time",
        Item::Value(Value::Array(_)) => "an array",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::init::clients::mcp_args;

    fn merge_at(existing: Option<&str>, port: u16) -> Result<Merged, ConfigRefusal> {
        merge(existing, "mcp_servers", "reticle", &mcp_args(port))
    }

    #[test]
    fn no_file_gives_one_table_for_reticle() {
        let merged = merge_at(None, 4401).unwrap();
        assert_eq!(merged.change, Change::Created);
        insta::assert_snapshot!(merged.text, @r#"
        [mcp_servers.reticle]
        command = "reticle"
        args = ["mcp", "--port", "4401"]
        "#);
    }

    #[test]
    fn comments_order_and_other_servers_are_kept() {
        let existing = r#"# my Codex settings
model = "o3" # the one I like

[mcp_servers.docs]
# the docs server
command = "docs-mcp"
args = ["serve"]
env = { "A" = "1" }

[profiles.fast]
model = "mini"
"#;
        let merged = merge_at(Some(existing), 4401).unwrap();
        assert_eq!(merged.change, Change::Added);
        assert_eq!(merged.other_servers, 1);
        let added = "[mcp_servers.reticle]\ncommand = \"reticle\"\nargs = [\"mcp\", \"--port\", \"4401\"]\n\n";
        assert_eq!(
            merged.text.replacen(added, "", 1),
            existing,
            "{}",
            merged.text
        );
        insta::assert_snapshot!(merged.text);
        let second = merge_at(Some(&merged.text), 4401).unwrap();
        assert_eq!(second.change, Change::Unchanged);
        assert_eq!(second.text, merged.text);
    }

    #[test]
    fn a_stale_port_is_updated_and_the_users_keys_in_the_entry_are_kept() {
        let existing = "[mcp_servers.reticle]\ncommand = \"reticle\"\nargs = [\"mcp\", \"--port\", \"9999\"]\nenv = { RETICLE_TRACE = \"1\" } # mine\n";
        let merged = merge_at(Some(existing), 4401).unwrap();
        assert_eq!(merged.change, Change::Updated);
        let document: DocumentMut = merged.text.parse().unwrap();
        let entry = &document["mcp_servers"]["reticle"];
        assert_eq!(entry["args"].as_array().unwrap().len(), 3);
        assert_eq!(entry["args"][2].as_str(), Some("4401"));
        assert!(
            merged
                .text
                .contains("env = { RETICLE_TRACE = \"1\" } # mine"),
            "{}",
            merged.text
        );
    }

    #[test]
    fn an_inline_server_table_gets_an_inline_entry() {
        let existing = "mcp_servers = { docs = { command = \"docs-mcp\" } }\n";
        let merged = merge_at(Some(existing), 4400).unwrap();
        assert_eq!(merged.change, Change::Added);
        let document: DocumentMut = merged.text.parse().unwrap();
        assert_eq!(
            document["mcp_servers"]["reticle"]["command"].as_str(),
            Some("reticle")
        );
        assert_eq!(
            document["mcp_servers"]["docs"]["command"].as_str(),
            Some("docs-mcp")
        );
    }

    #[test]
    fn malformed_toml_is_refused_with_where_it_breaks() {
        let refusal = merge_at(Some("[mcp_servers.docs\ncommand = 1\n"), 4400).unwrap_err();
        let ConfigRefusal::NotToml { detail } = &refusal else {
            panic!("{refusal:?}")
        };
        assert!(detail.contains("line 1"), "{detail}");
    }

    #[test]
    fn servers_or_an_entry_that_are_not_tables_are_refused() {
        assert_eq!(
            merge_at(Some("mcp_servers = 3\n"), 4400).unwrap_err(),
            ConfigRefusal::ServersNotATable {
                key: "mcp_servers".into(),
                found: "an integer"
            }
        );
        let refusal = merge_at(Some("[mcp_servers]\nreticle = \"on\"\n"), 4400).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "has [mcp_servers.reticle] as a string, where a server entry (a table) is expected"
        );
    }
}
