//! The judges of the chaos gate (`gates/tests/hop2_chaos.rs`): compound fault sequences on the agent's
//! link, each judged over its history. Every judge first checks each call was answered exactly
//! once ([`judge::exactly_once`]), then that each fault was established (else inconclusive, and
//! why), then what the sequence promises. Pure over a history: the test runs the sequences and
//! records them in the fault vocabulary ([`crate::fault`]) and [`seen`]. It must not run
//! anything itself.

use reticle::mcp::jsonrpc::{LostPopulation, Ran};
use serde_json::Value;

use crate::fault;
use crate::history::{APPLYING, Actor, Op, OpType};
use crate::judge::{self, Judgement, RowOutcome, one_line};
use crate::scenarios::fault_segments;
use crate::scenarios::kit;

/// The harness observations a chaos judge reads.
pub mod seen {
    /// The proxy logged the drop a cut caused (value: `{"cut": n, "seen": bool}`).
    pub const DROP: &str = "drop_seen";
    /// The proxy had a session again after a heal (value: `{"cut": n, "seen": bool}`).
    pub const REJOINED: &str = "rejoined";
    /// `mcp_call_refused` lines in the daemon log: a call reached an uninitialized session
    /// (value: `{"count": n}`).
    pub const REFUSALS: &str = "refusals";
    /// The order in which the daemon was sent the calls, by each call's `n` (value:
    /// `{"ns": [...]}`).
    pub const POSTED: &str = "posted";
    /// The nemesis held a cut until a call was in flight under it (value: `{"cut": n, "seen":
    /// bool}`; `false`: the bound ran out first).
    pub const CALL_UNDER: &str = "call_under";
}

/// How the calls of a sequence were answered, once exactly-once holds.
#[derive(Debug, Default, PartialEq)]
struct Tally {
    /// Calls made (the handshake included).
    calls: usize,
    /// Answered with a result.
    ok: usize,
    /// -32001 answers, by population.
    lost: Vec<String>,
}

impl Tally {
    fn describe(&self) -> String {
        let mut populations: Vec<String> = Vec::new();
        for p in &self.lost {
            if !populations.contains(p) {
                populations.push(p.clone());
            }
        }
        let by: Vec<String> = populations
            .iter()
            .map(|p| format!("{} {p}", self.lost.iter().filter(|l| *l == p).count()))
            .collect();
        format!(
            "{} calls, each answered exactly once: {} ok, {} -32001 ({})",
            self.calls,
            self.ok,
            self.lost.len(),
            if by.is_empty() {
                "none".to_string()
            } else {
                by.join(", ")
            }
        )
    }

    /// `surfaced` when a call was lost (and said so), else `survived`.
    fn outcome(&self) -> RowOutcome {
        if self.lost.is_empty() {
            RowOutcome::Survived
        } else {
            RowOutcome::Surfaced
        }
    }
}

/// The client's calls (invokes carrying an id).
fn calls(ops: &[Op]) -> impl Iterator<Item = &Op> {
    ops.iter().filter(|o| {
        o.actor == Actor::Client && o.op_type == OpType::Invoke && judge::call_id(o).is_some()
    })
}

/// The one answer of a call (exactly-once already checked).
fn answer_of<'a>(ops: &'a [Op], invoke: &Op) -> Option<&'a Op> {
    judge::answers_to(ops, invoke).into_iter().next()
}

fn is_lost(answer: &Op) -> bool {
    answer.op_type != OpType::Ok && answer.value["code"] == reticle::mcp::jsonrpc::TRANSPORT_LOST
}

/// Exactly once, then every answer a result or a -32001 naming the link: any other error is a
/// wrong answer the fault caused (silent).
fn tally(ops: &[Op]) -> Result<Tally, Judgement> {
    judge::exactly_once(ops)?;
    let mut tally = Tally::default();
    for invoke in calls(ops) {
        tally.calls += 1;
        let Some(answer) = answer_of(ops, invoke) else {
            continue;
        };
        if answer.op_type == OpType::Ok {
            tally.ok += 1;
        } else if is_lost(answer) {
            let population = answer.value["population"].as_str().unwrap_or("unnamed");
            tally.lost.push(population.to_string());
        } else {
            return Err(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "`{}` {} was answered with an error that is not the link's: {}",
                    invoke.f,
                    judge::call_id(invoke).cloned().unwrap_or_default(),
                    one_line(&judge::text(&answer.value))
                ),
            ));
        }
    }
    Ok(tally)
}

