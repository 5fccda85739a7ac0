//! `reticle init`: wire a project for Reticle from a pristine state. It owns the command's
//! arguments (which clients, which scope) and the order of its steps (each client's config, the
//! app's entry file, the project's `.gitignore`, the pairing token, the PATH check), prints one marked line per step
//! and the note on loading the SDK, and turns a failed step into a non-zero exit. It must not
//! start or stop a daemon. The app's stack and its snippet are the [`crate::wiring`] room's.
//!
//! - [`clients`]: the clients it wires, where each keeps its servers in each scope, the entry.
//! - [`locations`]: those places resolved on this machine (project dir, HOME and the like).
//! - [`merge`]: merging that entry into an existing JSON config (pure).
//! - [`merge_toml`]: the same for a TOML config (Codex), keeping comments and order (pure).
//! - [`ignore`]: keeping what sessions leave in `.reticle/` out of git, and the flows in it.
//! - [`steps`]: each step, done (or planned, in a dry run) and described in one line.
//! - [`report`]: the marks, the lines and the closing note.

mod clients;
mod ignore;
mod locations;
mod merge;
mod merge_toml;
mod report;
mod steps;

use std::path::PathBuf;

use clap::Args;

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
    /// has a config in the scope).
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
    let clients = chosen_clients(&args.clients, args.scope)?;
    let roots = Roots::from_env(&project);

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
    let mut steps: Vec<Step> = clients
        .iter()
        .filter_map(|client| match roots.config_file(*client, args.scope) {
            Ok(file) => file.map(|file| steps::wire_client(&file, port, args.dry_run)),
            Err(why) => Some(Step::new(Mark::Failed, why)),
        })
        .collect();
    let (app, app_wired) = steps::wire_app(&project, port, args.write, args.dry_run);
    steps.push(app);
    steps.push(ignore::ignore_runtime(&project, args.dry_run));
    let (token_step, token) = steps::provision_token(args.dry_run);
    steps.push(token_step);
    steps.push(steps::check_on_path());
    for step in &steps {
        println!("{step}");
    }
    if let Some(token) = token {
        println!();
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

/// The clients named (in the order given, once each), or every client with a config in `scope`
/// when none was. A client named without a config in `scope` is a usage error naming its scope.
fn chosen_clients(named: &[Client], scope: Scope) -> Result<Vec<Client>, Exit> {
    if named.is_empty() {
        return Ok(Client::ALL
            .into_iter()
            .filter(|client| client.location(scope).is_some())
            .collect());
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
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

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
            let Command::Mcp { port: parsed } = cli.command else {
                panic!("{args:?} is not `reticle mcp`")
            };
            assert_eq!(parsed.resolve().unwrap(), port);
        }
    }

    #[test]
    fn clients_are_named_repeated_or_comma_separated_and_deduplicated() {
        let args = parse_init(&["init", "--client", "vscode,claude", "--client", "vscode"]);
        assert_eq!(
            chosen_clients(&args.clients, args.scope).unwrap(),
            [Client::VsCode, Client::ClaudeCode]
        );
        assert_eq!(chosen_clients(&[], Scope::User).unwrap(), Client::ALL);
    }

    #[test]
    fn the_scope_is_project_by_default_and_its_clients_are_those_with_a_project_config() {
        let args = parse_init(&["init"]);
        assert_eq!(args.scope, Scope::Project);
        let project = chosen_clients(&[], Scope::Project).unwrap();
        assert!(!project.contains(&Client::Windsurf), "{project:?}");
        assert_eq!(project.len(), Client::ALL.len() - 1);
        let args = parse_init(&["init", "--scope", "user", "--client", "windsurf,codex"]);
        assert_eq!(
            chosen_clients(&args.clients, args.scope).unwrap(),
            [Client::Windsurf, Client::Codex]
        );
    }

    #[test]
    fn a_client_named_in_a_scope_it_has_no_config_in_is_refused_with_the_fix() {
        let exit = chosen_clients(&[Client::Windsurf], Scope::Project).unwrap_err();
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
