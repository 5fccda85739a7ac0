//! P3: `reticle mcp`'s resident memory (supervisor and worker) after the calls must stay within
//! its factor of the last release's. Its scenario, table entry and the judge's unit test.

use super::{figure_holds, judge_figure};
use crate::rows::RowGate;
use crate::scenarios::{GateEnv, Ran};

/// P3 at its target: the proxy's memory after the calls, measured and judged.
pub async fn p3_proxy_memory(env: &GateEnv) -> Ran {
    figure_holds(env, "P3").await
}

/// P3 in the row table.
pub const P3: RowGate = RowGate {
    id: "P3",
    file: file!(),
    scenario: |env| Box::pin(p3_proxy_memory(env)),
    judge: judge_figure,
    controls: &[],
};

#[cfg(test)]
mod tests {
    use super::super::test_history::judged_as;
    use crate::judge::RowOutcome;

    #[test]
    fn proxy_memory_past_its_factor_is_silent() {
        assert_eq!(judged_as("P3", 14.0, 10.0, 1.5), RowOutcome::Survived);
        assert_eq!(judged_as("P3", 16.0, 10.0, 1.5), RowOutcome::Silent);
    }
}
