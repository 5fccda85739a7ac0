//! The `reticle` command line: parse with clap, run one command, map its result to an exit code.
//! Each command lives in its own module; this one owns only the grammar and the dispatch.

pub(crate) mod describe;
mod doctor;
mod exit;
mod external;
mod init;
mod kill;
pub(crate) mod serve;
mod status;
mod stop;
mod target;
mod verify;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use nix::sys::signal::{SigHandler, Signal};

pub use exit::Exit;

/// Reticle drives a running web app from inside it and returns a verdict with evidence.
///
/// The daemon listens on 127.0.0.1 (port: --port, then RETICLE_PORT, then 4400) and keeps its
/// lock, pid file and log in RETICLE_STATE_DIR (default ~/.reticle). Commands that are not
/// built in are looked up as `reticle-<name>` next to this binary and on PATH.
#[derive(Debug, Parser)]
#[command(name = "reticle", version = crate::VERSION, arg_required_else_help = true)]
#[command(allow_external_subcommands = true)]
#[command(
    after_help = "External commands:\n  gate     Score every row of the fragility inventory against the real system (`reticle gate --help`; the `reticle-gate` binary of the gates crate)"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Start the daemon on a port and return once it answers /status.
    ///
    /// Without --foreground the daemon is started detached, in its own session, and this
    /// command exits 0 only when GET /status answers with the new daemon's instance id. If a
    /// Reticle daemon already answers there it says so and exits 0; if anything else holds the
    /// port it exits 1 naming the holder.
    Serve {
        #[command(flatten)]
        port: PortArg,
        /// Run the daemon in this process instead of detaching it.
        #[arg(long)]
        foreground: bool,
    },
    /// Say what holds the port (daemon, foreign or free) and how the last daemon there ended.
    ///
    /// Presence comes from a bounded TCP probe and a bounded /status probe, never from the pid
    /// file. The last exit is read from the daemon log: clean, signalled, died_silently
    /// (heartbeats stopped with no exit line) or unknown. When stderr is not a terminal, one line
    /// `reticle_status {...}` goes there too, in the shape scripts written for the reference
    /// Reticle read (port, running, presence, pid, sessionCount, sessions).
    Status {
        #[command(flatten)]
        port: PortArg,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Stop the Reticle daemon on the port: SIGTERM, then SIGKILL after 5 s.
    ///
    /// Exits 0 once the port is free. Refuses to signal a process that is not a Reticle daemon
    /// (see `reticle kill --force`).
    Stop {
        #[command(flatten)]
        port: PortArg,
        /// Print nothing when it succeeds (stopped, or no daemon was running); failures are
        /// still said on stderr with a non-zero exit.
        #[arg(long, short)]
        quiet: bool,
    },
    /// End the process LISTENING on the port if it is a Reticle daemon.
    ///
    /// A process that only holds a client connection to the port (an agent's `reticle mcp`,
    /// for example) is never touched. A listener that is not Reticle is ended only with --force.
    Kill {
        #[command(flatten)]
        port: PortArg,
        /// Also end a listener that is not a Reticle daemon.
        #[arg(long)]
        force: bool,
    },
    /// Stop the daemon on the port (if any) and start a fresh one.
    Restart {
        #[command(flatten)]
        port: PortArg,
    },
    /// Name every obstacle to running Reticle on the port; exit 0 only when there is none.
    ///
    /// Checks the state dir is writable, what holds the port, stale pid and lock records,
    /// whether the daemon there runs this version, that agents find `reticle` on PATH to start
    /// `reticle mcp`, that the Chromium `reticle verify` launches is there, whether the
    /// project's app loads the SDK (on this port), and that its `.reticle/` is readable, in a
    /// format this Reticle reads, and kept in git as `reticle init` sets it up.
    Doctor {
        #[command(flatten)]
        port: PortArg,
        /// The project whose wiring and workspace are checked (default: the current directory).
        #[arg(long, default_value = ".")]
        dir: std::path::PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Serve MCP on stdin/stdout for a coding agent, through the daemon on the port.
    ///
    /// Starts a daemon when none is running, answers `initialize` at once whatever the daemon's
    /// state, and keeps answering when the daemon, the port or the link fails: a call that cannot
    /// be served is answered with error -32001 saying whether it ran and what to do. Exits only
    /// when stdin closes. Log: proxy-<port>.log in the state dir.
    ///
    /// The proxy runs as `reticle-mcp` (installed beside `reticle`): this process hands itself
    /// over to it (same pid, same stdio), so the agent's proxy holds a few MiB instead of all of
    /// Reticle's code. Without `reticle-mcp`, or with RETICLE_MCP_IN_PROCESS=1, it serves itself.
    ///
    /// With --drive URL the agent gets a browser of Reticle's own: the daemon launches Chromium
    /// (RETICLE_CHROMIUM, default /usr/bin/chromium; headless unless --headed) with a fresh
    /// profile and opens URL in it as a session of this agent's, injecting the daemon's SDK when
    /// the app does not load one. URL must be on this machine (localhost, 127.0.0.1, [::1]). The
    /// tab closes, and the browser with it, when this agent's link is gone for the lease grace.
    Mcp {
        #[command(flatten)]
        port: PortArg,
        /// A local app to open in a browser Reticle launches and drives, e.g. http://localhost:5173/.
        #[arg(long, value_name = "URL")]
        drive: Option<String>,
        /// With --drive: no window (the default).
        #[arg(long, requires = "drive", conflicts_with = "headed")]
        headless: bool,
        /// With --drive: a window a person can watch.
        #[arg(long, requires = "drive")]
        headed: bool,
    },
    /// Internal: the process `reticle mcp` starts to hold its daemon link.
    #[command(name = "mcp-worker", hide = true)]
    McpWorker {
        #[command(flatten)]
        port: PortArg,
    },
    /// Wire a project for Reticle: the agents' MCP configs, the pairing token, the SDK snippet.
    ///
    /// Writes the MCP server entry `reticle` (command `reticle`, args `["mcp"]`, plus
    /// `"--port", "<port>"` when the port is not 4400) into each client's config, in the format
    /// its documentation gives: Claude Code, Cursor, VS Code, Windsurf, Gemini CLI, OpenCode and
    /// Codex (each one's file in each scope is listed under `--client` below). JSON files get
    /// the entry under the client's server list (`mcpServers`, VS Code's `servers` with
    /// `"type": "stdio"`, OpenCode's `mcp` with `"type": "local"` and one `command` array);
    /// Codex's TOML gets a `[mcp_servers.reticle]` table.
    ///
    /// The project scope writes files you can commit, read by the client in this project (Codex
    /// reads a project's `.codex/config.toml` once you trust the project). The user scope writes
    /// under $HOME (XDG_CONFIG_HOME and CODEX_HOME are honoured as the clients honour them) and
    /// the client reads it in every project. Default: every client with a config in the scope;
    /// `--client claude,codex` picks some (a client without a config in the scope is refused
    /// with the scope it has).
    ///
    /// An existing config is merged: every other key and server is kept in its order, and so is
    /// any field of the `reticle` entry Reticle does not own (`env`, say). A config that already
    /// says the right thing is not touched, so a second run changes nothing. TOML is edited in
    /// place: comments, blank lines and key order stay. A config that cannot be parsed (a JSON
    /// file that is not an object, JSON with comments included, or invalid TOML) is never
    /// overwritten: its line names the file and the fix, the other configs are still written,
    /// and the exit code is 1. Writes are atomic (a reader sees the old file or the new one),
    /// keep the file's owner and mode (a 0600 config stays 0600), and a symlinked config stays
    /// linked.
    ///
    /// It also makes sure the pairing token the page must present exists (`pairing-token` in the
    /// state dir, RETICLE_STATE_DIR or ~/.reticle, mode 0600; or RETICLE_TOKEN when set), and
    /// checks that `reticle` is on PATH, since the configs start it by name.
    ///
    /// Each step prints one line: `[✓]` done, `[=]` unchanged, `[⚠]` needs you (the line says
    /// what to do), `[✗]` failed (nothing was changed by it). Then it prints the `connect()` call
    /// your app's development build needs, with the port, and where the token is; the token
    /// itself is not printed. Exit 0 when no step failed, 1 when one did, 2 for a bad command line.
    /// It never starts a daemon: the agent's `reticle mcp` does.
    Init(init::InitArgs),
    /// Replay the saved flows against the app at URL in a browser Reticle launches: a CI job.
    ///
    /// Starts (or reuses) the daemon on the port, launches Chromium headless (RETICLE_CHROMIUM,
    /// default /usr/bin/chromium; one process and fresh profile per job), and for each flow opens
    /// URL in a fresh browser context with a session id of its own (the `__reticle_session`
    /// query parameter the SDK reads), waits for that page's SDK session (--timeout-ms), and has
    /// the daemon replay the flow through `reticle_flow_replay`. The flows are the project's
    /// (`.reticle/flows` under RETICLE_PROJECT_DIR, else the working directory); a reused
    /// daemon must serve the same project. A daemon this command started is stopped at the end.
    ///
    /// When no session appears in time it stops and names the likely cause: the app does not
    /// load the SDK or connects it to another port, the token differs, or the Origin is refused,
    /// told apart by the handshakes the daemon refused (`reticle status` lists them).
    ///
    /// Prints a line per flow as it finishes (a bar on a terminal), then a table (flow, verdict,
    /// failing step, time); saves the run in .reticle/runs/ and writes --junit, --json and
    /// --markdown when asked.
    ///
    /// Exit codes: 0 every flow is yes; 1 a flow is no (the app regressed); 2 a flow is unknown,
    /// no flow ran (none saved, none selected, only assertion-free flows), or the browser, the
    /// daemon or the transport failed: nothing proven; 3 the command line is wrong.
    #[command(
        after_help = "Exit codes: 0 every flow yes; 1 a flow no (the app regressed); 2 a flow unknown, nothing ran, or infrastructure (browser, daemon, transport) failed; 3 usage."
    )]
    Verify {
        #[command(flatten)]
        args: verify::VerifyArgs,
        #[command(flatten)]
        port: PortArg,
    },
    /// Print this binary's version.
    Version,
    #[command(external_subcommand)]
    External(Vec<OsString>),
}

