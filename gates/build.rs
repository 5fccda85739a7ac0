//! Embeds the commit the gates crate is built from as `GATES_BUILT_FROM` (the full hash of the
//! checkout's `HEAD`, or `unknown` outside a git checkout), so the battery's JUnit report and
//! `reticle gate` can each say which commit they are of (`gates::built_from`). It reads the
//! checkout (through `src/git.rs`, included by path); it must not change it.

#[path = "src/git.rs"]
mod git;

fn main() {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let git = |args: &[&str]| git::output(here, args).filter(|s| !s.is_empty());
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
        let path = here.join(path);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}
