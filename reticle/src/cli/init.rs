//! `reticle init`: wire a project for Reticle from a pristine state. It owns the command's
//! arguments (which clients, which scope), the order of its steps ([`steps`]), one marked line
//! per step and the closing note ([`report`]), and a non-zero exit for a failed step.
//!
//! It must not start or stop a daemon; the app's stack and its snippet are the
//! [`crate::wiring`] room's.

mod clients;
mod ignore;
mod locations;
mod merge;
mod merge_toml;
mod report;
mod steps;

use std::path::PathBuf;

use clap::Args;

/// What `reticle doctor` checks the way init does: the program agents start, the PATH lookup,
/// and the `.gitignore` block.
pub(super) use clients::COMMAND;
pub(super) use ignore::plan as plan_ignore;
pub(super) use locations::find_executable;

use super::{Exit, PortArg};
use clients::{Client, Scope};
use locations::Roots;
use report::{Mark, Step};

/// The arguments of `reticle init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The project directory to wire (default: the current directory).
    #[arg(long, default_value = ".")]
    dir: PathBuf,
    #[command(flatten)]
    port: PortArg,
    /// A client to wire (repeat it, or separate names with commas; default: every client that
    /// has a config in the scope and is installed or configured here: its settings, its config
    /// or its program on PATH).
    #[arg(
        long = "client",
        value_enum,
        value_delimiter = ',',
        value_name = "NAME"
    )]
    clients: Vec<Client>,
    /// Whose configs to write: the project's (committed, shared with the team) or the user's
    /// (under $HOME, read in every project).
    #[arg(long, value_enum, default_value_t = Scope::Project)]
    scope: Scope,
    /// Print what would change and change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Also wire the app: add a development-only line that loads the daemon's own SDK to the
    /// entry its dev stack runs first (Vite: the module index.html loads; Next.js 15.3+:
    /// instrumentation-client; plain HTML: index.html, loaded only on a loopback host). A second
    /// run changes nothing. Without it, init prints exactly the lines it would add, and where.
    #[arg(long)]
    write: bool,
}

/// Runs every step, prints its line, and fails when any step failed.
pub fn init(args: InitArgs) -> Result<(), Exit> {
    let port = args.port.resolve()?;
    if !args.dir.is_dir() {
        return Err(Exit::failure(format!(
            "--dir {} is not a directory: create the project directory first, or pass the one that holds your app",
            args.dir.display()
        )));
    }
    let project = args.dir.canonicalize().map_err(|err| {
        Exit::failure(format!(
            "--dir {} cannot be resolved ({err}): pass a directory you can read",
            args.dir.display()
        ))
    })?;
    let roots = Roots::from_env(&project);
    let chosen = chosen_clients(&args.clients, args.scope, &roots)?;

    println!(
        "reticle init: wiring {} ({} configs) for the daemon on 127.0.0.1:{port}{}",
        project.display(),
        args.scope.name(),
        if args.dry_run {
            " (dry run: nothing is written)"
        } else {
            ""
        }
    );
    // Each chosen client has a config in the scope (`chosen_clients` refused any other).
    let mut steps: Vec<Step> = chosen
        .wired
        .iter()
        .filter_map(|client| match roots.config_file(*client, args.scope) {
            Ok(file) => file.map(|file| steps::wire_client(&file, port, args.dry_run)),
            Err(why) => Some(Step::new(Mark::Failed, why)),
        })
        .collect();
    steps.extend(skipped_step(&chosen));
    let (app, app_wired) = steps::wire_app(&project, port, args.write, args.dry_run);
    steps.push(app);
    steps.extend(steps::stores_by_hand(&project, port));
    steps.push(ignore::ignore_runtime(&project, args.dry_run));
    let (token_step, token) = steps::provision_token(args.dry_run);
    steps.push(token_step);
    steps.push(steps::check_on_path());
    for step in &steps {
        println!("{step}");
    }
    if let Some(token) = token {
        println!();
        if crate::wiring::depends_on_published_sdk(&project) {
            println!("{}", report::published_sdk_note(port));
            println!();
        }
        println!("{}", report::sdk_note(port, &token, app_wired));
    }
    let failed = steps.iter().filter(|s| s.mark == Mark::Failed).count();
    if failed == 0 {
        return Ok(());
    }
    println!();
    println!(
        "{failed} step(s) failed ([✗] above): each line says what to fix; run `reticle init` again once it is fixed."
    );
    Err(Exit::silent_failure())
}

