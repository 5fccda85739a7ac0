//! The `.gitignore` step of `reticle init`: what one machine's sessions leave in `.reticle/`
//! stays out of git and what people review (flows, baselines, heals) is committed, so CI's
//! `reticle verify` on a fresh clone finds the flows. It keeps one marked block in `.gitignore`
//! and drops an older `init`'s line ignoring the whole folder, saying so.
//!
//! Planning is pure; it must not decide which folders are committed ([`Folder::committed`] does).

use std::path::Path;

use super::report::{Mark, Step};
use crate::store::SCRATCH_GLOB;
use crate::store::workspace::{DIR_NAME, Folder};

const IGNORE_FILE: &str = ".gitignore";
/// The comment that opens Reticle's block.
const BEGIN: &str = "# reticle:begin";
/// The comment that closes it.
const END: &str = "# reticle:end";

/// Reticle's block: the local folders and the scratch glob, anchored at the project.
pub fn block() -> String {
    let mut lines = vec![format!(
        "{BEGIN} (reticle init): runs and capsules stay on this machine; flows, baselines and heals are committed"
    )];
    lines.extend(
        Folder::ALL
            .into_iter()
            .filter(|folder| !folder.committed())
            .map(|folder| format!("/{DIR_NAME}/{}/", folder.dir_name())),
    );
    lines.push(format!("/{DIR_NAME}/**/{SCRATCH_GLOB}"));
    lines.push(END.to_string());
    lines.join("\n") + "\n"
}

/// Whether `line` of a `.gitignore` ignores the whole workspace (flows and baselines with it).
fn ignores_whole_workspace(line: &str) -> bool {
    let bare = line.trim().trim_start_matches('/');
    let bare = bare.strip_suffix("/*").unwrap_or(bare);
    bare.trim_end_matches('/') == DIR_NAME
}

/// What the `.gitignore` must become.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IgnorePlan {
    /// The new text, `None` when nothing changes.
    pub text: Option<String>,
    /// The lines removed because they ignored the whole workspace.
    pub removed: Vec<String>,
    /// Whether Reticle's block was already there (possibly older, and replaced).
    pub had_block: bool,
}

/// Plans the block in `existing` (the file's text, `None` when there is none).
pub fn plan(existing: Option<&str>) -> IgnorePlan {
    let text = existing.unwrap_or_default();
    let wanted = block();
    let mut kept = String::new();
    let mut removed = Vec::new();
    let mut in_block = false;
    let mut had_block = false;
    let mut block_at = None;
    for line in text.lines() {
        if line.trim_start().starts_with(BEGIN) {
            in_block = true;
            had_block = true;
            block_at.get_or_insert(kept.len());
            continue;
        }
        if in_block {
            in_block = line.trim() != END;
            continue;
        }
        if ignores_whole_workspace(line) {
            removed.push(line.to_string());
            continue;
        }
        kept.push_str(line);
        kept.push('\n');
    }
    let at = block_at.unwrap_or(kept.len());
    let updated = format!("{}{wanted}{}", &kept[..at], &kept[at..]);
    let same = existing.is_some_and(|old| old == updated);
    IgnorePlan {
        text: (!same).then_some(updated),
        removed,
        had_block,
    }
}

/// Keeps Reticle's block in `project/.gitignore` (or, in a dry run, says it would).
pub fn ignore_runtime(project: &Path, dry_run: bool) -> Step {
    let by_hand = |what: String| {
        Step::new(
            Mark::Failed,
            format!(
                "{IGNORE_FILE}: {what}; add these lines to it by hand:\n{}",
                indented(&block())
            ),
        )
    };
    let existing = match crate::store::read_inside(project, Path::new(IGNORE_FILE)) {
        Ok(existing) => existing,
        Err(err) => return by_hand(format!("cannot be read ({err})")),
    };
    let planned = plan(existing.as_deref());
    let local =
        "runs, capsules and scratch stay out of git; flows, baselines and heals are committed";
    let Some(text) = planned.text else {
        return Step::new(
            Mark::Unchanged,
            format!(
                "{IGNORE_FILE}: already keeps Reticle's runs and capsules out of git ({local}); unchanged"
            ),
        );
    };
    let would = if dry_run { "would be " } else { "" };
    let mut what = match (&existing, planned.had_block) {
        (None, _) => format!("{would}created with Reticle's lines ({local})"),
        (Some(_), true) => format!("{would}updated Reticle's lines ({local})"),
        (Some(_), false) => format!("{would}added Reticle's lines ({local})"),
    };
    if !planned.removed.is_empty() {
        what.push_str(&format!(
            "; {would}removed {} (it kept saved flows and baselines out of git, so `reticle verify` on a fresh clone found none)",
            planned
                .removed
                .iter()
                .map(|line| format!("the line {}", line.trim()))
                .collect::<Vec<_>>()
                .join(" and ")
        ));
    }
    if dry_run {
        return Step::new(Mark::Done, format!("{IGNORE_FILE}: {what}"));
    }
    match crate::store::write_atomic(project, IGNORE_FILE, text.as_bytes()) {
        Ok(()) => Step::new(Mark::Done, format!("{IGNORE_FILE}: {what}")),
        Err(err) => by_hand(format!("cannot be written ({err})")),
    }
}

