//! What every scenario shares: the records a scenario makes ([`observe`], [`control`],
//! [`complete_cli`]), the shapes a finished scenario takes ([`judged`], [`unestablished`],
//! [`could_not_start`]) and the ways judgements combine ([`settle`], [`worst`],
//! [`controls_held`]). It provokes nothing and judges no row itself; what hops 1 to 3 and
//! hops 4 and 5 share apart is in `agent_kit` and `page_kit`.

use std::time::{Duration, Instant};

use harness::cli::Ran as CliRan;
use harness::{OwnedDaemon, OwnedDaemonBuilder};
use serde_json::{Value, json};

use super::Ran;
use super::fault_trace;
use crate::history::{Actor, History, Op, OpType};
use crate::judge::{self, Judgement, RowOutcome};

/// How long a scenario waits for anything that should happen at once (a session, a close).
pub const BOUND: Duration = Duration::from_secs(20);

/// Starts a daemon and reads its pairing token, or says why either failed.
pub async fn daemon(builder: OwnedDaemonBuilder) -> Result<(OwnedDaemon, String), String> {
    let daemon = builder.try_start().await?;
    let token = daemon.try_token()?;
    Ok((daemon, token))
}

/// Records a control: `held` when it behaved as a working system must, else the row's run
/// proves nothing.
pub fn control(history: &History, what: &str, held: bool, detail: Value) {
    let op = if held { OpType::Ok } else { OpType::Fail };
    history.record(
        Actor::Harness,
        op,
        "control",
        json!({ "what": what, "detail": detail }),
    );
}

/// Records something the harness observed (console lines, reconnect attempts, clicks).
pub fn observe(history: &History, f: &str, value: Value) {
    history.record(Actor::Harness, OpType::Info, f, value);
}

/// The first control that did not hold, as the inconclusive judgement it forces.
pub fn controls_held(ops: &[Op]) -> Result<(), Judgement> {
    match ops
        .iter()
        .find(|o| o.actor == Actor::Harness && o.f == "control" && o.op_type != OpType::Ok)
    {
        None => Ok(()),
        Some(op) => Err(Judgement::new(
            RowOutcome::Inconclusive,
            format!(
                "the control misbehaved, so the checker proves nothing: {} ({})",
                op.value["what"].as_str().unwrap_or("?"),
                judge::one_line(&op.value["detail"].to_string())
            ),
        )),
    }
}

/// Combines the judgements of several faults of one row: the worst outcome decides (silent,
/// then inconclusive, then surfaced, then survived), and the evidence says every part.
pub fn worst(parts: Vec<Judgement>) -> Judgement {
    let Some(outcome) = parts.iter().map(|j| j.outcome).min() else {
        return Judgement::new(RowOutcome::Inconclusive, "nothing was judged");
    };
    // The deciding parts first, so a one-line reader sees why.
    let mut ordered: Vec<&Judgement> = parts.iter().filter(|j| j.outcome == outcome).collect();
    ordered.extend(parts.iter().filter(|j| j.outcome != outcome));
    Judgement::new(
        outcome,
        ordered
            .iter()
            .map(|j| j.evidence.as_str())
            .collect::<Vec<_>>()
            .join("; "),
    )
}

/// Runs a judge written with `?` over the inconclusive judgements its preconditions give, and
/// resolves it: what it returned, or the precondition that stopped it.
pub fn settle(judge: impl FnOnce() -> Result<Judgement, Judgement>) -> Judgement {
    match judge() {
        Ok(judgement) | Err(judgement) => judgement,
    }
}

/// A finished scenario judged by `judge` over its history; silent first when a CLI call in it
/// hung ([`judge::hung_call`]) or its daemon's trace broke an invariant while the transport
/// broke ([`judge_trace_under_faults`]).
pub fn judged(history: History, judge: impl FnOnce(&[Op]) -> Judgement) -> Ran {
    let judgement = judgement_of(&history.ops(), judge);
    Ran { history, judgement }
}

/// What [`judged`] makes of `ops` (also how `reticle gate analyze` re-judges a stored history).
pub fn judgement_of(ops: &[Op], judge: impl FnOnce(&[Op]) -> Judgement) -> Judgement {
    judge::hung_call(ops)
        .or_else(|| fault_trace::judge_trace_under_faults(ops))
        .unwrap_or_else(|| fault_trace::unless_the_trace_was_empty(ops, judge(ops)))
}

