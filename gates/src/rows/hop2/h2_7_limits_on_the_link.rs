//! H2.7: rounds of toxics on each direction of the link: every call answered exactly once,
//! degrading toxics cost nothing, cutting ones are answered by name. Its rounds, scenario,
//! judge and the unit tests of that judge.

use std::time::Duration;

use harness::OwnedDaemon;
use serde_json::{Value, json};
use toxics::toxic::{Bandwidth, Latency, LimitData, ResetPeer, Slicer, SlowClose, Timeout};
use toxics::{Direction, ToxicSpec};

use crate::controls::StandIn;
use crate::fault;
use crate::history::{Actor, History, Op, OpType};
use crate::judge::{self, Judgement, RowOutcome, one_line};
use crate::rows::RowGate;
use crate::scenarios::agent::{CALL_BOUND, RawAgent};
use crate::scenarios::kit::{BOUND, judged};
use crate::scenarios::proxied::ProxiedDaemon;
use crate::scenarios::toxic_effect;
use crate::scenarios::{GateEnv, Ran};

/// What a toxic does to the calls under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// It slows or reshapes the bytes: every call under it must succeed.
    Degrades,
    /// It cuts or stops the link: every call must still be answered exactly once, by its result
    /// or by a -32001 naming the loss.
    Cuts,
}

impl Effect {
    fn word(self) -> &'static str {
        match self {
            Effect::Degrades => "degrades",
            Effect::Cuts => "cuts",
        }
    }
}

/// One toxic on the link for a round of calls.
#[derive(Debug, Clone)]
pub struct Round {
    pub spec: ToxicSpec,
    pub effect: Effect,
    /// Calls made while it is installed.
    pub calls: usize,
}

impl Round {
    fn new(spec: ToxicSpec, effect: Effect, calls: usize) -> Self {
        Self {
            spec,
            effect,
            calls,
        }
    }
}

/// The limits of H2.7 on each direction: latency with jitter, bandwidth, slicer, slow_close and
/// limit_data. `limit_data` is sized to bite: downstream it ends each stream after its handshake
/// and an answer or two (a `/status` answer, under 400 bytes, still fits), upstream it cuts every
/// POST mid-request (a `GET`, under 100 bytes, still fits).
pub fn limits() -> Vec<Round> {
    let mut rounds = Vec::new();
    for direction in Direction::ALL {
        let on = |spec: ToxicSpec| spec.stream(direction);
        rounds.push(Round::new(
            on(ToxicSpec::new(Latency {
                latency: 60,
                jitter: 40,
            })),
            Effect::Degrades,
            4,
        ));
        rounds.push(Round::new(
            on(ToxicSpec::new(Bandwidth { rate: 8 })),
            Effect::Degrades,
            4,
        ));
        rounds.push(Round::new(
            on(ToxicSpec::new(Slicer {
                average_size: 8,
                size_variation: 4,
                delay: 200,
            })),
            Effect::Degrades,
            4,
        ));
        rounds.push(Round::new(
            on(ToxicSpec::new(SlowClose { delay: 300 })),
            Effect::Degrades,
            4,
        ));
        let bytes = match direction {
            Direction::Downstream => 1000,
            Direction::Upstream => 128,
        };
        rounds.push(Round::new(
            on(ToxicSpec::new(LimitData { bytes })),
            Effect::Cuts,
            6,
        ));
    }
    rounds
}

/// Every toxic on each direction: the [`limits`] plus the two that stop the link outright,
/// `timeout` 0 (a blackhole; one call, since a POST into it waits out its 10 s bound) and
/// `reset_peer`.
pub fn every_toxic() -> Vec<Round> {
    let mut rounds = limits();
    for direction in Direction::ALL {
        rounds.push(Round::new(
            ToxicSpec::new(Timeout { timeout: 0 }).stream(direction),
            Effect::Cuts,
            1,
        ));
        rounds.push(Round::new(
            ToxicSpec::new(ResetPeer { timeout: 0 }).stream(direction),
            Effect::Cuts,
            2,
        ));
    }
    rounds
}

/// H2.7: each of latency (with jitter), bandwidth, slicer, slow_close and limit_data on each
/// direction of the link, a few calls under each, then healed and a call after. Every call must
/// be answered exactly once (counted on the raw stream); under the degrading toxics every call
/// must succeed; under limit_data a call may lose its answer but must then be answered -32001;
/// after each heal the link must serve again.
pub async fn limits_on_the_link(env: &GateEnv) -> Ran {
    rounds_on_the_link(env, &limits(), CALL_BOUND).await
}

