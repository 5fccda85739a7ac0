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
//! daemon under a fault, `fault_segments` a history split at its faults). The row table that maps ids to them is
//! [`crate::rows`].

pub mod agent;
pub mod agent_kit;
pub mod durability;
pub mod fault_segments;
pub mod fault_trace;
pub mod flows;
pub mod kit;
pub mod layers;
pub mod memory;
pub mod page;
pub mod page_kit;
pub mod perf;
pub mod proxied;
pub mod toxic_effect;
pub mod traced;
pub mod traces;
pub mod verify_cli;

use std::path::{Path, PathBuf};

use crate::history::History;
use crate::judge::Judgement;

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