/// Records the end of the CLI call `f` (already invoked): `ok` for exit 0, `fail` for any other
/// exit, `info` marked [`judge::HUNG`] when the harness killed it at its bound (nobody knows
/// what it did). Every scenario that runs the CLI records it here.
pub fn complete_cli(history: &History, f: &str, ran: &CliRan) {
    let op = match (ran.hung, ran.ok()) {
        (true, _) => OpType::Info,
        (false, true) => OpType::Ok,
        (false, false) => OpType::Fail,
    };
    history.complete(
        op,
        f,
        json!({ "code": ran.code, "stdout": ran.stdout, "stderr": ran.stderr, judge::HUNG: ran.hung }),
    );
}

/// Records a fault that could not be set up, and judges the history with `judge` (inconclusive
/// unless a call hung, for the judges here).
pub fn unestablished(
    history: History,
    fault: &str,
    why: &str,
    judge: impl FnOnce(&[Op]) -> Judgement,
) -> Ran {
    history.fault(fault, false, json!({ "reason": why }));
    judged(history, judge)
}

/// A scenario that could not set up (a daemon or Chromium that did not start): it records why
/// as an unestablished fault, so the row is inconclusive and the history says so.
pub fn could_not_start(history: History, fault: &str, why: &str) -> Ran {
    unestablished(history, fault, why, |ops| {
        match judge::established_fault(ops) {
            Ok(_) => Judgement::new(RowOutcome::Inconclusive, why.to_string()),
            Err(inconclusive) => inconclusive,
        }
    })
}

/// Milliseconds since `start`, for the record.
pub fn ms_since(start: Instant) -> u64 {
    start.elapsed().as_millis() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::fault_trace::TRACE_UNDER_FAULTS;

    #[test]
    fn the_worst_part_decides_and_leads_the_evidence() {
        let j = worst(vec![
            Judgement::new(RowOutcome::Survived, "a held"),
            Judgement::new(RowOutcome::Silent, "b hid it"),
            Judgement::new(RowOutcome::Inconclusive, "c unknown"),
        ]);
        assert_eq!(j.outcome, RowOutcome::Silent);
        assert!(j.evidence.starts_with("b hid it"), "{}", j.evidence);
        assert_eq!(worst(vec![]).outcome, RowOutcome::Inconclusive);
    }

    /// A history holding one fault and what the trace checker `found` after it.
    fn trace_checked(found: Value) -> History {
        let h = History::new();
        h.fault("a", true, json!({}));
        observe(&h, TRACE_UNDER_FAULTS, found);
        h
    }

    #[test]
    fn a_trace_broken_under_faults_makes_the_row_silent() {
        let h = trace_checked(json!({ "spans": 3, "calls": 1, "violations": [] }));
        assert_eq!(
            judged(h.clone(), |_| Judgement::new(RowOutcome::Survived, "held"))
                .judgement
                .outcome,
            RowOutcome::Survived
        );
        observe(
            &h,
            TRACE_UNDER_FAULTS,
            json!({ "spans": 3, "calls": 1, "violations": [
                { "invariant": "T2", "call_id": "p1-c1", "detail": "orphan" }
            ] }),
        );
        let broken = judged(h, |_| Judgement::new(RowOutcome::Survived, "held")).judgement;
        assert_eq!(broken.outcome, RowOutcome::Silent, "{broken:?}");
        assert!(broken.evidence.contains("T2"), "{broken:?}");
    }

    #[test]
    fn a_trace_with_no_span_after_tool_calls_proves_nothing_but_a_red_verdict_stands() {
        let h = trace_checked(json!({ "spans": 0, "calls": 0, "violations": [], "toolCalls": 1 }));
        let held = judged(h.clone(), |_| Judgement::new(RowOutcome::Survived, "held")).judgement;
        assert_eq!(held.outcome, RowOutcome::Inconclusive, "{held:?}");
        assert!(held.evidence.contains("no span"), "{held:?}");
        let hid = judged(h, |_| Judgement::new(RowOutcome::Silent, "hid it")).judgement;
        assert_eq!(hid.outcome, RowOutcome::Silent, "{hid:?}");
        // No tool call went through (a daemon that only had its status read): nothing to prove.
        let quiet = trace_checked(json!({ "spans": 0, "calls": 0, "violations": [] }));
        let quiet = judged(quiet, |_| Judgement::new(RowOutcome::Surfaced, "said so")).judgement;
        assert_eq!(quiet.outcome, RowOutcome::Surfaced, "{quiet:?}");
    }

    #[test]
    fn a_control_that_did_not_hold_makes_the_row_inconclusive() {
        let h = History::new();
        control(&h, "v1 hello becomes a session", true, json!({}));
        assert!(controls_held(&h.ops()).is_ok());
        control(
            &h,
            "a plain daemon refuses",
            false,
            json!({ "status": 101 }),
        );
        assert_eq!(
            controls_held(&h.ops()).err().unwrap().outcome,
            RowOutcome::Inconclusive
        );
    }
}
