//! Scenarios: for each inventory row, the code that provokes it against the real system and
//! records a history, and the judgement of that history. One module per hop (`stdio` hop 1,
//! `link` hop 2, `daemon` hop 3, `bridge` hop 4, `sdk` hop 5, `compat` the SDK compatibility matrix H5.6,
//! `traces` T1 to T4, `layers` L1, `security` S1 to S7, `cross_site` S8, `shared_session` S9, `mcp_limits` S10, `fuzz` S11, `leases` S12;
//! `verify_cli` the rig `reticle verify`'s tests share, and its honesty scenario V1;
//! `perf` P1 to P4 (the release figures); `flows` F1 to F3 (heal, grade, fresh resolve);
//! `durability` D1 (SIGKILL during `.reticle/` writes);
//! `toxic_effect` the effect each of H2.7's toxics must leave in its history; `traced` the tool
//! call and trace check of the hop 4 and 5 fault scenarios;
//! `agent` is the MCP client the hops 1 to 3 scenarios drive `reticle mcp` with, `proxied` a
//! daemon behind a fault proxy, `page` the daemon, fixture app and Chromium a page scenario
//! starts and whether its page's session is listed, `kit` what every scenario shares, `agent_kit`
//! what hops 1 to 3 share, `page_kit` what hops 4 and 5 share, `fault_trace` the trace check of a
//! daemon under a fault, `fault_segments` a history split at its faults); this one maps row ids to
//! scenarios (the [`IMPLEMENTED`] list and [`run`] come from one table, so they cannot drift).

pub mod agent;
pub mod agent_kit;
pub mod bridge;
pub mod compat;
pub mod cross_site;
pub mod daemon;
pub mod durability;
pub mod fault_segments;
pub mod fault_trace;
pub mod flows;
pub mod fuzz;
pub mod kit;
pub mod layers;
pub mod leases;
pub mod link;
pub mod mcp_limits;
pub mod page;
pub mod page_kit;
pub mod perf;
pub mod proxied;
pub mod sdk;
pub mod security;
pub mod shared_session;
pub mod stdio;
pub mod toxic_effect;
pub mod traced;
pub mod traces;
pub mod verify_cli;

use std::path::{Path, PathBuf};

use crate::history::History;
use crate::judge::{Judgement, RowOutcome};

/// What every scenario can use: the binary under test (a stand-in in a negative control).
#[derive(Debug, Clone)]
pub struct GateEnv {
    pub reticle: PathBuf,
}

/// `<env.reticle> mcp --port <port>` with a private state dir, for the scenarios that drive the proxy.
pub fn proxy_options(env: &GateEnv, port: u16, state_dir: &Path) -> harness::ProxyOptions {
    harness::ProxyOptions::new(port, state_dir).program(&env.reticle)
}

/// A finished scenario: what happened and what it proves.
#[derive(Debug, Clone)]
pub struct Ran {
    pub history: History,
    pub judgement: Judgement,
}

macro_rules! scenario_table {
    ($($id:literal => $scenario:path),* $(,)?) => {
        /// The rows that have a scenario.
        pub const IMPLEMENTED: &[&str] = &[$($id),*];

        /// Runs the scenario for `id`; a row without one is inconclusive, saying why.
        pub async fn run(id: &str, env: &GateEnv) -> Ran {
            match id {
                $($id => $scenario(env).await,)*
                other => pending(other),
            }
        }
    };
}

scenario_table! {
    "H1.1" => stdio::lsof_recipe_mid_session,
    "H1.2" => stdio::panic_in_request_handling,
    "H1.3" => stdio::wedge_past_the_budget,
    "H1.4" => stdio::stdin_closed_with_calls_in_flight,
    "H1.5" => stdio::garbage_on_stdin,
    "H2.1" => link::stream_reset_mid_call,
    "H2.2" => link::blackholed_daemon_queue,
    "H2.3" => link::post_leg_reset,
    "H2.4" => link::squatter_on_the_port,
    "H2.5" => link::catalogue_changes_across_a_restart,
    "H2.6" => link::handshake_replayed_after_restart,
    "H2.7" => link::limits_on_the_link,
    "H3.1" => daemon::serve_on_a_squatted_port,
    "H3.2" => daemon::stopped_daemon_status,
    "H3.3" => daemon::idle_while_attached,
    "H3.4" => daemon::idle_exit_is_reported,
    "H3.5" => daemon::survives_caller_group_sigterm,
    "H3.6" => daemon::sigkill_reads_died_silently,
    "H3.7" => daemon::racing_daemons,
    "H3.8" => daemon::port_held_by_a_connection,
    "H4.1" => bridge::version_mismatch,
    "H4.2" => bridge::another_projects_page,
    "H4.3" => bridge::tab_closed_mid_command,
    "H4.4" => bridge::reaped_session_is_revived,
    "H4.5" => bridge::opaque_origins_accepted,
    "H4.6" => bridge::hostile_frames,
    "H5.1" => sdk::reconnect_backs_off_quietly,
    "H5.2" => sdk::outage_warns_once,
    "H5.3" => sdk::offline_overflow_marks_the_gap,
    "H5.4" => sdk::sandboxed_iframe_starts,
    "H5.5" => sdk::stale_ref_is_refused,
    "H5.6" => compat::published_sdk_agrees,
    "T1" => traces::t1_one_root_per_call,
    "T2" => traces::t2_no_orphan_span,
    "T3" => traces::t3_settle_on_every_call,
    "T4" => traces::t4_no_failure_without_error,
    "L1" => layers::every_layer_has_a_gate,
    "S1" => security::stop_signals_only_its_daemon,
    "S2" => security::bad_token_stops_serve,
    "S3" => security::state_dir_is_private,
    "S4" => security::token_file_is_created_once,
    "S5" => security::init_keeps_modes,
    "S6" => security::capsules_hold_no_secrets,
    "S7" => security::ring_memory_is_bounded,
    "S8" => cross_site::foreign_pages_are_refused,
    "S9" => shared_session::shared_session_ids_are_kept_apart,
    "S10" => mcp_limits::mcp_endpoint_is_bounded,
    "S11" => fuzz::fuzz_holds,
    "P1" => perf::p1_call_round_trip,
    "P2" => perf::p2_list_round_trip,
    "P3" => perf::p3_proxy_memory,
    "P4" => perf::p4_daemon_memory,
    "S12" => leases::leased_session_refuses_other_agents,
    "V1" => verify_cli::browser_death_is_never_green,
    "F1" => flows::heal_never_guesses,
    "F2" => flows::assertion_free_never_yes,
    "F3" => flows::stale_never_replayed,
    "D1" => durability::sigkill_never_tears_a_file,
}

/// A row id with no scenario: every inventory row has one, so this is an id the table does not
/// know (a typo in `--only`, or a row added to the inventory before its scenario).
fn pending(id: &str) -> Ran {
    Ran {
        history: History::new(),
        judgement: Judgement::new(
            RowOutcome::Inconclusive,
            format!("no scenario yet: no scenario is registered for {id}"),
        ),
    }
}
