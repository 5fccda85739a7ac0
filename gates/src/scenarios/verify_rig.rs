//! The rig `reticle verify`'s row (V1) and tests share ([`VerifyRig`]): an owned daemon with a
//! private project dir, the fixture app, and flows saved through the tool layer by an agent's
//! `reticle mcp`; it runs `<bin> verify` as CI would. It provokes and judges nothing itself.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use harness::cli::{Ran as CliRan, run_command};
use harness::{FixtureApp, McpClient, OwnedDaemon, ProxyOptions, poll};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

use reticle::config::env;

/// How long a page or a verify run gets before the scenario gives up on it.
pub const BOUND: Duration = Duration::from_secs(60);

/// What stderr says when verify has launched a job's browser (its pid follows).
const CHROMIUM_STARTED: &str = "chromium started (job 1, pid ";

/// A flow of one click whose consequence is the signal `signal` (waiting up to `timeout_ms`).
pub fn click_flow(name: &str, testid: &str, signal: &str, timeout_ms: u64) -> Value {
    json!({
        "name": name,
        "startPath": "/",
        "overwrite": true,
        "steps": [
            {"target": {"testid": testid}, "action": "click",
             "until": {"kind": "signal", "name": signal}, "timeout_ms": timeout_ms}
        ]
    })
}

/// The fixture, a daemon serving a private project, and an agent to save flows with.
pub struct VerifyRig {
    pub daemon: OwnedDaemon,
    pub app: FixtureApp,
    pub agent: McpClient,
    pub project: tempfile::TempDir,
}

impl VerifyRig {
    pub async fn start() -> Result<Self, String> {
        Self::start_with(&[]).await
    }

    /// [`VerifyRig::start`] with `daemon_env` in the daemon's environment (a stand-in switch).
    pub async fn start_with(daemon_env: &[(&str, &str)]) -> Result<Self, String> {
        let project = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mut daemon = OwnedDaemon::builder().env(
            env::PROJECT_DIR,
            project.path().to_string_lossy().to_string(),
        );
        for &(key, value) in daemon_env {
            daemon = daemon.env(key, value);
        }
        let daemon = daemon.try_start().await?;
        let app = FixtureApp::start().await;
        let agent = McpClient::start(ProxyOptions::new(daemon.port(), daemon.state_dir()))
            .await
            .map_err(|e| format!("reticle mcp did not start: {e:?}"))?;
        Ok(Self {
            daemon,
            app,
            agent,
            project,
        })
    }

    /// Calls `tool` through `reticle_run` as the rig's agent (a tool on the extended surface,
    /// as an agent on the default surface reaches it); the whole result.
    pub async fn run_tool(&self, tool: &str, args: Value) -> Result<Value, String> {
        self.agent
            .call_tool("reticle_run", json!({"tool": tool, "args": args}))
            .await
            .map_err(|e| format!("{tool} failed: {e:?}"))
    }

    /// Saves a flow through the tool layer; the tool's answer.
    pub async fn save(&self, flow: Value) -> Result<Value, String> {
        let result = self.run_tool("reticle_flow_save", flow).await?;
        if result["isError"] == true {
            return Err(format!("reticle_flow_save refused: {result}"));
        }
        Ok(result["structuredContent"].clone())
    }

    /// Waits (polled, bounded) until the daemon lists `session`; panics naming `what` when not.
    pub async fn await_session(&self, what: &str, session: &str) {
        poll::until(what, BOUND, async || {
            let status = self.daemon.status().await?;
            status
                .sessions
                .iter()
                .any(|s| s.id == session)
                .then_some(())
        })
        .await;
    }

    /// The fixture app's URL for this daemon, with `extra` query parameters.
    pub fn url(&self, extra: &str) -> String {
        self.app.url(&format!(
            "/?reticlePort={}&reticleToken={}{extra}",
            self.daemon.port(),
            self.daemon.token()
        ))
    }

    /// `<bin> verify <url> --port P <args>` for this project and state dir.
    pub fn command(&self, bin: &Path, url: &str, args: &[&str]) -> Command {
        let port = self.daemon.port().to_string();
        let mut all = vec!["verify", url, "--port", &port];
        all.extend_from_slice(args);
        let mut command = harness::cli::command_with(bin, self.daemon.state_dir(), &all);
        command
            .env(env::PROJECT_DIR, self.project.path())
            .current_dir(self.project.path());
        command
    }

