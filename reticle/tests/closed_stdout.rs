//! A one-shot command whose reader went away (`reticle init | head -1`, a closed pipe) ends
//! quietly, as Unix tools do, instead of panicking on its next print. The reader's end of the
//! pipe is closed before the command starts, so its first write is certain to fail.

use std::process::{Command, Stdio};

fn with_closed_stdout(args: &[&str]) -> std::process::Output {
    let (read_end, write_end) = nix::unistd::pipe().expect("a pipe");
    drop(read_end);
    let state = tempfile::tempdir().expect("a state dir");
    let project = tempfile::tempdir().expect("a project dir");
    Command::new(env!("CARGO_BIN_EXE_reticle"))
        .args(args)
        .current_dir(project.path())
        .env("RETICLE_STATE_DIR", state.path())
        .env("HOME", project.path())
        .stdin(Stdio::null())
        .stdout(Stdio::from(write_end))
        .stderr(Stdio::piped())
        .output()
        .expect("reticle runs")
}

#[test]
fn a_closed_stdout_ends_one_shot_commands_without_a_panic() {
    for args in [
        &["init", "--dry-run"][..],
        &["doctor", "--port", "19901"],
        &["status", "--port", "19902"],
        &["--help"],
        &["version"],
    ] {
        let output = with_closed_stdout(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
            "`reticle {}` panicked on a closed stdout: {stderr}",
            args.join(" ")
        );
    }
}
