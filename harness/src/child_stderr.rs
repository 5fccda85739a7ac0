//! A child's stderr kept off the test runner's pipe. A child spawned with its stderr inherited
//! hands the runner's pipe on to its own children, and one that outlives the test (a `reticle
//! mcp` worker exits a moment after its supervisor is killed) holds that pipe after the test
//! process has ended, which nextest reports as a leak. Piped instead, and each line copied to
//! this process's stderr (which the runner captures and shows with a failure), only this process
//! holds the runner's pipe. This module copies lines; it must not judge them.

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::ChildStderr;

/// Copies every line `stderr` gives to this process's stderr, on a task of its own that ends
/// with the child's end of the pipe.
pub fn forward(stderr: Option<ChildStderr>) {
    let Some(stderr) = stderr else {
        return;
    };
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            eprintln!("{line}");
        }
    });
}
