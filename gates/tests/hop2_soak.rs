//! A short soak of one held-open agent link: every call served, no link drop, one daemon, with
//! gaps that outlast every bound acting on an idle link. Its negative control runs the same soak
//! with the daemon killed and replaced between rounds, and the recorder must see it: what the
//! first test claims is absent is something the recorder can see.

use std::time::Duration;

use gates::history::{Actor, OpType};
use gates::judge::RowOutcome;
use gates::scenarios::GateEnv;
use gates::soak::{self, Between, Plan, Soak, hazards};

fn env() -> GateEnv {
    GateEnv {
        reticle: harness::binaries::reticle(),
    }
}

/// The whole record, for a failing assertion.
fn evidence(soak: &Soak) -> String {
    format!(
        "{:?}\nrounds: {:#?}\nhistory:\n{}",
        soak.judgement(),
        soak.rounds,
        soak.history
            .ops()
            .iter()
            .map(|op| serde_json::to_string(op).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    )
}

#[tokio::test]
async fn a_held_open_link_serves_every_call_across_idle_gaps_with_no_drop() {
    // Half a second past the longest bound that acts on an idle link.
    let longest = hazards().iter().map(|h| h.bound_ms).max().unwrap();
    let plan = Plan {
        rounds: 3,
        calls: 6,
        idle: Duration::from_millis(longest + 500),
        between: Between::Nothing,
    };
    assert_eq!(
        plan.straddled(),
        hazards(),
        "every gap outlasts every bound"
    );
    let soak = soak::run(&env(), plan, |_| {}).await;
    let judgement = soak.judgement();
    assert_eq!(
        judgement.outcome,
        RowOutcome::Survived,
        "{}",
        evidence(&soak)
    );
    let s = &soak.summary;
    assert_eq!(s.calls, 18, "{}", evidence(&soak));
    assert_eq!(s.answer_rate, 1.0, "{}", evidence(&soak));
    assert_eq!(s.ok_rate, 1.0, "{}", evidence(&soak));
    assert_eq!(s.link_drops, 0, "{}", evidence(&soak));
    assert_eq!(
        (s.instances, s.instance_changes),
        (1, 0),
        "{}",
        evidence(&soak)
    );
}

#[tokio::test]
async fn the_recorder_sees_a_daemon_killed_between_rounds() {
    let plan = Plan {
        rounds: 3,
        calls: 3,
        // The gap is not what this control is about.
        idle: Duration::from_millis(200),
        between: Between::KillDaemon,
    };
    let soak = soak::run(&env(), plan, |_| {}).await;
    let kills: Vec<_> = soak
        .history
        .ops()
        .into_iter()
        .filter(|op| op.actor == Actor::Nemesis && op.f == gates::fault::KILL_DAEMON)
        .collect();
    assert_eq!(
        kills.len(),
        2,
        "inconclusive: the daemon was not killed between every round\n{}",
        evidence(&soak)
    );
    assert!(
        kills.iter().all(|k| k.op_type == OpType::Ok),
        "inconclusive: a kill or its replacement could not be established\n{}",
        evidence(&soak)
    );
    let s = &soak.summary;
    assert!(
        s.link_drops >= 2,
        "each kill is a drop: {}",
        evidence(&soak)
    );
    assert_eq!(s.instance_changes, 2, "{}", evidence(&soak));
    assert_eq!(s.instances, 3, "{}", evidence(&soak));
    assert_ne!(
        soak.judgement().outcome,
        RowOutcome::Survived,
        "a soak with drops must not read as clean: {}",
        evidence(&soak)
    );
}
