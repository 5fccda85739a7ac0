//! The kits the rows' scenarios are built from: the MCP client and what hops 1 to 3 share
//! (`agent`, `agent_kit`, `proxied`), the page stack hops 4 and 5 and the flow rows share
//! (`page`, `page_kit`, `traced`), the `reticle verify` rig, and what every scenario shares
//! (`kit`, [`GateEnv`], [`Ran`]). No row lives here: each is a file of [`crate::rows`].

pub mod agent;
pub mod agent_kit;
pub mod fault_segments;
pub mod fault_trace;
pub mod kit;
pub mod memory;
pub mod page;
pub mod page_kit;
pub mod proxied;
pub mod toxic_effect;
pub mod traced;
pub mod verify_rig;

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
