//! T4: no span failed (`ok:false`) without saying its error. Its scenario, judge and the judge's
//! unit test (the negative control).

use super::{judge, run_invariant};
use crate::controls::StandIn;
use crate::history::Op;
use crate::judge::Judgement;
use crate::rows::RowGate;
use crate::scenarios::{GateEnv, Ran};
use crate::trace::Invariant;

/// T4 at its target: the traced run, judged for failures without an error.
pub async fn t4_no_failure_without_error(env: &GateEnv) -> Ran {
    run_invariant(env, Invariant::T4).await
}

/// T4's judge over the traced run's history alone.
pub fn judge_t4(ops: &[Op]) -> Judgement {
    judge(ops, Invariant::T4)
}

/// T4 in the row table.
pub const T4: RowGate = RowGate {
    id: "T4",
    file: file!(),
    scenario: |env| Box::pin(t4_no_failure_without_error(env)),
    judge: judge_t4,
    controls: &[StandIn::BrokenTrace],
};

#[cfg(test)]
mod tests {
    //! Negative control: a span that failed without an error is `silent`.
    use super::super::test_history::*;
    use super::*;
    use crate::history::OpType;
    use crate::judge::RowOutcome;

    #[test]
    fn a_failure_without_an_error_is_silent() {
        let mut failed = traced_call("c1", 0);
        failed[1].ok = false;
        failed[1].error = Some("the page is gone".into());
        assert_eq!(
            judge_t4(&run(&[OpType::Fail], &failed)).outcome,
            RowOutcome::Survived
        );
        failed[1].error = None;
        let judged = judge_t4(&run(&[OpType::Fail], &failed));
        assert_eq!(judged.outcome, RowOutcome::Silent, "{}", judged.evidence);
    }
}
