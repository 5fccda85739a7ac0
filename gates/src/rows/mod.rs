//! The row table ([`ROWS`]): each inventory row id maps to one file, `rows/<family>/<id>_*.rs`,
//! holding its scenario, its judge and the unit test of the judge's control; a family's `mod.rs`
//! holds what its rows share. `reticle gate` runs rows from the table, `reticle gate analyze`
//! re-judges stored histories with it; nothing else maps a row id to code.

pub mod durability;
pub mod flows;
pub mod hop1;
pub mod hop2;
pub mod hop3;
pub mod hop4;
pub mod hop5;
pub mod layers;
pub mod perf;
pub mod placement;
pub mod security;
pub mod traces;
pub mod verify;

use std::future::Future;
use std::pin::Pin;

use crate::controls::StandIn;
use crate::history::{History, Op};
use crate::judge::{Judgement, RowOutcome};
use crate::scenarios::{GateEnv, Ran};

/// A row's scenario as it runs: started against the gate's environment, it ends judged.
pub type ScenarioRun<'a> = Pin<Box<dyn Future<Output = Ran> + 'a>>;

/// How one row is provoked, judged and controlled.
#[derive(Debug, Clone, Copy)]
pub struct RowGate {
    /// The inventory row id.
    pub id: &'static str,
    /// The source file that holds the row's scenario and judge (`file!()`), named for its id.
    pub file: &'static str,
    /// Provokes the row against the real system and judges what it recorded.
    pub scenario: for<'a> fn(&'a GateEnv) -> ScenarioRun<'a>,
    /// The row's judge: a function of the history alone, so a stored run can be judged again.
    pub judge: fn(&[Op]) -> Judgement,
    /// The stand-ins that break the row's promise, each of which its judge must call red.
    pub controls: &'static [StandIn],
}

/// Every row of the inventory, in its order.
pub const ROWS: &[RowGate] = &[
    hop1::h1_1_lsof_recipe::H1_1,
    hop1::h1_2_panic_in_request::H1_2,
    hop1::h1_3_wedged_port::H1_3,
    hop1::h1_4_stdin_closed::H1_4,
    hop1::h1_5_garbage_on_stdin::H1_5,
    hop2::h2_1_stream_reset::H2_1,
    hop2::h2_2_blackholed_queue::H2_2,
    hop2::h2_3_post_leg_reset::H2_3,
    hop2::h2_4_squatter::H2_4,
    hop2::h2_5_catalogue_change::H2_5,
    hop2::h2_6_handshake_replayed::H2_6,
    hop2::h2_7_limits_on_the_link::H2_7,
    hop3::h3_1_squatted_serve::H3_1,
    hop3::h3_2_stopped_status::H3_2,
    hop3::h3_3_idle_while_attached::H3_3,
    hop3::h3_4_idle_exit::H3_4,
    hop3::h3_5_caller_group_sigterm::H3_5,
    hop3::h3_6_sigkill::H3_6,
    hop3::h3_7_racing_daemons::H3_7,
    hop3::h3_8_connection_on_the_port::H3_8,
    hop4::h4_1_version_mismatch::H4_1,
    hop4::h4_2_another_projects_page::H4_2,
    hop4::h4_3_tab_closed_mid_command::H4_3,
    hop4::h4_4_reaped_session::H4_4,
    hop4::h4_5_opaque_origins::H4_5,
    hop4::h4_6_hostile_frames::H4_6,
    hop5::h5_1_reconnect_backoff::H5_1,
    hop5::h5_2_outage_warns_once::H5_2,
    hop5::h5_3_offline_overflow::H5_3,
    hop5::h5_4_sandboxed_iframe::H5_4,
    hop5::h5_5_stale_ref::H5_5,
    hop5::h5_6_published_sdk::H5_6,
    hop5::h5_7_driven_browser_killed::H5_7,
    hop5::h5_8_driven_tab_hangs::H5_8,
    traces::t1_one_root_per_call::T1,
    traces::t2_no_orphan_span::T2,
    traces::t3_settle_on_every_call::T3,
    traces::t4_no_failure_without_error::T4,
    layers::l1_every_layer_has_a_gate::L1,
    security::s1_stop_signals_only_its_daemon::S1,
    security::s2_bad_token_stops_serve::S2,
    security::s3_state_dir_is_private::S3,
    security::s4_token_file_is_created_once::S4,
    security::s5_init_keeps_modes::S5,
    security::s6_capsules_hold_no_secrets::S6,
    security::s7_ring_memory_is_bounded::S7,
    security::s8_cross_site::S8,
    security::s9_shared_session::S9,
    security::s10_mcp_limits::S10,
    security::s11_fuzz::S11,
    perf::p1_call_round_trip::P1,
    perf::p2_list_round_trip::P2,
    perf::p3_proxy_memory::P3,
    perf::p4_daemon_memory::P4,
    security::s12_leases::S12,
    verify::v1_browser_death_is_never_green::V1,
    flows::f1_heal_never_guesses::F1,
    flows::f2_assertion_free_never_yes::F2,
    flows::f3_stale_never_replayed::F3,
    durability::d1_sigkill_never_tears_a_file::D1,
];

/// The ids of the rows that have a scenario (every row of [`ROWS`]).
pub const IMPLEMENTED: &[&str] = &ids::<{ ROWS.len() }>();

const fn ids<const N: usize>() -> [&'static str; N] {
    let mut out = [""; N];
    let mut n = 0;
    while n < N {
        out[n] = ROWS[n].id;
        n += 1;
    }
    out
}

/// The table's entry for `id`.
pub fn find(id: &str) -> Option<&'static RowGate> {
    ROWS.iter().find(|gate| gate.id == id)
}

/// Runs the scenario for `id`; an id the table does not know is inconclusive, saying why.
pub async fn run(id: &str, env: &GateEnv) -> Ran {
    match find(id) {
        Some(gate) => (gate.scenario)(env).await,
        None => pending(id),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_holds_every_inventory_row_once_in_its_order() {
        let table: Vec<&str> = ROWS.iter().map(|gate| gate.id).collect();
        let inventory: Vec<&str> = crate::inventory::INVENTORY.iter().map(|r| r.id).collect();
        assert_eq!(table, inventory);
        assert_eq!(IMPLEMENTED, inventory.as_slice());
        assert!(find("H9.9").is_none());
    }
}
