//! `reticle doctor`'s checks of what runs around the daemon: how an agent reaches `reticle mcp`
//! (the `reticle` its config starts by name, on PATH), the Chromium `reticle verify` launches,
//! the project's wiring (`reticle init`'s own detection: does the app load the SDK, on this
//! port?) and its workspace (`.reticle/` readable, every file in a format this Reticle reads,
//! the `.gitignore` block that keeps runs out of git and flows in). Each is one [`Finding`]
//! whose text is the fix when it is not ok. It reads; it must not write anything.

use std::path::Path;

use super::Finding;
use crate::chromium::chromium_path;
use crate::cli::init::{COMMAND, find_executable, plan_ignore};
use crate::config::env;
use crate::store::workspace::{DIR_NAME, Folder, Workspace};
use crate::wiring::{Wiring, depends_on_published_sdk, wiring};

fn ok(check: &'static str, detail: String) -> Finding {
    Finding {
        check,
        ok: true,
        warning: false,
        detail,
    }
}

fn bad(check: &'static str, detail: String) -> Finding {
    Finding {
        check,
        ok: false,
        warning: false,
        detail,
    }
}

fn warn(check: &'static str, detail: String) -> Finding {
    Finding {
        check,
        ok: true,
        warning: true,
        detail,
    }
}

/// Every check of this module, for the project at `project` and the daemon on `port`.
pub fn findings(project: &Path, port: u16) -> Vec<Finding> {
    let mut found = vec![mcp_reached(), chromium()];
    found.push(project_wiring(project, port));
    found.extend(workspace(project));
    found
}

/// Agents' configs start `reticle mcp` by name: `reticle` must be on PATH.
fn mcp_reached() -> Finding {
    let path = std::env::var_os("PATH").unwrap_or_default();
    match find_executable(COMMAND, &path) {
        Some(found) => ok(
            "mcp",
            format!(
                "agents start `{COMMAND} mcp` from PATH: {}",
                found.display()
            ),
        ),
        None => {
            let fix = std::env::current_exe()
                .ok()
                .and_then(|exe| {
                    exe.parent()
                        .map(|dir| format!("put {} on PATH", dir.display()))
                })
                .unwrap_or_else(|| "put the directory holding `reticle` on PATH".to_string());
            bad(
                "mcp",
                format!(
                    "no `{COMMAND}` on PATH, and agents' configs start `{COMMAND} mcp` by name: {fix} in the environment your agent starts from"
                ),
            )
        }
    }
}

/// The Chromium `reticle verify` launches (its own lookup: `RETICLE_CHROMIUM`, else Debian's).
fn chromium() -> Finding {
    let path = chromium_path();
    let runnable = std::fs::metadata(&path).is_ok_and(|meta| {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    });
    if runnable {
        ok(
            "chromium",
            format!("`reticle verify` launches {}", path.display()),
        )
    } else {
        bad(
            "chromium",
            format!(
                "no runnable Chromium at {}, so `reticle verify` cannot start a browser: install Chromium (Debian: `apt install chromium`) or set {} to its binary",
                path.display(),
                env::CHROMIUM
            ),
        )
    }
}

/// Whether the app loads the SDK, as `reticle init` tells it, and on which port.
fn project_wiring(project: &Path, port: u16) -> Finding {
    if depends_on_published_sdk(project) {
        return ok(
            "wiring",
            format!(
                "the app depends on {} and connects it itself (it needs the daemon's URL ws://127.0.0.1:{port}/reticle and the pairing token; `reticle init` prints the line)",
                crate::wiring::PUBLISHED_SDK
            ),
        );
    }
    match wiring(project) {
        Wiring::Wired {
            file,
            port: Some(wired),
        } if wired != port => bad(
            "wiring",
            format!(
                "{} loads the SDK from the daemon on port {wired}, not {port}: run `reticle init --write --port {port}` (or use port {wired})",
                file.display()
            ),
        ),
        Wiring::Wired { file, .. } => ok(
            "wiring",
            format!("{} loads the daemon's SDK in development", file.display()),
        ),
        Wiring::NotWired { file } => bad(
            "wiring",
            format!(
                "{} does not load the SDK, so no page of this app connects: run `reticle init --write` here",
                file.display()
            ),
        ),
        Wiring::Unknown(why) => warn(
            "wiring",
            format!(
                "cannot tell whether {} loads the SDK ({why}); run `reticle doctor` in the app's directory",
                project.display()
            ),
        ),
    }
}

