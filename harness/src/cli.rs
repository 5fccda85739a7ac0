//! Running `reticle <command>` as a user would, against a given state dir, and capturing what it
//! printed and how it exited.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::{binaries, marker};

/// What a finished command said.
#[derive(Debug, Clone)]
pub struct Ran {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
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

/// Like [`command`], for an explicit binary (a stand-in, in a negative control).
pub fn command_with(bin: &Path, state_dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(bin);
    command
        .args(args)
        .env(reticle::config::env::STATE_DIR, state_dir)
        .stdin(Stdio::null());
    marker::mark(&mut command);
    command
}

/// Runs `reticle <args>` to completion (on a blocking thread).
pub async fn run(state_dir: &Path, args: &[&str]) -> Ran {
    run_with(&binaries::reticle(), state_dir, args).await
}

/// Like [`run`], for an explicit binary.
pub async fn run_with(bin: &Path, state_dir: &Path, args: &[&str]) -> Ran {
    let mut command = command_with(bin, state_dir, args);
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .expect("the blocking task runs")
        .expect("reticle runs");
    Ran {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}
