//! The install layer: `reticle init` wires a pristine project so that every agent config it
//! writes starts a `reticle mcp` that reaches the page the app loads.
//!
//! The check runs the real `reticle init` in a fresh project with a private state dir (the
//! binary under test on PATH, as an installed `reticle` would be), reads each written config as
//! its client would, spawns exactly the command and arguments it names (`reticle` resolved to the
//! binary under test, as the reference swapped `npx` for its local CLI), completes the MCP
//! handshake with the rmcp client, lists the tools, and polls `reticle_sessions` until the
//! fixture app's page, dialling the app's daemon with the token init pointed at, is listed.
//!
//! The check returns an [`Outcome`], so its negative controls can assert it goes red: an init
//! wired to another port than the daemon the app dials, a malformed config init must refuse, a
//! config without Reticle's entry or starting another program.
//!
//! The user scope (`reticle init --scope user`, HOME a private tempdir) is checked the same way
//! up to `tools/list`: every client's home config is read as its client reads it (JSON
//! `command`/`args`/`env`, OpenCode's one `command` array and `environment`, Codex's TOML
//! `[mcp_servers.reticle]`), spawned exactly so, and must answer `initialize` and `tools/list`.
//!
//! The config files, their formats and keys are written out here on purpose, not imported from
//! the product: they are what the clients read (each client's documentation, cited in
//! `reticle/src/cli/init/clients.rs`), and a product that moved them must fail this gate.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use harness::ReapPort;
use harness::cli::Ran;
use harness::{
    Browser, FixtureApp, McpClient, Outcome, OwnedDaemon, ProxyOptions, binaries, free_port, poll,
};
use reticle::auth::token::TOKEN_FILE;
use reticle::config::{DEFAULT_PORT, env};
use serde_json::{Value, json};

/// How a client reads Reticle's entry out of its config file.
#[derive(Debug, Clone, Copy)]
enum Reader {
    /// JSON with the servers by name under `key`: `command` a string, `args` a list, `env` a map;
    /// `type` must be `kind` when the client needs one.
    Json {
        key: &'static str,
        kind: Option<&'static str>,
    },
    /// OpenCode: JSON servers under `mcp` (or `mcp.servers`), `"type": "local"`, `command` one
    /// list (the program, then its arguments), `environment` a map.
    OpenCode,
    /// Codex: TOML `[mcp_servers.reticle]`, `command` a string, `args` a list, `env` a table.
    Codex,
}

/// One client's config: its file (relative to the project, or to HOME) and how it is read.
#[derive(Debug, Clone, Copy)]
struct ClientConfig {
    file: &'static str,
    reader: Reader,
}

const fn json(file: &'static str, key: &'static str, kind: Option<&'static str>) -> ClientConfig {
    ClientConfig {
        file,
        reader: Reader::Json { key, kind },
    }
}

/// The configs `reticle init` writes by default (the project scope), as their clients read them.
const CONFIGS: &[ClientConfig] = &[
    json(".mcp.json", "mcpServers", None),
    json(".cursor/mcp.json", "mcpServers", None),
    json(".vscode/mcp.json", "servers", Some("stdio")),
    json(".gemini/settings.json", "mcpServers", None),
    ClientConfig {
        file: "opencode.json",
        reader: Reader::OpenCode,
    },
    ClientConfig {
        file: ".codex/config.toml",
        reader: Reader::Codex,
    },
];
/// The configs `reticle init --scope user` writes, relative to HOME (Linux paths), as their
/// clients read them.
const USER_CONFIGS: &[ClientConfig] = &[
    json(".claude.json", "mcpServers", None),
    json(".cursor/mcp.json", "mcpServers", None),
    json(".config/Code/User/mcp.json", "servers", Some("stdio")),
    json(".codeium/windsurf/mcp_config.json", "mcpServers", None),
    json(".gemini/settings.json", "mcpServers", None),
    ClientConfig {
        file: ".config/opencode/opencode.json",
        reader: Reader::OpenCode,
    },
    ClientConfig {
        file: ".codex/config.toml",
        reader: Reader::Codex,
    },
];
/// The name every config registers Reticle under.
const SERVER_NAME: &str = "reticle";
/// How long the page gets to appear in `reticle_sessions` through one config's server.
const SESSION_BOUND: Duration = Duration::from_secs(15);
/// The session id the fixture page connects as.
const PAGE_SESSION: &str = "install-gate";