/// The first harness observation `f` whose value does not say `seen: true`, if any.
fn unseen<'a>(ops: &'a [Op], f: &str) -> Option<&'a Op> {
    ops.iter()
        .find(|o| o.actor == Actor::Harness && o.f == f && o.value["seen"] != true)
}

/// Whether a call invoked after the last heal was served (a result).
fn served_after_last_heal(ops: &[Op]) -> Option<&Op> {
    let healed = ops
        .iter()
        .rfind(|o| o.actor == Actor::Nemesis && o.f == fault::HEAL)?;
    if healed.op_type != OpType::Ok {
        return None;
    }
    calls(ops)
        .filter(|c| c.index > healed.index)
        .filter_map(|c| answer_of(ops, c))
        .find(|a| a.op_type == OpType::Ok)
}

/// The client's calls in flight under the fault recorded at `fault` (the nemesis op saying it
/// took): invoked after the nemesis began applying it (its `applying` invoke, when recorded, else
/// the fault op itself) and before the heal after it, or invoked earlier and not answered before
/// the fault took. A call the agent made just before the fault was recorded, with the toxic
/// already on, counts; one made and answered before the nemesis began does not. The nemesis holds
/// a fault until this shows a call in flight under it (never a clock), and a judge counts the
/// same calls.
pub fn calls_under_fault<'a>(ops: &'a [Op], fault: &Op) -> Vec<&'a Op> {
    let nemesis = |o: &&Op| o.actor == Actor::Nemesis && o.index < fault.index;
    let began = ops
        .iter()
        .rfind(nemesis)
        .filter(|o| o.op_type == OpType::Invoke && o.f == APPLYING && o.value["fault"] == *fault.f)
        .map_or(fault.index, |o| o.index);
    let healed = ops
        .iter()
        .find(|o| o.index > fault.index && o.actor == Actor::Nemesis && o.f == fault::HEAL)
        .map_or(usize::MAX, |o| o.index);
    calls(ops)
        .filter(|call| call.index < healed)
        .filter(|call| {
            call.index > began
                || answer_of(ops, call).is_none_or(|answer| answer.index > fault.index)
        })
        .collect()
}

/// The calls in flight under any `f` fault, each counted once.
fn calls_under<'a>(ops: &'a [Op], f: &str) -> Vec<&'a Op> {
    let mut under: Vec<&Op> = Vec::new();
    for fault in ops
        .iter()
        .filter(|o| o.actor == Actor::Nemesis && o.op_type != OpType::Invoke && o.f == f)
    {
        for call in calls_under_fault(ops, fault) {
            if !under.iter().any(|seen| seen.index == call.index) {
                under.push(call);
            }
        }
    }
    under
}

/// The flapping link: the link cut and healed repeatedly while the agent calls. Every cut must
/// be established and seen by the proxy (else inconclusive), some call must meet a cut, every
/// call must be answered exactly once by a result or a -32001, and the link must serve after the
/// last heal.
pub fn judge_flapping(ops: &[Op]) -> Judgement {
    kit::settle(|| flapping_checked(ops))
}