/// Runs `rounds` on the MCP link, each call waited for at most `patience`. The negative control
/// runs this with a stand-in and a short patience.
pub async fn rounds_on_the_link(env: &GateEnv, rounds: &[Round], patience: Duration) -> Ran {
    let history = History::new();
    let (_state, link, options) = match ProxiedDaemon::start_for(
        env,
        &history,
        OwnedDaemon::builder(),
        fault::TOXIC,
        judge_rounds,
    )
    .await
    {
        Ok(opened) => opened,
        Err(ran) => return ran,
    };
    let options = options.env(reticle::config::env::QUEUE_WAIT_MS, "5000");
    let mut raw = RawAgent::start(&history, options);
    let call = async |raw: &mut RawAgent, n: usize| -> Option<Value> {
        if n.is_multiple_of(2) {
            raw.call_sessions(patience).await
        } else {
            raw.call("tools/list", json!({}), patience).await
        }
    };
    let served =
        |answer: &Option<Value>| answer.as_ref().is_some_and(|a| a.get("result").is_some());
    // Warm-up: the link serves a listing and a call before any toxic (each attempt recorded; a
    // hang ends it).
    let ready = raw.initialize(patience).await.is_some()
        && served(&call(&mut raw, 1).await)
        && raw.call_until_served(patience).await;
    if ready {
        'rounds: for round in rounds {
            let name = round.spec.resolved_name();
            let installed = link.proxy.inject(&round.spec).await;
            history.fault(
                fault::TOXIC,
                installed.is_ok(),
                json!({ "toxic": name, "spec": round.spec, "effect": round.effect.word(),
                        "nemesis": link.nemesis.describe(), "error": installed.as_ref().err() }),
            );
            if installed.is_err() {
                break;
            }
            for n in 0..round.calls {
                if call(&mut raw, n).await.is_none() {
                    break 'rounds;
                }
            }
            if !link.heal(&history).await {
                break;
            }
            if !raw.call_until_served(patience).await {
                break;
            }
        }
    }
    raw.close_stdin();
    raw.wait_exit(BOUND).await;
    raw.settle();
    link.close(&history).await;
    judged(history, judge_rounds)
}

/// Judges a history of rounds ([`judge_each_round`]), naming the nemesis the first toxic
/// recorded, so the evidence read offline is the live run's.
pub fn judge_rounds(ops: &[Op]) -> Judgement {
    let verdict = judge_each_round(ops);
    let nemesis = ops
        .iter()
        .find(|o| o.actor == Actor::Nemesis && o.f == fault::TOXIC)
        .and_then(|o| o.value["nemesis"].as_str());
    match nemesis {
        Some(nemesis) => Judgement::new(
            verdict.outcome,
            format!("{} (nemesis: {nemesis})", verdict.evidence),
        ),
        None => verdict,
    }
}

