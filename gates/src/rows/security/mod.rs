//! Security rows (S1 to S12), one file each, and what S1 to S7 share: CLI calls recorded as
//! client calls, ending a daemon, whether a page is admitted, file modes. Each scenario attacks
//! the real binary from outside, as another local process or a page would; each judge has unit
//! tests feeding it the history the old behaviour produced, which it must score `silent`.

pub mod s10_mcp_limits;
pub mod s11_fuzz;
pub mod s12_leases;
pub mod s1_stop_signals_only_its_daemon;
pub mod s2_bad_token_stops_serve;
pub mod s3_state_dir_is_private;
pub mod s4_token_file_is_created_once;
pub mod s5_init_keeps_modes;
pub mod s6_capsules_hold_no_secrets;
pub mod s7_ring_memory_is_bounded;
pub mod s8_cross_site;
pub mod s9_shared_session;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use harness::cli::{self, Ran as CliRan};
use harness::poll;
use harness::wire_page::WirePage;
use serde_json::json;

use crate::history::{Actor, History, Op};
use crate::scenarios::GateEnv;
use crate::scenarios::kit;

const BOUND: Duration = Duration::from_secs(15);

/// How long a page that should be refused gets to show up as a session anyway.
const ADMISSION_BOUND: Duration = Duration::from_secs(2);

/// Runs `reticle <args>` with `state` as its state dir (none: `RETICLE_STATE_DIR` removed), `set`
/// added to and `removed` taken out of its environment, recorded as the client call `f`.
async fn call(
    history: &History,
    env: &GateEnv,
    f: &str,
    state: Option<&Path>,
    args: &[&str],
    set: &[(&str, &str)],
    removed: &[&str],
) -> CliRan {
    history.invoke(f, json!({ "args": args, "env": set, "removed": removed }));
    let mut command = cli::command_with(&env.reticle, state.unwrap_or(Path::new("")), args);
    if state.is_none() {
        command.env_remove(reticle::config::env::STATE_DIR);
    }
    for (key, value) in set {
        command.env(key, value);
    }
    for key in removed {
        command.env_remove(key);
    }
    let ran = cli::run_command(command).await;
    kit::complete_cli(history, f, &ran);
    ran
}

/// Ends whatever Reticle daemon a case left on `port` (not recorded: cleanup, not evidence).
async fn end_daemon(env: &GateEnv, port: u16) {
    if reticle::probe::fetch_status(port, Duration::from_millis(500))
        .await
        .is_some()
    {
        let scratch = tempfile::tempdir().ok();
        if let Some(scratch) = scratch {
            let _ = cli::run_with(
                &env.reticle,
                scratch.path(),
                &["kill", "--port", &port.to_string()],
            )
            .await;
        }
    }
}

/// The origin the probing pages claim: a web app on loopback, as a page in a browser would.
const PAGE_ORIGIN: &str = "http://127.0.0.1:5173";

/// Whether a page sending `token` (none: no token at all) becomes a session of the daemon on
/// `port` within [`ADMISSION_BOUND`].
async fn admits(port: u16, session: &str, token: Option<&str>) -> bool {
    let Ok(page) = WirePage::open(port, Some(PAGE_ORIGIN)).await else {
        return false;
    };
    page.hello(session, token).await;
    let admitted = poll::within(ADMISSION_BOUND, async || {
        let status = reticle::probe::fetch_status(port, Duration::from_millis(500)).await?;
        status
            .sessions
            .iter()
            .any(|s| s.id == session)
            .then_some(())
    })
    .await
    .is_some();
    page.close().await;
    admitted
}

fn observed<'a>(ops: &'a [Op], f: &str) -> Vec<&'a Op> {
    ops.iter()
        .filter(|o| o.actor == Actor::Harness && o.f == f)
        .collect()
}

fn mode_of(path: &Path) -> Option<u32> {
    std::fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o777)
}

#[cfg(test)]
mod test_history {
    //! The histories the judges' unit tests build: a fault, and a CLI call that said `said`.
    use serde_json::Value;

    use super::*;
    use crate::history::OpType;

    pub(super) fn fault(history: &History, f: &str, detail: Value) {
        history.fault(f, true, detail);
    }

    pub(super) fn cli(history: &History, f: &str, ok: bool, said: &str) {
        history.invoke(f, json!({}));
        let op = if ok { OpType::Ok } else { OpType::Fail };
        history.complete(
            op,
            f,
            json!({ "code": if ok { 0 } else { 1 }, "stdout": said, "stderr": "" }),
        );
    }
}
