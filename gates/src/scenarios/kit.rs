//! What every scenario shares. For all of them: the finished-scenario shapes ([`judged`], which
//! also reads the trace of a daemon a fault scenario ran ([`record_trace_under_faults`],
//! [`judge_trace_under_faults`]),
//! [`unestablished`], [`could_not_start`], [`settle`]), the shared judges ([`judge_survival`],
//! [`judge_surfacing`]) and the harness's records ([`observe`], [`control`]). For hops 1 to 3:
//! the warm agent opening ([`warm_agent`]), whether the link [`serves`], the survival judge with
//! a row's own conditions ([`judge_survival_then`]), the shared preconditions
//! ([`answered_once_after_fault`]), and what a judge reads from the history instead of the
//! scenario: the call marked as under the fault ([`call_under_fault`]), whether the link served
//! again ([`served_again`]), the harness's last observation ([`last_observed`]). A trace checked
//! after tool calls that holds no span makes a passing row inconclusive
//! ([`record_trace_after_tool_calls`]). For hops 4 and 5:
//! recording bridge calls (a command's answer classified as Jepsen would: `ok` when the page did
//! it, `fail` when something said it did not, `info` when nobody knows; [`query_buttons`] as the
//! probe that a page answers), splitting a history into one segment per fault, and combining the
//! judgements of several faults into one. It provokes nothing itself.
//!
//! Judges are named `judge_<what they judge>` and take the history's ops.

use std::path::Path;
use std::time::{Duration, Instant};

use harness::cli::Ran as CliRan;
use harness::{BridgeClient, OwnedDaemon, OwnedDaemonBuilder, ProxyOptions};
use serde_json::{Value, json};

use super::Ran;
use super::agent::Agent;
use crate::history::{Actor, History, Op, OpType};
use crate::judge::{self, Judgement, RowOutcome};
use crate::trace;

/// How long a scenario waits for anything that should happen at once (a session, a close).
pub const BOUND: Duration = Duration::from_secs(20);

/// Classifies a `POST /bridge/commands` answer: answered `ok:true` is `ok`; answered `ok:false`
/// and a refusal (HTTP 4xx) are `fail`; `observation_lost`, `timed_out` and a daemon that did
/// not answer are `info` (indeterminate: the command may or may not have run).
pub fn classify(answer: &Result<Value, String>) -> (OpType, Value) {
    match answer {
        Err(why) => (OpType::Info, json!({ "message": why })),
        Ok(value) => {
            let op = match (value["outcome"].as_str(), value["ok"].as_bool()) {
                (Some("answered"), Some(true)) => OpType::Ok,
                (Some("answered"), _) => OpType::Fail,
                (Some(_), _) => OpType::Info,
                (None, _) if value["httpStatus"].as_u64().unwrap_or(0) >= 400 => OpType::Fail,
                (None, _) => OpType::Info,
            };
            (op, value.clone())
        }
    }
}

/// Starts a daemon and reads its pairing token, or says why either failed.
pub async fn daemon(builder: OwnedDaemonBuilder) -> Result<(OwnedDaemon, String), String> {
    let daemon = builder.try_start().await?;
    let token = daemon.try_token()?;
    Ok((daemon, token))
}

/// Runs one bridge command as a client call, recorded with its answer.
pub async fn command(
    history: &History,
    client: &BridgeClient,
    session: &str,
    name: &str,
    args: Value,
) -> (OpType, Value) {
    history.invoke(
        "command",
        json!({ "session": session, "name": name, "args": args }),
    );
    let answer = client.try_command(Some(session), name, args, None).await;
    let (op, value) = classify(&answer);
    history.complete(op, "command", value.clone());
    (op, value)
}

/// Queries the buttons of `session`, recorded as a [`command`]: how a scenario sees that a page
/// answers (every page these scenarios drive has one).
pub async fn query_buttons(
    history: &History,
    client: &BridgeClient,
    session: &str,
) -> (OpType, Value) {
    command(history, client, session, "query", json!({"role": "button"})).await
}

