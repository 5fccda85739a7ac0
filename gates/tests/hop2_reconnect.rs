//! Hop 2 across a daemon's comings and goings: H2.4 a squatter on the port; H2.5 a daemon
//! restarted with another catalogue; H2.6 the handshake replayed into a restarted daemon. Each
//! test runs its row's gate scenario (`gates::rows::hop2`) and asserts the row meets its target;
//! its history judged again offline agrees, and with one fact edited goes silent.

mod common;

use serde_json::json;

#[tokio::test]
async fn h2_4_a_squatter_is_answered_within_a_second_named_and_left_behind_once_it_leaves() {
    let ran = common::row_meets_target("H2.4").await;
    rejudged_alike_and_an_edit_is_silent("H2.4", &ran);
}

#[tokio::test]
async fn h2_5_a_daemon_restarted_with_another_catalogue_is_announced_before_its_tools() {
    let ran = common::row_meets_target("H2.5").await;
    rejudged_alike_and_an_edit_is_silent("H2.5", &ran);
}

#[tokio::test]
async fn h2_6_a_call_after_the_daemon_is_killed_and_restarted_reaches_an_initialized_session() {
    let ran = common::row_meets_target("H2.6").await;
    rejudged_alike_and_an_edit_is_silent("H2.6", &ran);
}

/// Every row here is judged from its history alone (when `initialize` was answered, the notices
/// received, the instance that served): the live run's history judged again offline, as `reticle
/// gate analyze` does, gives the live judgement; with one recorded fact edited the row is silent:
/// `initialize` answered only once a daemon listened (H2.4), no `list_changed` (H2.5), a refusal
/// in the daemon's log (H2.6).
fn rejudged_alike_and_an_edit_is_silent(row: &str, ran: &gates::scenarios::Ran) {
    common::rejudged_alike_and_an_edit_is_silent(row, ran, |op| match (row, op.f.as_str()) {
        ("H2.4", "initialize_answered") => op.value["daemonExisted"] = json!(true),
        ("H2.5", "list_changed") => op.value["count"] = json!(0),
        ("H2.6", "after_restart") => op.value["callRefusedLogged"] = json!(true),
        _ => {}
    });
}
