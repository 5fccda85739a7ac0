//! `reticle gate analyze DIR`: Jepsen's re-check. Reads a finished run's `scorecard.json` and
//! `histories/<row>.jsonl` and judges every stored history again, offline, with the row's own
//! judge, so the scorecard can be reproduced (or disputed) from what was recorded alone: every
//! row of the inventory (a test holds it so). A row [`history_judge`] does not know (one added
//! to the inventory whose judge still reads values its scenario kept outside the history) keeps
//! its stored outcome, and its evidence says it was not re-judged. Controls are kept as stored
//! (they need the real system). It runs nothing.

use std::path::Path;

use crate::history::Op;
use crate::judge::Judgement;
use crate::parts;
use crate::scenarios::{
    bridge, compat, cross_site, daemon, durability, flows, fuzz, kit, layers, leases, link,
    mcp_limits, perf, sdk, security, shared_session, stdio, traces, verify_cli,
};
use crate::scorecard::{Score, Scorecard};

/// The judge of `row` when it is a function of the history alone.
pub fn history_judge(row: &str) -> Option<fn(&[Op]) -> Judgement> {
    Some(match row {
        "H1.1" => stdio::judge_lsof_recipe,
        "H1.2" => stdio::judge_panic_in_request_handling,
        "H1.3" => stdio::judge_wedge,
        "H1.4" => stdio::judge_stdin_closed,
        "H1.5" => stdio::judge_garbage,
        "H2.1" => link::judge_stream_reset,
        "H2.2" => link::judge_blackholed_queue,
        "H2.3" => link::judge_post_leg_reset,
        "H2.4" => link::judge_squatter,
        "H2.5" => link::judge_catalogue_change,
        "H2.6" => link::judge_handshake_replayed,
        "H2.7" => link::judge_rounds,
        "H3.1" => daemon::judge_squatted_serve,
        "H3.2" => daemon::judge_stopped_status,
        "H3.3" => daemon::judge_idle_while_attached,
        "H3.4" => daemon::judge_idle_exit,
        "H3.5" => daemon::judge_caller_group_sigterm,
        "H3.6" => daemon::judge_sigkill_exit,
        "H3.7" => daemon::judge_race,
        "H3.8" => daemon::judge_connection_on_the_port,
        "H4.1" => bridge::judge_version_mismatch,
        "H4.2" => bridge::judge_another_project,
        "H4.3" => bridge::judge_lost_page,
        "H4.4" => bridge::judge_reaper,
        "H4.5" => bridge::judge_opaque_origins,
        "H4.6" => bridge::judge_hostile_frames,
        "H5.1" => sdk::judge_backoff,
        "H5.2" => sdk::judge_outage_warning,
        "H5.3" => sdk::judge_overflow,
        "H5.4" => sdk::judge_sandboxed_frame,
        "H5.5" => sdk::judge_stale_refs,
        "H5.6" => compat::judge_matrix,
        "T1" => traces::judge_t1,
        "T2" => traces::judge_t2,
        "T3" => traces::judge_t3,
        "T4" => traces::judge_t4,
        "L1" => layers::judge_recorded_layers,
        "S1" => security::judge_stop,
        "S2" => security::judge_bad_token,
        "S3" => security::judge_state_dir,
        "S4" => security::judge_token_file,
        "S5" => security::judge_init,
        "S6" => security::judge_capsule,
        "S7" => security::judge_ring_memory,
        "S8" => cross_site::judge_foreign_pages,
        "S9" => shared_session::judge_shared_session,
        "S10" => mcp_limits::judge_mcp_limits,
        "S11" => fuzz::judge_fuzz,
        "S12" => leases::judge_lease,
        "V1" => verify_cli::judge_browser_death,
        "D1" => durability::judge_durability,
        "F1" => flows::judge_heal,
        "F2" => flows::judge_assertion_free,
        "F3" => flows::judge_stale_refs,
        "P1" | "P2" | "P3" | "P4" => perf::judge_figure,
        _ => return None,
    })
}

/// What `reticle gate analyze` makes of the history `ops` stored for `row`: its judge's
/// judgement (as `reticle gate` made it live, [`kit::judgement_of`]), or `None` when its judge
/// reads more than its history.
pub fn judge_history(row: &str, ops: &[Op]) -> Option<Judgement> {
    history_judge(row).map(|judge| kit::judgement_of(ops, judge))
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
    let Some(judge) = history_judge(stored.id) else {
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
    let judgement = kit::judgement_of(&ops, judge);
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
            .filter(|id| history_judge(id).is_none())
            .collect();
        assert!(unjudged.is_empty(), "not re-judged: {unjudged:?}");
        assert!(history_judge("H9.9").is_none());
        assert!(read_history("{not json").is_err());
    }
}