/// The clients `reticle init` wires, and those it leaves alone.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Chosen {
    /// Named with `--client`, or found on this machine.
    wired: Vec<Client>,
    /// Not named, with a config in the scope, but not found here: no config, no settings of
    /// theirs, no program on PATH.
    skipped: Vec<Client>,
}

/// The clients named (in the order given, once each), or, when none was, every client with a
/// config in `scope` that is installed or configured here ([`Roots::found`]). A client named
/// without a config in `scope` is a usage error naming its scope.
fn chosen_clients(named: &[Client], scope: Scope, roots: &Roots) -> Result<Chosen, Exit> {
    if named.is_empty() {
        let (wired, skipped) = Client::ALL
            .into_iter()
            .filter(|client| client.location(scope).is_some())
            .partition(|client| roots.found(*client).is_some());
        return Ok(Chosen { wired, skipped });
    }
    let mut chosen = Vec::new();
    for client in named {
        if client.location(scope).is_none() {
            let theirs = [Scope::Project, Scope::User]
                .into_iter()
                .find(|other| client.location(*other).is_some())
                .map_or("none", Scope::name);
            return Err(Exit::usage(format!(
                "{} has no {} config (it reads its MCP servers from its {theirs} config only): run `reticle init --scope {theirs} --client {}`",
                client.label(),
                scope.name(),
                client.name()
            )));
        }
        if !chosen.contains(client) {
            chosen.push(*client);
        }
    }
    Ok(Chosen {
        wired: chosen,
        skipped: Vec::new(),
    })
}

