//! The `.gitignore` step of `reticle init`: Reticle's runtime folder in the project (`.reticle/`:
//! capsules and the feedback outbox, which hold what a session saw and typed) must not be
//! committed. The step adds the line once (creating `.gitignore` if absent, keeping every line
//! already there), says what it added, and asks nothing.

use std::path::Path;

use super::report::{Mark, Step};

/// The line that ignores the runtime folder.
pub const RUNTIME_LINE: &str = ".reticle/";
const IGNORE_FILE: &str = ".gitignore";

/// Whether `line` of a `.gitignore` already ignores the runtime folder.
fn ignores_runtime(line: &str) -> bool {
    matches!(
        line.trim(),
        ".reticle" | ".reticle/" | "/.reticle" | "/.reticle/" | ".reticle/*" | "/.reticle/*"
    )
}

/// Makes sure `project/.gitignore` ignores `.reticle/` (or, in a dry run, says it would).
pub fn ignore_runtime(project: &Path, dry_run: bool) -> Step {
    let by_hand = |what: String| {
        Step::new(
            Mark::Failed,
            format!("{IGNORE_FILE}: {what}; add the line {RUNTIME_LINE} to it by hand"),
        )
    };
    let existing = match crate::store::read_if_present(&project.join(IGNORE_FILE)) {
        Ok(existing) => existing,
        Err(err) => return by_hand(format!("cannot be read ({err})")),
    };
    let text = existing.clone().unwrap_or_default();
    if text.lines().any(ignores_runtime) {
        return Step::new(
            Mark::Unchanged,
            format!("{IGNORE_FILE}: already ignores {RUNTIME_LINE}; unchanged"),
        );
    }
    let would = if dry_run { "would be " } else { "" };
    let what = match existing {
        None => format!(
            "{would}created with the line {RUNTIME_LINE} (Reticle's runtime folder: capsules and feedback stay out of git)"
        ),
        Some(_) => format!(
            "{would}added the line {RUNTIME_LINE} (Reticle's runtime folder: capsules and feedback stay out of git)"
        ),
    };
    if dry_run {
        return Step::new(Mark::Done, format!("{IGNORE_FILE}: {what}"));
    }
    let mut updated = text;
    if !updated.is_empty() && !updated.ends_with('\n') {
        updated.push('\n');
    }
    updated.push_str(RUNTIME_LINE);
    updated.push('\n');
    match crate::store::write_atomic(project, IGNORE_FILE, updated.as_bytes()) {
        Ok(()) => Step::new(Mark::Done, format!("{IGNORE_FILE}: {what}")),
        Err(err) => by_hand(format!("cannot be written ({err})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_is_added_once_keeping_the_others() {
        let project = tempfile::tempdir().unwrap();
        let path = project.path().join(IGNORE_FILE);
        std::fs::write(&path, "node_modules/").unwrap();
        let first = ignore_runtime(project.path(), false);
        assert_eq!(first.mark, Mark::Done, "{first}");
        assert!(first.text.contains("added the line .reticle/"), "{first}");
        let second = ignore_runtime(project.path(), false);
        assert_eq!(second.mark, Mark::Unchanged, "{second}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "node_modules/\n.reticle/\n"
        );
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
            ".reticle/\n"
        );
    }
}