/// The directories each supported agent keeps its own settings in, relative to HOME (Linux
/// paths): what shows `reticle init` that the agent is installed.
const AGENT_HOMES: &[&str] = &[
    ".claude",
    ".cursor",
    ".config/Code",
    ".codeium/windsurf",
    ".gemini",
    ".config/opencode",
    ".codex",
];

/// A fresh project directory, a private state dir and a private HOME: a machine that never ran
/// Reticle.
struct Pristine {
    project: tempfile::TempDir,
    state: tempfile::TempDir,
    home: tempfile::TempDir,
    /// Whether the machine's agents are installed (their settings under HOME, the real PATH);
    /// without, HOME is empty and PATH holds only the binary under test.
    agents: bool,
}

impl Pristine {
    /// A machine where every agent `reticle init` supports is installed.
    fn new() -> Self {
        let pristine = Self::without_agents();
        for dir in AGENT_HOMES {
            std::fs::create_dir_all(pristine.home().join(dir)).expect("an agent's settings dir");
        }
        Self {
            agents: true,
            ..pristine
        }
    }

    /// A machine with no agent at all.
    fn without_agents() -> Self {
        Self {
            project: tempfile::tempdir().expect("a temporary project dir"),
            state: tempfile::tempdir().expect("a private state dir"),
            home: tempfile::tempdir().expect("a private home"),
            agents: false,
        }
    }

    fn home(&self) -> &Path {
        self.home.path()
    }

    fn project(&self) -> &Path {
        self.project.path()
    }

    fn config(&self, file: &str) -> PathBuf {
        self.project().join(file)
    }

    /// Runs `reticle init --dir <project> <args>` as a user would, with the binary under test on
    /// PATH, the private state dir and the private HOME (the homes the clients honour unset).
    async fn init(&self, args: &[&str]) -> Ran {
        let dir = self.project().to_string_lossy().into_owned();
        let mut line = vec!["init", "--dir", &dir];
        line.extend_from_slice(args);
        let mut command = harness::cli::command(self.state.path(), &line);
        command
            .env("PATH", path_with_binary_under_test(self.agents))
            .env("HOME", self.home())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CODEX_HOME")
            .env_remove(env::TOKEN)
            .env_remove(env::PORT);
        harness::cli::run_command(command).await
    }
}

/// PATH with the directory of the binary under test first, then (with `rest`) this process's.
fn path_with_binary_under_test(rest: bool) -> std::ffi::OsString {
    let bin = binaries::reticle();
    let dir = bin.parent().expect("the binary lives in a directory");
    let rest = if rest {
        std::env::var_os("PATH").unwrap_or_default()
    } else {
        std::ffi::OsString::new()
    };
    std::env::join_paths(std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&rest)))
        .expect("PATH entries hold no separator")
}

/// The lines of init's output that carry `mark`.
fn lines_marked<'a>(ran: &'a Ran, mark: &str) -> Vec<&'a str> {
    ran.stdout
        .lines()
        .filter(|line| line.starts_with(mark))
        .collect()
}

/// Init's own account of a pristine project: exit 0, not one `[⚠]` or `[✗]`, at least one `[✓]`.
fn judge_init(ran: &Ran) -> Outcome {
    let warned = lines_marked(ran, "[⚠]");
    let failed = lines_marked(ran, "[✗]");
    let because = if !ran.ok() {
        format!("reticle init exited {:?}", ran.code)
    } else if !failed.is_empty() || !warned.is_empty() {
        format!("reticle init reported {failed:?} {warned:?}")
    } else if lines_marked(ran, "[✓]").is_empty() {
        "reticle init did nothing on a pristine project (no [✓] line)".to_string()
    } else {
        return Outcome::Pass;
    };
    Outcome::Fail {
        because: format!("{because}\n{}", ran.said()),
    }
}

/// What one client config tells its client to start.
#[derive(Debug, Clone)]
struct ServerEntry {
    file: &'static str,
    command: String,
    args: Vec<String>,
    /// The environment the config gives the server, set on top of the client's own.
    env: Vec<(String, String)>,
}

impl ServerEntry {
    /// The port the arguments give `reticle mcp` (its default when they give none).
    fn port(&self) -> u16 {
        self.args
            .iter()
            .position(|arg| arg == "--port")
            .and_then(|at| self.args.get(at + 1))
            .and_then(|port| port.parse().ok())
            .unwrap_or(DEFAULT_PORT)
    }
}