fn flapping_checked(ops: &[Op]) -> Result<Judgement, Judgement> {
    let tally = tally(ops)?;
    let cuts = fault_segments::established(ops, fault::CUT)?;
    let looked = ops
        .iter()
        .filter(|o| o.actor == Actor::Harness && o.f == seen::DROP)
        .count();
    if looked < cuts.len() {
        return Err(Judgement::new(
            RowOutcome::Inconclusive,
            format!(
                "{} cuts, but the proxy's log was read after only {looked}",
                cuts.len()
            ),
        ));
    }
    if let Some(op) = unseen(ops, seen::DROP) {
        return Err(Judgement::new(
            RowOutcome::Inconclusive,
            format!(
                "cut {} never reached the link (the proxy logged no drop), so the flap proved nothing",
                op.value["cut"]
            ),
        ));
    }
    if let Some(op) = unseen(ops, seen::REJOINED) {
        return Ok(Judgement::new(
            RowOutcome::Silent,
            format!(
                "the link did not come back within the bound after cut {} was healed",
                op.value["cut"]
            ),
        ));
    }
    if let Some(op) = unseen(ops, seen::CALL_UNDER) {
        return Err(Judgement::new(
            RowOutcome::Inconclusive,
            format!(
                "cut {} was held for the whole bound and no call was in flight under it",
                op.value["cut"]
            ),
        ));
    }
    let under = calls_under(ops, fault::CUT).len();
    if under == 0 {
        return Err(Judgement::new(
            RowOutcome::Inconclusive,
            "no call was made while the link was cut",
        ));
    }
    if served_after_last_heal(ops).is_none() {
        return Ok(Judgement::new(
            RowOutcome::Silent,
            "the link never served a call after the last heal",
        ));
    }
    Ok(Judgement::new(
        tally.outcome(),
        format!(
            "{} cuts, each seen by the proxy; {under} calls made while cut; {}; served after the last heal",
            cuts.len(),
            tally.describe()
        ),
    ))
}

/// Calls in flight at the daemon when the link drops: each must be answered exactly once, by a
/// -32001 `in_flight_lost` that says it may have run (`ran: unknown`, recorded `info`); a call
/// that came back with a result was not cut (inconclusive). Then the link must serve again.
pub fn judge_in_flight(ops: &[Op]) -> Judgement {
    kit::settle(|| in_flight_checked(ops))
}

fn in_flight_checked(ops: &[Op]) -> Result<Judgement, Judgement> {
    let tally = tally(ops)?;
    let drop = fault_segments::established(ops, fault::DROP_IN_FLIGHT)?;
    let logged = ops
        .iter()
        .any(|o| o.actor == Actor::Harness && o.f == seen::DROP && o.value["seen"] == true);
    if !logged {
        return Err(Judgement::new(
            RowOutcome::Inconclusive,
            "the proxy never logged the drop, so it was not shown to reach the link",
        ));
    }
    let ids: Vec<Value> = drop[0].fault.value["ids"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if ids.is_empty() {
        return Err(Judgement::new(
            RowOutcome::Inconclusive,
            "no call was in flight when the link dropped",
        ));
    }
    for id in &ids {
        let Some(invoke) = calls(ops).find(|c| judge::call_id(c) == Some(id)) else {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                format!("call {id} is named in flight but was never made"),
            ));
        };
        let Some(answer) = answer_of(ops, invoke) else {
            continue;
        };
        let said = one_line(&judge::text(&answer.value));
        if answer.op_type == OpType::Ok {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                format!("call {id} finished before the drop reached it, so it proves nothing"),
            ));
        }
        if answer.value["population"] != LostPopulation::InFlightLost.as_str() {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "call {id}, in flight, was answered as {}: {said}",
                    answer.value["population"]
                ),
            ));
        }
        if answer.value["ran"] != Ran::Unknown.as_str() || answer.op_type != OpType::Info {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "call {id}, in flight, was answered as if it did not run (ran {}, recorded {:?}): {said}",
                    answer.value["ran"], answer.op_type
                ),
            ));
        }
    }
    if served_after_last_heal(ops).is_none() {
        return Ok(Judgement::new(
            RowOutcome::Silent,
            "the link never served a call after the drop was healed",
        ));
    }
    Ok(Judgement::new(
        tally.outcome(),
        format!(
            "{} calls in flight, each answered once -32001 in_flight_lost saying it may have run; {}; served again after the heal",
            ids.len(),
            tally.describe()
        ),
    ))
}

