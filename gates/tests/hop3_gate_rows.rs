//! The gate's hop 3 rows as a test: every hop 3 row with a scenario meets its target and equals
//! its baseline (`common::row_meets_target`), the stand-in `serve` and `status` controls are
//! scored silent (the `status` one on every row that reads `status`), the proxy whose tools
//! refuse after warm-up goes red on H3.3, every row of the other hops that has a scenario has its own test, and the
//! inventory, the scenarios and `docs/system-map.md` agree on the set of row ids.

use std::collections::BTreeSet;

use gates::inventory::{Hop, INVENTORY, find};
use gates::judge::RowOutcome;
use gates::rows::IMPLEMENTED;

mod common;

/// Every implemented hop 3 row meets its target. The rows of hops 1, 2, 4 and 5 each run as their
/// own test beside the finer tests of their file (checked below), so that the slow scenarios (a
/// reconnect budget, a 5 s drain, Chromium) run in parallel and never twice.
#[tokio::test]
async fn every_implemented_hop_3_row_meets_its_target() {
    for id in IMPLEMENTED {
        let row = find(id).expect("a scenario's row is in the inventory");
        if row.hop != Hop::Daemon {
            continue;
        }
        let ran = common::row_meets_target(id).await;
        rejudged_alike_and_an_edit_differs(id, &ran);
    }
}

/// A hop 3 row's judge is a function of its history alone: the history the live run recorded,
/// judged again offline as `reticle gate analyze` does, gives the live judgement, and the same
/// history with what the judge reads edited (a `status` report that says running, a `serve` that
/// said started, another daemon instance, two listeners) gives another outcome.
fn rejudged_alike_and_an_edit_differs(id: &str, ran: &gates::scenarios::Ran) {
    let mut ops = common::rejudged_alike(id, ran);
    for op in ops.iter_mut() {
        let completion = op.op_type != gates::history::OpType::Invoke;
        match (id, op.f.as_str()) {
            ("H3.2" | "H3.4" | "H3.5" | "H3.6", "status") if completion => {
                op.value["stdout"] = serde_json::json!(r#"{"running":true}"#);
            }
            ("H3.1" | "H3.8", "serve") if completion => {
                op.op_type = gates::history::OpType::Ok;
                op.value["stdout"] = serde_json::json!("started Reticle daemon");
            }
            ("H3.3", "daemon_instance") => op.value["answeredBy"] = serde_json::json!("another"),
            ("H3.7", "serve") if completion => op.value["listeners"] = serde_json::json!(2),
            _ => {}
        }
    }
    let edited = gates::analyze::judge_history(id, &ops).expect("every hop 3 row is re-judged");
    assert_ne!(
        edited.outcome, ran.judgement.outcome,
        "{id}: an edited history judged alike: {edited:?}"
    );
}

#[tokio::test]
async fn the_stand_in_serve_control_is_scored_silent() {
    let control = gates::controls::stand_in_serve().await;
    assert_eq!(control.outcome, RowOutcome::Silent, "{control:?}");
}

#[tokio::test]
async fn the_stand_in_status_that_says_running_is_scored_silent() {
    let control =
        gates::controls::stand_in_status_says_running(&harness::binaries::reticle()).await;
    assert_eq!(control.outcome, RowOutcome::Silent, "{control:?}");
}

#[tokio::test]
async fn the_stand_in_status_goes_silent_on_every_row_that_reads_status() {
    for row in ["H3.4", "H3.5", "H3.6"] {
        let control =
            gates::controls::stand_in_status_says_running_in(&harness::binaries::reticle(), row)
                .await;
        assert_eq!(control.outcome, RowOutcome::Silent, "{control:?}");
    }
}

#[tokio::test]
async fn the_proxy_that_refuses_after_warm_up_goes_red_on_h3_3() {
    let control =
        gates::controls::stand_in_tools_refuse_after_warm_up(&harness::binaries::reticle(), "H3.3")
            .await;
    assert!(control.went_red(), "{control:?}");
    assert!(control.evidence.contains("stand-in"), "{control:?}");
}

#[test]
fn every_row_outside_hop_3_with_a_scenario_has_its_own_test() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests");
    let sources: String = std::fs::read_dir(dir)
        .expect("gates/tests exists")
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .collect();
    for id in IMPLEMENTED {
        let row = find(id).expect("a scenario's row is in the inventory");
        if row.hop != Hop::Daemon {
            let call = format!("row_meets_target(\"{id}\")");
            assert!(
                sources.contains(&call),
                "{id} has a gate scenario but no test under gates/tests/ calls {call}"
            );
        }
    }
}

#[test]
fn the_doc_the_data_and_the_scenarios_agree_on_row_ids() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/system-map.md"
    ))
    .expect("docs/system-map.md exists");
    let data: BTreeSet<&str> = INVENTORY.iter().map(|r| r.id).collect();
    let in_doc: BTreeSet<&str> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("| "))
        .filter_map(|l| l.split(" |").next())
        .filter(|id| data.contains(id))
        .collect();
    assert_eq!(
        in_doc, data,
        "docs/system-map.md must list every inventory row"
    );
    for id in IMPLEMENTED {
        assert!(data.contains(id), "scenario {id} has no inventory row");
    }
    for line in doc.lines().filter(|l| l.starts_with("| ")) {
        let id = line[2..].split(" |").next().unwrap_or("");
        if data.contains(id) {
            let pending = line.contains("no scenario yet");
            assert_eq!(
                pending,
                !IMPLEMENTED.contains(&id),
                "{id}: the doc says {} but the scenario table says {}",
                if pending { "no scenario yet" } else { "scored" },
                if IMPLEMENTED.contains(&id) {
                    "scored"
                } else {
                    "no scenario yet"
                }
            );
        }
    }
}
