//! A history split at its faults: one [`Segment`] per nemesis op that says what a fault did,
//! the segments of one fault when it was established ([`established`]), and the preconditions of
//! a judge over one fault ([`first_segment`]). Pure over a history; it judges no row.

use super::kit::controls_held;
use crate::history::{Actor, Op, OpType};
use crate::judge::{self, Judgement, RowOutcome};

/// One fault and everything recorded after it, up to the next fault.
pub struct Segment<'a> {
    pub fault: &'a Op,
    pub after: Vec<&'a Op>,
}

impl<'a> Segment<'a> {
    /// The last completion of the client call `f` in this segment.
    pub fn completion(&self, f: &str) -> Option<&'a Op> {
        self.after
            .iter()
            .rev()
            .find(|o| o.actor == Actor::Client && o.f == f && o.op_type != OpType::Invoke)
            .copied()
    }

    /// Every completion of the client call `f` in this segment.
    pub fn completions(&self, f: &str) -> Vec<&'a Op> {
        self.after
            .iter()
            .filter(|o| o.actor == Actor::Client && o.f == f && o.op_type != OpType::Invoke)
            .copied()
            .collect()
    }

    /// The last harness observation `f` in this segment.
    pub fn observed(&self, f: &str) -> Option<&'a Op> {
        self.after
            .iter()
            .rev()
            .find(|o| o.actor == Actor::Harness && o.f == f)
            .copied()
    }
}

/// Splits a history at each nemesis op that says what a fault did (a nemesis invoke, recorded
/// before a fault is applied, stays inside the segment it falls in).
pub fn segments(ops: &[Op]) -> Vec<Segment<'_>> {
    let mut out: Vec<Segment<'_>> = Vec::new();
    for op in ops {
        if op.actor == Actor::Nemesis && op.op_type != OpType::Invoke {
            out.push(Segment {
                fault: op,
                after: Vec::new(),
            });
        } else if let Some(last) = out.last_mut() {
            last.after.push(op);
        }
    }
    out
}

/// The segments whose fault is `f`, or the inconclusive judgement when one was not
/// established (or none was injected).
pub fn established<'a>(ops: &'a [Op], f: &str) -> Result<Vec<Segment<'a>>, Judgement> {
    let found: Vec<Segment<'a>> = segments(ops)
        .into_iter()
        .filter(|s| s.fault.f == f)
        .collect();
    if found.is_empty() {
        return Err(Judgement::new(
            RowOutcome::Inconclusive,
            format!("the fault `{f}` was never injected"),
        ));
    }
    if let Some(failed) = found.iter().find(|s| s.fault.op_type != OpType::Ok) {
        return Err(Judgement::new(
            RowOutcome::Inconclusive,
            format!(
                "the fault `{f}` could not be established: {}",
                judge::text(&failed.fault.value)
            ),
        ));
    }
    Ok(found)
}

/// The preconditions of a hop 4 or 5 judge over one fault: every control held, and the first
/// `f` fault established; its segment, or the inconclusive judgement.
pub fn first_segment<'a>(ops: &'a [Op], f: &str) -> Result<Segment<'a>, Judgement> {
    controls_held(ops)?;
    Ok(established(ops, f)?.swap_remove(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::History;
    use serde_json::json;

    #[test]
    fn segments_split_at_faults_and_unestablished_faults_prove_nothing() {
        let h = History::new();
        h.fault("a", true, json!({}));
        h.invoke("command", json!({}));
        h.complete(OpType::Ok, "command", json!({}));
        h.fault("b", false, json!({ "reason": "no" }));
        let ops = h.ops();
        let segs = segments(&ops);
        assert_eq!(segs.len(), 2);
        assert!(segs[0].completion("command").is_some());
        assert!(segs[1].completion("command").is_none());
        assert!(established(&ops, "a").is_ok());
        assert_eq!(
            established(&ops, "b").err().unwrap().outcome,
            RowOutcome::Inconclusive
        );
        assert!(established(&ops, "c").is_err());
    }
}
