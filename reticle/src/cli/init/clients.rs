//! The MCP clients `reticle init` wires, defined once: where each keeps its project-level server
//! list, under which key, and the fields of the entry that starts Reticle there. This module is
//! the vocabulary; it must not read or write files.

use clap::ValueEnum;
use serde_json::{Map, Value, json};

use crate::config::DEFAULT_PORT;

/// The name Reticle's entry is registered under in every client's server list.
pub const SERVER_NAME: &str = "reticle";
/// The program a client starts. A bare name, found on the client's PATH, so the configs carry
/// no machine-specific path and can be committed.
pub const COMMAND: &str = "reticle";
/// The subcommand that serves MCP on stdio (`reticle mcp`).
pub const MCP_SUBCOMMAND: &str = "mcp";

/// A coding agent whose project-level MCP configuration `reticle init` can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Client {
    /// Claude Code: `.mcp.json`, servers under `mcpServers`.
    #[value(name = "claude", alias = "claude-code")]
    ClaudeCode,
    /// Cursor: `.cursor/mcp.json`, servers under `mcpServers`.
    #[value(name = "cursor")]
    Cursor,
    /// VS Code: `.vscode/mcp.json`, servers under `servers`, each with `"type": "stdio"`.
    #[value(name = "vscode", alias = "vs-code")]
    VsCode,
}

impl Client {
    /// Every supported client, in the order `reticle init` wires them by default.
    pub const ALL: [Client; 3] = [Client::ClaudeCode, Client::Cursor, Client::VsCode];

    /// The client's name as a person knows it.
    pub fn label(self) -> &'static str {
        match self {
            Client::ClaudeCode => "Claude Code",
            Client::Cursor => "Cursor",
            Client::VsCode => "VS Code",
        }
    }

    /// The config file, relative to the project directory, `/`-separated.
    pub fn config_path(self) -> &'static str {
        match self {
            Client::ClaudeCode => ".mcp.json",
            Client::Cursor => ".cursor/mcp.json",
            Client::VsCode => ".vscode/mcp.json",
        }
    }

    /// The top-level key holding the client's servers, by name.
    pub fn servers_key(self) -> &'static str {
        match self {
            Client::ClaudeCode | Client::Cursor => "mcpServers",
            Client::VsCode => "servers",
        }
    }

    /// The fields Reticle owns in its entry for this client. Any other field a user added to
    /// the entry (`env`, `disabled`, ...) is theirs and is kept.
    pub fn entry_fields(self, port: u16) -> Map<String, Value> {
        let mut fields = Map::new();
        if self == Client::VsCode {
            fields.insert("type".into(), json!("stdio"));
        }
        fields.insert("command".into(), json!(COMMAND));
        fields.insert("args".into(), json!(mcp_args(port)));
        fields
    }
}

/// The arguments that start `reticle mcp` on `port`: no `--port` for the default port, so the
/// common config stays the shortest one.
pub fn mcp_args(port: u16) -> Vec<String> {
    let mut args = vec![MCP_SUBCOMMAND.to_string()];
    if port != DEFAULT_PORT {
        args.extend(["--port".to_string(), port.to_string()]);
    }
    args
}

/// The command line a client runs, for people: `reticle mcp --port 4401`.
pub fn command_line(port: u16) -> String {
    let mut line = vec![COMMAND.to_string()];
    line.extend(mcp_args(port));
    line.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vs_code_entries_say_stdio_and_the_others_do_not() {
        let vscode = Client::VsCode.entry_fields(4401);
        assert_eq!(
            Value::Object(vscode),
            json!({"type": "stdio", "command": "reticle", "args": ["mcp", "--port", "4401"]})
        );
        for client in [Client::ClaudeCode, Client::Cursor] {
            assert_eq!(
                Value::Object(client.entry_fields(4401)),
                json!({"command": "reticle", "args": ["mcp", "--port", "4401"]})
            );
        }
    }

    #[test]
    fn the_default_port_needs_no_flag() {
        assert_eq!(mcp_args(DEFAULT_PORT), ["mcp"]);
        assert_eq!(command_line(DEFAULT_PORT), "reticle mcp");
        assert_eq!(command_line(4401), "reticle mcp --port 4401");
    }

    #[test]
    fn every_client_has_its_own_file() {
        let mut paths: Vec<_> = Client::ALL.iter().map(|c| c.config_path()).collect();
        paths.sort_unstable();
        paths.dedup();
        assert_eq!(paths.len(), Client::ALL.len());
    }
}