/// Reads Reticle's entry out of a config under `base` (the project, or HOME) as its client
/// would; `Err` says what a client would miss.
fn read_entry(base: &Path, config: ClientConfig) -> Result<ServerEntry, String> {
    let file = config.file;
    let text = std::fs::read_to_string(base.join(file))
        .map_err(|err| format!("{file} cannot be read: {err}"))?;
    let (command, args, env) = match config.reader {
        Reader::Json { key, kind } => {
            let config: Value =
                serde_json::from_str(&text).map_err(|err| format!("{file} is not JSON: {err}"))?;
            let entry = config
                .get(key)
                .and_then(|servers| servers.get(SERVER_NAME))
                .ok_or_else(|| {
                    format!("{file} has no \"{key}\".\"{SERVER_NAME}\" entry: {config}")
                })?;
            if let Some(kind) = kind
                && entry["type"] != kind
            {
                return Err(format!(
                    "{file}: the entry's type is not \"{kind}\": {entry}"
                ));
            }
            let command = entry["command"]
                .as_str()
                .ok_or_else(|| format!("{file}: the entry names no command: {entry}"))?
                .to_string();
            let args = json_strings(&entry["args"]).ok_or_else(|| {
                format!("{file}: the entry's args are not a list of strings: {entry}")
            })?;
            let env = json_env(&entry["env"]).ok_or_else(|| {
                format!("{file}: the entry's env is not a map of strings: {entry}")
            })?;
            (command, args, env)
        }
        Reader::OpenCode => {
            let config: Value =
                serde_json::from_str(&text).map_err(|err| format!("{file} is not JSON: {err}"))?;
            let servers = match config["mcp"].get("servers") {
                Some(servers) if servers.is_object() => servers,
                _ => &config["mcp"],
            };
            let entry = servers.get(SERVER_NAME).ok_or_else(|| {
                format!("{file} has no \"mcp\".\"{SERVER_NAME}\" entry: {config}")
            })?;
            if entry["type"] != "local" {
                return Err(format!(
                    "{file}: the entry's type is not \"local\": {entry}"
                ));
            }
            if entry["enabled"] == false {
                return Err(format!("{file}: the entry is disabled: {entry}"));
            }
            let mut line = json_strings(&entry["command"])
                .filter(|line| !line.is_empty())
                .ok_or_else(|| {
                    format!("{file}: the entry's command is not a list of strings: {entry}")
                })?;
            let env = json_env(&entry["environment"]).ok_or_else(|| {
                format!("{file}: the entry's environment is not a map of strings: {entry}")
            })?;
            let command = line.remove(0);
            (command, line, env)
        }
        Reader::Codex => {
            let config: toml_edit::DocumentMut = text
                .parse()
                .map_err(|err| format!("{file} is not TOML: {err}"))?;
            let entry = config
                .get("mcp_servers")
                .and_then(|servers| servers.get(SERVER_NAME))
                .and_then(toml_edit::Item::as_table_like)
                .ok_or_else(|| {
                    format!("{file} has no [mcp_servers.{SERVER_NAME}] table:\n{text}")
                })?;
            let command = entry
                .get("command")
                .and_then(toml_edit::Item::as_str)
                .ok_or_else(|| format!("{file}: the entry names no command:\n{text}"))?
                .to_string();
            let args = match entry.get("args") {
                None => Some(Vec::new()),
                Some(args) => args.as_array().and_then(|args| {
                    args.iter()
                        .map(|arg| arg.as_str().map(str::to_string))
                        .collect()
                }),
            }
            .ok_or_else(|| {
                format!("{file}: the entry's args are not a list of strings:\n{text}")
            })?;
            let env = match entry.get("env") {
                None => Some(Vec::new()),
                Some(env) => env.as_table_like().and_then(|env| {
                    env.iter()
                        .map(|(key, value)| Some((key.to_string(), value.as_str()?.to_string())))
                        .collect()
                }),
            }
            .ok_or_else(|| format!("{file}: the entry's env is not a table of strings:\n{text}"))?;
            (command, args, env)
        }
    };
    Ok(ServerEntry {
        file,
        command,
        args,
        env,
    })
}

/// A JSON list of strings (absent: none).
fn json_strings(value: &Value) -> Option<Vec<String>> {
    match value {
        Value::Null => Some(Vec::new()),
        Value::Array(items) => items
            .iter()
            .map(|item| item.as_str().map(str::to_string))
            .collect(),
        _ => None,
    }
}

