//! A daemon behind a fault proxy, as the hop 1 and 2 scenarios and the chaos gate use it: the
//! harness's daemon with a [`LinkProxy`] of the [`Nemesis`] in front, toxics put on only once
//! confirmed, every heal recorded, and T1 to T4 checked in its trace while the transport breaks
//! ([`super::fault_trace::TRACE_UNDER_FAULTS`]). It injects, heals and records; it must not judge.

use std::time::Duration;

use harness::{OwnedDaemon, OwnedDaemonBuilder, ProxyOptions};
use serde_json::{Value, json};
use tempfile::TempDir;
use toxics::ToxicSpec;

use super::fault_trace::record_trace_under_faults;
use super::kit::unestablished;
use super::{GateEnv, Ran, proxy_options};
use crate::fault;
use crate::history::{Actor, History, Op, OpType};
use crate::judge::Judgement;
use crate::nemesis::{self, LinkProxy, Nemesis};

/// How long a `/status` probe through the fault proxy gets.
pub const PROBE: Duration = Duration::from_millis(700);

/// A daemon, a fault proxy in front of it, and the nemesis that owns the proxy.
pub struct ProxiedDaemon {
    /// Owns the fault proxy and names itself in the evidence.
    pub nemesis: Nemesis,
    /// The daemon the harness owns.
    pub daemon: OwnedDaemon,
    /// What `reticle mcp` takes for the daemon's port.
    pub proxy: LinkProxy,
}

impl ProxiedDaemon {
    /// Starts the daemon and puts a fault proxy in front of it, or says why either failed.
    pub async fn start(daemon: OwnedDaemonBuilder) -> Result<Self, String> {
        let nemesis = Nemesis::from_env().await?;
        let daemon = daemon.env(reticle::config::env::TRACE, "1").start().await;
        let proxy = nemesis.proxy(daemon.port()).await?;
        Ok(Self {
            nemesis,
            daemon,
            proxy,
        })
    }

    /// [`Self::start`] as a hop 1 or 2 scenario's opening, with the options that point
    /// `reticle mcp` at the fault proxy, after the private state dir they name (first, so a
    /// scenario holding all three drops it last). When the daemon or its fault proxy did not
    /// start, the scenario is over, its fault `fault` recorded unestablished and the history
    /// judged by `judge`.
    pub async fn start_for(
        env: &GateEnv,
        history: &History,
        daemon: OwnedDaemonBuilder,
        fault: &str,
        judge: fn(&[Op]) -> Judgement,
    ) -> Result<(TempDir, Self, ProxyOptions), Ran> {
        let state = tempfile::tempdir().expect("a private state dir");
        let link = Self::start(daemon)
            .await
            .map_err(|why| unestablished(history.clone(), fault, &why, judge))?;
        let options = proxy_options(env, link.proxy.port(), state.path());
        Ok((state, link, options))
    }

    /// Records the daemon's trace as checked ([`record_trace_under_faults`]) and closes the fault
    /// proxy; what the nemesis was, for the evidence.
    pub async fn close(self, history: &History) -> String {
        record_trace_under_faults(history, &self.daemon.log_path()).await;
        let nemesis = self.nemesis.describe();
        self.proxy.close().await;
        nemesis
    }

    /// Installs every toxic of `cut` and confirms it twice: read back from the nemesis, and a
    /// fresh `/status` probe through the proxy failing while the daemon answers directly.
    /// Whether the cut is established, and the detail a history records for it.
    pub async fn cut(&self, cut: &[ToxicSpec]) -> (bool, Value) {
        let mut errors = Vec::new();
        for spec in cut {
            if let Err(err) = self.proxy.inject(spec).await {
                errors.push(err);
            }
        }
        let through = nemesis::status_answers(self.proxy.port(), PROBE).await;
        let direct = nemesis::status_answers(self.daemon.port(), PROBE).await;
        let detail = json!({ "toxics": cut, "nemesis": self.nemesis.describe(), "port": self.proxy.port(),
                             "statusThroughTheProxy": through, "statusDirect": direct, "errors": errors });
        (errors.is_empty() && !through && direct, detail)
    }

    /// [`Self::cut`] with one toxic, recorded as the fault `f`. Whether it is established.
    pub async fn inject_refusing(&self, history: &History, f: &str, spec: ToxicSpec) -> bool {
        let (established, detail) = self.cut(&[spec]).await;
        history.fault(f, established, detail);
        established
    }

    /// Removes every toxic, confirmed, and records it as [`fault::HEAL`]. Whether it healed.
    pub async fn heal(&self, history: &History) -> bool {
        let healed = self.proxy.heal_all().await;
        history.record(
            Actor::Nemesis,
            if healed.is_ok() {
                OpType::Ok
            } else {
                OpType::Fail
            },
            fault::HEAL,
            json!({ "error": healed.as_ref().err() }),
        );
        healed.is_ok()
    }
}
