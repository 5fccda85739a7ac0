//! Locating the binaries under test: `RETICLE_BIN` when set (the test command sets it after
//! building), else `target/<profile>/reticle` beside the running test, built on first use with
//! `reticle-mcp`, the proxy executable `reticle mcp` hands over to.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The variable naming the `reticle` binary under test.
pub const BIN_VAR: &str = "RETICLE_BIN";

/// The `reticle` binary every gate runs.
pub fn reticle() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(path) = std::env::var_os(BIN_VAR).filter(|p| !p.is_empty()) {
            return PathBuf::from(path);
        }
        let dir = target_dir();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build.args(["build", "--quiet", "-p", "reticle", "--bins"]);
        if dir.ends_with("release") {
            build.arg("--release");
        }
        let status = build.status();
        assert!(
            matches!(status, Ok(s) if s.success()),
            "could not build the reticle binary ({status:?}); run `cargo build --bins` and retry"
        );
        dir.join("reticle")
    })
    .clone()
}

/// `target/<profile>`, from the location of the running test binary (`.../deps/<test>`).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its own path");
    let deps = exe.parent().expect("a test binary lives in a directory");
    if deps.ends_with("deps") {
        deps.parent().expect("deps has a parent").to_path_buf()
    } else {
        deps.to_path_buf()
    }
}
