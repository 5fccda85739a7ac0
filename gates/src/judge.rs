//! Judging a history: the four row outcomes and the checkers that decide them, each returning the
//! evidence that decided it. Pure over a history; checkers never run anything.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::history::{Actor, Op, OpType};
use crate::inventory::Target;

/// What a scenario established about its row. The order is severity: later is better, except
/// that `Inconclusive` proves nothing and is never a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RowOutcome {
    /// Failed with no error reaching the agent or the user (a hang, a false success, a wrong verdict).
    Silent,
    /// The harness could not establish the fault, so the run proves nothing.
    Inconclusive,
    /// An error naming the failure reached the agent or the user within the bound.
    Surfaced,
    /// The fault was absorbed and the calls succeeded.
    Survived,
}

impl RowOutcome {
    pub fn word(self) -> &'static str {
        match self {
            RowOutcome::Silent => "silent",
            RowOutcome::Inconclusive => "inconclusive",
            RowOutcome::Surfaced => "surfaced",
            RowOutcome::Survived => "survived",
        }
    }

    /// Whether this outcome meets `target`. Survived meets either target; inconclusive none.
    pub fn meets(self, target: Target) -> bool {
        match (self, target) {
            (RowOutcome::Survived, _) => true,
            (RowOutcome::Surfaced, Target::Surfaced) => true,
            (RowOutcome::Surfaced, Target::Survived) => false,
            (RowOutcome::Silent | RowOutcome::Inconclusive, _) => false,
        }
    }

    pub fn parse(word: &str) -> Option<Self> {
        [
            RowOutcome::Silent,
            RowOutcome::Inconclusive,
            RowOutcome::Surfaced,
            RowOutcome::Survived,
        ]
        .into_iter()
        .find(|o| o.word() == word)
    }
}

/// An outcome and the one-line evidence that decided it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Judgement {
    pub outcome: RowOutcome,
    pub evidence: String,
}

impl Judgement {
    pub fn new(outcome: RowOutcome, evidence: impl Into<String>) -> Self {
        Self {
            outcome,
            evidence: evidence.into(),
        }
    }
}

/// The first nemesis fault, if it was established; `Err` names why the run proves nothing.
pub fn established_fault(ops: &[Op]) -> Result<&Op, Judgement> {
    match ops
        .iter()
        .find(|o| o.actor == Actor::Nemesis && o.op_type != OpType::Invoke)
    {
        Some(op) if op.op_type == OpType::Ok => Ok(op),
        Some(op) => Err(Judgement::new(
            RowOutcome::Inconclusive,
            format!(
                "the fault `{}` could not be established: {}",
                op.f,
                text(&op.value)
            ),
        )),
        None => Err(Judgement::new(
            RowOutcome::Inconclusive,
            "no fault was injected".to_string(),
        )),
    }
}

/// Client completions after `after` for the call named `f`.
pub fn completions<'a>(ops: &'a [Op], after: usize, f: &str) -> Vec<&'a Op> {
    ops.iter()
        .filter(|o| o.index > after && o.actor == Actor::Client && o.f == f)
        .filter(|o| o.op_type != OpType::Invoke)
        .collect()
}

/// The user-facing text of an op's value: its `message`/`stderr`/`stdout` strings, or the JSON.
pub fn text(value: &Value) -> String {
    let parts: Vec<&str> = ["message", "stderr", "stdout", "error", "reason"]
        .iter()
        .filter_map(|k| value.get(*k).and_then(Value::as_str))
        .collect();
    if parts.is_empty() {
        value.to_string()
    } else {
        parts.join(" | ")
    }
}

/// The call `f` after the fault must be answered with an error that says all of `names` (whether
/// or not it says the call ran): a success claim or an error that names nothing is silent; no
/// answer is a hang (silent).
pub fn must_surface(ops: &[Op], f: &str, names: &[&str]) -> Judgement {
    let fault = match established_fault(ops) {
        Ok(fault) => fault,
        Err(judgement) => return judgement,
    };
    let done = completions(ops, fault.index, f);
    let Some(last) = done.last() else {
        return Judgement::new(
            RowOutcome::Silent,
            format!("`{f}` was never answered after `{}`", fault.f),
        );
    };
    let said = text(&last.value);
    match last.op_type {
        OpType::Ok => Judgement::new(
            RowOutcome::Silent,
            format!(
                "`{f}` reported success despite `{}`: {}",
                fault.f,
                one_line(&said)
            ),
        ),
        _ if !last.is_answer() => Judgement::new(
            RowOutcome::Silent,
            format!(
                "`{f}` got no answer after `{}`: {}",
                fault.f,
                one_line(&said)
            ),
        ),
        // An error answer, whether it says the call did not run (`fail`) or may have (`info`).
        _ => match names.iter().find(|n| !said.contains(*n)) {
            None => Judgement::new(
                RowOutcome::Surfaced,
                format!("`{f}` failed naming it: {}", one_line(&said)),
            ),
            Some(missing) => Judgement::new(
                RowOutcome::Silent,
                format!(
                    "`{f}` failed without naming `{missing}`: {}",
                    one_line(&said)
                ),
            ),
        },
    }
}

