//! The MCP clients `reticle init` wires, defined once: where each keeps its server list in each
//! scope (with the page of its documentation that says so), the format of that file, and the
//! fields of the entry that starts Reticle there. This module is the vocabulary; it must not read
//! the environment or read or write files.

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

/// Whose configuration `reticle init` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scope {
    /// The project's own files, which can be committed and shared with the team.
    Project,
    /// The user's files under $HOME, read by the client in every project.
    User,
}

impl Scope {
    /// The scope's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
        }
    }
}

/// The directory a config's path is relative to; [`super::locations`] resolves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// The project directory (`--dir`).
    Project,
    /// `$HOME`.
    Home,
    /// `$XDG_CONFIG_HOME`, else `$HOME/.config`.
    ConfigHome,
    /// `$CODEX_HOME`, else `$HOME/.codex`.
    CodexHome,
}

/// Where one client keeps its servers in one scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    pub base: Base,
    /// Relative to `base`, `/`-separated.
    pub path: &'static str,
    /// The same config under the other name the client reads (relative to `base`), used when
    /// that file exists and `path` does not.
    pub or_existing: Option<&'static str>,
}

const fn at(base: Base, path: &'static str) -> Option<Location> {
    Some(Location {
        base,
        path,
        or_existing: None,
    })
}

const fn at_either(base: Base, path: &'static str, other: &'static str) -> Option<Location> {
    Some(Location {
        base,
        path,
        or_existing: Some(other),
    })
}

/// What shows a client is installed or configured on this machine ([`Client::evidence`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evidence {
    /// Directories or files the client keeps its own settings in (`""`: the base itself).
    pub homes: &'static [(Base, &'static str)],
    /// Programs on PATH that start the client.
    pub programs: &'static [&'static str],
}

/// How a client's config file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A JSON object. The servers by name live at the first key path of `servers_at` the file
    /// already holds as an object, else at the last one. A new file starts with `new_file`'s
    /// fields.
    Json {
        servers_at: &'static [&'static [&'static str]],
        new_file: &'static [(&'static str, &'static str)],
    },
    /// A TOML document; the servers by name are the tables under `table`, each with `command`
    /// and `args`.
    Toml { table: &'static str },
}

/// A coding agent whose MCP configuration `reticle init` can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Client {
    /// Claude Code: `.mcp.json` (project) or `~/.claude.json` (user), under `mcpServers`.
    #[value(name = "claude", alias = "claude-code")]
    ClaudeCode,
    /// Cursor: `.cursor/mcp.json` (project) or `~/.cursor/mcp.json` (user), under `mcpServers`.
    #[value(name = "cursor")]
    Cursor,
    /// VS Code: `.vscode/mcp.json` (project) or the user profile's `mcp.json`
    /// (`~/.config/Code/User/mcp.json` on Linux), under `servers`.
    #[value(name = "vscode", alias = "vs-code")]
    VsCode,
    /// Windsurf: `~/.codeium/windsurf/mcp_config.json` (user only), under `mcpServers`.
    #[value(name = "windsurf")]
    Windsurf,
    /// Gemini CLI: `.gemini/settings.json` (project) or `~/.gemini/settings.json` (user), under
    /// `mcpServers`.
    #[value(name = "gemini", alias = "gemini-cli")]
    Gemini,
    /// OpenCode: `opencode.json` (project) or `~/.config/opencode/opencode.json` (user), or the
    /// `.jsonc` one already there, under `mcp`.
    #[value(name = "opencode")]
    OpenCode,
    /// Codex: `.codex/config.toml` (project, read once the project is trusted) or
    /// `~/.codex/config.toml` (user), TOML `[mcp_servers.reticle]`.
    #[value(name = "codex")]
    Codex,
}

impl Client {
    /// Every supported client, in the order `reticle init` wires them.
    pub const ALL: [Client; 7] = [
        Client::ClaudeCode,
        Client::Cursor,
        Client::VsCode,
        Client::Windsurf,
        Client::Gemini,
        Client::OpenCode,
        Client::Codex,
    ];

