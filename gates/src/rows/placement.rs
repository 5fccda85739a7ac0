//! Where rows live: each row of a table is found from its id by its path,
//! `gates/src/rows/<family>/<id>_<words>.rs`, a file that holds that row alone. Pure over the
//! table and the files' text; it changes nothing.

use std::collections::BTreeMap;

use super::RowGate;

/// The folder every row file sits in (one family folder below it).
pub const ROWS_DIR: &str = "gates/src/rows/";

/// How a row file declares its table entry; a file holds exactly one.
const ENTRY: &str = ": RowGate = RowGate {";

/// The file name a row id starts: lowercased, `.` as `_`, then `_` (`H1.1` → `h1_1_`).
pub fn file_prefix(id: &str) -> String {
    format!("{}_", id.to_ascii_lowercase().replace('.', "_"))
}

/// Every way `rows` break "one row, one file, found from its id": a file outside a family
/// folder, a family's `mod.rs` or the table's own file, a name that does not start with the
/// row's id or has no words after it, two rows naming one file, or a file (as `read` gives its
/// text; `None`: unreadable) that does not declare exactly one row. Empty when all is well.
pub fn problems(rows: &[RowGate], read: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let mut problems = Vec::new();
    let mut by_file: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for row in rows {
        by_file.entry(row.file).or_default().push(row.id);
        let Some((family, name)) = row
            .file
            .strip_prefix(ROWS_DIR)
            .and_then(|rest| rest.split_once('/'))
        else {
            problems.push(format!(
                "{}: {} is not in a family folder of {ROWS_DIR}",
                row.id, row.file
            ));
            continue;
        };
        let prefix = file_prefix(row.id);
        let words = name
            .strip_suffix(".rs")
            .and_then(|stem| stem.strip_prefix(&prefix));
        if family.is_empty() || name.contains('/') || name == "mod.rs" {
            problems.push(format!(
                "{}: {} is not a row file of one family folder",
                row.id, row.file
            ));
        } else if words.is_none_or(str::is_empty) {
            problems.push(format!(
                "{}: {} is not named `{prefix}<words>.rs`",
                row.id, row.file
            ));
        }
    }
    for (file, ids) in &by_file {
        if ids.len() > 1 {
            problems.push(format!("{file} holds rows {}", ids.join(", ")));
        }
        match read(file) {
            None => problems.push(format!("{file} could not be read")),
            Some(text) => {
                let entries = text.matches(ENTRY).count();
                if entries != 1 {
                    problems.push(format!("{file} declares {entries} rows, not one"));
                }
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::ROWS;

    fn read_in_repo(file: &str) -> Option<String> {
        std::fs::read_to_string(harness::fixture_app::repo_root().join(file)).ok()
    }

    #[test]
    fn every_row_of_the_table_is_found_from_its_id_in_a_file_of_its_own() {
        assert_eq!(problems(ROWS, read_in_repo), Vec::<String>::new());
        assert_eq!(file_prefix("H1.1"), "h1_1_");
        assert_eq!(file_prefix("S10"), "s10_");
    }

    /// A row as the table would hold it, in `file`.
    fn row_in(id: &'static str, file: &'static str) -> RowGate {
        RowGate {
            file,
            id,
            ..ROWS[0]
        }
    }

    /// Reads every file as if it declared `entries` rows.
    fn declaring(entries: usize) -> impl Fn(&str) -> Option<String> {
        move |_| Some(format!("pub const X{ENTRY} }};\n").repeat(entries))
    }

    #[test]
    fn a_row_in_the_table_file_a_shared_file_or_a_misnamed_file_is_a_problem() {
        // Negative controls: each fabricated table breaks the rule once and must be reported.
        let in_mod = [row_in("T1", "gates/src/rows/mod.rs")];
        assert_eq!(problems(&in_mod, declaring(1)).len(), 1, "rows/mod.rs");
        let family_mod = [row_in("T1", "gates/src/rows/traces/mod.rs")];
        assert_eq!(
            problems(&family_mod, declaring(1)).len(),
            1,
            "traces/mod.rs"
        );
        let misnamed = [row_in("T1", "gates/src/rows/traces/t2_no_orphan_span.rs")];
        assert_eq!(
            problems(&misnamed, declaring(1)).len(),
            1,
            "another id's name"
        );
        let no_words = [row_in("T1", "gates/src/rows/traces/t1_.rs")];
        assert_eq!(problems(&no_words, declaring(1)).len(), 1, "no words");
        let outside = [row_in("T1", "gates/src/scenarios/traces.rs")];
        assert_eq!(problems(&outside, declaring(1)).len(), 1, "outside rows/");

        let file = "gates/src/rows/traces/t1_one_root_per_call.rs";
        let shared = [row_in("T1", file), row_in("T1", file)];
        let found = problems(&shared, declaring(1));
        assert!(
            found.iter().any(|p| p.contains("holds rows T1, T1")),
            "{found:?}"
        );
        let alone = [row_in("T1", file)];
        assert_eq!(problems(&alone, declaring(1)), Vec::<String>::new());
        let two_in_one = problems(&alone, declaring(2));
        assert!(
            two_in_one.iter().any(|p| p.contains("declares 2 rows")),
            "{two_in_one:?}"
        );
        assert_eq!(problems(&alone, |_| None).len(), 1, "an unreadable file");
    }
}