/// The daemon replaced and the link cut while the proxy replays the handshake into the new one:
/// no call may reach the new daemon's session uninitialized (the daemon logs it as a refusal),
/// every call is answered exactly once by a result or a -32001, and after the heal a call is
/// served by the new daemon.
pub fn judge_cut_during_replay(ops: &[Op]) -> Judgement {
    kit::settle(|| cut_during_replay_checked(ops))
}

fn cut_during_replay_checked(ops: &[Op]) -> Result<Judgement, Judgement> {
    let tally = tally(ops)?;
    let cut = fault_segments::established(ops, fault::CUT_DURING_REPLAY)?;
    let instance = cut[0].fault.value["instance"].clone();
    let refusals = ops
        .iter()
        .rfind(|o| o.actor == Actor::Harness && o.f == seen::REFUSALS)
        .map(|o| o.value["count"].as_u64().unwrap_or(0));
    match refusals {
        None => {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                "the new daemon's log was never read for refusals",
            ));
        }
        Some(0) => {}
        Some(n) => {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "{n} call(s) reached the new daemon's session before it was initialized (mcp_call_refused)"
                ),
            ));
        }
    }
    let Some(served) = served_after_last_heal(ops) else {
        return Ok(Judgement::new(
            RowOutcome::Silent,
            "the link never served a call after the cut was healed",
        ));
    };
    let by = &served.value["result"]["structuredContent"]["daemon"]["instance"];
    if *by != instance {
        return Err(Judgement::new(
            RowOutcome::Inconclusive,
            format!("the call after the heal was served by {by}, not the new daemon {instance}"),
        ));
    }
    Ok(Judgement::new(
        tally.outcome(),
        format!(
            "the link cut during the handshake replay into the new daemon; no call reached it uninitialized; {}; the new daemon served after the heal",
            tally.describe()
        ),
    ))
}

/// Calls queued while no stream can open, flushed when one can while new calls keep arriving:
/// every call (each carrying its `n`) answered exactly once with its own echo, none lost, and
/// the daemon sent each call exactly once, in the order the agent made them.
pub fn judge_queue_flushed(ops: &[Op]) -> Judgement {
    kit::settle(|| queue_flushed_checked(ops))
}

