//! Hop 2 rows (`reticle mcp` ↔ daemon, POST + SSE), one file each, and what H2.1 to H2.4
//! share: a fault surfaced then healed ([`Surfacing`], [`judge_surfaced_then_recovered`]). TCP
//! faults go through a fault proxy of the nemesis, each toxic confirmed before it counts. Every
//! judge reads its history alone: what a scenario learns elsewhere it records there first.

pub mod h2_1_stream_reset;
pub mod h2_2_blackholed_queue;
pub mod h2_3_post_leg_reset;
pub mod h2_4_squatter;
pub mod h2_5_catalogue_change;
pub mod h2_6_handshake_replayed;
pub mod h2_7_limits_on_the_link;

use reticle::mcp::jsonrpc::LostPopulation;

use crate::history::{History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::scenarios::agent::Agent;
use crate::scenarios::agent_kit::{
    answered_once_after_fault, call_under_fault, judge_surfacing, record_served_again,
    served_again, serves,
};
use crate::scenarios::proxied::ProxiedDaemon;

/// How the marked call of a hop 1 or 2 row must be answered, and what else can belie it.
struct Surfacing {
    /// The -32001 population it must be answered as.
    population: LostPopulation,
    /// What its failing answer must name.
    names: Vec<String>,
    /// What the harness saw that belies a surfaced answer, if anything: the row is then silent.
    belied: Option<String>,
    /// The nemesis the evidence names, when it is not the fault proxy the fault recorded.
    nemesis: Option<&'static str>,
}

impl Surfacing {
    /// A failing answer as the -32001 `population`, naming every one of `names`.
    fn answered(population: LostPopulation, names: &[&str]) -> Self {
        Self {
            population,
            names: names.iter().map(|n| n.to_string()).collect(),
            belied: None,
            nemesis: None,
        }
    }

    /// The same, belied by what `belied` says when the harness saw it.
    fn belied_by(self, belied: Option<String>) -> Self {
        Self { belied, ..self }
    }

    /// The same, its fault made by `nemesis` rather than a fault proxy.
    fn by(self, nemesis: &'static str) -> Self {
        Self {
            nemesis: Some(nemesis),
            ..self
        }
    }

    /// `verdict`, unless it is surfaced and the harness saw it belied: then silent.
    fn belie(&self, verdict: Judgement) -> Judgement {
        match &self.belied {
            Some(why) if verdict.outcome == RowOutcome::Surfaced => {
                Judgement::new(RowOutcome::Silent, why.clone())
            }
            _ => verdict,
        }
    }
}

/// Heals the link and records whether it then serves `agent` again (asked only when the fault
/// was established), as [`agent_kit::SERVED_AGAIN`].
async fn heal_and_serve(link: &ProxiedDaemon, history: &History, agent: &Agent, injected: bool) {
    link.heal(history).await;
    record_served_again(history, injected && serves(agent).await);
}

/// The call marked as under the fault ([`agent_kit::CALL_UNDER_FAULT`]) must be answered as
/// `surfacing` says; then the link must have served again ([`agent_kit::SERVED_AGAIN`]). With no call
/// marked, or none made there, the row could not get as far as its call ([`judge_surfacing`]).
/// A surfaced verdict that the harness saw belied is silent. The evidence names the nemesis
/// (the fault proxy the fault recorded, unless `surfacing` names another).
fn judge_surfaced_then_recovered(ops: &[Op], surfacing: &Surfacing) -> Judgement {
    let Some(marked) = call_under_fault(ops, "tools/call") else {
        return judge_surfacing(ops);
    };
    if let Err(unproven) = answered_once_after_fault(ops) {
        return unproven;
    }
    let Some(call) = marked else {
        return surfacing.belie(judge_surfacing(ops));
    };
    let names: Vec<&str> = surfacing.names.iter().map(String::as_str).collect();
    let verdict = judge::answer_names(ops, call, &names);
    if verdict.outcome != RowOutcome::Surfaced {
        return verdict;
    }
    let population = surfacing.population.as_str();
    let answered = judge::answers_to(ops, call);
    let said = answered
        .first()
        .map(|a| a.value["population"].clone())
        .unwrap_or_default();
    if said != population {
        return Judgement::new(
            RowOutcome::Silent,
            format!(
                "the call was answered as {said}, not {population}: {}",
                verdict.evidence
            ),
        );
    }
    if !served_again(ops) {
        return Judgement::new(
            RowOutcome::Silent,
            "the link never served again once the fault went",
        );
    }
    let nemesis = match surfacing.nemesis {
        Some(named) => named,
        None => judge::established_fault(ops)
            .ok()
            .and_then(|f| f.value["nemesis"].as_str())
            .unwrap_or("?"),
    };
    surfacing.belie(Judgement::new(
        RowOutcome::Surfaced,
        format!(
            "{} [{population}]; served again after (nemesis: {nemesis})",
            verdict.evidence
        ),
    ))
}
