//! `reticle doctor` run as a person runs it, with a private state dir, a private HOME and a
//! project directory of its own: besides the daemon's checks it names how agents reach
//! `reticle mcp`, the Chromium `reticle verify` launches, the project's wiring and its
//! workspace, each ok or a problem with its fix. Controls: the same project wired by the real
//! `reticle init --write` is ok where the unwired one was not; a workspace file in an unknown
//! format makes the workspace a problem naming the file.

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

/// A free port no daemon listens on: doctor only probes it.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// `reticle <args>` with the private dirs and PATH holding the binary under test.
fn reticle(state: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_reticle"));
    Command::new(bin)
        .args(args)
        .env("RETICLE_STATE_DIR", state)
        .env("HOME", home)
        .env("PATH", bin.parent().unwrap())
        .env_remove("RETICLE_PORT")
        .env_remove("RETICLE_TOKEN")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("reticle runs")
}

/// Doctor's findings by check, from its JSON.
fn findings(output: &std::process::Output) -> Vec<(String, bool, String)> {
    let body: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("doctor --json printed no JSON ({e}): {output:?}"));
    body["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["check"].as_str().unwrap().to_string(),
                f["ok"].as_bool().unwrap(),
                f["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn finding<'a>(all: &'a [(String, bool, String)], check: &str) -> &'a (String, bool, String) {
    all.iter()
        .find(|(c, _, _)| c == check)
        .unwrap_or_else(|| panic!("no {check} finding in {all:?}"))
}

fn vite_app(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("package.json"),
        r#"{"devDependencies":{"vite":"8"}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("index.html"),
        "<html><body><script type=\"module\" src=\"/src/main.js\"></script></body></html>",
    )
    .unwrap();
    std::fs::write(dir.join("src/main.js"), "console.log('app');\n").unwrap();
}

#[test]
fn doctor_names_mcp_chromium_wiring_and_workspace_each_with_its_fix() {
    let state = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    vite_app(project.path());
    let port = free_port().to_string();
    let dir = project.path().to_str().unwrap();
    let doctor = |extra: &[&str]| {
        let mut args = vec!["doctor", "--json", "--port", &port, "--dir", dir];
        args.extend_from_slice(extra);
        reticle(state.path(), home.path(), &args)
    };

    let before = doctor(&[]);
    let all = findings(&before);
    let mcp = finding(&all, "mcp");
    assert!(mcp.1 && mcp.2.contains("reticle mcp"), "{mcp:?}");
    let chromium = finding(&all, "chromium");
    assert!(chromium.2.contains("reticle verify"), "{chromium:?}");
    let wiring = finding(&all, "wiring");
    assert!(
        !wiring.1 && wiring.2.contains("run `reticle init --write`"),
        "an unwired app is a problem naming the fix: {wiring:?}"
    );
    assert!(!before.status.success(), "{before:?}");
    assert!(finding(&all, "workspace").1, "{all:?}");

    let init = reticle(
        state.path(),
        home.path(),
        &["init", "--dir", dir, "--port", &port, "--write"],
    );
    assert!(init.status.success(), "{init:?}");
    let after = findings(&doctor(&[]));
    assert!(finding(&after, "wiring").1, "{after:?}");

    let flows = project.path().join(".reticle/flows");
    std::fs::create_dir_all(&flows).unwrap();
    std::fs::write(flows.join("checkout.json"), r#"{"format": 7}"#).unwrap();
    let broken = findings(&doctor(&[]));
    let workspace = finding(&broken, "workspace");
    assert!(
        !workspace.1 && workspace.2.contains("checkout.json has format 7"),
        "{workspace:?}"
    );
    assert!(finding(&broken, "gitignore").1, "{broken:?}");

    // `reticle` off PATH: the fix names a directory to put on it.
    let off = Command::new(env!("CARGO_BIN_EXE_reticle"))
        .args(["doctor", "--json", "--port", &port, "--dir", dir])
        .env("RETICLE_STATE_DIR", state.path())
        .env("HOME", home.path())
        .env("PATH", project.path())
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let all = findings(&off);
    let mcp = finding(&all, "mcp");
    assert!(!mcp.1 && mcp.2.contains("on PATH"), "{mcp:?}");
}

/// A cloned repository is hostile: its `.gitignore` a link out of the project (to an endless
/// device), its `package.json` a pipe, its `index.html` a huge file. `reticle doctor` and
/// `reticle init` each finish within their bound and name the file they refused (doctor cannot
/// tell the wiring then: a warning naming why); nothing is followed out or read whole. Control:
/// the same project with plain files reads them.
#[test]
fn doctor_and_init_refuse_planted_links_pipes_and_huge_files_by_name() {
    let state = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let dir = project.path();
    std::os::unix::fs::symlink("/dev/zero", dir.join(".gitignore")).unwrap();
    nix::unistd::mkfifo(&dir.join("package.json"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let huge = std::fs::File::create(dir.join("index.html")).unwrap();
    huge.set_len(64 * 1024 * 1024).unwrap();
    std::fs::create_dir_all(dir.join(".reticle")).unwrap();
    let port = free_port().to_string();
    let d = dir.to_str().unwrap();

    let all = findings(&reticle(
        state.path(),
        home.path(),
        &["doctor", "--json", "--port", &port, "--dir", d],
    ));
    let gitignore = finding(&all, "gitignore");
    assert!(
        !gitignore.1 && gitignore.2.contains("leads out of the project"),
        "{gitignore:?}"
    );
    let wiring = finding(&all, "wiring");
    assert!(
        wiring.2.contains("package.json") && wiring.2.contains("not a regular file"),
        "{wiring:?}"
    );

    let init = reticle(
        state.path(),
        home.path(),
        &["init", "--dir", d, "--port", &port],
    );
    let said =
        String::from_utf8_lossy(&init.stdout).to_string() + &String::from_utf8_lossy(&init.stderr);
    assert!(said.contains("package.json"), "{said}");
    assert!(said.contains("leads out of the project"), "{said}");

    // The pipe replaced by a Vite manifest: the huge index.html is refused by its size.
    std::fs::remove_file(dir.join("package.json")).unwrap();
    std::fs::write(
        dir.join("package.json"),
        r#"{"devDependencies":{"vite":"8"}}"#,
    )
    .unwrap();
    let all = findings(&reticle(
        state.path(),
        home.path(),
        &["doctor", "--json", "--port", &port, "--dir", d],
    ));
    let wiring = finding(&all, "wiring");
    assert!(
        wiring.2.contains("index.html") && wiring.2.contains("more than"),
        "{wiring:?}"
    );

    // Control: plain files are read.
    std::fs::remove_file(dir.join(".gitignore")).unwrap();
    vite_app(dir);
    let all = findings(&reticle(
        state.path(),
        home.path(),
        &["doctor", "--json", "--port", &port, "--dir", d],
    ));
    let wiring = finding(&all, "wiring");
    assert!(wiring.2.contains("init --write"), "{wiring:?}");
    assert!(
        !finding(&all, "gitignore").2.contains("cannot be read"),
        "{all:?}"
    );
}
