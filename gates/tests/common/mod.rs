//! What the per-row tests share: run a row's gate scenario (the same code `reticle gate` runs)
//! and assert its outcome meets the row's target and equals its outcome in the committed
//! `gates/baseline.json` (so a fall from survived to surfaced fails CI, not only the release
//! gate), printing the whole history when it does not.

use gates::inventory::find;
use gates::judge::RowOutcome;
use gates::rows;
use gates::scenarios::{GateEnv, Ran};
use gates::scorecard::parse_baseline;

/// The committed baseline's outcome for `id` (a row missing from it is an error).
fn baseline_of(id: &str) -> RowOutcome {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/baseline.json");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let baseline = parse_baseline(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    *baseline
        .get(id)
        .unwrap_or_else(|| panic!("{id} is not in {path}"))
}

/// Runs the scenario for `id` and asserts it meets the row's target and equals its baseline;
/// returns the run for finer assertions.
pub async fn row_meets_target(id: &str) -> Ran {
    let row = find(id).unwrap_or_else(|| panic!("{id} is not an inventory row"));
    let env = GateEnv {
        reticle: harness::binaries::reticle(),
    };
    let ran = rows::run(id, &env).await;
    assert!(
        ran.judgement.outcome.meets(row.target),
        "{id}: {} (target {:?}): {}\nhistory:\n{}",
        ran.judgement.outcome.word(),
        row.target,
        ran.judgement.evidence,
        ran.history
            .ops()
            .iter()
            .map(|op| serde_json::to_string(op).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    );
    let baseline = baseline_of(id);
    assert_eq!(
        ran.judgement.outcome,
        baseline,
        "{id} scored {} where the baseline records {}: {}",
        ran.judgement.outcome.word(),
        baseline.word(),
        ran.judgement.evidence
    );
    ran
}

/// The history of the live run `ran` of row `id`, judged again offline as `reticle gate analyze`
/// does, asserted to give the live judgement; returns that history for the caller to edit.
// Compiled into every row test; only those whose rows `analyze` re-judges call it.
#[allow(dead_code)]
pub fn rejudged_alike(id: &str, ran: &Ran) -> Vec<gates::history::Op> {
    let ops = ran.history.ops();
    let again = gates::analyze::judge_history(id, &ops);
    assert_eq!(
        again.as_ref(),
        Some(&ran.judgement),
        "{id} re-judged offline"
    );
    ops
}

/// Row `id`'s live run `ran` re-judged alike offline, then with `edit` applied to each recorded
/// op (the caller names the one fact that breaks the row's promise) judged `silent`.
#[allow(dead_code)]
pub fn rejudged_alike_and_an_edit_is_silent(
    id: &str,
    ran: &Ran,
    edit: impl Fn(&mut gates::history::Op),
) {
    let mut ops = rejudged_alike(id, ran);
    ops.iter_mut().for_each(edit);
    let edited = gates::analyze::judge_history(id, &ops).expect("re-judged");
    assert_eq!(
        edited.outcome,
        gates::judge::RowOutcome::Silent,
        "{id}: an edited history: {edited:?}"
    );
}