fn queue_flushed_checked(ops: &[Op]) -> Result<Judgement, Judgement> {
    let tally = tally(ops)?;
    let outage = fault_segments::established(ops, fault::STREAMS_BLACKHOLED)?;
    let heal = ops
        .iter()
        .find(|o| {
            o.actor == Actor::Nemesis && o.f == fault::HEAL && o.index > outage[0].fault.index
        })
        .filter(|h| h.op_type == OpType::Ok)
        .ok_or_else(|| {
            Judgement::new(
                RowOutcome::Inconclusive,
                "the streams were never confirmed open again",
            )
        })?;
    let n_of = |op: &Op| op.value["params"]["arguments"]["n"].as_u64();
    let made: Vec<&Op> = calls(ops).filter(|c| n_of(c).is_some()).collect();
    let queued = made.iter().filter(|c| c.index < heal.index).count();
    let arriving = made.len() - queued;
    if queued == 0 || arriving == 0 {
        return Err(Judgement::new(
            RowOutcome::Inconclusive,
            format!(
                "{queued} call(s) queued in the outage and {arriving} made once it ended: both are needed"
            ),
        ));
    }
    for call in &made {
        let n = n_of(call);
        let answer = answer_of(ops, call).expect("exactly once holds");
        if answer.op_type != OpType::Ok {
            return Ok(Judgement::new(
                RowOutcome::Surfaced,
                format!(
                    "call n={} was lost: {}",
                    n.unwrap_or(0),
                    one_line(&judge::text(&answer.value))
                ),
            ));
        }
        let echoed = answer.value["result"]["structuredContent"]["echo"]["n"].as_u64();
        if echoed != n {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "call n={} was answered with another call's result (n={echoed:?})",
                    n.unwrap_or(0)
                ),
            ));
        }
    }
    let Some(posted) = ops
        .iter()
        .rfind(|o| o.actor == Actor::Harness && o.f == seen::POSTED)
        .and_then(|o| o.value["ns"].as_array().cloned())
    else {
        return Err(Judgement::new(
            RowOutcome::Inconclusive,
            "what the daemon was sent was never read",
        ));
    };
    let posted: Vec<u64> = posted.iter().filter_map(Value::as_u64).collect();
    let sent: Vec<u64> = made.iter().filter_map(|c| n_of(c)).collect();
    if posted != sent {
        return Ok(Judgement::new(
            RowOutcome::Silent,
            format!("the daemon was sent the calls as {posted:?}, the agent made them as {sent:?}"),
        ));
    }
    Ok(Judgement::new(
        tally.outcome(),
        format!(
            "{queued} calls queued while no stream could open, {arriving} more made as it came back; {}; each echoed its own n, and the daemon was sent each once, in the agent's order",
            tally.describe()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::History;
    use serde_json::json;

    /// Records a call and (optionally) its answer: `Ok`, or a -32001 of `population`.
    fn call(h: &History, id: u64, answer: Option<(OpType, &str, &str)>) {
        h.invoke(
            "tools/call",
            json!({ "id": id, "params": { "name": "t", "arguments": { "n": id } } }),
        );
        match answer {
            Some((OpType::Ok, _, _)) => {
                h.complete(
                    OpType::Ok,
                    "tools/call",
                    json!({ "id": id, "result": { "structuredContent": {
                        "echo": { "n": id }, "daemon": { "instance": "new" } } } }),
                );
            }
            Some((op, population, ran)) => {
                h.complete(
                    op,
                    "tools/call",
                    json!({ "id": id, "code": -32001, "message": "the link dropped",
                            "population": population, "ran": ran }),
                );
            }
            None => {
                h.complete(
                    OpType::Info,
                    "tools/call",
                    json!({ "id": id, "message": "no answer within 20000 ms" }),
                );
            }
        }
    }

    const OK: Option<(OpType, &str, &str)> = Some((OpType::Ok, "", ""));
    const LOST: Option<(OpType, &str, &str)> = Some((OpType::Info, "in_flight_lost", "unknown"));

    fn heal(h: &History) {
        h.record(Actor::Nemesis, OpType::Ok, fault::HEAL, json!({}));
    }

    /// One cut with a call under it: whether the proxy logged its drop, whether it rejoined
    /// after the heal, and whether the call after that was served.
    fn flaps(
        under: Option<(OpType, &str, &str)>,
        seen_drop: bool,
        rejoined: bool,
        after: bool,
    ) -> Vec<Op> {
        let h = History::new();
        call(&h, 1, OK);
        h.fault(fault::CUT, true, json!({}));
        h.record(
            Actor::Harness,
            OpType::Info,
            seen::DROP,
            json!({ "cut": 0, "seen": seen_drop }),
        );
        call(&h, 2, under);
        heal(&h);
        h.record(
            Actor::Harness,
            OpType::Info,
            seen::REJOINED,
            json!({ "cut": 0, "seen": rejoined }),
        );
        call(&h, 3, if after { OK } else { LOST });
        h.ops()
    }

    #[test]
    fn a_flapping_link_must_answer_every_call_once_and_serve_after_the_last_heal() {
        let judged = judge_flapping(&flaps(LOST, true, true, true));
        assert_eq!(judged.outcome, RowOutcome::Surfaced, "{judged:?}");
        assert!(judged.evidence.contains("1 in_flight_lost"), "{judged:?}");
        assert_eq!(
            judge_flapping(&flaps(OK, true, true, true)).outcome,
            RowOutcome::Survived
        );
        // Negative controls: a swallowed call, a link that never comes back, a wrong error.
        let swallowed = judge_flapping(&flaps(None, true, true, true));
        assert_eq!(swallowed.outcome, RowOutcome::Silent);
        assert!(
            swallowed.evidence.contains("never answered"),
            "{swallowed:?}"
        );
        let gone = judge_flapping(&flaps(LOST, true, false, false));
        assert_eq!(gone.outcome, RowOutcome::Silent);
        assert!(gone.evidence.contains("did not come back"), "{gone:?}");
        let unserved = judge_flapping(&flaps(LOST, true, true, false));
        assert_eq!(unserved.outcome, RowOutcome::Silent);
        assert!(unserved.evidence.contains("never served"), "{unserved:?}");
        let refused = judge_flapping(&flaps(Some((OpType::Fail, "", "")), true, true, true));
        assert_eq!(
            refused.outcome,
            RowOutcome::Surfaced,
            "a -32001 with no population is still the link's"
        );
        let h = History::new();
        h.fault(fault::CUT, true, json!({}));
        h.invoke("tools/call", json!({ "id": 1 }));
        h.complete(
            OpType::Fail,
            "tools/call",
            json!({ "id": 1, "code": -32600, "message": "not initialized" }),
        );
        heal(&h);
        assert_eq!(judge_flapping(&h.ops()).outcome, RowOutcome::Silent);
    }

    #[test]
    fn a_flap_the_proxy_never_saw_or_could_not_install_proves_nothing() {
        assert_eq!(
            judge_flapping(&flaps(LOST, false, true, true)).outcome,
            RowOutcome::Inconclusive
        );
        let h = History::new();
        h.fault(fault::CUT, false, json!({ "error": "HTTP 500" }));
        assert_eq!(judge_flapping(&h.ops()).outcome, RowOutcome::Inconclusive);
        // No call met the cut.
        let h = History::new();
        call(&h, 1, OK);
        h.fault(fault::CUT, true, json!({}));
        h.record(
            Actor::Harness,
            OpType::Info,
            seen::DROP,
            json!({ "cut": 0, "seen": true }),
        );
        heal(&h);
        call(&h, 2, OK);
        let judged = judge_flapping(&h.ops());
        assert_eq!(judged.outcome, RowOutcome::Inconclusive);
        assert!(judged.evidence.contains("no call was made"), "{judged:?}");
        // A cut whose drop nobody looked for.
        let h = History::new();
        h.fault(fault::CUT, true, json!({}));
        call(&h, 1, LOST);
        heal(&h);
        call(&h, 2, OK);
        assert_eq!(judge_flapping(&h.ops()).outcome, RowOutcome::Inconclusive);
    }

    /// One cut, applied (`applying`) and then recorded as taken, with the calls `before` it
    /// began, `between` the two ops, and `held` until its drop was seen; then healed.
    fn cut_with(before: &[u64], between: &[u64], answered_before_it_took: bool) -> Vec<Op> {
        let h = History::new();
        for id in before {
            h.invoke(
                "tools/call",
                json!({ "id": id, "params": { "name": "t", "arguments": { "n": id } } }),
            );
        }
        let finish = |ids: &[u64]| {
            for id in ids {
                h.complete(
                    OpType::Info,
                    "tools/call",
                    json!({ "id": id, "code": -32001, "population": "post_failed", "ran": "no" }),
                );
            }
        };
        h.applying(fault::CUT, json!({ "cut": 0 }));
        if answered_before_it_took {
            finish(before);
        }
        for id in between {
            call(&h, *id, Some((OpType::Info, "post_failed", "no")));
        }
        h.fault(fault::CUT, true, json!({ "cut": 0 }));
        if !answered_before_it_took {
            finish(before);
        }
        for (f, seen) in [(seen::DROP, true), (seen::CALL_UNDER, true)] {
            h.record(
                Actor::Harness,
                OpType::Info,
                f,
                json!({ "cut": 0, "seen": seen }),
            );
        }
        heal(&h);
        h.record(
            Actor::Harness,
            OpType::Info,
            seen::REJOINED,
            json!({ "cut": 0, "seen": true }),
        );
        call(&h, 99, OK);
        h.ops()
    }

    #[test]
    fn a_call_made_after_the_nemesis_began_a_cut_or_in_flight_when_it_took_is_under_it() {
        // The race the flapping link lost under load: the calls were invoked after the toxic was
        // on but before the cut was recorded, and answered post_failed.
        let judged = judge_flapping(&cut_with(&[], &[1, 2, 3], false));
        assert_eq!(judged.outcome, RowOutcome::Surfaced, "{judged:?}");
        assert!(
            judged.evidence.contains("3 calls made while cut"),
            "{judged:?}"
        );
        // Invoked before the nemesis began, still unanswered when the cut took.
        let judged = judge_flapping(&cut_with(&[1], &[], false));
        assert_eq!(judged.outcome, RowOutcome::Surfaced, "{judged:?}");
        // The control: invoked before and answered before the cut took, it was not under it.
        let judged = judge_flapping(&cut_with(&[1], &[], true));
        assert_eq!(judged.outcome, RowOutcome::Inconclusive, "{judged:?}");
        assert!(judged.evidence.contains("no call was made"), "{judged:?}");
    }

    #[test]
    fn only_a_hold_whose_bound_ran_out_is_inconclusive() {
        let mut ops = cut_with(&[], &[1], false);
        let held = ops
            .iter_mut()
            .find(|o| o.f == seen::CALL_UNDER)
            .expect("the hold is recorded");
        held.value["seen"] = json!(false);
        let judged = judge_flapping(&ops);
        assert_eq!(judged.outcome, RowOutcome::Inconclusive, "{judged:?}");
        assert!(
            judged.evidence.contains("held for the whole bound"),
            "{judged:?}"
        );
    }

    fn dropped(answers: &[Option<(OpType, &str, &str)>]) -> Vec<Op> {
        let h = History::new();
        let ids: Vec<u64> = (1..=answers.len() as u64).collect();
        for id in &ids {
            h.invoke("tools/call", json!({ "id": id }));
        }
        h.fault(fault::DROP_IN_FLIGHT, true, json!({ "ids": ids }));
        h.record(
            Actor::Harness,
            OpType::Info,
            seen::DROP,
            json!({ "seen": true }),
        );
        for (id, answer) in ids.iter().zip(answers) {
            if let Some((op, population, ran)) = answer {
                h.complete(
                    *op,
                    "tools/call",
                    json!({ "id": id, "code": -32001, "population": population, "ran": ran }),
                );
            }
        }
        heal(&h);
        call(&h, 99, OK);
        h.ops()
    }

    #[test]
    fn calls_in_flight_across_a_drop_must_each_say_once_that_they_may_have_run() {
        let judged = judge_in_flight(&dropped(&[LOST, LOST, LOST]));
        assert_eq!(judged.outcome, RowOutcome::Surfaced, "{judged:?}");
        // Negative controls: one claims it did not run; one is never answered; one is answered
        // as never sent; one is answered twice.
        let denied = judge_in_flight(&dropped(&[
            LOST,
            Some((OpType::Fail, "in_flight_lost", "no")),
        ]));
        assert_eq!(denied.outcome, RowOutcome::Silent);
        assert!(
            denied.evidence.contains("as if it did not run"),
            "{denied:?}"
        );
        let swallowed = judge_in_flight(&dropped(&[LOST, None]));
        assert_eq!(swallowed.outcome, RowOutcome::Silent);
        let unsent = judge_in_flight(&dropped(&[Some((OpType::Fail, "never_sent", "no"))]));
        assert_eq!(unsent.outcome, RowOutcome::Silent);
        let mut twice = dropped(&[LOST]);
        let again = twice[3].clone();
        twice.push(Op {
            index: twice.len(),
            ..again
        });
        assert_eq!(judge_in_flight(&twice).outcome, RowOutcome::Silent);
        // A call that came back with a result was not cut, and a drop the proxy never logged did
        // not reach the link: either run proves nothing.
        let h = History::new();
        call(&h, 1, OK);
        h.fault(fault::DROP_IN_FLIGHT, true, json!({ "ids": [1] }));
        h.record(
            Actor::Harness,
            OpType::Info,
            seen::DROP,
            json!({ "seen": true }),
        );
        heal(&h);
        call(&h, 2, OK);
        assert_eq!(judge_in_flight(&h.ops()).outcome, RowOutcome::Inconclusive);
        let mut unlogged = dropped(&[LOST]);
        unlogged.retain(|o| o.f != seen::DROP);
        assert_eq!(judge_in_flight(&unlogged).outcome, RowOutcome::Inconclusive);
    }

    fn replayed(refusals: u64, served_by_new: bool) -> Vec<Op> {
        let h = History::new();
        call(&h, 1, OK);
        h.fault(fault::CUT_DURING_REPLAY, true, json!({ "instance": "new" }));
        call(&h, 2, Some((OpType::Info, "post_failed", "unknown")));
        heal(&h);
        h.invoke("tools/call", json!({ "id": 3 }));
        let by = if served_by_new { "new" } else { "old" };
        h.complete(
            OpType::Ok,
            "tools/call",
            json!({ "id": 3, "result": { "structuredContent": { "daemon": { "instance": by } } } }),
        );
        h.record(
            Actor::Harness,
            OpType::Info,
            seen::REFUSALS,
            json!({ "count": refusals }),
        );
        h.ops()
    }

    #[test]
    fn a_cut_during_the_replay_must_never_leave_a_call_reaching_an_uninitialized_session() {
        let judged = judge_cut_during_replay(&replayed(0, true));
        assert_eq!(judged.outcome, RowOutcome::Surfaced, "{judged:?}");
        let refused = judge_cut_during_replay(&replayed(2, true));
        assert_eq!(refused.outcome, RowOutcome::Silent);
        assert!(
            refused.evidence.contains("before it was initialized"),
            "{refused:?}"
        );
        assert_eq!(
            judge_cut_during_replay(&replayed(0, false)).outcome,
            RowOutcome::Inconclusive
        );
    }

    fn flushed(queued: &[u64], arriving: &[u64], posted: &[u64], lose: Option<u64>) -> Vec<Op> {
        let h = History::new();
        h.fault(fault::STREAMS_BLACKHOLED, true, json!({}));
        for n in queued {
            h.invoke(
                "tools/call",
                json!({ "id": n, "params": { "name": "reticle_test_echo", "arguments": { "n": n } } }),
            );
        }
        heal(&h);
        for n in arriving {
            h.invoke(
                "tools/call",
                json!({ "id": n, "params": { "name": "reticle_test_echo", "arguments": { "n": n } } }),
            );
        }
        for n in queued.iter().chain(arriving) {
            if lose == Some(*n) {
                h.complete(
                    OpType::Fail,
                    "tools/call",
                    json!({ "id": n, "code": -32001, "population": "never_sent", "ran": "no" }),
                );
            } else {
                h.complete(
                    OpType::Ok,
                    "tools/call",
                    json!({ "id": n, "result": { "structuredContent": { "echo": { "n": n } } } }),
                );
            }
        }
        h.record(
            Actor::Harness,
            OpType::Info,
            seen::POSTED,
            json!({ "ns": posted }),
        );
        h.ops()
    }

    #[test]
    fn a_flushed_queue_must_reach_the_daemon_once_each_in_order_and_lose_nothing() {
        let judged = judge_queue_flushed(&flushed(&[1, 2], &[3, 4], &[1, 2, 3, 4], None));
        assert_eq!(judged.outcome, RowOutcome::Survived, "{judged:?}");
        // Negative controls: reordered, sent twice, one lost, no queue at all.
        let reordered = judge_queue_flushed(&flushed(&[1, 2], &[3, 4], &[1, 3, 2, 4], None));
        assert_eq!(reordered.outcome, RowOutcome::Silent);
        let twice = judge_queue_flushed(&flushed(&[1, 2], &[3], &[1, 2, 2, 3], None));
        assert_eq!(twice.outcome, RowOutcome::Silent);
        let lost = judge_queue_flushed(&flushed(&[1, 2], &[3], &[1, 3], Some(2)));
        assert_eq!(lost.outcome, RowOutcome::Surfaced);
        assert_eq!(
            judge_queue_flushed(&flushed(&[], &[3], &[3], None)).outcome,
            RowOutcome::Inconclusive
        );
    }
}
