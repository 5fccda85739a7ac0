//! [`OwnedDaemon`]: a Reticle daemon the harness owns for the whole run. It runs
//! `reticle serve --foreground` on a free loopback port with idle shutdown off and a private
//! state dir, is ready only when `/status` answers with the instance id the harness gave it,
//! and is ended on drop (which also runs on panic).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use reticle::config::env;
use reticle::probe::fetch_status;
use reticle::probe::obstacles::says_port_held;
use reticle::wire::StatusReport;

use crate::{binaries, marker, poll, ports};

/// How long a daemon gets to answer `/status` after spawn.
pub const READY_BOUND: Duration = Duration::from_secs(15);

/// Options for starting an [`OwnedDaemon`].
#[derive(Debug, Default)]
pub struct OwnedDaemonBuilder {
    port: Option<u16>,
    state_dir: Option<PathBuf>,
    env: Vec<(String, String)>,
}

impl OwnedDaemonBuilder {
    /// Use this port instead of a free one.
    pub fn port(mut self, port: u16) -> Self {
        self.port = Some(port);
        self
    }

    /// Use this state dir instead of a private temporary one.
    pub fn state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// Sets an environment variable for the daemon (overrides the harness defaults).
    pub fn env(mut self, key: &str, value: impl Into<String>) -> Self {
        self.env.push((key.to_string(), value.into()));
        self
    }

    /// Starts the daemon and waits until it answers with its own instance id; panics saying why
    /// when it does not.
    pub async fn start(self) -> OwnedDaemon {
        match self.try_start().await {
            Ok(daemon) => daemon,
            Err(why) => panic!("{why}"),
        }
    }

    /// Starts the daemon and waits until it answers with its own instance id, or says why it did
    /// not (what a gate scenario needs: a daemon that would not start makes its row inconclusive).
    pub async fn try_start(self) -> Result<OwnedDaemon, String> {
        let (state_dir, temp) = match self.state_dir {
            Some(dir) => (dir, None),
            None => {
                let temp = tempfile::tempdir().map_err(|e| format!("no private state dir: {e}"))?;
                (temp.path().to_path_buf(), Some(temp))
            }
        };
        // A daemon's project (its `.reticle/` workspace) is private too unless the caller names
        // one: a test daemon must not write into the directory the tests run from.
        let project = if self.env.iter().any(|(k, _)| k == env::PROJECT_DIR) {
            None
        } else {
            Some(tempfile::tempdir().map_err(|e| format!("no private project dir: {e}"))?)
        };
        // A free port can be taken between picking and binding (by a listener, or by an outgoing
        // connection as its source port); only then is another one tried, never by the product.
        let attempts = if self.port.is_some() { 1 } else { 3 };
        let mut last_failure = String::new();
        for _ in 0..attempts {
            let port = self.port.unwrap_or_else(ports::free_port);
            let instance = uuid::Uuid::new_v4().to_string();
            let mut command = Command::new(binaries::reticle());
            command
                .args(["serve", "--foreground", "--port", &port.to_string()])
                .env(env::STATE_DIR, &state_dir)
                .env(env::IDLE_SHUTDOWN_MS, "0")
                .env(env::HARNESS_ROUTES, "1")
                .env(env::INSTANCE_ID, &instance)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            if let Some(project) = &project {
                command.env(env::PROJECT_DIR, project.path());
            }
            for (key, value) in &self.env {
                command.env(key, value);
            }
            marker::mark(&mut command);
            let child = command
                .spawn()
                .map_err(|e| format!("cannot spawn reticle serve --foreground: {e}"))?;
            let mut daemon = OwnedDaemon {
                child: Some(child),
                port,
                instance,
                state_dir: state_dir.clone(),
                _temp: None,
                _project: None,
            };
            match daemon.wait_ready().await {
                Ok(()) => {
                    daemon._temp = temp;
                    daemon._project = project;
                    return Ok(daemon);
                }
                Err(failure) => {
                    let port_taken = says_port_held(port, &failure);
                    last_failure = failure;
                    if !port_taken {
                        break;
                    }
                }
            }
        }
        Err(format!("the owned daemon did not start: {last_failure}"))
    }
}