#[derive(Debug, Clone, Copy, Args)]
struct PortArg {
    /// The port (default: RETICLE_PORT, then 4400).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    port: Option<u16>,
}

impl PortArg {
    fn resolve(self) -> Result<u16, Exit> {
        crate::config::resolve_port(self.port).map_err(|err| Exit::usage(err.to_string()))
    }
}

/// Parses the command line, runs the command and returns its exit code.
pub fn main() -> ExitCode {
    // A one-shot command whose reader went away (`reticle init | head -1`) ends quietly on
    // SIGPIPE, as Unix tools do, instead of panicking on its next print; the long-running ones
    // (the daemon, the MCP proxy) ignore it again, so a closed pipe or socket is an error they
    // handle, never their death.
    set_sigpipe(SigHandler::SigDfl);
    if crate::chromium::keeper::asked() {
        return crate::chromium::keeper::keep();
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return parse_failure(err),
    };
    if matches!(
        cli.command,
        Command::Mcp { .. }
            | Command::McpWorker { .. }
            | Command::Serve {
                foreground: true,
                ..
            }
    ) {
        set_sigpipe(SigHandler::SigIgn);
    }
    let proxy = match &cli.command {
        Command::Mcp {
            port,
            drive,
            headed,
            ..
        } => {
            if let Some(url) = drive {
                match crate::drive::loopback_url(url) {
                    // SAFETY: no other thread runs yet: this is main, before any runtime.
                    Ok(url) => unsafe {
                        std::env::set_var(crate::config::env::DRIVE_URL, url);
                        std::env::set_var(
                            crate::config::env::DRIVE_HEADED,
                            if *headed { "1" } else { "0" },
                        );
                    },
                    Err(why) => {
                        return Exit::usage(format!("mcp --drive: {why}")).report();
                    }
                }
            }
            Some((
                *port,
                crate::proxy::executable::serve_agent as fn(u16) -> ExitCode,
            ))
        }
        Command::McpWorker { port } => {
            Some((*port, crate::proxy::run_worker as fn(u16) -> ExitCode))
        }
        _ => None,
    };
    if let Some((port, serve)) = proxy {
        return match port.resolve() {
            Ok(port) => serve(port),
            Err(exit) => exit.report(),
        };
    }
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(exit) => exit.report(),
    }
}