    /// The client's name as a person knows it.
    pub fn label(self) -> &'static str {
        match self {
            Client::ClaudeCode => "Claude Code",
            Client::Cursor => "Cursor",
            Client::VsCode => "VS Code",
            Client::Windsurf => "Windsurf",
            Client::Gemini => "Gemini CLI",
            Client::OpenCode => "OpenCode",
            Client::Codex => "Codex",
        }
    }

    /// The client's name on the command line (`--client NAME`).
    pub fn name(self) -> String {
        self.to_possible_value()
            .expect("every client has a name")
            .get_name()
            .to_string()
    }

    /// Where the client reads its servers in `scope`, or `None` when it has no config there.
    pub fn location(self, scope: Scope) -> Option<Location> {
        use Base::{CodexHome, ConfigHome, Home, Project};
        match (self, scope) {
            // https://code.claude.com/docs/en/mcp (MCP installation scopes: project `.mcp.json`,
            // user `~/.claude.json`, both under `mcpServers`).
            (Client::ClaudeCode, Scope::Project) => at(Project, ".mcp.json"),
            (Client::ClaudeCode, Scope::User) => at(Home, ".claude.json"),
            // https://cursor.com/docs/mcp (project `.cursor/mcp.json`, global `~/.cursor/mcp.json`).
            (Client::Cursor, Scope::Project) => at(Project, ".cursor/mcp.json"),
            (Client::Cursor, Scope::User) => at(Home, ".cursor/mcp.json"),
            // https://code.visualstudio.com/docs/copilot/reference/mcp-configuration (`mcp.json`
            // in the workspace's `.vscode/` or in the user profile: VS Code's user data dir,
            // `~/.config/Code/User` on Linux, `~/Library/Application Support/Code/User` on macOS).
            (Client::VsCode, Scope::Project) => at(Project, ".vscode/mcp.json"),
            (Client::VsCode, Scope::User) if cfg!(target_os = "macos") => {
                at(Home, "Library/Application Support/Code/User/mcp.json")
            }
            (Client::VsCode, Scope::User) => at(ConfigHome, "Code/User/mcp.json"),
            // https://docs.windsurf.com/windsurf/cascade/mcp (`~/.codeium/windsurf/mcp_config.json`
            // only: Windsurf reads no project-level MCP config).
            (Client::Windsurf, Scope::Project) => None,
            (Client::Windsurf, Scope::User) => at(Home, ".codeium/windsurf/mcp_config.json"),
            // https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md
            // (`mcpServers` in `~/.gemini/settings.json` or the project's `.gemini/settings.json`).
            (Client::Gemini, Scope::Project) => at(Project, ".gemini/settings.json"),
            (Client::Gemini, Scope::User) => at(Home, ".gemini/settings.json"),
            // https://opencode.ai/docs/config/ and https://opencode.ai/docs/mcp-servers/ (project
            // `opencode.json`, global `~/.config/opencode/opencode.json`; either may be named
            // `.jsonc`, and an existing one is the one to merge into).
            (Client::OpenCode, Scope::Project) => {
                at_either(Project, "opencode.json", "opencode.jsonc")
            }
            (Client::OpenCode, Scope::User) => at_either(
                ConfigHome,
                "opencode/opencode.json",
                "opencode/opencode.jsonc",
            ),
            // https://developers.openai.com/codex/mcp (`~/.codex/config.toml`, `CODEX_HOME` when
            // set; a project's `.codex/config.toml` is read once the project is trusted).
            (Client::Codex, Scope::Project) => at(Project, ".codex/config.toml"),
            (Client::Codex, Scope::User) => at(CodexHome, "config.toml"),
        }
    }

    /// What shows the client is on this machine: the directories (or files) it keeps its own
    /// settings in, each relative to a [`Base`], and the programs that start it. `reticle init`
    /// writes a config only for a client with one of these (or its config already there), unless
    /// it is named with `--client`.
    pub fn evidence(self) -> Evidence {
        use Base::{CodexHome, ConfigHome, Home};
        let (homes, programs): (&'static [(Base, &'static str)], &'static [&'static str]) =
            match self {
                Client::ClaudeCode => (&[(Home, ".claude"), (Home, ".claude.json")], &["claude"]),
                Client::Cursor => (&[(Home, ".cursor")], &["cursor", "cursor-agent"]),
                Client::VsCode if cfg!(target_os = "macos") => {
                    (&[(Home, "Library/Application Support/Code")], &["code"])
                }
                Client::VsCode => (&[(ConfigHome, "Code")], &["code"]),
                Client::Windsurf => (&[(Home, ".codeium/windsurf")], &["windsurf"]),
                Client::Gemini => (&[(Home, ".gemini")], &["gemini"]),
                Client::OpenCode => (&[(ConfigHome, "opencode")], &["opencode"]),
                Client::Codex => (&[(CodexHome, "")], &["codex"]),
            };
        Evidence { homes, programs }
    }

    /// The format of the client's config file (the same in both scopes).
    pub fn format(self) -> Format {
        match self {
            Client::ClaudeCode | Client::Cursor | Client::Windsurf | Client::Gemini => {
                Format::Json {
                    servers_at: &[&["mcpServers"]],
                    new_file: &[],
                }
            }
            Client::VsCode => Format::Json {
                servers_at: &[&["servers"]],
                new_file: &[],
            },
            // https://opencode.ai/docs/mcp-servers/: servers by name under `mcp`. OpenCode 2's
            // native shape puts them under `mcp.servers` and still reads the first one
            // (https://opencode.ai/docs/migrate-v1/), so a file already in the native shape
            // gets the entry there and any other file the shape both versions read.
            Client::OpenCode => Format::Json {
                servers_at: &[&["mcp", "servers"], &["mcp"]],
                new_file: &[("$schema", "https://opencode.ai/config.json")],
            },
            // https://developers.openai.com/codex/mcp: `[mcp_servers.<name>]` with `command`
            // and `args`.
            Client::Codex => Format::Toml {
                table: "mcp_servers",
            },
        }
    }

    /// The fields Reticle owns in its entry for this client, as JSON. Any other field a user
    /// added to the entry (`env`, `disabled`, ...) is theirs and is kept.
    pub fn entry_fields(self, port: u16) -> Map<String, Value> {
        let mut fields = Map::new();
        match self {
            Client::VsCode => {
                fields.insert("type".into(), json!("stdio"));
                fields.insert("command".into(), json!(COMMAND));
                fields.insert("args".into(), json!(mcp_args(port)));
            }
            // OpenCode starts a local server from one array: the program, then its arguments.
            Client::OpenCode => {
                let mut command = vec![COMMAND.to_string()];
                command.extend(mcp_args(port));
                fields.insert("type".into(), json!("local"));
                fields.insert("command".into(), json!(command));
            }
            _ => {
                fields.insert("command".into(), json!(COMMAND));
                fields.insert("args".into(), json!(mcp_args(port)));
            }
        }
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
    fn opencode_starts_one_command_array_of_type_local() {
        assert_eq!(
            Value::Object(Client::OpenCode.entry_fields(4401)),
            json!({"type": "local", "command": ["reticle", "mcp", "--port", "4401"]})
        );
        assert_eq!(
            Value::Object(Client::OpenCode.entry_fields(DEFAULT_PORT)),
            json!({"type": "local", "command": ["reticle", "mcp"]})
        );
    }

    #[test]
    fn the_default_port_needs_no_flag() {
        assert_eq!(mcp_args(DEFAULT_PORT), ["mcp"]);
        assert_eq!(command_line(DEFAULT_PORT), "reticle mcp");
        assert_eq!(command_line(4401), "reticle mcp --port 4401");
    }

    #[test]
    fn every_client_has_its_own_file_in_each_scope() {
        for scope in [Scope::Project, Scope::User] {
            let mut places: Vec<_> = Client::ALL
                .iter()
                .filter_map(|c| c.location(scope))
                .map(|l| (format!("{:?}", l.base), l.path))
                .collect();
            let wired = places.len();
            places.sort_unstable();
            places.dedup();
            assert_eq!(places.len(), wired, "{scope:?}");
        }
    }

    #[test]
    fn windsurf_alone_has_no_project_config_and_every_client_has_a_user_one() {
        let without: Vec<_> = Client::ALL
            .into_iter()
            .filter(|c| c.location(Scope::Project).is_none())
            .collect();
        assert_eq!(without, [Client::Windsurf]);
        assert!(
            Client::ALL
                .iter()
                .all(|c| c.location(Scope::User).is_some())
        );
    }
}