/// A daemon owned by the harness; ended when dropped.
#[derive(Debug)]
pub struct OwnedDaemon {
    child: Option<Child>,
    port: u16,
    instance: String,
    state_dir: PathBuf,
    _temp: Option<tempfile::TempDir>,
    _project: Option<tempfile::TempDir>,
}

impl OwnedDaemon {
    /// A daemon with the harness defaults.
    pub async fn start() -> Self {
        Self::builder().start().await
    }

    pub fn builder() -> OwnedDaemonBuilder {
        OwnedDaemonBuilder::default()
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn instance(&self) -> &str {
        &self.instance
    }

    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// The daemon's log file.
    pub fn log_path(&self) -> PathBuf {
        self.state_dir.join(format!("daemon-{}.log", self.port))
    }

    /// The pairing token the daemon provisioned (or was given), read from its state dir.
    pub fn token(&self) -> String {
        self.try_token().unwrap_or_else(|why| panic!("{why}"))
    }

    /// The pairing token, or why it could not be read.
    pub fn try_token(&self) -> Result<String, String> {
        std::fs::read_to_string(self.state_dir.join(reticle::auth::token::TOKEN_FILE))
            .map(|t| t.trim().to_string())
            .map_err(|err| format!("the daemon's pairing token is unreadable: {err}"))
    }

    /// The daemon's pid.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(Child::id).unwrap_or(0)
    }

    /// The daemon's `/status`, when it answers.
    pub async fn status(&self) -> Option<StatusReport> {
        fetch_status(self.port, Duration::from_millis(700)).await
    }

    /// Sends a signal to the daemon process.
    pub fn signal(&self, signal: Signal) {
        let _ = kill(Pid::from_raw(self.pid() as i32), signal);
    }

    /// SIGSTOPs the daemon and waits until the kernel shows it stopped (delivery is asynchronous);
    /// `false` when it never showed stopped within the bound.
    pub async fn freeze(&self) -> bool {
        self.signal(Signal::SIGSTOP);
        let pid = self.pid();
        poll::within(READY_BOUND, async || {
            (process_state(pid) == Some('T')).then_some(())
        })
        .await
        .is_some()
    }

    /// Whether the daemon process has exited (reaping it if so).
    pub fn has_exited(&mut self) -> bool {
        match self.child.as_mut() {
            Some(child) => !matches!(child.try_wait(), Ok(None)),
            None => true,
        }
    }

    /// Ends the daemon with SIGTERM and waits (bounded) for it to exit.
    pub async fn shutdown(mut self) {
        self.signal(Signal::SIGTERM);
        let exited = poll::within(Duration::from_secs(10), async || {
            self.has_exited().then_some(())
        })
        .await;
        if exited.is_none() {
            self.signal(Signal::SIGKILL);
        }
    }

    async fn wait_ready(&mut self) -> Result<(), String> {
        let port = self.port;
        let instance = self.instance.clone();
        let ready = poll::within(READY_BOUND, async || {
            if let Some(status) = fetch_status(port, Duration::from_millis(250)).await
                && status.instance == instance
            {
                return Some(Ok(()));
            }
            let child = self.child.as_mut()?;
            match child.try_wait() {
                Ok(Some(code)) => Some(Err(code)),
                _ => None,
            }
        })
        .await;
        match ready {
            Some(Ok(())) => Ok(()),
            Some(Err(code)) => {
                let mut stderr = String::new();
                if let Some(mut pipe) = self.child.as_mut().and_then(|c| c.stderr.take()) {
                    use std::io::Read;
                    let _ = pipe.read_to_string(&mut stderr);
                }
                Err(format!("it exited ({code}): {}", stderr.trim()))
            }
            None => Err(format!(
                "it did not answer /status on port {port} within {READY_BOUND:?}; log: {}",
                self.log_path().display()
            )),
        }
    }
}

/// The one-letter state of a process (`T` when stopped, `Z` a zombie).
pub fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

impl Drop for OwnedDaemon {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
