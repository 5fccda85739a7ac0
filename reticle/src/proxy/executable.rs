//! The proxy's own executable, `reticle-mcp`: how `reticle mcp` hands its process over to it (one
//! `execve`, same pid, same stdio, so the agent never sees the change), and the small command line
//! it reads (`mcp [--port N]`, `mcp-worker --port N`). The point is memory: a process maps in the
//! pages of the executable it runs, and `reticle-mcp` holds the proxy's code only. This module
//! picks the executable and reads its arguments; it must not serve anything itself.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::ExitCode;

use crate::config::{self, env, executables};

/// The hidden flag `reticle mcp` passes with its build id ([`crate::BUILD_ID`]), so a
/// `reticle-mcp` from other code (another release, or left by `cargo build --bin reticle`) hands
/// the proxy back instead of serving with code the daemon and the developer do not expect.
const HANDED_OVER_BY: &str = "--handed-over-by";

/// `reticle mcp` on `port`: handed over to the `reticle-mcp` beside this executable when it can
/// be, else served in this process.
pub fn serve_agent(port: u16) -> ExitCode {
    hand_over(port);
    super::run_supervisor(port)
}

/// Hands this process over to the `reticle-mcp` beside it to serve `mcp` on `port`. Returns only
/// when it does not: `RETICLE_MCP_IN_PROCESS=1`, no `reticle-mcp` there, or the exec failed (said
/// on stderr).
fn hand_over(port: u16) {
    if std::env::var(env::MCP_IN_PROCESS).is_ok_and(|v| v.trim() == "1") {
        return;
    }
    let Some(proxy) = executables::proxy_beside() else {
        return;
    };
    let err = std::process::Command::new(&proxy)
        .args([
            "mcp",
            "--port",
            &port.to_string(),
            HANDED_OVER_BY,
            crate::BUILD_ID,
        ])
        .exec();
    crate::proxy::stderr::say(format_args!(
        "reticle mcp: cannot run {} ({err}); serving in this process",
        proxy.display()
    ));
}

/// What `reticle-mcp` was asked to do.
#[derive(Debug, PartialEq, Eq)]
enum Invocation {
    Supervisor {
        port: u16,
        handed_over_by: Option<String>,
    },
    Worker {
        port: u16,
    },
    Help,
    Version,
}

const USAGE: &str = "\
reticle-mcp: the MCP proxy's executable, started by `reticle mcp` (an agent's MCP server entry runs
`reticle mcp`, which hands over to this file; see `reticle mcp --help`).

usage: reticle-mcp mcp [--port N]
       reticle-mcp --help | --version";

/// The entry of `reticle-mcp`: reads its command line and runs the supervisor or the worker.
pub fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    match parse(&args) {
        Ok(Invocation::Supervisor {
            port,
            handed_over_by,
        }) => match handed_over_by {
            Some(build) if build != crate::BUILD_ID => hand_back(port, &build),
            _ => super::run_supervisor(port),
        },
        Ok(Invocation::Worker { port }) => super::run_worker(port),
        Ok(Invocation::Help) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(Invocation::Version) => {
            println!("{} {}", executables::PROXY, crate::VERSION);
            ExitCode::SUCCESS
        }
        Err(err) => {
            crate::proxy::stderr::say(format_args!("{}: {err}\n\n{USAGE}", executables::PROXY));
            ExitCode::from(2)
        }
    }
}

/// A `reticle` built from other code handed over: run the proxy inside that `reticle` instead,
/// so the proxy that serves is the one built with it.
fn hand_back(port: u16, theirs: &str) -> ExitCode {
    let Ok(main) = executables::main_executable() else {
        crate::proxy::stderr::say(format_args!(
            "{}: handed over by a {} of build {theirs} (this is build {}), and no {} is beside it to hand back to; serving anyway",
            executables::PROXY,
            executables::MAIN,
            crate::BUILD_ID,
            executables::MAIN
        ));
        return super::run_supervisor(port);
    };
    crate::proxy::stderr::say(format_args!(
        "{}: this is build {}, {} is build {theirs}: serving inside {} (build or install both together: `cargo build -p reticle`, `cargo install --path reticle`)",
        executables::PROXY,
        crate::BUILD_ID,
        main.display(),
        executables::MAIN
    ));
    let err = std::process::Command::new(&main)
        .args(["mcp", "--port", &port.to_string()])
        .env(env::MCP_IN_PROCESS, "1")
        .exec();
    crate::proxy::stderr::say(format_args!(
        "{}: cannot run {} ({err}); serving anyway",
        executables::PROXY,
        main.display()
    ));
    super::run_supervisor(port)
}

