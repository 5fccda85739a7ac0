//! P4: the daemon's resident memory after the calls must stay within its factor of the last
//! release's. Its scenario, table entry and the judge's unit test.

use super::{figure_holds, judge_figure};
use crate::rows::RowGate;
use crate::scenarios::{GateEnv, Ran};

/// P4 at its target: the daemon's memory after the calls, measured and judged.
pub async fn p4_daemon_memory(env: &GateEnv) -> Ran {
    figure_holds(env, "P4").await
}

/// P4 in the row table.
pub const P4: RowGate = RowGate {
    id: "P4",
    file: file!(),
    scenario: |env| Box::pin(p4_daemon_memory(env)),
    judge: judge_figure,
    controls: &[],
};

#[cfg(test)]
mod tests {
    use super::super::test_history::judged_as;
    use crate::judge::RowOutcome;

    #[test]
    fn daemon_memory_past_its_factor_is_silent() {
        assert_eq!(judged_as("P4", 14.0, 10.0, 1.5), RowOutcome::Survived);
        assert_eq!(judged_as("P4", 16.0, 10.0, 1.5), RowOutcome::Silent);
    }
}