/// A JSON map of strings (absent: none).
fn json_env(value: &Value) -> Option<Vec<(String, String)>> {
    match value {
        Value::Null => Some(Vec::new()),
        Value::Object(vars) => vars
            .iter()
            .map(|(key, value)| Some((key.clone(), value.as_str()?.to_string())))
            .collect(),
        _ => None,
    }
}

/// The proxy options that spawn `entry` exactly as its client would: its command (resolved),
/// its arguments and its environment, with the private state dir.
fn spawn_options(entry: &ServerEntry, state: &Path) -> Result<ProxyOptions, String> {
    let binary = resolve(&entry.command)?;
    let mut options = ProxyOptions::new(entry.port(), state)
        .program(&binary)
        .args(&entry.args);
    for (key, value) in &entry.env {
        options = options.env(key, value);
    }
    Ok(options)
}

/// The program a client starts for `command`: `reticle`, found on PATH, is the binary under
/// test; any other program is not Reticle's server.
fn resolve(command: &str) -> Result<PathBuf, String> {
    if command == "reticle" {
        Ok(binaries::reticle())
    } else {
        Err(format!(
            "the config starts `{command}`, which is not the reticle binary"
        ))
    }
}

/// Spawns what `options` names as a client would, completes the handshake and lists the tools;
/// `Err` says which step failed (the client is closed then).
async fn handshake_and_list(options: ProxyOptions) -> Result<McpClient, String> {
    let client = McpClient::start(options)
        .await
        .map_err(|failure| format!("the MCP handshake failed: {failure:?}"))?;
    let why = match client.list_tools().await {
        Err(failure) => format!("tools/list failed: {failure:?}"),
        Ok(tools) if !tools.iter().any(|t| t == "reticle_sessions") => {
            format!("tools/list lacks reticle_sessions: {tools:?}")
        }
        Ok(_) => return Ok(client),
    };
    client.close().await;
    Err(why)
}

/// Acts as the entry's client: spawns exactly what it names, completes the handshake, lists the
/// tools, and polls `reticle_sessions` until the page is listed.
async fn reach_page_through(entry: &ServerEntry, state: &Path) -> Outcome {
    let fail = |because: String| Outcome::Fail {
        because: format!("{}: {because}", entry.file),
    };
    let options = match spawn_options(entry, state) {
        Ok(options) => options,
        Err(why) => return fail(why),
    };
    let port = entry.port();
    let client = match handshake_and_list(options).await {
        Ok(client) => client,
        Err(why) => return fail(why),
    };
    let mut last = Value::Null;
    let listed = poll::within(SESSION_BOUND, async || {
        let result = client.call_tool("reticle_sessions", json!({})).await.ok()?;
        last = result["structuredContent"].clone();
        last["sessions"]
            .as_array()?
            .iter()
            .any(|s| s["sessionId"] == PAGE_SESSION)
            .then_some(())
    })
    .await;
    let outcome = match listed {
        Some(()) => Outcome::Pass,
        None => fail(format!(
            "reticle_sessions through `{} {}` never listed the page '{PAGE_SESSION}' within {SESSION_BOUND:?}: the config starts it on port {port}; its last answer: {last}",
            entry.command,
            entry.args.join(" ")
        )),
    };
    client.close().await;
    outcome
}

/// What one run of the install check established.
struct InstallRun {
    outcome: Outcome,
    init: Ran,
    entries: Vec<ServerEntry>,
}