/// Waits for a page's hello to make `session` a connected session, recorded as the client call
/// `hello`: `ok` when it is listed, `info` when the bound ran out (or the daemon stopped
/// answering) without it.
pub async fn session_appears(
    history: &History,
    client: &BridgeClient,
    session: &str,
    bound: Duration,
) -> bool {
    history.invoke("hello", json!({ "session": session }));
    let listed = harness::poll::within(bound, async || match client.try_session(session).await {
        Ok(Some(entry)) => Some(Ok(entry)),
        Ok(None) => None,
        Err(why) => Some(Err(why)),
    })
    .await;
    match listed {
        Some(Ok(entry)) => {
            history.complete(OpType::Ok, "hello", json!({ "session": entry }));
            true
        }
        Some(Err(why)) => {
            history.complete(OpType::Info, "hello", json!({ "message": why }));
            false
        }
        None => {
            history.complete(
                OpType::Info,
                "hello",
                json!({ "message": format!("{session} was not a session within {bound:?}") }),
            );
            false
        }
    }
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

/// The preconditions of a hop 1 to 3 judge: every call answered exactly once, and the fault
/// established; else the silent (a hang) or inconclusive judgement they force.
pub fn answered_once_after_fault(ops: &[Op]) -> Result<(), Judgement> {
    judge::exactly_once(ops)?;
    judge::established_fault(ops)?;
    Ok(())
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
        .or_else(|| judge_trace_under_faults(ops))
        .unwrap_or_else(|| unless_the_trace_was_empty(ops, judge(ops)))
}

/// The harness observation of what the trace checker found in the log of a daemon a fault
/// scenario ran (traced, `RETICLE_TRACE=1`): `{"spans", "calls", "violations"}`, and
/// `"toolCalls"` when the scenario made tool calls to it so that it has spans to check
/// ([`record_trace_after_tool_calls`]).
pub const TRACE_UNDER_FAULTS: &str = "trace_under_faults";

/// How long the check waits for the spans still open to close (they are written as they close,
/// so a call still finishing looks, until then, like an orphan).
const TRACE_SETTLE: Duration = Duration::from_secs(5);

/// Checks T1 to T4 on the traced daemon log at `log` once no call is left half-written
/// (bounded), and records what was found as [`TRACE_UNDER_FAULTS`], for
/// [`judge_trace_under_faults`].
pub async fn record_trace_under_faults(history: &History, log: &Path) {
    observe(history, TRACE_UNDER_FAULTS, checked_trace(log).await);
}

/// [`record_trace_under_faults`] after the scenario made `tool_calls` tool calls to the daemon
/// (through a real agent), so a trace with no span proves nothing
/// ([`unless_the_trace_was_empty`]).
pub async fn record_trace_after_tool_calls(history: &History, log: &Path, tool_calls: usize) {
    let mut found = checked_trace(log).await;
    found["toolCalls"] = json!(tool_calls);
    observe(history, TRACE_UNDER_FAULTS, found);
}

/// What the trace checker finds in the log at `log` once no call is left half-written
/// (bounded): `{"spans", "calls", "violations"}`.
async fn checked_trace(log: &Path) -> Value {
    let read = || std::fs::read_to_string(log).unwrap_or_default();
    let settled = harness::poll::within(TRACE_SETTLE, async || {
        let text = read();
        trace::check_log(&text)
            .violations
            .is_empty()
            .then_some(text)
    })
    .await
    .unwrap_or_else(read);
    let report = trace::check_log(&settled);
    json!({ "spans": report.spans, "calls": report.calls, "violations": report.violations })
}

/// `verdict`, unless it passes (survived or surfaced) while a trace checked after tool calls
/// went through its daemon held no span: the trace check then proved nothing, and the row is
/// inconclusive. A red verdict stands.
fn unless_the_trace_was_empty(ops: &[Op], verdict: Judgement) -> Judgement {
    if !matches!(verdict.outcome, RowOutcome::Survived | RowOutcome::Surfaced) {
        return verdict;
    }
    let empty = ops.iter().find(|o| {
        o.actor == Actor::Harness
            && o.f == TRACE_UNDER_FAULTS
            && o.value["toolCalls"].as_u64().unwrap_or(0) > 0
            && o.value["spans"].as_u64().unwrap_or(0) == 0
    });
    match empty {
        None => verdict,
        Some(found) => Judgement::new(
            RowOutcome::Inconclusive,
            format!(
                "the daemon's trace held no span after {} tool call(s) went through it, so T1 to T4 were not checked under the fault ({} {})",
                found.value["toolCalls"],
                verdict.outcome.word(),
                verdict.evidence
            ),
        ),
    }
}

/// Silent when the trace of a daemon a fault scenario ran, checked as it ended
/// ([`TRACE_UNDER_FAULTS`]), broke T1 to T4: a call the fault left without its
/// root, an orphan span, a missing settle or a failure without an error is hidden from the agent.
pub fn judge_trace_under_faults(ops: &[Op]) -> Option<Judgement> {
    let (found, violations) = ops
        .iter()
        .filter(|o| o.actor == Actor::Harness && o.f == TRACE_UNDER_FAULTS)
        .find_map(|o| {
            let violations = o.value["violations"].as_array()?;
            (!violations.is_empty()).then_some((o, violations))
        })?;
    let first = &violations[0];
    Some(Judgement::new(
        RowOutcome::Silent,
        format!(
            "the daemon's trace broke {} under the row's fault ({} violation(s) over {} spans); first: call {}: {}",
            first["invariant"].as_str().unwrap_or("?"),
            violations.len(),
            found.value["spans"],
            first["call_id"].as_str().unwrap_or("?"),
            first["detail"].as_str().unwrap_or("?")
        ),
    ))
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

/// The survival judge of hops 1 to 3: every call answered exactly once, the fault established,
/// every `tools/call` after it a success.
pub fn judge_survival(ops: &[Op]) -> Judgement {
    if let Err(hang) = judge::exactly_once(ops) {
        return hang;
    }
    judge::must_survive(ops, "tools/call")
}

/// [`judge_survival`], and on a survived history the row's own conditions: `further` gets the
/// survival evidence and gives the judgement.
pub fn judge_survival_then(ops: &[Op], further: impl FnOnce(&str) -> Judgement) -> Judgement {
    let verdict = judge_survival(ops);
    if verdict.outcome != RowOutcome::Survived {
        return verdict;
    }
    further(&verdict.evidence)
}

/// The surfacing judge of hops 1 and 2 when a scenario could not get as far as its call: every
/// call answered exactly once, the fault established, a `tools/call` after it failing.
pub fn judge_surfacing(ops: &[Op]) -> Judgement {
    if let Err(hang) = judge::exactly_once(ops) {
        return hang;
    }
    judge::must_surface(ops, "tools/call", &[])
}

/// The opening of the hop 1 to 3 scenarios that need an agent attached and served: starts
/// `reticle mcp` as a real MCP client and calls `reticle_sessions` until one is served. When
/// either fails, the scenario is over: the fault it was about to inject is recorded
/// unestablished, and the history judged by `judge` comes back instead of the agent.
pub async fn warm_agent(
    history: &History,
    options: ProxyOptions,
    fault: &str,
    judge: fn(&[Op]) -> Judgement,
) -> Result<Agent, Ran> {
    let agent = match Agent::start(history, options).await {
        Ok(agent) => agent,
        Err(why) => return Err(unestablished(history.clone(), fault, &why, judge)),
    };
    if !serves(&agent).await {
        agent.close().await;
        return Err(unestablished(
            history.clone(),
            fault,
            "the link never served a call before the fault",
            judge,
        ));
    }
    Ok(agent)
}

/// Whether the link serves `agent` a call: `reticle_sessions` tried until it succeeds, within
/// the bound.
pub async fn serves(agent: &Agent) -> bool {
    agent
        .call_until_ok("reticle_sessions", json!({}), BOUND)
        .await
        .is_some()
}

/// The first client invoke of `f` recorded at or after position `mark`.
fn first_invoke_after<'a>(ops: &'a [Op], mark: usize, f: &str) -> Option<&'a Op> {
    ops.iter().find(|o| {
        o.index >= mark && o.actor == Actor::Client && o.op_type == OpType::Invoke && o.f == f
    })
}