/// Every call `f` after the fault must succeed (survived); an error answer (definite or not) is
/// surfaced; a call never answered is silent.
pub fn must_survive(ops: &[Op], f: &str) -> Judgement {
    let fault = match established_fault(ops) {
        Ok(fault) => fault,
        Err(judgement) => return judgement,
    };
    let invokes = ops
        .iter()
        .filter(|o| {
            o.index > fault.index
                && o.actor == Actor::Client
                && o.f == f
                && o.op_type == OpType::Invoke
        })
        .count();
    let done = completions(ops, fault.index, f);
    if invokes == 0 {
        return Judgement::new(
            RowOutcome::Inconclusive,
            format!("no `{f}` was made after `{}`", fault.f),
        );
    }
    if done.len() < invokes {
        return Judgement::new(
            RowOutcome::Silent,
            format!(
                "{} of {invokes} `{f}` calls were never answered after `{}`",
                invokes - done.len(),
                fault.f
            ),
        );
    }
    if let Some(failed) = done.iter().find(|o| o.op_type != OpType::Ok) {
        let outcome = if failed.is_answer() {
            RowOutcome::Surfaced
        } else {
            RowOutcome::Silent
        };
        return Judgement::new(
            outcome,
            format!(
                "`{f}` after `{}`: {}",
                fault.f,
                one_line(&text(&failed.value))
            ),
        );
    }
    Judgement::new(
        RowOutcome::Survived,
        format!("all {invokes} `{f}` calls succeeded after `{}`", fault.f),
    )
}

/// The id a client call carries in its value (`{"id": ..}`), when it has one.
pub fn call_id(op: &Op) -> Option<&Value> {
    op.value.get("id").filter(|id| !id.is_null())
}

/// The answers to the call invoked at `invoke`: client completions after it with the same `f`
/// and id that record an answer ([`Op::is_answer`]): a result, or an error whether or not it
/// says the call ran. An `info` with no answer (the bound ran out, the session died) is none.
pub fn answers_to<'a>(ops: &'a [Op], invoke: &Op) -> Vec<&'a Op> {
    let id = call_id(invoke);
    ops.iter()
        .filter(|o| o.index > invoke.index && o.actor == Actor::Client && o.f == invoke.f)
        .filter(|o| o.is_answer())
        .filter(|o| id.is_some() && call_id(o) == id)
        .collect()
}

/// The word a recorded CLI call carries (`"hung": true`) when the harness killed it at its
/// bound, and the evidence a row hung that way gets.
pub const HUNG: &str = "hung";

/// A CLI call the harness killed at its bound (`"hung": true` in its completion): the row is
/// silent whatever else the history shows (a user would have waited forever), with the
/// evidence "hung".
pub fn hung_call(ops: &[Op]) -> Option<Judgement> {
    let hung = ops.iter().find(|o| o.value[HUNG] == true)?;
    Some(Judgement::new(
        RowOutcome::Silent,
        format!(
            "{HUNG}: `{}` did not exit within the harness's bound and was killed",
            hung.f
        ),
    ))
}

/// Every client call that carries an id is answered exactly once. `Ok` with the number of calls
/// checked; otherwise a silent judgement naming the first call left unanswered (a hang) or
/// answered twice (an agent acting on a stale answer).
pub fn exactly_once(ops: &[Op]) -> Result<usize, Judgement> {
    let mut calls = 0;
    for invoke in ops
        .iter()
        .filter(|o| o.actor == Actor::Client && o.op_type == OpType::Invoke)
        .filter(|o| call_id(o).is_some())
    {
        calls += 1;
        let id = call_id(invoke).map(Value::to_string).unwrap_or_default();
        let answers = answers_to(ops, invoke);
        match answers.len() {
            1 => {}
            0 => {
                let why = ops
                    .iter()
                    .find(|o| {
                        o.index > invoke.index
                            && o.actor == Actor::Client
                            && o.f == invoke.f
                            && o.op_type == OpType::Info
                            && !o.is_answer()
                            && call_id(o) == call_id(invoke)
                    })
                    .map(|o| one_line(&text(&o.value)))
                    .unwrap_or_else(|| "no completion was recorded".to_string());
                return Err(Judgement::new(
                    RowOutcome::Silent,
                    format!("`{}` {id} was never answered: {why}", invoke.f),
                ));
            }
            n => {
                return Err(Judgement::new(
                    RowOutcome::Silent,
                    format!("`{}` {id} was answered {n} times", invoke.f),
                ));
            }
        }
    }
    Ok(calls)
}

