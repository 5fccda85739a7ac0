//! Embeds the commit the gates crate is built from as `GATES_BUILT_FROM` (the full hash of the
//! checkout's `HEAD`, or `unknown` outside a git checkout), so the battery's JUnit report and
//! `reticle gate` can each say which commit they are of (`gates::built_from`). It reads the
//! checkout; it must not change it.

use std::process::Command;

fn main() {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let head = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=GATES_BUILT_FROM={head}");
    // Run again when HEAD moves (a checkout, a commit). Only files that exist are named: a missing
    // one would make cargo run this script on every build.
    let mut watched = vec![git(&["rev-parse", "--git-path", "HEAD"])];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(git(&["rev-parse", "--git-path", &branch]));
    }
    watched.push(git(&["rev-parse", "--git-path", "packed-refs"]));
    for path in watched.into_iter().flatten() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}