/// The line naming the clients left alone, why, and how to wire one anyway; none when no client
/// was skipped. With no client wired at all it asks the user to name theirs.
fn skipped_step(chosen: &Chosen) -> Option<Step> {
    let first = chosen.skipped.first()?;
    let labels: Vec<&str> = chosen.skipped.iter().map(|c| c.label()).collect();
    let programs: Vec<String> = chosen
        .skipped
        .iter()
        .flat_map(|c| c.evidence().programs)
        .map(|p| format!("`{p}`"))
        .collect();
    let why = format!(
        "not installed or configured here (no config or settings of theirs, no {} on PATH)",
        programs.join(", ")
    );
    let names: Vec<String> = chosen.skipped.iter().map(|c| c.name()).collect();
    if chosen.wired.is_empty() {
        return Some(Step::new(
            Mark::NeedsUser,
            format!(
                "agents: no agent config written: {} {why}; name yours with `reticle init --client NAME` (NAME: {})",
                labels.join(", "),
                names.join(", ")
            ),
        ));
    }
    Some(Step::new(
        Mark::Unchanged,
        format!(
            "agents: skipped {} ({why}); to wire one anyway: `reticle init --client {}`",
            labels.join(", "),
            first.name()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use std::path::Path;

    use super::*;
    use crate::cli::{Cli, Command};

    fn parse(line: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("reticle").chain(line.iter().copied()))
    }

    /// The arguments of an `init` command line.
    fn parse_init(line: &[&str]) -> InitArgs {
        let Command::Init(args) = parse(line).unwrap().command else {
            panic!("{line:?} is not init")
        };
        args
    }

    #[test]
    fn the_written_arguments_are_what_reticle_mcp_accepts() {
        for port in [crate::config::DEFAULT_PORT, 4401] {
            let args = clients::mcp_args(port);
            let line: Vec<&str> = args.iter().map(String::as_str).collect();
            let cli = parse(&line).unwrap();
            let Command::Mcp { port: parsed, .. } = cli.command else {
                panic!("{args:?} is not `reticle mcp`")
            };
            assert_eq!(parsed.resolve().unwrap(), port);
        }
    }

    #[test]
    fn clients_are_named_repeated_or_comma_separated_and_deduplicated() {
        let args = parse_init(&["init", "--client", "vscode,claude", "--client", "vscode"]);
        let home = tempfile::tempdir().unwrap();
        let roots = Roots::for_home(home.path(), home.path());
        let chosen = chosen_clients(&args.clients, args.scope, &roots).unwrap();
        assert_eq!(chosen.wired, [Client::VsCode, Client::ClaudeCode]);
        assert_eq!(chosen.skipped, []);
    }

    /// A fake HOME with nothing of any agent: no config is written, and the line says so and
    /// how to name one. With one agent's settings there, that one alone is wired, and the
    /// others are named as skipped.
    #[test]
    fn only_clients_found_here_are_wired_unless_named() {
        let home = tempfile::tempdir().unwrap();
        let roots = Roots::for_home(home.path(), home.path());
        let none = chosen_clients(&[], Scope::User, &roots).unwrap();
        assert_eq!(none.wired, []);
        assert_eq!(none.skipped, Client::ALL);
        let step = skipped_step(&none).unwrap();
        assert_eq!(step.mark, Mark::NeedsUser, "{step}");
        assert!(step.text.contains("no agent config written"), "{step}");
        assert!(step.text.contains("reticle init --client NAME"), "{step}");
        assert!(step.text.contains("`codex`"), "{step}");

        std::fs::create_dir_all(home.path().join(".cursor")).unwrap();
        let one = chosen_clients(&[], Scope::Project, &roots).unwrap();
        assert_eq!(one.wired, [Client::Cursor]);
        assert!(
            !one.skipped.contains(&Client::Windsurf),
            "no project config"
        );
        let step = skipped_step(&one).unwrap();
        assert_eq!(step.mark, Mark::Unchanged, "{step}");
        assert!(
            step.text
                .starts_with("agents: skipped Claude Code, VS Code, Gemini CLI"),
            "{step}"
        );
        assert!(step.text.contains("reticle init --client claude"), "{step}");

        // Control: a named client is wired whatever is found, and nothing is skipped.
        let named = chosen_clients(&[Client::Codex], Scope::Project, &roots).unwrap();
        assert_eq!(named.wired, [Client::Codex]);
        assert_eq!(skipped_step(&named), None);
    }

    #[test]
    fn the_scope_is_project_by_default_and_its_clients_are_those_with_a_project_config() {
        let args = parse_init(&["init"]);
        assert_eq!(args.scope, Scope::Project);
        let home = tempfile::tempdir().unwrap();
        let roots = Roots::for_home(home.path(), home.path());
        let project = chosen_clients(&[], Scope::Project, &roots).unwrap();
        assert!(!project.skipped.contains(&Client::Windsurf), "{project:?}");
        assert_eq!(project.skipped.len(), Client::ALL.len() - 1);
        let args = parse_init(&["init", "--scope", "user", "--client", "windsurf,codex"]);
        assert_eq!(
            chosen_clients(&args.clients, args.scope, &roots)
                .unwrap()
                .wired,
            [Client::Windsurf, Client::Codex]
        );
    }

    #[test]
    fn a_client_named_in_a_scope_it_has_no_config_in_is_refused_with_the_fix() {
        let roots = Roots::for_home(Path::new("/p"), Path::new("/h"));
        let exit = chosen_clients(&[Client::Windsurf], Scope::Project, &roots).unwrap_err();
        let text = format!("{exit:?}");
        assert!(
            text.contains("reticle init --scope user --client windsurf"),
            "{text}"
        );
    }

    #[test]
    fn an_unknown_client_is_a_usage_error_naming_the_choices() {
        let err = parse(&["init", "--client", "emacs"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::InvalidValue);
        let text = err.to_string();
        assert!(
            text.contains("claude") && text.contains("cursor") && text.contains("vscode"),
            "{text}"
        );
        for added in ["windsurf", "gemini", "opencode", "codex"] {
            assert!(text.contains(added), "{text}");
        }
    }

    #[test]
    fn a_missing_project_directory_is_refused_with_the_fix() {
        let args = parse_init(&["init", "--dir", "/nonexistent/reticle-project"]);
        let exit = init(args).unwrap_err();
        assert!(format!("{exit:?}").contains("create the project directory"));
    }
}