fn indented(lines: &str) -> String {
    lines
        .lines()
        .map(|line| format!("      {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_ignores_the_local_folders_and_scratch_and_not_the_reviewed_ones() {
        let block = block();
        for local in [
            "/.reticle/runs/",
            "/.reticle/capsules/",
            "/.reticle/**/.*.tmp-*",
        ] {
            assert!(block.lines().any(|l| l == local), "{block}");
        }
        for reviewed in ["flows", "baselines", "heals"] {
            assert!(
                !block
                    .lines()
                    .any(|l| !l.starts_with('#') && l.contains(reviewed)),
                "{block}"
            );
        }
    }

    #[test]
    fn the_block_is_added_once_keeping_the_others() {
        let project = tempfile::tempdir().unwrap();
        let path = project.path().join(IGNORE_FILE);
        std::fs::write(&path, "node_modules/").unwrap();
        let first = ignore_runtime(project.path(), false);
        assert_eq!(first.mark, Mark::Done, "{first}");
        assert!(first.text.contains("added Reticle's lines"), "{first}");
        let second = ignore_runtime(project.path(), false);
        assert_eq!(second.mark, Mark::Unchanged, "{second}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("node_modules/\n{}", block())
        );
    }

    #[test]
    fn a_line_ignoring_the_whole_workspace_is_removed_and_named() {
        for old in [".reticle/", "/.reticle", ".reticle/*", ".reticle"] {
            let planned = plan(Some(&format!("dist\n{old}\n*.log\n")));
            assert_eq!(planned.removed, [old], "{old}");
            let text = planned.text.unwrap();
            assert_eq!(text, format!("dist\n*.log\n{}", block()), "{old}");
        }
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join(IGNORE_FILE), ".reticle/\n").unwrap();
        let step = ignore_runtime(project.path(), false);
        assert!(
            step.text
                .contains("removed the line .reticle/ (it kept saved flows"),
            "{step}"
        );
        // Lines that only look alike stay.
        for other in [".reticle-cache/", ".reticle/runs/", "!.reticle/"] {
            assert!(plan(Some(other)).removed.is_empty(), "{other}");
        }
    }

    #[test]
    fn an_older_block_is_replaced_in_place() {
        let old = format!("a\n{BEGIN} old\n/.reticle/\n{END}\nb\n");
        let planned = plan(Some(&old));
        assert!(planned.had_block);
        assert_eq!(planned.text.unwrap(), format!("a\n{}b\n", block()));
        let current = format!("a\n{}b\n", block());
        assert_eq!(plan(Some(&current)).text, None);
    }

    #[test]
    fn an_absent_file_is_created_and_a_dry_run_writes_nothing() {
        let project = tempfile::tempdir().unwrap();
        let planned = ignore_runtime(project.path(), true);
        assert!(planned.text.contains("would be created"), "{planned}");
        assert!(!project.path().join(IGNORE_FILE).exists());
        let made = ignore_runtime(project.path(), false);
        assert!(made.text.contains("created"), "{made}");
        assert_eq!(
            std::fs::read_to_string(project.path().join(IGNORE_FILE)).unwrap(),
            block()
        );
    }

    /// The block as git reads it: flows and baselines are tracked, runs, capsules and scratch
    /// are not. The control: the line an older `init` wrote ignores the flows too.
    #[test]
    fn git_commits_flows_and_ignores_runs_by_the_block() {
        let Ok(git) = std::process::Command::new("git").arg("--version").output() else {
            return;
        };
        assert!(git.status.success());
        let ignored = |ignore: &str| -> Vec<String> {
            let project = tempfile::tempdir().unwrap();
            let dir = project.path();
            let run = |args: &[&str]| {
                std::process::Command::new("git")
                    .args(args)
                    .current_dir(dir)
                    .output()
                    .unwrap()
            };
            assert!(run(&["init", "-q"]).status.success());
            std::fs::write(dir.join(IGNORE_FILE), ignore).unwrap();
            let files = [
                ".reticle/flows/add.json",
                ".reticle/baselines/add.json",
                ".reticle/heals/add-1.json",
                ".reticle/runs/1-2-3.json",
                ".reticle/capsules/1-2-3.json",
                ".reticle/flows/.add.json.tmp-42",
            ];
            for file in files {
                let path = dir.join(file);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, "{}").unwrap();
            }
            let mut args = vec!["check-ignore", "--no-index"];
            args.extend(files);
            let out = run(&args);
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(str::to_string)
                .collect()
        };
        assert_eq!(
            ignored(&plan(Some(".reticle/\n")).text.unwrap()),
            [
                ".reticle/runs/1-2-3.json",
                ".reticle/capsules/1-2-3.json",
                ".reticle/flows/.add.json.tmp-42"
            ]
        );
        assert_eq!(ignored(".reticle/\n").len(), 6, "the control ignores all");
    }
}