    /// Runs verify to completion (bounded).
    pub async fn verify(&self, bin: &Path, url: &str, args: &[&str]) -> CliRan {
        self.verify_with(bin, url, args, &[]).await
    }

    /// [`VerifyRig::verify`] with `verify_env` added to verify's environment.
    pub async fn verify_with(
        &self,
        bin: &Path,
        url: &str,
        args: &[&str],
        verify_env: &[(&str, &str)],
    ) -> CliRan {
        let mut command = self.command(bin, url, args);
        command.envs(verify_env.iter().copied());
        run_command(command).await
    }

    /// Runs verify, and SIGKILLs the Chromium it launched once the first flow's session is
    /// connected (the flow is then replaying). What verify said, whether the kill landed, and
    /// the browser's arguments as read just before it.
    pub async fn verify_killing_browser(
        &self,
        bin: &Path,
        url: &str,
        args: &[&str],
    ) -> (CliRan, Value) {
        let mut command = self.command(bin, url, args);
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => return (spawn_failed(&e), json!({"killed": false})),
        };
        let (pid_tx, pid_rx) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().map(BufReader::new);
        let stderr_reader = std::thread::spawn(move || {
            let mut said = String::new();
            for line in stderr
                .into_iter()
                .flat_map(|r| r.lines())
                .map_while(Result::ok)
            {
                if let Some(rest) = line.split(CHROMIUM_STARTED).nth(1) {
                    let _ = pid_tx.send(rest.trim_end_matches(')').parse::<i32>().ok());
                }
                said.push_str(&line);
                said.push('\n');
            }
            said
        });
        let stdout = child.stdout.take();
        let stdout_reader = std::thread::spawn(move || {
            let mut said = String::new();
            if let Some(mut out) = stdout {
                let _ = std::io::Read::read_to_string(&mut out, &mut said);
            }
            said
        });
        let pid = tokio::task::spawn_blocking(move || pid_rx.recv_timeout(BOUND).ok().flatten())
            .await
            .ok()
            .flatten();
        let session_up = poll::within(BOUND, async || {
            let status = self.daemon.status().await?;
            status
                .sessions
                .iter()
                .any(|s| s.id.ends_with("-j1-f1"))
                .then_some(())
        })
        .await
        .is_some();
        // Read just before the kill, while the browser surely runs.
        let argv = pid.map(browser_argv).unwrap_or_default();
        let singleton = singleton_dir(&argv);
        let killed = match pid {
            Some(pid) if session_up => kill(Pid::from_raw(pid), Signal::SIGKILL).is_ok(),
            _ => false,
        };
        // Polled with a bound: a verify that never exits is scored as hung, never waited on.
        let waited = match poll::within(BOUND, async || child.try_wait().ok().flatten()).await {
            Some(status) => (status.code(), false),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                (None, true)
            }
        };
        let ran = CliRan {
            code: waited.0,
            stdout: stdout_reader.join().unwrap_or_default(),
            stderr: stderr_reader.join().unwrap_or_default(),
            hung: waited.1,
        };
        (
            ran,
            json!({
                "killed": killed,
                "pid": pid,
                "sessionUp": session_up,
                "argv": argv,
                "singletonDir": singleton,
            }),
        )
    }
}

/// The directory a running Chromium with arguments `argv` keeps its singleton socket in: the
/// target of the `SingletonSocket` link in its `--user-data-dir`. Chromium makes it under its
/// temporary directory and removes it only when it closes cleanly.
pub fn singleton_dir(argv: &[String]) -> Option<std::path::PathBuf> {
    let profile = argv
        .iter()
        .find_map(|arg| arg.strip_prefix("--user-data-dir="))?;
    let socket = std::fs::read_link(Path::new(profile).join("SingletonSocket")).ok()?;
    socket.parent().map(Path::to_path_buf)
}

/// The arguments process `pid` runs with (`/proc/<pid>/cmdline`); empty once it is gone.
pub fn browser_argv(pid: i32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|raw| {
            raw.split(|b| *b == 0)
                .filter(|arg| !arg.is_empty())
                .map(|arg| String::from_utf8_lossy(arg).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn spawn_failed(e: &std::io::Error) -> CliRan {
    CliRan {
        code: None,
        stdout: String::new(),
        stderr: format!("could not spawn verify: {e}"),
        hung: false,
    }
}