/// One call's answer must be an error that says all of `names` (whether it says the call did not
/// run, `fail`, or may have, `info`): then `surfaced`. A success claim, no answer, or an error
/// that leaves one out is silent.
pub fn answer_names(ops: &[Op], invoke: &Op, names: &[&str]) -> Judgement {
    let id = call_id(invoke).map(Value::to_string).unwrap_or_default();
    let what = format!("`{}` {id}", invoke.f);
    let answers = answers_to(ops, invoke);
    let Some(answer) = answers.first() else {
        return Judgement::new(RowOutcome::Silent, format!("{what} was never answered"));
    };
    let said = text(&answer.value);
    match answer.op_type {
        OpType::Fail | OpType::Info => match names.iter().find(|n| !said.contains(*n)) {
            None => Judgement::new(
                RowOutcome::Surfaced,
                format!("{what} failed naming it: {}", one_line(&said)),
            ),
            Some(missing) => Judgement::new(
                RowOutcome::Silent,
                format!(
                    "{what} failed without naming `{missing}`: {}",
                    one_line(&said)
                ),
            ),
        },
        _ => Judgement::new(
            RowOutcome::Silent,
            format!("{what} reported success: {}", one_line(&said)),
        ),
    }
}

/// The first line of a text, trimmed to 200 characters, for one-line evidence.
pub fn one_line(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if line.chars().count() > 200 {
        format!("{}…", line.chars().take(200).collect::<String>())
    } else {
        line.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::History;
    use serde_json::json;

    fn squatted(result: OpType, stderr: &str) -> Vec<Op> {
        let h = History::new();
        h.fault("squat_port", true, json!({}));
        h.invoke("serve", json!({}));
        h.complete(result, "serve", json!({"stderr": stderr}));
        h.ops()
    }

    #[test]
    fn a_false_success_is_silent_and_a_named_failure_surfaced() {
        assert_eq!(
            must_surface(&squatted(OpType::Ok, "started"), "serve", &["pid"]).outcome,
            RowOutcome::Silent
        );
        assert_eq!(
            must_surface(&squatted(OpType::Fail, "held by pid 7"), "serve", &["pid"]).outcome,
            RowOutcome::Surfaced
        );
        assert_eq!(
            must_surface(&squatted(OpType::Fail, "error"), "serve", &["pid"]).outcome,
            RowOutcome::Silent
        );
    }

    #[test]
    fn an_unestablished_fault_proves_nothing_and_a_hang_is_silent() {
        let h = History::new();
        h.fault("squat_port", false, json!({"reason": "bind failed"}));
        assert_eq!(
            must_surface(&h.ops(), "serve", &[]).outcome,
            RowOutcome::Inconclusive
        );
        let h = History::new();
        h.fault("kill_daemon", true, json!({}));
        h.invoke("tools/call", json!({}));
        assert_eq!(
            must_survive(&h.ops(), "tools/call").outcome,
            RowOutcome::Silent
        );
        h.complete(OpType::Ok, "tools/call", json!({}));
        assert_eq!(
            must_survive(&h.ops(), "tools/call").outcome,
            RowOutcome::Survived
        );
    }

    #[test]
    fn exactly_once_finds_a_hang_and_a_double_answer() {
        let h = History::new();
        h.invoke("tools/call", json!({"id": 1}));
        h.complete(OpType::Ok, "tools/call", json!({"id": 1}));
        h.invoke("tools/call", json!({"id": 2}));
        h.complete(
            OpType::Fail,
            "tools/call",
            json!({"id": 2, "message": "-32001"}),
        );
        assert_eq!(exactly_once(&h.ops()), Ok(2));
        h.invoke("tools/call", json!({"id": 3}));
        h.complete(
            OpType::Info,
            "tools/call",
            json!({"id": 3, "message": "no answer within 3000 ms"}),
        );
        let hang = exactly_once(&h.ops()).unwrap_err();
        assert_eq!(hang.outcome, RowOutcome::Silent);
        assert!(
            hang.evidence.contains("never answered: no answer within"),
            "{hang:?}"
        );
        let h = History::new();
        h.invoke("tools/list", json!({"id": 7}));
        h.complete(OpType::Ok, "tools/list", json!({"id": 7}));
        h.complete(OpType::Ok, "tools/list", json!({"id": 7}));
        assert!(
            exactly_once(&h.ops())
                .unwrap_err()
                .evidence
                .contains("answered 2 times")
        );
        // An answer to another method with the same id is not this call's answer.
        let h = History::new();
        h.invoke("ping", json!({"id": 1}));
        h.complete(OpType::Ok, "tools/call", json!({"id": 1}));
        assert_eq!(
            exactly_once(&h.ops()).unwrap_err().outcome,
            RowOutcome::Silent
        );
    }

    /// A -32001 that leaves open whether the call ran, recorded as the agents record it.
    fn maybe_ran(h: &History, id: u64, message: &str) {
        h.complete(
            OpType::Info,
            "tools/call",
            json!({"id": id, "code": -32001, "message": message, "ran": "unknown"}),
        );
    }

    #[test]
    fn an_error_whose_call_may_have_run_is_one_answer_and_no_answer_is_none() {
        let h = History::new();
        let call = h.invoke("tools/call", json!({"id": 1}));
        maybe_ran(&h, 1, "the link dropped; it may or may not have run");
        let ops = h.ops();
        assert_eq!(exactly_once(&ops), Ok(1));
        assert_eq!(answers_to(&ops, &ops[call]).len(), 1);
        assert_eq!(
            answer_names(&ops, &ops[call], &["dropped"]).outcome,
            RowOutcome::Surfaced
        );
        // The same answer twice is a double answer, whatever each says about running.
        h.complete(OpType::Fail, "tools/call", json!({"id": 1, "code": -32001}));
        let twice = exactly_once(&h.ops()).unwrap_err();
        assert!(twice.evidence.contains("answered 2 times"), "{twice:?}");
        // Negative control: an `info` with no code is no answer at all.
        let h = History::new();
        h.invoke("tools/call", json!({"id": 2}));
        h.complete(
            OpType::Info,
            "tools/call",
            json!({"id": 2, "timeout": true}),
        );
        let hang = exactly_once(&h.ops()).unwrap_err();
        assert!(hang.evidence.contains("never answered"), "{hang:?}");
    }

    #[test]
    fn surfacing_and_surviving_read_an_unknown_outcome_as_an_error_answer() {
        let faulted = |answer: &dyn Fn(&History)| {
            let h = History::new();
            h.fault("reset_peer_downstream", true, json!({}));
            h.invoke("tools/call", json!({"id": 1}));
            answer(&h);
            h.ops()
        };
        let lost = faulted(&|h| maybe_ran(h, 1, "the link dropped"));
        assert_eq!(
            must_surface(&lost, "tools/call", &["dropped"]).outcome,
            RowOutcome::Surfaced
        );
        assert_eq!(
            must_survive(&lost, "tools/call").outcome,
            RowOutcome::Surfaced
        );
        let hung = faulted(&|h| {
            h.complete(
                OpType::Info,
                "tools/call",
                json!({"id": 1, "message": "no answer within 3000 ms"}),
            );
        });
        assert_eq!(
            must_surface(&hung, "tools/call", &[]).outcome,
            RowOutcome::Silent
        );
        assert_eq!(
            must_survive(&hung, "tools/call").outcome,
            RowOutcome::Silent
        );
    }

    #[test]
    fn an_answer_must_fail_naming_what_happened() {
        let h = History::new();
        let call = h.invoke("tools/call", json!({"id": 4}));
        h.complete(
            OpType::Fail,
            "tools/call",
            json!({"id": 4, "message": "the stream dropped"}),
        );
        let ops = h.ops();
        assert_eq!(
            answer_names(&ops, &ops[call], &["dropped"]).outcome,
            RowOutcome::Surfaced
        );
        assert_eq!(
            answer_names(&ops, &ops[call], &["port"]).outcome,
            RowOutcome::Silent
        );
        let h = History::new();
        let call = h.invoke("tools/call", json!({"id": 4}));
        h.complete(OpType::Ok, "tools/call", json!({"id": 4}));
        let ops = h.ops();
        assert_eq!(
            answer_names(&ops, &ops[call], &[]).outcome,
            RowOutcome::Silent
        );
    }

    #[test]
    fn outcomes_meet_targets_and_inconclusive_never_does() {
        assert!(RowOutcome::Survived.meets(Target::Surfaced));
        assert!(!RowOutcome::Surfaced.meets(Target::Survived));
        assert!(!RowOutcome::Inconclusive.meets(Target::Surfaced));
        assert!(RowOutcome::Silent < RowOutcome::Inconclusive);
    }
}