/// The harness's mark just before the call a row judges (`{}`): where the judge looks for it,
/// so the position is in the history rather than kept by the scenario.
pub const CALL_UNDER_FAULT: &str = "call_under_fault";

/// Marks the next call as the one the row judges ([`CALL_UNDER_FAULT`]).
pub fn mark_call_under_fault(history: &History) {
    observe(history, CALL_UNDER_FAULT, json!({}));
}

/// The first client invoke of `f` after the last [`CALL_UNDER_FAULT`] mark: `None` when the
/// scenario never marked one (it stopped before its call), `Some(None)` when it marked one and
/// made no such call.
pub fn call_under_fault<'a>(ops: &'a [Op], f: &str) -> Option<Option<&'a Op>> {
    let mark = last_observed(ops, CALL_UNDER_FAULT)?;
    Some(first_invoke_after(ops, mark.index, f))
}

/// The harness observation of whether the link served a call again once its fault went:
/// `{"served"}`.
pub const SERVED_AGAIN: &str = "served_again";

/// Records whether the link served again ([`SERVED_AGAIN`]); returns it.
pub fn record_served_again(history: &History, served: bool) -> bool {
    observe(history, SERVED_AGAIN, json!({ "served": served }));
    served
}

/// Whether the history records the link served again once its fault went ([`SERVED_AGAIN`]).
pub fn served_again(ops: &[Op]) -> bool {
    last_observed(ops, SERVED_AGAIN).is_some_and(|o| o.value["served"] == true)
}

/// The harness's last observation `f`.
pub fn last_observed<'a>(ops: &'a [Op], f: &str) -> Option<&'a Op> {
    ops.iter().rfind(|o| o.actor == Actor::Harness && o.f == f)
}

/// Milliseconds since `start`, for the record.
pub fn ms_since(start: Instant) -> u64 {
    start.elapsed().as_millis() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_classified_ok_fail_or_unknown() {
        let answered = |ok| Ok(json!({ "outcome": "answered", "ok": ok }));
        assert_eq!(classify(&answered(true)).0, OpType::Ok);
        assert_eq!(classify(&answered(false)).0, OpType::Fail);
        assert_eq!(
            classify(&Ok(json!({ "outcome": "observation_lost" }))).0,
            OpType::Info
        );
        assert_eq!(
            classify(&Ok(json!({ "error": "no session", "httpStatus": 404 }))).0,
            OpType::Fail
        );
        assert_eq!(classify(&Err("refused".into())).0, OpType::Info);
    }

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