/// Judges a history of rounds: exactly once first, then each round by its toxic's effect, then
/// the link serving again after each heal.
fn judge_each_round(ops: &[Op]) -> Judgement {
    let calls = match judge::exactly_once(ops) {
        Ok(calls) => calls,
        Err(hang) => return hang,
    };
    let faults: Vec<&Op> = ops
        .iter()
        .filter(|o| o.actor == Actor::Nemesis && o.f == fault::TOXIC)
        .collect();
    if faults.is_empty() {
        return Judgement::new(RowOutcome::Inconclusive, "no toxic was installed");
    }
    let cuts = cuts_per_toxic(ops);
    let mut effects = Vec::new();
    for (i, fault) in faults.iter().enumerate() {
        let name = fault.value["toxic"].as_str().unwrap_or("?");
        if fault.op_type != OpType::Ok {
            return Judgement::new(
                RowOutcome::Inconclusive,
                format!(
                    "toxic {name} could not be established: {}",
                    judge::text(&fault.value)
                ),
            );
        }
        let end = faults.get(i + 1).map(|f| f.index).unwrap_or(usize::MAX);
        let heal = ops.iter().find(|o| {
            o.index > fault.index
                && o.index < end
                && o.actor == Actor::Nemesis
                && o.f == fault::HEAL
        });
        let Some(heal) = heal.filter(|h| h.op_type == OpType::Ok) else {
            return Judgement::new(
                RowOutcome::Inconclusive,
                format!("toxic {name} was never confirmed removed"),
            );
        };
        let invokes = |from: usize, to: usize| {
            ops.iter().filter(move |o| {
                o.index > from
                    && o.index < to
                    && o.actor == Actor::Client
                    && o.op_type == OpType::Invoke
            })
        };
        let mut under = Vec::new();
        for invoke in invokes(fault.index, heal.index) {
            let answer = judge::answers_to(ops, invoke);
            let Some(&answer) = answer.first() else {
                continue;
            };
            under.push(toxic_effect::Under { invoke, answer });
            let id = judge::call_id(invoke).cloned().unwrap_or_default();
            // Every answer here is a result (`ok`) or an error, definite (`fail`) or not
            // (`info`: a -32001 whose call may have run).
            match (fault.value["effect"].as_str(), answer.op_type) {
                (_, OpType::Ok) => {}
                (Some("cuts"), _)
                    if answer.value["code"] == reticle::mcp::jsonrpc::TRANSPORT_LOST => {}
                (Some("cuts"), _) => {
                    return Judgement::new(
                        RowOutcome::Silent,
                        format!(
                            "under {name}, `{}` {id} failed without naming the link: {}",
                            invoke.f,
                            one_line(&judge::text(&answer.value))
                        ),
                    );
                }
                _ => {
                    return Judgement::new(
                        RowOutcome::Surfaced,
                        format!(
                            "under {name}, `{}` {id} failed: {}",
                            invoke.f,
                            one_line(&judge::text(&answer.value))
                        ),
                    );
                }
            }
        }
        match toxic_effect::shown(fault, &under) {
            Ok(seen) => effects.push(seen),
            Err(why) => {
                return Judgement::new(
                    RowOutcome::Inconclusive,
                    format!(
                        "toxic {name} left no effect in the history, so its round proves nothing: {why}"
                    ),
                );
            }
        }
        let back = invokes(heal.index, end).any(|invoke| {
            judge::answers_to(ops, invoke)
                .first()
                .is_some_and(|a| a.op_type == OpType::Ok)
        });
        if !back {
            return Judgement::new(
                RowOutcome::Silent,
                format!("the link never served again after {name} was removed"),
            );
        }
    }
    let cut: Vec<String> = cuts
        .iter()
        .map(|(name, lost, of)| format!("{name} {lost}/{of}"))
        .collect();
    Judgement::new(
        RowOutcome::Survived,
        format!(
            "{} toxics, {calls} calls, each answered exactly once; every call under a degrading toxic succeeded; answered -32001 under a cutting one: {}; the link served after every heal; every toxic's effect seen ({})",
            faults.len(),
            cut.join(", "),
            effects.join("; ")
        ),
    )
}

/// For each cutting toxic in a history of rounds: its name, how many of the calls under it were
/// answered -32001, and how many calls were made under it.
pub fn cuts_per_toxic(ops: &[Op]) -> Vec<(String, usize, usize)> {
    let faults: Vec<&Op> = ops
        .iter()
        .filter(|o| o.actor == Actor::Nemesis && o.f == fault::TOXIC)
        .collect();
    let mut cuts = Vec::new();
    for (i, fault) in faults.iter().enumerate() {
        if fault.value["effect"] != "cuts" {
            continue;
        }
        let end = faults.get(i + 1).map(|f| f.index).unwrap_or(usize::MAX);
        let heal = ops
            .iter()
            .find(|o| {
                o.index > fault.index
                    && o.index < end
                    && o.actor == Actor::Nemesis
                    && o.f == fault::HEAL
            })
            .map(|h| h.index)
            .unwrap_or(end);
        let under: Vec<&Op> = ops
            .iter()
            .filter(|o| {
                o.index > fault.index
                    && o.index < heal
                    && o.actor == Actor::Client
                    && o.op_type == OpType::Invoke
            })
            .collect();
        let lost = under
            .iter()
            .filter(|invoke| {
                judge::answers_to(ops, invoke).first().is_some_and(|a| {
                    a.op_type != OpType::Ok
                        && a.value["code"] == reticle::mcp::jsonrpc::TRANSPORT_LOST
                })
            })
            .count();
        let name = fault.value["toxic"].as_str().unwrap_or("?").to_string();
        cuts.push((name, lost, under.len()));
    }
    cuts
}