/// The install check: `reticle init --port <init_port>` on a pristine project; the app's daemon
/// on `daemon_port` with the same state dir; the fixture page dialling it with the token from
/// the file init named; then every written config's server asked for that page.
async fn install_check(daemon_port: u16, init_port: u16) -> InstallRun {
    let pristine = Pristine::new();
    let init = pristine.init(&["--port", &init_port.to_string()]).await;
    let mut run = InstallRun {
        outcome: judge_init(&init),
        init,
        entries: Vec::new(),
    };
    if !run.outcome.is_pass() {
        return run;
    }
    let fail = |because: String| Outcome::Fail { because };
    let token_file = pristine.state.path().join(TOKEN_FILE);
    if !run.init.stdout.contains(&token_file.display().to_string()) {
        run.outcome = fail(format!(
            "reticle init never said where the pairing token is ({}):\n{}",
            token_file.display(),
            run.init.stdout
        ));
        return run;
    }
    let token = match std::fs::read_to_string(&token_file) {
        Ok(token) if !token.trim().is_empty() => token.trim().to_string(),
        other => {
            run.outcome = fail(format!("the token file init named is unusable: {other:?}"));
            return run;
        }
    };
    for config in CONFIGS {
        match read_entry(pristine.project(), *config) {
            Ok(entry) => run.entries.push(entry),
            Err(why) => {
                run.outcome = fail(why);
                return run;
            }
        }
    }

    let inconclusive = |because: String| Outcome::Inconclusive { because };
    let mut daemon = match OwnedDaemon::builder()
        .port(daemon_port)
        .state_dir(pristine.state.path())
        .try_start()
        .await
    {
        Ok(daemon) => daemon,
        Err(why) => {
            run.outcome = inconclusive(why);
            return run;
        }
    };
    // A miswired config's `reticle mcp` starts a daemon of its own on the wrong port.
    let _reap = (init_port != daemon_port).then(|| ReapPort(init_port));
    let app = FixtureApp::start().await;
    let browser = match Browser::launch().await {
        Ok(browser) => browser,
        Err(err) => {
            run.outcome = inconclusive(format!("no browser for the app: {err}"));
            return run;
        }
    };
    let page = app.url(&format!(
        "/?reticlePort={daemon_port}&reticleToken={token}&session={PAGE_SESSION}"
    ));
    let _tab = match browser.open(&page).await {
        Ok(tab) => tab,
        Err(err) => {
            run.outcome = inconclusive(format!("the app's page did not open: {err}"));
            return run;
        }
    };
    for entry in &run.entries {
        let outcome = reach_page_through(entry, pristine.state.path()).await;
        if daemon.has_exited() {
            run.outcome = inconclusive(format!(
                "the app's daemon on port {daemon_port} died during the check; nothing is known about the wiring (log: {})",
                daemon.log_path().display()
            ));
            return run;
        }
        if !outcome.is_pass() {
            run.outcome = outcome;
            return run;
        }
    }
    run.outcome = Outcome::Pass;
    run
}

/// Asserts that init's line for the config it shows as `shown` says `[=]` ... `unchanged`.
fn assert_said_unchanged(ran: &Ran, shown: &str) {
    let line = ran
        .stdout
        .lines()
        .find(|l| l.contains(&format!("{shown} (")))
        .unwrap_or_else(|| panic!("no line for {shown}:\n{}", ran.stdout));
    assert!(
        line.starts_with("[=]") && line.ends_with("unchanged"),
        "{line}"
    );
}

/// A free port other than `taken`.
fn another_free_port(taken: u16) -> u16 {
    loop {
        let port = free_port();
        if port != taken {
            return port;
        }
    }
}

#[tokio::test]
async fn init_wires_a_pristine_project_so_every_client_config_reaches_the_page() {
    let port = free_port();
    let run = install_check(port, port).await;
    assert_eq!(run.outcome, Outcome::Pass, "{}", run.outcome);
    assert!(lines_marked(&run.init, "[✓]").len() >= CONFIGS.len());
    let expected = ["mcp", "--port", &port.to_string()].map(str::to_string);
    for entry in &run.entries {
        assert_eq!(entry.command, "reticle", "{entry:?}");
        assert_eq!(entry.args, expected, "{entry:?}");
    }
    assert!(
        run.init.stdout.contains(&format!(
            "connect({{ port: {port}, token: '<pairing token>' }})"
        )),
        "the SDK snippet names the port:\n{}",
        run.init.stdout
    );
}

/// Negative control: init wired to another port than the daemon the app dials must be caught.
#[tokio::test]
async fn an_init_wired_to_another_port_than_the_apps_daemon_fails_the_check() {
    let daemon_port = free_port();
    let wrong_port = another_free_port(daemon_port);
    let run = install_check(daemon_port, wrong_port).await;
    // Init cannot know which port the app dials: its own account is clean.
    assert_eq!(judge_init(&run.init), Outcome::Pass, "{}", run.init.said());
    match &run.outcome {
        Outcome::Fail { because } => {
            assert!(because.contains("never listed the page"), "{because}");
            assert!(because.contains(&format!("port {wrong_port}")), "{because}");
        }
        other => panic!("a miswired project must fail the check, got {other}"),
    }
}

