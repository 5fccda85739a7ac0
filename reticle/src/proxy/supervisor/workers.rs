//! The worker process as the supervisor holds it: started (through a [`Launcher`], a real
//! `reticle mcp-worker` in production), sent [`LinkCommand`]s, watched for silence and death, and
//! replaced. It keeps generations apart so a dead worker's late reports are never taken for the
//! new one's. It must not interpret reports: they go to the actor as [`Input`]s.

use std::io;
use std::os::fd::AsRawFd;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::Input;
use super::log::ProxyLog;
use crate::config::env;
use crate::proxy::link::{LinkCommand, command_line, read_report};
use crate::proxy::settings::WORKER_SILENCE;
use crate::proxy::{events, ledger};

/// Starts worker processes and signals them.
pub(super) trait Launcher {
    /// Starts worker `generation`; its reports reach `inputs` as [`Input::Worker`] and its end as
    /// [`Input::WorkerGone`], both tagged with `generation`.
    fn launch(
        &mut self,
        generation: u64,
        inputs: mpsc::UnboundedSender<Input>,
    ) -> io::Result<Launched>;
    fn signal(&mut self, pid: u32, signal: Signal);
}

/// A started worker: its pid and the pipe its commands go down.
pub(super) struct Launched {
    pub(super) pid: u32,
    pub(super) commands: mpsc::UnboundedSender<LinkCommand>,
}

/// The worker process currently serving, if any.
struct Worker {
    generation: u64,
    launched: Launched,
    started: Instant,
}

/// How a worker ended, for the log.
pub(super) struct Ended {
    pub(super) pid: u32,
    pub(super) lived: Duration,
}

pub(super) struct Workers {
    launcher: Box<dyn Launcher>,
    inputs: mpsc::UnboundedSender<Input>,
    current: Option<Worker>,
    generation: u64,
    /// Worker deaths in a row that came soon after their start (slows respawning).
    quick_deaths: u32,
    last_heard: Instant,
}

impl Workers {
    pub(super) fn new(launcher: Box<dyn Launcher>, inputs: mpsc::UnboundedSender<Input>) -> Self {
        Self {
            launcher,
            inputs,
            current: None,
            generation: 0,
            quick_deaths: 0,
            last_heard: Instant::now(),
        }
    }

    pub(super) fn is_running(&self) -> bool {
        self.current.is_some()
    }

    pub(super) fn start(&mut self, log: &ProxyLog) -> io::Result<()> {
        let generation = self.generation + 1;
        let launched = self.launcher.launch(generation, self.inputs.clone())?;
        self.generation = generation;
        log.event(
            events::LINK_PROCESS_STARTED,
            json!({ "workerPid": launched.pid, "generation": generation }),
        );
        self.last_heard = Instant::now();
        self.current = Some(Worker {
            generation,
            launched,
            started: Instant::now(),
        });
        Ok(())
    }

    /// Whether `generation` is the worker serving now.
    pub(super) fn is_current(&self, generation: u64) -> bool {
        self.current
            .as_ref()
            .is_some_and(|w| w.generation == generation)
    }

    /// The worker `generation` spoke: whether it is the current one (whose silence is reset).
    pub(super) fn heard_from(&mut self, generation: u64) -> bool {
        let current = self.is_current(generation);
        if current {
            self.last_heard = Instant::now();
        }
        current
    }

    /// The current worker is gone: how it lived. Counts it as a quick death if it lived under
    /// a second.
    pub(super) fn ended(&mut self) -> Option<Ended> {
        let worker = self.current.take()?;
        let lived = worker.started.elapsed();
        self.quick_deaths = if lived < Duration::from_secs(1) {
            self.quick_deaths + 1
        } else {
            0
        };
        Some(Ended {
            pid: worker.launched.pid,
            lived,
        })
    }

    /// Workers in a row that died soon after they started.
    pub(super) fn quick_deaths(&self) -> u32 {
        self.quick_deaths
    }

