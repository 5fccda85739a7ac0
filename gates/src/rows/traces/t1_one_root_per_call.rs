//! T1: every tool call the agent made is carried by exactly one root span, matched by its
//! JSON-RPC id. Its scenario, judge and the judge's unit tests (the negative control).

use super::{judge, run_invariant};
use crate::controls::StandIn;
use crate::history::Op;
use crate::judge::Judgement;
use crate::rows::RowGate;
use crate::scenarios::{GateEnv, Ran};
use crate::trace::Invariant;

/// T1 at its target: the traced run, judged for one root per call.
pub async fn t1_one_root_per_call(env: &GateEnv) -> Ran {
    run_invariant(env, Invariant::T1).await
}

/// T1's judge over the traced run's history alone.
pub fn judge_t1(ops: &[Op]) -> Judgement {
    judge(ops, Invariant::T1)
}

/// T1 in the row table.
pub const T1: RowGate = RowGate {
    id: "T1",
    file: file!(),
    scenario: |env| Box::pin(t1_one_root_per_call(env)),
    judge: judge_t1,
    controls: &[StandIn::BrokenTrace],
};

#[cfg(test)]
mod tests {
    //! Negative control: a call that left no root, or two roots carrying one call's id, is
    //! `silent`.

    use super::super::judge_invariant;
    use super::super::test_history::*;
    use crate::history::OpType;
    use crate::judge::RowOutcome;
    use crate::scenarios::kit::settle;
    use crate::trace::Invariant;

    #[test]
    fn every_call_traced_survives_and_an_untraced_call_is_silent() {
        let both: Vec<Span> = [traced_call("c1", 0), traced_call("c2", 1)].concat();
        let healthy = run(&[OpType::Ok, OpType::Fail], &both);
        for invariant in [Invariant::T1, Invariant::T2, Invariant::T3, Invariant::T4] {
            assert_eq!(
                settle(|| judge_invariant(&healthy, invariant)).outcome,
                RowOutcome::Survived
            );
        }
        // Negative control: the agent made two calls and only one left a trace.
        let untraced = run(&[OpType::Ok, OpType::Ok], &traced_call("c1", 0));
        let judged = settle(|| judge_invariant(&untraced, Invariant::T1));
        assert_eq!(judged.outcome, RowOutcome::Silent, "{}", judged.evidence);
    }

    #[test]
    fn a_call_is_matched_to_its_root_by_id_not_by_count() {
        // Two calls and two roots, as many as calls, but both roots carry the first call's id.
        let spans = [traced_call("c1", 0), traced_call("c2", 0)].concat();
        let judged =
            settle(|| judge_invariant(&run(&[OpType::Ok, OpType::Ok], &spans), Invariant::T1));
        assert_eq!(judged.outcome, RowOutcome::Silent, "{}", judged.evidence);
        assert!(
            judged.evidence.contains("call 0 is carried by 2 roots"),
            "{}",
            judged.evidence
        );
    }
}