#[tokio::test]
async fn a_second_init_changes_nothing_and_the_servers_already_there_are_kept() {
    let pristine = Pristine::new();
    let port = free_port().to_string();
    let theirs = json!({
        "custom": {"keep": true},
        "mcpServers": {"other": {"command": "other-mcp", "args": ["serve"], "env": {"A": "1"}}}
    });
    std::fs::write(pristine.config(".mcp.json"), theirs.to_string()).unwrap();

    let first = pristine.init(&["--port", &port]).await;
    assert_eq!(judge_init(&first), Outcome::Pass);
    let added = lines_marked(&first, "[✓]");
    assert!(
        added
            .iter()
            .any(|l| l.contains(".mcp.json") && l.contains("kept 1 other server(s)")),
        "{added:?}"
    );
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(pristine.config(".mcp.json")).unwrap())
            .unwrap();
    assert_eq!(merged["custom"], theirs["custom"]);
    assert_eq!(merged["mcpServers"]["other"], theirs["mcpServers"]["other"]);
    assert_eq!(merged["mcpServers"]["reticle"]["command"], "reticle");

    let before: Vec<Vec<u8>> = CONFIGS
        .iter()
        .map(|ClientConfig { file, .. }| std::fs::read(pristine.config(file)).unwrap())
        .collect();
    let second = pristine.init(&["--port", &port]).await;
    assert!(second.ok(), "{}", second.said());
    for ClientConfig { file, .. } in CONFIGS {
        assert_said_unchanged(&second, file);
    }
    assert!(
        second
            .stdout
            .lines()
            .any(|l| l.starts_with("[=] pairing token: already in")),
        "{}",
        second.stdout
    );
    let after: Vec<Vec<u8>> = CONFIGS
        .iter()
        .map(|ClientConfig { file, .. }| std::fs::read(pristine.config(file)).unwrap())
        .collect();
    assert_eq!(
        before, after,
        "a second run must leave every config byte for byte"
    );
}

/// A machine with no agent (empty HOME, nothing of theirs on PATH): init writes no agent
/// config, says which it skipped and how to name one, and still does the rest. Named with
/// `--client`, that one is written and only that one.
#[tokio::test]
async fn with_no_agent_installed_init_writes_no_agent_config_and_says_how_to_name_one() {
    let pristine = Pristine::without_agents();
    let port = free_port().to_string();
    let ran = pristine.init(&["--port", &port]).await;
    assert!(ran.ok(), "{}", ran.said());
    for ClientConfig { file, .. } in CONFIGS {
        assert!(!pristine.config(file).exists(), "{file}\n{}", ran.stdout);
    }
    let skipped = lines_marked(&ran, "[⚠]");
    assert!(
        skipped
            .iter()
            .any(|l| l.starts_with("[⚠] agents: no agent config written")
                && l.contains("reticle init --client NAME")),
        "{}",
        ran.stdout
    );
    let named = pristine
        .init(&["--port", &port, "--client", "cursor"])
        .await;
    assert!(named.ok(), "{}", named.said());
    assert!(
        pristine.config(".cursor/mcp.json").exists(),
        "{}",
        named.stdout
    );
    assert!(!pristine.config(".mcp.json").exists(), "{}", named.stdout);
    assert!(!named.stdout.contains("agents: "), "{}", named.stdout);
}

/// Negative control: a malformed config is refused by name, left alone, and fails the check.
#[tokio::test]
async fn a_malformed_config_is_refused_by_name_left_alone_and_fails_the_check() {
    let pristine = Pristine::new();
    let broken = "{ \"mcpServers\": ";
    std::fs::create_dir_all(pristine.config(".cursor")).unwrap();
    std::fs::write(pristine.config(".cursor/mcp.json"), broken).unwrap();

    let ran = pristine.init(&["--port", &free_port().to_string()]).await;
    assert_eq!(ran.code, Some(1), "{}", ran.said());
    let failed = lines_marked(&ran, "[✗]");
    assert_eq!(failed.len(), 1, "{}", ran.stdout);
    assert!(failed[0].contains(".cursor/mcp.json"), "{}", failed[0]);
    assert!(failed[0].contains("not valid JSON"), "{}", failed[0]);
    assert!(
        failed[0].contains("run `reticle init` again"),
        "{}",
        failed[0]
    );
    assert_eq!(
        std::fs::read_to_string(pristine.config(".cursor/mcp.json")).unwrap(),
        broken
    );
    for other in [CONFIGS[0], CONFIGS[2]] {
        assert!(read_entry(pristine.project(), other).is_ok(), "{other:?}");
    }
    assert!(matches!(judge_init(&ran), Outcome::Fail { .. }));
    assert!(!ran.stderr.contains("panicked"), "{}", ran.stderr);
}