    pub(super) fn command(&self, command: LinkCommand) {
        if let Some(worker) = &self.current {
            let _ = worker.launched.commands.send(command);
        }
    }

    /// Kills a worker silent past [`WORKER_SILENCE`]; its death brings a new one.
    pub(super) fn kill_if_silent(&mut self, log: &ProxyLog) {
        let Some(worker) = &self.current else { return };
        if self.last_heard.elapsed() <= WORKER_SILENCE {
            return;
        }
        let pid = worker.launched.pid;
        log.event(
            events::LINK_PROCESS_UNRESPONSIVE,
            json!({ "workerPid": pid, "silentMs": self.last_heard.elapsed().as_millis() as u64, "action": "killed; a new one takes over" }),
        );
        self.launcher.signal(pid, Signal::SIGKILL);
        self.last_heard = Instant::now();
    }

    /// Asks the current worker to end (the supervisor is exiting).
    pub(super) fn stop(&mut self) {
        if let Some(worker) = self.current.take() {
            self.launcher.signal(worker.launched.pid, Signal::SIGTERM);
        }
    }
}

/// Starts `reticle mcp-worker --port N` (this same executable) with piped stdin and stdout, and
/// its posting ledger ([`crate::proxy::ledger`]) at fd 3, read whenever stdout is and once more
/// after the worker is gone.
pub(super) struct ProcessLauncher {
    pub(super) port: u16,
}

impl Launcher for ProcessLauncher {
    fn launch(
        &mut self,
        generation: u64,
        inputs: mpsc::UnboundedSender<Input>,
    ) -> io::Result<Launched> {
        let exe = std::env::current_exe()?;
        let (mut ledger, ledger_end) = ledger::pipe()?;
        let passed = ledger_end.as_raw_fd();
        let mut command = tokio::process::Command::new(exe);
        command
            .args(["mcp-worker", "--port", &self.port.to_string()])
            .env(env::POSTING_LEDGER_FD, ledger::LEDGER_FD.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        // SAFETY: the closure only moves a descriptor with async-signal-safe calls.
        unsafe {
            command.pre_exec(move || ledger::place_in_child(passed));
        }
        let mut child = command.spawn()?;
        // The worker holds the only write end now.
        drop(ledger_end);
        let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(io::Error::other("the worker's pipes were not set up"));
        };
        let pid = child.id().unwrap_or(0);
        let (commands, mut pending) = mpsc::unbounded_channel::<LinkCommand>();
        tokio::spawn(async move {
            while let Some(command) = pending.recv().await {
                let Ok(mut line) = command_line(&command) else {
                    continue;
                };
                line.push('\n');
                if stdin.write_all(line.as_bytes()).await.is_err() {
                    return;
                }
            }
        });
        tokio::spawn(async move {
            let read_ledger = std::env::var_os(env::TEST_STAND_IN_LEDGER_UNREAD).is_none();
            let mut postings = move || {
                if read_ledger {
                    ledger.drain()
                } else {
                    Vec::new()
                }
            };
            let deliver = |line: &str| {
                if let Ok(report) = read_report(line) {
                    let _ = inputs.send(Input::Worker { generation, report });
                }
            };
            let mut lines = tokio::io::BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                // What the ledger holds was written before this line.
                postings().iter().for_each(|posting| deliver(posting));
                deliver(&line);
            }
            let status = match child.wait().await {
                Ok(status) => describe_exit(status),
                Err(err) => format!("unknown ({err})"),
            };
            postings().iter().for_each(|posting| deliver(posting));
            let _ = inputs.send(Input::WorkerGone { generation, status });
        });
        Ok(Launched { pid, commands })
    }

    fn signal(&mut self, pid: u32, signal: Signal) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal);
    }
}

fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(signal)) => {
            let name = Signal::try_from(signal)
                .map(|s| s.as_str().to_string())
                .unwrap_or_else(|_| signal.to_string());
            format!("killed by {name}")
        }
        _ => "ended".into(),
    }
}
