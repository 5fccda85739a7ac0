//! The security rows as tests: each S row's scenario attacks the real binary from outside (a fake
//! `/status`, bad token material, unsafe state dirs, racing provisioners, a private config, a
//! capsule with a password, worst-case frames, a page on a foreign origin, two documents on one session id in Chromium, an MCP client past the endpoint's caps, a second agent on a leased session) and must meet its target.

mod common;

use common::row_meets_target;

#[tokio::test]
async fn s1_stop_signals_only_its_daemon() {
    row_meets_target("S1").await;
}

#[tokio::test]
async fn s2_bad_token_material_stops_serve() {
    row_meets_target("S2").await;
}

#[tokio::test]
async fn s3_the_state_dir_is_private() {
    row_meets_target("S3").await;
}

#[tokio::test]
async fn s4_the_token_file_is_created_once() {
    row_meets_target("S4").await;
}

#[tokio::test]
async fn s5_init_keeps_modes() {
    row_meets_target("S5").await;
}

#[tokio::test]
async fn s6_capsules_hold_no_secrets() {
    row_meets_target("S6").await;
}

#[tokio::test]
async fn s7_ring_memory_is_bounded() {
    row_meets_target("S7").await;
}

#[tokio::test]
async fn s8_foreign_pages_are_refused_on_every_route() {
    row_meets_target("S8").await;
}

#[tokio::test]
async fn s9_two_documents_on_one_session_id_are_kept_apart() {
    row_meets_target("S9").await;
}

/// S9's negative control (the gate runs it too): the stand-in bridge that lets a hello take a
/// live socket's session (the old behaviour) must score `silent`.
#[tokio::test]
async fn s9_control_a_silent_swap_scores_silent() {
    let controls = gates::controls::of_row("S9").await;
    assert!(!controls.is_empty(), "S9 has a control");
    for control in controls {
        assert!(control.went_red(), "{control:?}");
    }
}

#[tokio::test]
async fn s10_the_mcp_endpoint_is_bounded() {
    row_meets_target("S10").await;
}

#[tokio::test]
async fn s12_a_leased_session_refuses_a_second_agents_act_naming_the_holder() {
    row_meets_target("S12").await;
}

/// S12's negative control (the gate runs it too): the stand-in daemon that ignores leases must
/// score `silent`.
#[tokio::test]
async fn s12_control_a_daemon_ignoring_leases_scores_silent() {
    let controls = gates::controls::of_row("S12").await;
    assert!(!controls.is_empty(), "S12 has a control");
    for control in controls {
        assert!(control.went_red(), "{control:?}");
    }
}
