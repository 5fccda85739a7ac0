//! `reticle init`: wire a project for Reticle from a pristine state. It owns the command's
//! arguments and the order of its steps (each client's config, the app's entry file, the project's `.gitignore`, the
//! pairing token, the PATH check), prints one marked line per step and the note on loading the SDK, and turns a failed
//! step into a non-zero exit. It must not start or stop a daemon.
//!
//! - [`app`]: the app's dev stack, and the development-only snippet that loads the served SDK.
//! - [`clients`]: the clients it wires and the entry each one gets.
//! - [`merge`]: merging that entry into an existing config (pure).
//! - [`ignore`]: keeping Reticle's runtime folder out of git.
//! - [`steps`]: each step, done (or planned, in a dry run) and described in one line.
//! - [`report`]: the marks, the lines and the closing note.

mod app;
mod clients;
mod ignore;
mod merge;
mod report;
mod steps;

use std::path::PathBuf;

use clap::Args;

use super::{Exit, PortArg};
use clients::Client;
use report::{Mark, Step};

/// The arguments of `reticle init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The project directory to wire (default: the current directory).
    #[arg(long, default_value = ".")]
    dir: PathBuf,
    #[command(flatten)]
    port: PortArg,
    /// A client to wire (repeat it, or separate names with commas; default: all three).
    #[arg(
        long = "client",
        value_enum,
        value_delimiter = ',',
        value_name = "NAME"
    )]
    clients: Vec<Client>,
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
    let clients = chosen_clients(&args.clients);

    println!(
        "reticle init: wiring {} for the daemon on 127.0.0.1:{port}{}",
        project.display(),
        if args.dry_run {
            " (dry run: nothing is written)"
        } else {
            ""
        }
    );
    let mut steps: Vec<Step> = clients
        .iter()
        .map(|client| steps::wire_client(&project, *client, port, args.dry_run))
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

/// The clients named (in the order given, once each), or all of them when none was.
fn chosen_clients(named: &[Client]) -> Vec<Client> {
    if named.is_empty() {
        return Client::ALL.to_vec();
    }
    let mut chosen = Vec::new();
    for client in named {
        if !chosen.contains(client) {
            chosen.push(*client);
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    fn parse(line: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("reticle").chain(line.iter().copied()))
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
        let cli = parse(&["init", "--client", "vscode,claude", "--client", "vscode"]).unwrap();
        let Command::Init(args) = cli.command else {
            panic!("not init")
        };
        assert_eq!(
            chosen_clients(&args.clients),
            [Client::VsCode, Client::ClaudeCode]
        );
        assert_eq!(chosen_clients(&[]), Client::ALL);
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
    }

    #[test]
    fn a_missing_project_directory_is_refused_with_the_fix() {
        let cli = parse(&["init", "--dir", "/nonexistent/reticle-project"]).unwrap();
        let Command::Init(args) = cli.command else {
            panic!("not init")
        };
        let exit = init(args).unwrap_err();
        assert!(format!("{exit:?}").contains("create the project directory"));
    }
}
