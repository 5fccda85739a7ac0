//! P2: a `tools/list` round trip through `reticle mcp`, as a ratio to a reference round trip
//! timed beside it, must stay within its factor of the last release's. Its scenario, table entry
//! and the judge's unit test (the negative control).

use super::{figure_holds, judge_figure};
use crate::rows::RowGate;
use crate::scenarios::{GateEnv, Ran};

/// P2 at its target: `tools/list`, measured and judged.
pub async fn p2_list_round_trip(env: &GateEnv) -> Ran {
    figure_holds(env, "P2").await
}

/// P2 in the row table.
pub const P2: RowGate = RowGate {
    id: "P2",
    file: file!(),
    scenario: |env| Box::pin(p2_list_round_trip(env)),
    judge: judge_figure,
    controls: &[],
};

#[cfg(test)]
mod tests {
    use super::super::test_history::judged_as;
    use crate::judge::RowOutcome;

    #[test]
    fn a_list_round_trip_past_its_factor_is_silent() {
        assert_eq!(judged_as("P2", 1.9, 1.0, 2.0), RowOutcome::Survived);
        assert_eq!(judged_as("P2", 2.1, 1.0, 2.0), RowOutcome::Silent);
    }
}
