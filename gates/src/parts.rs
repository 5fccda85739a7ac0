//! Splitting the gate across CI runners and putting it back together: which rows a partition
//! `K/N` runs (stable by row id, so a row stays in its part when others are added), reading a
//! finished part's `scorecard.json` back, and merging parts into one scorecard with the whole
//! run's exit rules. Pure over data; it runs no scenario and writes nothing.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::inventory::{self, Row};
use crate::judge::{Judgement, RowOutcome};
use crate::scorecard::{Control, Score, Scorecard};

/// One part of `N`: `index` is 1-based, as written on the command line (`--partition 2/3`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partition {
    pub index: u32,
    pub count: u32,
}

impl Partition {
    /// Reads `K/N` with 1 ≤ K ≤ N.
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = || format!("--partition takes K/N with 1 <= K <= N (e.g. 2/3), not '{text}'");
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let index: u32 = k.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Self { index, count })
    }

    /// Whether this part runs the row `id`: FNV-1a of the id, modulo the part count. It depends
    /// on the id alone, never on the inventory's order or size.
    pub fn holds(&self, id: &str) -> bool {
        let hash = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        hash % u64::from(self.count) == u64::from(self.index - 1)
    }
}

impl std::fmt::Display for Partition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What a run was asked to score: the rows its `--only` named (every row when none), and the
/// part of them it ran. Written into the scorecard so a merge can check every part agrees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selection {
    pub rows: Vec<String>,
    pub partition: Option<Partition>,
}

impl Selection {
    /// The selection of a run with these `--only` ids (already checked against the inventory).
    pub fn new(only: &[String], partition: Option<Partition>) -> Self {
        let rows = inventory::INVENTORY
            .iter()
            .filter(|r| only.is_empty() || only.iter().any(|id| id == r.id))
            .map(|r| r.id.to_string())
            .collect();
        Self { rows, partition }
    }

    /// Whether the run covers the whole inventory (no `--only`, no partition).
    pub fn is_whole(&self) -> bool {
        self.partition.is_none() && self.rows.len() == inventory::INVENTORY.len()
    }

    /// The rows this run scores, in inventory order.
    pub fn rows_to_run(&self) -> Vec<&'static Row> {
        inventory::INVENTORY
            .iter()
            .filter(|r| self.rows.iter().any(|id| id == r.id))
            .filter(|r| self.partition.is_none_or(|p| p.holds(r.id)))
            .collect()
    }
}

/// A scorecard as `scorecard.json` stores it, read back for a merge.
#[derive(Debug, Deserialize)]
struct StoredCard {
    selection: Option<Selection>,
    rows: Vec<StoredScore>,
    controls: Vec<Control>,
}

#[derive(Debug, Deserialize)]
struct StoredScore {
    id: String,
    outcome: RowOutcome,
    evidence: String,
    ms: u64,
    baseline: Option<RowOutcome>,
}

/// One finished part: its selection and its scorecard.
#[derive(Debug)]
pub struct Part {
    pub name: String,
    pub selection: Selection,
    pub card: Scorecard,
}

/// Reads a part's `scorecard.json`; `name` (its folder) is used in every sentence about it.
pub fn read_part(name: &str, text: &str) -> Result<Part, String> {
    let stored: StoredCard = serde_json::from_str(text)
        .map_err(|e| format!("{name}: not a scorecard written by `reticle gate`: {e}"))?;
    let selection = stored.selection.ok_or_else(|| {
        format!("{name}: the scorecard names no selection (written by an older `reticle gate`); run that part again")
    })?;
    let mut rows = Vec::new();
    for s in stored.rows {
        let row = inventory::find(&s.id)
            .ok_or_else(|| format!("{name}: row {} is not in this inventory", s.id))?;
        rows.push(Score::new(
            row,
            Judgement::new(s.outcome, s.evidence),
            s.ms,
            s.baseline,
        ));
    }
    Ok(Part {
        name: name.to_string(),
        selection: Selection {
            partition: None,
            ..selection
        },
        card: Scorecard {
            generated_at: String::new(),
            selection: None,
            rows,
            controls: stored.controls,
        },
    })
}