/// `.reticle/`: readable, every document in a format this Reticle reads, and the `.gitignore`
/// block. A project without one yet is fine.
fn workspace(project: &Path) -> Vec<Finding> {
    let root = project.join(DIR_NAME);
    if !root.exists() {
        return vec![ok(
            "workspace",
            format!(
                "no {DIR_NAME}/ in {} yet; agents create it when they save a flow",
                project.display()
            ),
        )];
    }
    if let Err(err) = std::fs::read_dir(&root) {
        return vec![bad(
            "workspace",
            format!(
                "{} cannot be read ({err}): make it readable and writable by you",
                root.display()
            ),
        )];
    }
    let store = Workspace::of_project(project);
    let mut refused: Vec<String> = Folder::ALL
        .into_iter()
        .flat_map(|folder| store.list(folder))
        .filter_map(|listed| listed.document.err().map(|err| err.to_string()))
        .collect();
    if let Err(err) = store.load_project() {
        refused.push(err.to_string());
    }
    let documents = match refused.as_slice() {
        [] => ok(
            "workspace",
            format!(
                "{} is readable, every file in a format this Reticle reads",
                root.display()
            ),
        ),
        [one] => bad("workspace", one.clone()),
        [first, rest @ ..] => bad(
            "workspace",
            format!("{first} (and {} more file(s) like it)", rest.len()),
        ),
    };
    let ignore = project.join(".gitignore");
    let existing = match crate::store::read_inside(project, Path::new(".gitignore")) {
        Ok(existing) => existing,
        Err(err) => {
            let why = format!(
                "{} cannot be read ({err}): make it a plain file of the project",
                ignore.display()
            );
            return vec![documents, bad("gitignore", why)];
        }
    };
    let gitignore = if plan_ignore(existing.as_deref()).text.is_none() {
        ok(
            "gitignore",
            format!(
                "{DIR_NAME}/'s runs and capsules are ignored, its flows and baselines committed"
            ),
        )
    } else {
        bad(
            "gitignore",
            format!(
                "{} lacks Reticle's block (or ignores all of {DIR_NAME}/), so runs may be committed or flows left out and CI's `reticle verify` finds none: run `reticle init`",
                ignore.display()
            ),
        )
    };
    vec![documents, gitignore]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(found: &[Finding], check: &str) -> (bool, bool, String) {
        let f = found.iter().find(|f| f.check == check).unwrap();
        (f.ok, f.warning, f.detail.clone())
    }

    /// A wired project is ok; the same project before `init --write`, or wired to another port,
    /// is a problem naming the fix. A directory with no app is a warning.
    #[test]
    fn the_wiring_is_told_by_inits_own_detection() {
        let dir = tempfile::tempdir().unwrap();
        let (ok, warning, _) = checked(&[project_wiring(dir.path(), 4400)], "wiring");
        assert!(ok && warning);
        std::fs::write(
            dir.path().join("package.json"),
            r#"{"devDependencies":{"vite":"8"}}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("index.html"),
            "<script type=\"module\" src=\"/src/main.js\"></script>",
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/main.js"), "console.log(1);\n").unwrap();
        let (ok, _, detail) = checked(&[project_wiring(dir.path(), 4400)], "wiring");
        assert!(
            !ok && detail.contains("run `reticle init --write`"),
            "{detail}"
        );
        let crate::wiring::Detected::Supported(stack) = crate::wiring::detect(dir.path()) else {
            panic!("a Vite app")
        };
        let crate::wiring::AppEdit::Change { text, .. } =
            crate::wiring::plan(&stack, Some("console.log(1);\n"), 4400)
        else {
            panic!("the snippet is added")
        };
        std::fs::write(dir.path().join("src/main.js"), text).unwrap();
        let (ok, _, _) = checked(&[project_wiring(dir.path(), 4400)], "wiring");
        assert!(ok);
        let (ok, _, detail) = checked(&[project_wiring(dir.path(), 4401)], "wiring");
        assert!(!ok && detail.contains("port 4400, not 4401"), "{detail}");
    }

    /// No workspace is fine; one with a file of an unknown format is a problem naming the file;
    /// a `.gitignore` without the block is a problem naming `reticle init`.
    #[test]
    fn the_workspace_is_readable_in_a_known_format_and_ignored_as_init_does() {
        let dir = tempfile::tempdir().unwrap();
        let found = workspace(dir.path());
        assert!(found.iter().all(|f| f.ok), "{found:?}");
        let flows = dir.path().join(".reticle/flows");
        std::fs::create_dir_all(&flows).unwrap();
        std::fs::write(
            dir.path().join(".gitignore"),
            plan_ignore(None).text.unwrap(),
        )
        .unwrap();
        let found = workspace(dir.path());
        assert!(found.iter().all(|f| f.ok), "{found:?}");
        std::fs::write(flows.join("checkout.json"), r#"{"format": 9}"#).unwrap();
        let found = workspace(dir.path());
        let (ok, _, detail) = checked(&found, "workspace");
        assert!(
            !ok && detail.contains("checkout.json has format 9"),
            "{detail}"
        );
        std::fs::write(dir.path().join(".gitignore"), ".reticle/\n").unwrap();
        let (ok, _, detail) = checked(&workspace(dir.path()), "gitignore");
        assert!(!ok && detail.contains("run `reticle init`"), "{detail}");
    }

    /// Chromium is looked for where `reticle verify` looks.
    #[test]
    fn chromium_is_the_one_verify_launches() {
        let found = chromium();
        assert!(
            found
                .detail
                .contains(&chromium_path().display().to_string()),
            "{found:?}"
        );
    }
}
