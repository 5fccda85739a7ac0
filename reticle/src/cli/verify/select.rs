//! Which saved flows a `reticle verify` runs: all, or those `--flows` names (an unknown name is
//! refused before anything starts, naming the saved ones); with `--changed REV`, only the flows
//! whose `paths` globs match a file `git diff --name-only REV` lists, the others skipped with
//! why. A flow without `paths` always runs.
//!
//! It chooses flows; it must not replay anything or launch a browser.

use std::path::Path;
use std::process::Command;

use crate::flow::store::load_flow;
use crate::store::workspace::{Folder, Workspace};

/// A flow left out of the run, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub name: String,
    pub why: String,
}

/// The flows to run, in order, and those skipped.
#[derive(Debug, Default)]
pub struct Selection {
    pub run: Vec<String>,
    pub skipped: Vec<Skipped>,
}

/// The files `git diff --name-only rev` lists in the repository at `project`; a sentence when
/// git cannot say (not a repository, an unknown revision, no git).
/// `rev` is only ever a revision: one starting with `-` is refused, and git is told where its
/// options end, so no value can become an option of git's (`--output=FILE` writes a file).
pub fn changed_files(project: &Path, rev: &str) -> Result<Vec<String>, String> {
    if rev.starts_with('-') {
        return Err(format!(
            "--changed takes a revision (a commit, branch or tag such as origin/main), got '{rev}': a revision never starts with '-'"
        ));
    }
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(project)
            .args(args)
            .output()
            .map_err(|e| format!("--changed needs git, which could not run: {e}"))
    };
    if !git(&["rev-parse", "--git-dir"])?.status.success() {
        return Err(format!(
            "--changed compares with a git revision, but {} is not inside a git repository",
            project.display()
        ));
    }
    let output = git(&["diff", "--name-only", "--end-of-options", rev, "--"])?;
    if !output.status.success() {
        return Err(format!(
            "--changed {rev}: `git diff --name-only {rev}` failed in {}: {}",
            project.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect())
}

/// Chooses the flows: `named` (else every saved flow), narrowed by `changed` files when given.
/// A name no saved flow has (a typo) is refused, naming the saved flows, before anything runs.
pub fn select(
    workspace: &Workspace,
    named: Option<Vec<String>>,
    changed: Option<&[String]>,
) -> Result<Selection, String> {
    let saved: Vec<String> = workspace
        .list(Folder::Flows)
        .into_iter()
        .map(|listed| listed.name)
        .collect();
    let names = match named {
        Some(named) => {
            let unknown: Vec<&str> = named
                .iter()
                .filter(|name| !saved.contains(name))
                .map(String::as_str)
                .collect();
            if !unknown.is_empty() {
                let listed = if saved.is_empty() {
                    "none is saved".to_string()
                } else {
                    format!("the saved flows are {}", saved.join(", "))
                };
                return Err(format!(
                    "--flows names {}, which no flow saved in {} is called ({listed}); check the spelling",
                    unknown
                        .iter()
                        .map(|n| format!("'{n}'"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    workspace.root().display()
                ));
            }
            named
        }
        None => saved,
    };
    let Some(changed) = changed else {
        return Ok(Selection {
            run: names,
            skipped: Vec::new(),
        });
    };
    let mut selection = Selection::default();
    for name in names {
        // A flow that cannot be read runs anyway: its replay says why it is unknown.
        let globs = load_flow(workspace, &name)
            .map(|flow| flow.paths)
            .unwrap_or_default();
        if globs.is_empty()
            || changed
                .iter()
                .any(|file| globs.iter().any(|g| glob_matches(g, file)))
        {
            selection.run.push(name);
        } else {
            selection.skipped.push(Skipped {
                name,
                why: format!(
                    "none of its paths ({}) matches a changed file",
                    globs.join(", ")
                ),
            });
        }
    }
    Ok(selection)
}

/// Whether `glob` matches the repository-relative `path`.
pub fn glob_matches(glob: &str, path: &str) -> bool {
    let glob: Vec<&str> = glob.trim_start_matches('/').split('/').collect();
    let path: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    segments_match(&glob, &path)
}

fn segments_match(glob: &[&str], path: &[&str]) -> bool {
    match glob.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => (0..=path.len()).any(|skip| segments_match(rest, &path[skip..])),
        Some((first, rest)) => match path.split_first() {
            Some((segment, path_rest)) => {
                segment_matches(first.as_bytes(), segment.as_bytes())
                    && segments_match(rest, path_rest)
            }
            None => false,
        },
    }
}

fn segment_matches(glob: &[u8], text: &[u8]) -> bool {
    match glob.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|skip| segment_matches(rest, &text[skip..])),
        Some((b'?', rest)) => !text.is_empty() && segment_matches(rest, &text[1..]),
        Some((c, rest)) => text.first() == Some(c) && segment_matches(rest, &text[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::{changed_files, glob_matches};

    fn git(dir: &std::path::Path, args: &[&str]) {
        let ran = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .unwrap();
        assert!(ran.status.success(), "git {args:?}: {ran:?}");
    }

    #[test]
    fn a_changed_revision_can_never_be_an_option_of_gits() {
        let repo = tempfile::tempdir().unwrap();
        git(repo.path(), &["init", "-q"]);
        git(
            repo.path(),
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "one",
            ],
        );
        let written = repo.path().join("written-by-git");
        let injected = format!("--output={}", written.display());
        let refused = changed_files(repo.path(), &injected).unwrap_err();
        assert!(refused.contains("never starts with '-'"), "{refused}");
        assert!(!written.exists(), "git wrote a file named in --changed");
        // Control: a revision is read.
        assert_eq!(changed_files(repo.path(), "HEAD"), Ok(vec![]));
    }

    #[test]
    fn a_project_outside_git_is_named_without_gits_usage_text() {
        let plain = tempfile::tempdir().unwrap();
        let refused = changed_files(plain.path(), "HEAD").unwrap_err();
        assert!(refused.contains("not inside a git repository"), "{refused}");
        assert!(!refused.contains("usage:"), "{refused}");
    }

    #[test]
    fn globs_match_within_and_across_segments() {
        assert!(glob_matches("src/login/**", "src/login/form.tsx"));
        assert!(glob_matches("src/login/**", "src/login/a/b/c.ts"));
        assert!(glob_matches("/src/*.ts", "src/app.ts"));
        assert!(!glob_matches("src/*.ts", "src/deep/app.ts"));
        assert!(glob_matches("**/*.css", "styles.css"));
        assert!(glob_matches("**/*.css", "a/b/styles.css"));
        assert!(glob_matches("apps/e2e/app.?s", "apps/e2e/app.js"));
        assert!(!glob_matches("apps/e2e/app.js", "apps/e2e/app.jsx"));
        assert!(!glob_matches("docs/**", "src/docs/x.md"));
    }
}