/// Merges parts into one scorecard: every selected row exactly once, every control each part
/// ran. Refuses parts that were asked for different rows, a row scored by two parts, and a
/// selected row that no part scored (the whole run would have scored it).
pub fn merge(parts: Vec<Part>, generated_at: String) -> Result<Scorecard, String> {
    let Some(first) = parts.first() else {
        return Err("give at least one part's report folder".into());
    };
    let wanted = first.selection.rows.clone();
    if let Some(other) = parts.iter().find(|p| p.selection.rows != wanted) {
        return Err(format!(
            "{} and {} were asked for different rows (their --only differs); merge parts of one run",
            first.name, other.name
        ));
    }
    let mut by_id: BTreeMap<&'static str, (Score, String)> = BTreeMap::new();
    let mut controls = Vec::new();
    for part in parts {
        for score in part.card.rows {
            if let Some((_, earlier)) = by_id.get(score.id) {
                return Err(format!(
                    "row {} was scored by both {earlier} and {}; give each part once",
                    score.id, part.name
                ));
            }
            by_id.insert(score.id, (score, part.name.clone()));
        }
        controls.extend(part.card.controls);
    }
    let missing: Vec<&String> = wanted
        .iter()
        .filter(|id| !by_id.contains_key(id.as_str()))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "no part scored {}: a part is missing or did not finish",
            missing
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let order: BTreeSet<&str> = wanted.iter().map(String::as_str).collect();
    let rows = inventory::INVENTORY
        .iter()
        .filter(|r| order.contains(r.id))
        .filter_map(|r| by_id.remove(r.id).map(|(score, _)| score))
        .collect();
    Ok(Scorecard {
        generated_at,
        selection: Some(Selection {
            rows: wanted,
            partition: None,
        }),
        rows,
        controls,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(rows: &[&Row]) -> Vec<&'static str> {
        rows.iter().map(|r| r.id).collect()
    }

    #[test]
    fn partitions_cover_every_row_exactly_once() {
        let whole = Selection::new(&[], None);
        assert!(whole.is_whole());
        let mut seen: Vec<&str> = Vec::new();
        for index in 1..=3 {
            let part = Selection::new(&[], Some(Partition { index, count: 3 }));
            assert!(!part.is_whole());
            let rows = ids(&part.rows_to_run());
            assert!(!rows.is_empty(), "part {index}/3 is empty");
            seen.extend(rows);
        }
        seen.sort_unstable();
        let mut all = ids(&whole.rows_to_run());
        all.sort_unstable();
        assert_eq!(seen, all);
    }

    #[test]
    fn a_rows_part_depends_on_its_id_alone() {
        let p = Partition { index: 2, count: 3 };
        let only = vec!["H3.1".to_string(), "H4.6".to_string()];
        for id in ["H3.1", "H4.6"] {
            let alone = ids(&Selection::new(&only, Some(p)).rows_to_run()).contains(&id);
            assert_eq!(alone, p.holds(id));
            let in_whole = ids(&Selection::new(&[], Some(p)).rows_to_run()).contains(&id);
            assert_eq!(alone, in_whole);
        }
    }

    #[test]
    fn parses_k_of_n_and_refuses_the_rest() {
        assert_eq!(
            Partition::parse("2/3").unwrap(),
            Partition { index: 2, count: 3 }
        );
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", ""] {
            assert!(Partition::parse(bad).is_err(), "{bad}");
        }
    }

    fn part(name: &str, only: &[&str], scored: &[(&str, RowOutcome)]) -> Part {
        let only: Vec<String> = only.iter().map(|s| s.to_string()).collect();
        Part {
            name: name.into(),
            selection: Selection::new(&only, None),
            card: Scorecard {
                generated_at: String::new(),
                selection: None,
                rows: scored
                    .iter()
                    .map(|(id, o)| {
                        Score::new(
                            inventory::find(id).unwrap(),
                            Judgement::new(*o, "e"),
                            1,
                            None,
                        )
                    })
                    .collect(),
                controls: Vec::new(),
            },
        }
    }

    #[test]
    fn merges_parts_and_refuses_gaps_doubles_and_mismatches() {
        let only = ["H3.1", "H3.2", "H3.4"];
        let merged = merge(
            vec![
                part("a", &only, &[("H3.4", RowOutcome::Surfaced)]),
                part(
                    "b",
                    &only,
                    &[("H3.2", RowOutcome::Surfaced), ("H3.1", RowOutcome::Silent)],
                ),
            ],
            "now".into(),
        )
        .unwrap();
        assert_eq!(
            merged.rows.iter().map(|s| s.id).collect::<Vec<_>>(),
            ["H3.1", "H3.2", "H3.4"]
        );
        assert!(!merged.passed(), "a silent row fails the merged gate too");

        let gap = merge(
            vec![part("a", &only, &[("H3.4", RowOutcome::Surfaced)])],
            "now".into(),
        );
        assert!(gap.unwrap_err().contains("no part scored H3.1, H3.2"));

        let double = merge(
            vec![
                part("a", &only, &[("H3.4", RowOutcome::Surfaced)]),
                part("b", &only, &[("H3.4", RowOutcome::Surfaced)]),
            ],
            "now".into(),
        );
        assert!(double.unwrap_err().contains("scored by both a and b"));

        let mismatch = merge(
            vec![
                part("a", &only, &[]),
                part("b", &["H3.1"], &[("H3.1", RowOutcome::Surfaced)]),
            ],
            "now".into(),
        );
        assert!(mismatch.unwrap_err().contains("different rows"));
    }

    #[test]
    fn a_written_scorecard_reads_back_as_a_part() {
        let mut card = part("x", &["H3.1"], &[("H3.1", RowOutcome::Surfaced)]).card;
        card.selection = Some(Selection::new(
            &["H3.1".to_string()],
            Some(Partition { index: 1, count: 1 }),
        ));
        let text = serde_json::to_string(&card).unwrap();
        let back = read_part("x", &text).unwrap();
        assert_eq!(back.card.rows[0].id, "H3.1");
        assert_eq!(back.card.rows[0].outcome, RowOutcome::Surfaced);
        assert_eq!(back.selection.rows, ["H3.1"]);
        assert!(read_part("y", "{}").unwrap_err().starts_with("y: "));
    }
}
