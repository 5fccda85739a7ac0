//! Running `reticle <command>` as a user would, against a given state dir, capturing what it
//! printed and how it exited, always within [`cli_bound`]. The gate scenarios and the tests both
//! run CLI calls here: one bounded runner. It must not judge what a command said.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::{binaries, marker};

/// How long any CLI call may take before it is killed and reported hung. `serve` waits up to
/// its own 10 s readiness bound, so a healthy call is far inside this.
pub const CLI_BOUND: Duration = Duration::from_secs(60);

/// A harness knob (never read by the product): a shorter bound in milliseconds, so a test can
/// show a hung call without waiting [`CLI_BOUND`].
pub const CLI_BOUND_VAR: &str = "RETICLE_HARNESS_CLI_BOUND_MS";

/// The bound in force: [`CLI_BOUND_VAR`] when set to a number, else [`CLI_BOUND`].
pub fn cli_bound() -> Duration {
    std::env::var(CLI_BOUND_VAR)
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(CLI_BOUND, Duration::from_millis)
}

/// What a finished command said. A call that hangs comes back as [`Ran::hung`] (`assert_cmd`'s
/// `timeout` kills it), never as a hung gate.
#[derive(Debug, Clone)]
pub struct Ran {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// It did not exit within [`cli_bound`] and was killed (stderr says so too).
    pub hung: bool,
}

impl Ran {
    /// Whether it exited 0.
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }

    /// stdout and stderr together, for "does it say X anywhere" checks.
    pub fn said(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }

    /// stdout parsed as one JSON value.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|err| panic!("stdout is not JSON ({err}): {}", self.stdout))
    }
}

/// A `reticle` command for `state_dir`, marked, with stdin closed.
pub fn command(state_dir: &Path, args: &[&str]) -> Command {
    command_with(&binaries::reticle(), state_dir, args)
}

/// Like [`command`], for an explicit binary (a stand-in, in a negative control). The binary's
/// directory leads PATH, as it does for a user who installed it: agents' configs start
/// `reticle mcp` by name, and `doctor` checks that they can.
pub fn command_with(bin: &Path, state_dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(bin);
    command
        .args(args)
        .env(reticle::config::env::STATE_DIR, state_dir)
        .stdin(Stdio::null());
    if let Some(path) = path_led_by(bin) {
        command.env("PATH", path);
    }
    marker::mark(&mut command);
    command
}

/// PATH with `bin`'s directory first, or `None` when `bin` has no directory.
fn path_led_by(bin: &Path) -> Option<std::ffi::OsString> {
    let dir = bin.parent().filter(|dir| !dir.as_os_str().is_empty())?;
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&rest)))
        .ok()
}

/// Runs `reticle <args>` to completion, bounded (on a blocking thread).
pub async fn run(state_dir: &Path, args: &[&str]) -> Ran {
    run_with(&binaries::reticle(), state_dir, args).await
}

/// Like [`run`], for an explicit binary.
pub async fn run_with(bin: &Path, state_dir: &Path, args: &[&str]) -> Ran {
    run_command(command_with(bin, state_dir, args)).await
}

/// Runs a prepared command (from [`command`], with its own environment) to completion within
/// [`cli_bound`].
pub async fn run_command(command: Command) -> Ran {
    let bound = cli_bound();
    let output = tokio::task::spawn_blocking(move || {
        assert_cmd::Command::from_std(command)
            .timeout(bound)
            .output()
    })
    .await
    .expect("the blocking task runs")
    .expect("reticle runs");
    // The timeout is the only SIGKILL a CLI call meets here.
    let hung = output.status.signal() == Some(nix::sys::signal::Signal::SIGKILL as i32);
    let mut stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if hung {
        stderr.push_str(&format!(
            "\n[harness] did not exit within {bound:?}, killed\n"
        ));
    }
    Ran {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr,
        hung,
    }
}
