//! T2: no span's parent is left open (the hung-call signature). Its scenario, judge and the
//! judge's unit test (the negative control).

use super::{judge, run_invariant};
use crate::controls::StandIn;
use crate::history::Op;
use crate::judge::Judgement;
use crate::rows::RowGate;
use crate::scenarios::{GateEnv, Ran};
use crate::trace::Invariant;

/// T2 at its target: the traced run, judged for orphan spans.
pub async fn t2_no_orphan_span(env: &GateEnv) -> Ran {
    run_invariant(env, Invariant::T2).await
}

/// T2's judge over the traced run's history alone.
pub fn judge_t2(ops: &[Op]) -> Judgement {
    judge(ops, Invariant::T2)
}

/// T2 in the row table.
pub const T2: RowGate = RowGate {
    id: "T2",
    file: file!(),
    scenario: |env| Box::pin(t2_no_orphan_span(env)),
    judge: judge_t2,
    controls: &[StandIn::BrokenTrace],
};

#[cfg(test)]
mod tests {
    //! Negative control: a span whose parent never closed is `silent`.
    use super::super::test_history::*;
    use super::*;
    use crate::history::OpType;
    use crate::judge::RowOutcome;

    #[test]
    fn a_span_whose_parent_never_closed_is_silent() {
        assert_eq!(
            judge_t2(&run(&[OpType::Ok], &traced_call("c1", 0))).outcome,
            RowOutcome::Survived
        );
        let mut orphaned = traced_call("c1", 0);
        orphaned.push(span(BROWSER_COMMAND, "b", Some("never-closed"), 1, "c1"));
        let judged = judge_t2(&run(&[OpType::Ok], &orphaned));
        assert_eq!(judged.outcome, RowOutcome::Silent, "{}", judged.evidence);
    }
}
