//! What the per-row tests share: run a row's gate scenario (the same code `reticle gate` runs)
//! and assert its outcome meets the row's target, printing the whole history when it does not.

use gates::inventory::find;
use gates::scenarios::{self, GateEnv, Ran};

/// Runs the scenario for `id` and asserts it meets the row's target; returns the run for finer
/// assertions.
pub async fn row_meets_target(id: &str) -> Ran {
    let row = find(id).unwrap_or_else(|| panic!("{id} is not an inventory row"));
    let env = GateEnv {
        reticle: harness::binaries::reticle(),
    };
    let ran = scenarios::run(id, &env).await;
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
    ran
}
