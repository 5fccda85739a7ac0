//! P1: a `tools/call` round trip through `reticle mcp`, as a ratio to a reference round trip
//! timed beside it, must stay within its factor of the last release's. Its scenario, table entry
//! and the judge's unit test (the negative control).

use super::{figure_holds, judge_figure};
use crate::rows::RowGate;
use crate::scenarios::{GateEnv, Ran};

/// P1 at its target: `tools/call reticle_sessions`, measured and judged.
pub async fn p1_call_round_trip(env: &GateEnv) -> Ran {
    figure_holds(env, "P1").await
}

/// P1 in the row table.
pub const P1: RowGate = RowGate {
    id: "P1",
    file: file!(),
    scenario: |env| Box::pin(p1_call_round_trip(env)),
    judge: judge_figure,
    controls: &[],
};

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::{Latency, Measured, record};
    use super::*;
    use crate::history::History;
    use crate::judge::{Judgement, RowOutcome};

    fn call_judged(median_ms: f64, reference_ms: f64, release_ratio: f64) -> Judgement {
        let latency = Latency {
            median_ms,
            reference_ms,
        };
        let measured = Measured {
            call: latency,
            list: latency,
            proxy_mib: 1.0,
            daemon_mib: 1.0,
        };
        let history = History::new();
        record(
            &history,
            "P1",
            Ok(measured),
            &json!({ "value": release_ratio, "factor": 2.0 }),
        );
        judge_figure(&history.ops())
    }

    #[test]
    fn a_load_that_slows_the_call_and_its_reference_alike_cancels_out() {
        // Quiet: 1 ms over a 0.5 ms reference, the release's ratio. Loaded: both four times slower.
        assert_eq!(call_judged(1.0, 0.5, 2.0).outcome, RowOutcome::Survived);
        let loaded = call_judged(4.0, 2.0, 2.0);
        assert_eq!(loaded.outcome, RowOutcome::Survived, "{loaded:?}");
        assert!(loaded.evidence.contains("4.000 ms"), "{loaded:?}");
        assert!(loaded.evidence.contains("2.000 ms"), "{loaded:?}");
        // The call alone four times slower, its reference not: a regression, silent.
        assert_eq!(call_judged(4.0, 0.5, 2.0).outcome, RowOutcome::Silent);
    }
}
