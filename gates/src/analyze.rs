//! `reticle gate analyze DIR`: re-judges a finished run offline from what it recorded.
//!
//! Reads `scorecard.json` and `histories/<row>.jsonl` and judges every stored history again with
//! the row's own judge ([`rows::ROWS`]), so a scorecard can be reproduced or disputed. A row the
//! table does not know keeps its stored outcome, marked not re-judged; controls stay as stored,
//! since they need the real system. It must not run anything.

use std::path::Path;

use crate::history::Op;
use crate::judge::Judgement;
use crate::parts;
use crate::rows;
use crate::scenarios::kit;
use crate::scorecard::{Score, Scorecard};

/// What `reticle gate analyze` makes of the history `ops` stored for `row`: its judge's
/// judgement (as `reticle gate` made it live, [`kit::judgement_of`]), or `None` when the row
/// table does not know it.
pub fn judge_history(row: &str, ops: &[Op]) -> Option<Judgement> {
    rows::find(row).map(|gate| kit::judgement_of(ops, gate.judge))
}

/// Parses a stored history (one op per line, as `reticle gate` writes it).
pub fn read_history(text: &str) -> Result<Vec<Op>, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(n, line)| {
            serde_json::from_str(line).map_err(|e| format!("line {}: not an op: {e}", n + 1))
        })
        .collect()
}

/// The scorecard of the run in `dir`, every row with a history judge re-judged from its stored
/// history.
pub fn analyze(dir: &Path, generated_at: String) -> Result<Scorecard, String> {
    let name = dir.display().to_string();
    let text = std::fs::read_to_string(dir.join("scorecard.json"))
        .map_err(|e| format!("{name}/scorecard.json: {e}"))?;
    let part = parts::read_part(&name, &text)?;
    let mut rows = Vec::new();
    for stored in part.card.rows {
        rows.push(rejudged(dir, stored)?);
    }
    Ok(Scorecard {
        generated_at,
        selection: Some(part.selection),
        rows,
        controls: part.card.controls,
    })
}

/// One stored score, judged again from its history when its judge allows it.
fn rejudged(dir: &Path, stored: Score) -> Result<Score, String> {
    let row = crate::inventory::find(stored.id)
        .ok_or_else(|| format!("row {} is not in this inventory", stored.id))?;
    let Some(gate) = rows::find(stored.id) else {
        let evidence = format!(
            "(stored, not re-judged: this build has no judge of its history alone) {}",
            stored.evidence
        );
        return Ok(Score::new(
            row,
            Judgement::new(stored.outcome, evidence),
            stored.ms,
            stored.baseline,
        ));
    };
    let path = dir.join("histories").join(format!("{}.jsonl", stored.id));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let ops = read_history(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let judgement = kit::judgement_of(&ops, gate.judge);
    Ok(Score::new(row, judgement, stored.ms, stored.baseline))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{History, OpType};
    use crate::judge::RowOutcome;
    use crate::parts::Selection;
    use serde_json::json;

    /// H4.3's score when a finished run in `dir` stored `history` for it, judged again.
    fn analyzed(dir: &Path, history: &History) -> Score {
        stored_run(dir, history);
        analyze(dir, "now".into()).unwrap().rows.remove(0)
    }

    /// A finished run of H4.3 in `dir`: its scorecard and the history `history`.
    fn stored_run(dir: &Path, history: &History) {
        let row = crate::inventory::find("H4.3").unwrap();
        let card = Scorecard {
            generated_at: "t".into(),
            selection: Some(Selection::new(&["H4.3".to_string()], None)),
            rows: vec![Score::new(
                row,
                Judgement::new(RowOutcome::Surfaced, "stored"),
                1,
                None,
            )],
            controls: Vec::new(),
        };
        std::fs::write(
            dir.join("scorecard.json"),
            serde_json::to_string(&card).unwrap(),
        )
        .unwrap();
        std::fs::create_dir_all(dir.join("histories")).unwrap();
        let lines: String = history
            .ops()
            .iter()
            .map(|op| serde_json::to_string(op).unwrap() + "\n")
            .collect();
        std::fs::write(dir.join("histories").join("H4.3.jsonl"), lines).unwrap();
    }

    #[test]
    fn a_stored_history_is_judged_again_and_an_edited_one_differs() {
        let dir = tempfile::tempdir().unwrap();
        // H4.3's history, never injected: its judge says inconclusive, whatever was stored.
        let history = History::new();
        history.invoke("command", json!({}));
        history.complete(OpType::Ok, "command", json!({}));
        let score = analyzed(dir.path(), &history);
        assert_eq!(score.outcome, RowOutcome::Inconclusive, "{score:?}");

        // The same history with a CLI call that hung: silent, "hung".
        history.invoke("status", json!({}));
        history.complete(OpType::Info, "status", json!({ crate::judge::HUNG: true }));
        let edited = analyzed(dir.path(), &history);
        assert_eq!(edited.outcome, RowOutcome::Silent, "{edited:?}");
        assert!(edited.evidence.contains("hung"), "{edited:?}");
    }

    #[test]
    fn every_row_of_the_inventory_is_judged_from_its_history_alone() {
        let unjudged: Vec<&str> = crate::inventory::INVENTORY
            .iter()
            .map(|row| row.id)
            .filter(|id| rows::find(id).is_none())
            .collect();
        assert!(unjudged.is_empty(), "not re-judged: {unjudged:?}");
        assert!(rows::find("H9.9").is_none());
        assert!(read_history("{not json").is_err());
    }
}
