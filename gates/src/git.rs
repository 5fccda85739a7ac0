//! Asking git about the checkout the gates are built or run in: one command's trimmed output.
//! Shared by the crate (the soak's commit) and `gates/build.rs` (which includes this file by
//! path, to embed the commit the crate is built from). It reads the repository; it must not
//! change it.

use std::path::Path;
use std::process::Command;

/// The trimmed stdout of `git <args>` run in `dir`, or `None` when git is missing or fails.
pub fn output(dir: &Path, args: &[&str]) -> Option<String> {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}
