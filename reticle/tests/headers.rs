//! The header check: every `.rs` file of the workspace's crates opens with a `//!` header of at
//! most `MAX_LINES` lines saying what the module owns and what it must not do; detail goes on the
//! items. Plain line reading, no dependency; it judges the leading block only.

use std::path::{Path, PathBuf};

/// The longest header allowed, in lines (blank `//!` lines count).
const MAX_LINES: usize = 6;

/// The source folders checked, relative to the workspace root (bins live inside them).
const ROOTS: &[&str] = &["reticle/src", "gates/src", "harness/src", "toxics/src"];

/// Folders left out, relative to the workspace root, each with why.
const EXCLUDED: &[&str] = &[];

/// Files whose header is still being trimmed (issue 28, "Words"): allowed to be long until they
/// are, and a file listed here that passes fails the check, so the list only shrinks.
const PENDING: &[&str] = &[];

/// One file whose header breaks the rule.
#[derive(Debug, PartialEq, Eq)]
enum Problem {
    Missing { file: String },
    TooLong { file: String, lines: usize },
}

/// The length of the leading `//!` block, after any blank lines; 0 when there is none.
fn header_lines(source: &str) -> usize {
    source
        .lines()
        .map(str::trim)
        .skip_while(|line| line.is_empty())
        .take_while(|line| line.starts_with("//!"))
        .count()
}

/// The problem of one file's source, if any.
fn check_source(file: &str, source: &str) -> Option<Problem> {
    let file = file.to_string();
    match header_lines(source) {
        0 => Some(Problem::Missing { file }),
        lines if lines > MAX_LINES => Some(Problem::TooLong { file, lines }),
        _ => None,
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// Every problem under `ROOTS` of the workspace at `root`, with the file count checked.
fn check_workspace(root: &Path) -> (usize, Vec<Problem>) {
    let mut files = Vec::new();
    for dir in ROOTS {
        rust_files(&root.join(dir), &mut files);
    }
    files.retain(|path| {
        !EXCLUDED
            .iter()
            .any(|excluded| path.starts_with(root.join(excluded)))
    });
    let problems = files
        .iter()
        .filter_map(|path| {
            let source = std::fs::read_to_string(path)
                .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
            let relative = path.strip_prefix(root).unwrap_or(path);
            check_source(&relative.display().to_string(), &source)
        })
        .collect();
    (files.len(), problems)
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("reticle/ sits in the workspace root")
        .to_path_buf()
}

#[test]
fn every_module_opens_with_a_short_header() {
    let (checked, mut problems) = check_workspace(&workspace_root());
    assert!(checked > 100, "only {checked} files found: wrong root?");
    let still_long: Vec<&str> = problems
        .iter()
        .filter_map(|p| match p {
            Problem::TooLong { file, .. } => Some(file.as_str()),
            Problem::Missing { .. } => None,
        })
        .collect();
    let trimmed: Vec<&&str> = PENDING.iter().filter(|f| !still_long.contains(f)).collect();
    assert!(
        trimmed.is_empty(),
        "trimmed, take them off PENDING: {trimmed:?}"
    );
    problems.retain(
        |p| !matches!(p, Problem::TooLong { file, .. } if PENDING.contains(&file.as_str())),
    );
    assert!(
        problems.is_empty(),
        "{} of {checked} files break the header rule (at most {MAX_LINES} `//!` lines; detail \
         goes on the items):\n{}",
        problems.len(),
        problems
            .iter()
            .map(|p| format!("  {p:?}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn a_long_header_and_a_missing_one_are_both_reported() {
    let long: String = (1..=12)
        .map(|i| format!("//! line {i}\n"))
        .collect::<String>()
        + "fn f() {}\n";
    assert_eq!(
        check_source("long.rs", &long),
        Some(Problem::TooLong {
            file: "long.rs".into(),
            lines: 12
        })
    );
    assert_eq!(
        check_source("bare.rs", "use std::fmt;\n//! too late to count\n"),
        Some(Problem::Missing {
            file: "bare.rs".into()
        })
    );
    assert_eq!(
        check_source("plain.rs", "/// an item doc, not a header\nfn f() {}\n"),
        Some(Problem::Missing {
            file: "plain.rs".into()
        })
    );
    // The limit itself passes, one more line fails.
    let at_limit: String = (0..MAX_LINES).map(|_| "//!\n").collect();
    assert_eq!(
        check_source("six.rs", &format!("\n{at_limit}fn f() {{}}\n")),
        None
    );
    assert!(check_source("seven.rs", &format!("{at_limit}//!\n")).is_some());
}

#[test]
fn the_walk_reports_a_bad_file_in_a_real_tree() {
    let root = tempfile::tempdir().expect("temp dir");
    for dir in ROOTS {
        std::fs::create_dir_all(root.path().join(dir).join("inner")).expect("mkdir");
        std::fs::write(
            root.path().join(dir).join("ok.rs"),
            "//! Owns x.\nfn f() {}\n",
        )
        .expect("write");
    }
    let deep = root.path().join(ROOTS[0]).join("inner/deep.rs");
    std::fs::write(&deep, "fn f() {}\n").expect("write");
    let (checked, problems) = check_workspace(root.path());
    assert_eq!(checked, ROOTS.len() + 1);
    assert_eq!(
        problems,
        vec![Problem::Missing {
            file: format!("{}/inner/deep.rs", ROOTS[0])
        }]
    );
}