/// Negative controls for the config reading: a config without Reticle's entry, or one starting
/// another program, fails the check before anything is spawned.
#[test]
fn a_config_without_reticle_or_starting_another_program_fails_the_check() {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(
        project.path().join(".mcp.json"),
        r#"{"mcpServers": {"other": {"command": "other-mcp"}}}"#,
    )
    .unwrap();
    let missing = read_entry(project.path(), CONFIGS[0]).unwrap_err();
    assert!(
        missing.contains("no \"mcpServers\".\"reticle\" entry"),
        "{missing}"
    );

    std::fs::create_dir_all(project.path().join(".vscode")).unwrap();
    std::fs::write(
        project.path().join(".vscode/mcp.json"),
        r#"{"servers": {"reticle": {"command": "reticle", "args": ["mcp"]}}}"#,
    )
    .unwrap();
    let untyped = read_entry(project.path(), CONFIGS[2]).unwrap_err();
    assert!(untyped.contains("type is not \"stdio\""), "{untyped}");

    assert!(
        resolve("npx")
            .unwrap_err()
            .contains("not the reticle binary")
    );
    assert_eq!(resolve("reticle").unwrap(), binaries::reticle());
}

/// Spawns `entry` as its client would, started in `project` (the daemon it may start takes that
/// as its project, never the source tree), and asks it for `initialize` and `tools/list`.
async fn serve_through(entry: &ServerEntry, state: &Path, project: &Path) -> Outcome {
    let options = match spawn_options(entry, state) {
        Ok(options) => options.env(env::PROJECT_DIR, project.to_string_lossy()),
        Err(why) => {
            return Outcome::Fail {
                because: format!("{}: {why}", entry.file),
            };
        }
    };
    match handshake_and_list(options).await {
        Ok(client) => {
            client.close().await;
            Outcome::Pass
        }
        Err(why) => Outcome::Fail {
            because: format!("{}: {why}", entry.file),
        },
    }
}

#[tokio::test]
async fn init_in_the_user_scope_wires_every_clients_home_config_so_each_serves_mcp() {
    let pristine = Pristine::new();
    let port = free_port();
    let _reap = ReapPort(port);
    // A Codex config of the user's own: its comment and its server must survive the merge.
    let codex = pristine.home().join(".codex/config.toml");
    std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
    let theirs = "# mine\nmodel = \"o3\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n";
    std::fs::write(&codex, theirs).unwrap();

    let first = pristine
        .init(&["--scope", "user", "--port", &port.to_string()])
        .await;
    assert_eq!(judge_init(&first), Outcome::Pass, "{}", first.said());
    assert!(
        !pristine.project().join(".mcp.json").exists(),
        "the user scope writes no project config"
    );
    let merged = std::fs::read_to_string(&codex).unwrap();
    assert!(merged.starts_with(theirs), "{merged}");

    let expected = ["mcp", "--port", &port.to_string()].map(str::to_string);
    for config in USER_CONFIGS {
        let entry = read_entry(pristine.home(), *config).unwrap_or_else(|why| panic!("{why}"));
        assert_eq!(entry.command, "reticle", "{entry:?}");
        assert_eq!(entry.args, expected, "{entry:?}");
        let outcome = serve_through(&entry, pristine.state.path(), pristine.project()).await;
        assert_eq!(outcome, Outcome::Pass, "{outcome}");
    }

    let before: Vec<Vec<u8>> = USER_CONFIGS
        .iter()
        .map(|config| std::fs::read(pristine.home().join(config.file)).unwrap())
        .collect();
    let second = pristine
        .init(&["--scope", "user", "--port", &port.to_string()])
        .await;
    assert!(second.ok(), "{}", second.said());
    for config in USER_CONFIGS {
        assert_said_unchanged(
            &second,
            &pristine.home().join(config.file).display().to_string(),
        );
    }
    let after: Vec<Vec<u8>> = USER_CONFIGS
        .iter()
        .map(|config| std::fs::read(pristine.home().join(config.file)).unwrap())
        .collect();
    assert_eq!(
        before, after,
        "a second run must leave every config byte for byte"
    );
}

