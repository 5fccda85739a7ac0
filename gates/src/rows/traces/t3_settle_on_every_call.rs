//! T3: every call's `settle` span closed. Its scenario, judge and the judge's unit test (the
//! negative control).

use super::{judge, run_invariant};
use crate::controls::StandIn;
use crate::history::Op;
use crate::judge::Judgement;
use crate::rows::RowGate;
use crate::scenarios::{GateEnv, Ran};
use crate::trace::Invariant;

/// T3 at its target: the traced run, judged for a settle on every call.
pub async fn t3_settle_on_every_call(env: &GateEnv) -> Ran {
    run_invariant(env, Invariant::T3).await
}

/// T3's judge over the traced run's history alone.
pub fn judge_t3(ops: &[Op]) -> Judgement {
    judge(ops, Invariant::T3)
}

/// T3 in the row table.
pub const T3: RowGate = RowGate {
    id: "T3",
    file: file!(),
    scenario: |env| Box::pin(t3_settle_on_every_call(env)),
    judge: judge_t3,
    controls: &[StandIn::BrokenTrace],
};

#[cfg(test)]
mod tests {
    //! Negative control: a call whose root closed with no settle span is `silent`.
    use super::super::test_history::*;
    use super::*;
    use crate::history::OpType;
    use crate::judge::RowOutcome;

    #[test]
    fn a_call_without_its_settle_is_silent() {
        assert_eq!(
            judge_t3(&run(&[OpType::Ok], &traced_call("c1", 0))).outcome,
            RowOutcome::Survived
        );
        let unsettled: Vec<Span> = traced_call("c1", 0).into_iter().take(1).collect();
        let judged = judge_t3(&run(&[OpType::Ok], &unsettled));
        assert_eq!(judged.outcome, RowOutcome::Silent, "{}", judged.evidence);
    }
}