/// H2.7 in the row table.
pub const H2_7: RowGate = RowGate {
    id: "H2.7",
    file: file!(),
    scenario: |env| Box::pin(limits_on_the_link(env)),
    judge: judge_rounds,
    controls: &[
        StandIn::McpSwallowsCalls,
        StandIn::ToolsRefuseAfterWarmUp,
        StandIn::ToolsRefuseAfterWarmUp,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;

    /// A history of rounds, built by hand: (toxic, effect, answers under it, answer after heal).
    fn rounds(spec: &[(&str, &str, &[OpType], Option<OpType>)]) -> Vec<Op> {
        let h = History::new();
        let mut id = 0;
        let mut call = |h: &History, answer: Option<OpType>, code: i64| {
            id += 1;
            h.invoke("tools/call", json!({ "id": id }));
            if let Some(answer) = answer {
                h.complete(
                    answer,
                    "tools/call",
                    json!({ "id": id, "code": code, "message": "m" }),
                );
            }
        };
        call(&h, Some(OpType::Ok), 0);
        for (toxic, effect, under, after) in spec {
            let (kind, stream) = toxic.rsplit_once('_').unwrap_or((toxic, "downstream"));
            let spec =
                super::toxic_effect::spec_json(kind, stream, json!({ "latency": 0, "jitter": 0 }));
            h.fault(
                fault::TOXIC,
                true,
                json!({ "toxic": toxic, "effect": effect, "spec": spec }),
            );
            for answer in *under {
                let code = if *answer == OpType::Ok { 0 } else { -32001 };
                call(&h, Some(*answer), code);
            }
            h.record(Actor::Nemesis, OpType::Ok, "heal", json!({}));
            call(&h, *after, 0);
        }
        h.ops()
    }

    #[test]
    fn a_degrading_toxic_must_cost_nothing_and_a_cutting_one_must_be_answered_by_name() {
        let ok = rounds(&[
            (
                "latency_upstream",
                "degrades",
                &[OpType::Ok, OpType::Ok],
                Some(OpType::Ok),
            ),
            (
                "limit_data_downstream",
                "cuts",
                &[OpType::Ok, OpType::Fail],
                Some(OpType::Ok),
            ),
        ]);
        let verdict = judge_rounds(&ok);
        assert_eq!(verdict.outcome, RowOutcome::Survived, "{verdict:?}");
        assert!(
            verdict.evidence.contains("limit_data_downstream 1/2"),
            "{verdict:?}"
        );
        assert_eq!(
            cuts_per_toxic(&ok),
            [("limit_data_downstream".to_string(), 1, 2)]
        );

        // A -32001 whose call may have run is recorded `info`: still an answer, naming the link.
        let unknown = rounds(&[(
            fault::RESET_PEER_DOWNSTREAM,
            "cuts",
            &[OpType::Info, OpType::Fail, OpType::Ok],
            Some(OpType::Ok),
        )]);
        let verdict = judge_rounds(&unknown);
        assert_eq!(verdict.outcome, RowOutcome::Survived, "{verdict:?}");
        assert_eq!(
            cuts_per_toxic(&unknown),
            [("reset_peer_downstream".to_string(), 2, 3)]
        );

        let failed = rounds(&[(
            "slicer_downstream",
            "degrades",
            &[OpType::Fail],
            Some(OpType::Ok),
        )]);
        assert_eq!(judge_rounds(&failed).outcome, RowOutcome::Surfaced);

        let hung = rounds(&[("bandwidth_upstream", "degrades", &[OpType::Ok], None)]);
        assert_eq!(judge_rounds(&hung).outcome, RowOutcome::Silent);

        let dead = rounds(&[(
            fault::RESET_PEER_UPSTREAM,
            "cuts",
            &[OpType::Fail],
            Some(OpType::Fail),
        )]);
        let verdict = judge_rounds(&dead);
        assert_eq!(verdict.outcome, RowOutcome::Silent);
        assert!(
            verdict.evidence.contains("never served again"),
            "{verdict:?}"
        );
    }

    #[test]
    fn an_uninstalled_toxic_proves_nothing_and_no_toxic_at_all_too() {
        let h = History::new();
        h.fault(
            fault::TOXIC,
            false,
            json!({ "toxic": "latency_downstream", "error": "HTTP 500" }),
        );
        assert_eq!(judge_rounds(&h.ops()).outcome, RowOutcome::Inconclusive);
        assert_eq!(
            judge_rounds(&History::new().ops()).outcome,
            RowOutcome::Inconclusive
        );
    }
}