/// Negative controls for the OpenCode and Codex readers: an entry their client would not start
/// fails the check before anything is spawned, and the environment a config gives is what the
/// server is spawned with.
#[test]
fn opencode_and_codex_entries_are_read_as_their_clients_read_them() {
    let project = tempfile::tempdir().unwrap();
    let opencode = CONFIGS.iter().find(|c| c.file == "opencode.json").unwrap();
    let codex = CONFIGS
        .iter()
        .find(|c| c.file == ".codex/config.toml")
        .unwrap();
    let write = |file: &str, text: &str| {
        let path = project.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };

    write(
        "opencode.json",
        r#"{"mcp": {"reticle": {"type": "remote", "url": "http://127.0.0.1:1/mcp"}}}"#,
    );
    let remote = read_entry(project.path(), *opencode).unwrap_err();
    assert!(remote.contains("type is not \"local\""), "{remote}");
    write(
        "opencode.json",
        r#"{"mcp": {"servers": {"reticle": {"type": "local", "command": ["reticle", "mcp"], "environment": {"A": "1"}}}}}"#,
    );
    let native = read_entry(project.path(), *opencode).unwrap();
    assert_eq!(
        (native.command.as_str(), native.args.as_slice()),
        ("reticle", &["mcp".to_string()][..])
    );
    assert_eq!(native.env, [("A".to_string(), "1".to_string())]);

    write(
        ".codex/config.toml",
        "[mcp_servers.docs]\ncommand = \"docs-mcp\"\n",
    );
    let missing = read_entry(project.path(), *codex).unwrap_err();
    assert!(
        missing.contains("no [mcp_servers.reticle] table"),
        "{missing}"
    );
    write(".codex/config.toml", "[mcp_servers.reticle\n");
    let broken = read_entry(project.path(), *codex).unwrap_err();
    assert!(broken.contains("is not TOML"), "{broken}");
    write(
        ".codex/config.toml",
        "[mcp_servers.reticle]\ncommand = \"npx\"\nargs = [\"reticle\"]\nenv = { B = \"2\" }\n",
    );
    let other = read_entry(project.path(), *codex).unwrap();
    assert_eq!(other.env, [("B".to_string(), "2".to_string())]);
    let state = tempfile::tempdir().unwrap();
    assert!(
        spawn_options(&other, state.path())
            .unwrap_err()
            .contains("not the reticle binary")
    );
}

/// `--write` edits files inside `--dir` only: an entry module that `index.html` loads from
/// outside the project (`src/../../x.js`) is left alone, named, with the line to add by hand,
/// and nothing outside is written.
#[tokio::test]
async fn write_refuses_an_entry_module_outside_the_project() {
    let pristine = Pristine::new();
    let project = pristine.project();
    let name = project.file_name().unwrap().to_string_lossy().into_owned();
    let outside = project.parent().unwrap().join(format!("{name}-outside.js"));
    let src = format!("/src/../../{name}-outside.js");
    std::fs::write(
        project.join("package.json"),
        r#"{"devDependencies": {"vite": "^5.0.0"}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(
        project.join("index.html"),
        format!("<html><body><script type=\"module\" src=\"{src}\"></script></body></html>"),
    )
    .unwrap();

    let port = free_port().to_string();
    let ran = pristine
        .init(&["--port", &port, "--write", "--client", "claude"])
        .await;
    let left_alone = lines_marked(&ran, "[⚠]");
    assert!(
        left_alone
            .iter()
            .any(|l| l.contains("lies outside the project")),
        "{}",
        ran.said()
    );
    assert!(!outside.exists(), "init wrote {}", outside.display());
    assert!(!ran.stderr.contains("panicked"), "{}", ran.stderr);
    // Control: the same entry inside the project is wired.
    std::fs::write(
        project.join("index.html"),
        "<html><body><script type=\"module\" src=\"/src/main.js\"></script></body></html>",
    )
    .unwrap();
    std::fs::write(project.join("src/main.js"), "console.log('app');\n").unwrap();
    let ran = pristine
        .init(&["--port", &port, "--write", "--client", "claude"])
        .await;
    let main = std::fs::read_to_string(project.join("src/main.js")).unwrap();
    assert!(main.contains("reticle:begin"), "{}\n{main}", ran.said());
}