/// Reads `reticle-mcp`'s arguments (after the program name).
fn parse(args: &[OsString]) -> Result<Invocation, String> {
    let mut words = args
        .iter()
        .map(|a| a.to_str().ok_or("an argument is not UTF-8"));
    let command = match words.next().transpose()? {
        None => return Err("no command given".to_string()),
        Some("--help" | "-h" | "help") => return Ok(Invocation::Help),
        Some("--version" | "-V") => return Ok(Invocation::Version),
        Some(command @ ("mcp" | "mcp-worker")) => command,
        Some(other) => return Err(format!("unknown command '{other}'")),
    };
    let mut port = None;
    let mut handed_over_by = None;
    while let Some(word) = words.next().transpose()? {
        let (flag, inline) = match word.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (word, None),
        };
        let mut value = || match inline {
            Some(value) => Ok(value.to_string()),
            None => words
                .next()
                .transpose()?
                .map(str::to_string)
                .ok_or(format!("{flag} needs a value")),
        };
        match flag {
            "--port" => {
                port = Some(config::parse_port("--port", &value()?).map_err(|e| e.to_string())?)
            }
            HANDED_OVER_BY if command == "mcp" => handed_over_by = Some(value()?),
            "--help" | "-h" => return Ok(Invocation::Help),
            other => return Err(format!("unknown argument '{other}' for {command}")),
        }
    }
    let port = config::resolve_port(port).map_err(|e| e.to_string())?;
    Ok(match command {
        "mcp" => Invocation::Supervisor {
            port,
            handed_over_by,
        },
        _ => Invocation::Worker { port },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(args: &[&str]) -> Result<Invocation, String> {
        parse(&args.iter().map(OsString::from).collect::<Vec<_>>())
    }

    #[test]
    fn reads_the_two_commands_and_their_port() {
        assert_eq!(
            parsed(&["mcp", "--port", "4411", HANDED_OVER_BY, "1.2.3"]),
            Ok(Invocation::Supervisor {
                port: 4411,
                handed_over_by: Some("1.2.3".to_string())
            })
        );
        assert_eq!(
            parsed(&["mcp-worker", "--port=4412"]),
            Ok(Invocation::Worker { port: 4412 })
        );
        assert_eq!(parsed(&["--version"]), Ok(Invocation::Version));
        assert_eq!(parsed(&["mcp", "--help"]), Ok(Invocation::Help));
    }

    #[test]
    fn refuses_what_it_does_not_know_by_name() {
        assert_eq!(parsed(&[]), Err("no command given".to_string()));
        assert_eq!(
            parsed(&["serve"]),
            Err("unknown command 'serve'".to_string())
        );
        assert_eq!(
            parsed(&["mcp", "--verbose"]),
            Err("unknown argument '--verbose' for mcp".to_string())
        );
        assert_eq!(
            parsed(&["mcp-worker", HANDED_OVER_BY, "1"]),
            Err(format!(
                "unknown argument '{HANDED_OVER_BY}' for mcp-worker"
            ))
        );
        assert_eq!(
            parsed(&["mcp", "--port"]),
            Err("--port needs a value".to_string())
        );
        assert!(
            parsed(&["mcp", "--port", "0"])
                .unwrap_err()
                .contains("--port")
        );
        assert!(
            parsed(&["mcp", "--port", "http"])
                .unwrap_err()
                .contains("http")
        );
    }
}