/// A command line clap could not take: help and version print and exit 0; anything else is
/// a usage error, 2 (clap's code), or 3 for `reticle verify`, whose codes are CI's.
fn parse_failure(err: clap::Error) -> ExitCode {
    if !err.use_stderr() {
        let _ = err.print();
        return ExitCode::SUCCESS;
    }
    let verifying = std::env::args_os().nth(1).is_some_and(|a| a == "verify");
    let _ = err.print();
    if verifying {
        ExitCode::from(exit::VerifyCode::Usage as u8)
    } else {
        ExitCode::from(2)
    }
}

fn set_sigpipe(handler: SigHandler) {
    // SAFETY: SIG_DFL and SIG_IGN are not handlers that run code; this runs before any thread.
    let _ = unsafe { nix::sys::signal::signal(Signal::SIGPIPE, handler) };
}

fn run(command: Command) -> Result<(), Exit> {
    if let Command::Serve {
        port,
        foreground: true,
    } = command
    {
        let port = port.resolve()?;
        let (rt, settings) = serve::foreground_ready(port)?;
        return rt.block_on(serve::foreground(settings));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(runtime_failed)?;
    match command {
        Command::Serve { port, .. } => rt.block_on(serve::detached(port.resolve()?)),
        Command::Status { port, json } => rt.block_on(status::status(port.resolve()?, json)),
        Command::Stop { port, quiet } => rt.block_on(stop::stop(port.resolve()?, quiet)),
        Command::Kill { port, force } => rt.block_on(kill::kill(port.resolve()?, force)),
        Command::Restart { port } => {
            let port = port.resolve()?;
            rt.block_on(async {
                stop::stop(port, false).await?;
                serve::detached(port).await
            })
        }
        Command::Doctor { port, dir, json } => {
            rt.block_on(doctor::doctor(port.resolve()?, &dir, json))
        }
        Command::Init(args) => init::init(args),
        Command::Verify { args, port } => {
            let port = port
                .resolve()
                .map_err(|e| e.into_verify(exit::VerifyCode::Usage))?;
            rt.block_on(verify::verify(args, port))
        }
        Command::Version => {
            println!("reticle {}", crate::VERSION);
            Ok(())
        }
        Command::External(args) => external::dispatch(args),
        Command::Mcp { .. } | Command::McpWorker { .. } => Ok(()),
    }
}

pub(crate) fn runtime_failed(err: std::io::Error) -> Exit {
    Exit::failure(format!("cannot start the async runtime: {err}"))
}
