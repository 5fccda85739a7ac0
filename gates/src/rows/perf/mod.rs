//! The release-figure rows (P1 to P4), one file each, and what they share: one measurement of
//! a real daemon and a held-open `reticle mcp` link, recorded beside the last release's figure
//! ([`FIGURES_FILE`]), and the judge that fails a figure only past its factor ([`judge_figure`]).

pub mod p1_call_round_trip;
pub mod p2_list_round_trip;
pub mod p3_proxy_memory;
pub mod p4_daemon_memory;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use harness::{OwnedDaemon, RawMcp};
use reticle::config::env;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::history::{Actor, History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::scenarios::kit::{could_not_start, judged, observe, settle};
use crate::scenarios::memory::resident_kb;
use crate::scenarios::{GateEnv, Ran, proxy_options};

/// The committed figures of the last release, relative to the repository root.
pub const FIGURES_FILE: &str = "bench/release-figures.json";
/// Round trips timed per latency figure (after [`WARM_UP`] untimed ones).
pub const CALLS: usize = 100;
/// Untimed round trips first.
pub const WARM_UP: usize = 20;
/// How long one answer may take.
const ANSWER_BOUND: Duration = Duration::from_secs(10);
/// The fault every P row records: the measurement itself.
const FAULT: &str = "measured";

/// One latency figure: a round trip's median and the median of the reference round trip timed
/// beside it, call by call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    /// The measured round trip, median, milliseconds.
    pub median_ms: f64,
    /// The reference round trip (`GET /status` on the same daemon), median, milliseconds.
    pub reference_ms: f64,
}

impl Latency {
    /// The figure a latency row judges: how many reference round trips one round trip costs.
    pub fn ratio(&self) -> f64 {
        self.median_ms / self.reference_ms
    }

    fn evidence(&self) -> Value {
        json!({ "ms": self.median_ms, "referenceMs": self.reference_ms })
    }
}

/// The unit of a latency row's figure: reference round trips.
pub const RATIO_UNIT: &str = "× reference";

/// What the rows measure, in one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    /// `tools/call reticle_sessions` round trip.
    pub call: Latency,
    /// `tools/list` round trip.
    pub list: Latency,
    /// `reticle mcp` (supervisor and worker) resident memory after the calls, MiB.
    pub proxy_mib: f64,
    /// The daemon's resident memory after the calls, MiB.
    pub daemon_mib: f64,
}

impl Measured {
    /// The figure row `id` judges, with its unit.
    pub fn figure(&self, id: &str) -> Option<(f64, &'static str)> {
        match id {
            "P1" => Some((self.call.ratio(), RATIO_UNIT)),
            "P2" => Some((self.list.ratio(), RATIO_UNIT)),
            "P3" => Some((self.proxy_mib, "MiB")),
            "P4" => Some((self.daemon_mib, "MiB")),
            _ => None,
        }
    }

    /// The absolute figures behind row `id`'s ratio (latency rows only).
    fn absolute(&self, id: &str) -> Option<Value> {
        match id {
            "P1" => Some(self.call.evidence()),
            "P2" => Some(self.list.evidence()),
            _ => None,
        }
    }
}

/// The committed file's path.
pub fn figures_path() -> PathBuf {
    harness::fixture_app::repo_root().join(FIGURES_FILE)
}

/// The committed figure for `id`: `{value, unit, factor, ...}`.
pub fn committed(figures: &Value, id: &str) -> Option<Value> {
    figures["figures"].get(id).cloned()
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// One reference round trip: `GET /status` on the daemon at `port` over a fresh TCP connection.
async fn status_round_trip(port: u16) -> Result<(), String> {
    let exchange = async {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await?;
        let request =
            format!("GET /status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await?;
        Ok::<_, std::io::Error>(answer)
    };
    let answer = tokio::time::timeout(ANSWER_BOUND, exchange)
        .await
        .map_err(|_| format!("GET /status was not answered within {ANSWER_BOUND:?}"))?
        .map_err(|e| format!("GET /status: {e}"))?;
    if answer.starts_with(b"HTTP/1.1 200") {
        Ok(())
    } else {
        Err(format!(
            "GET /status failed: {}",
            String::from_utf8_lossy(&answer[..answer.len().min(80)])
        ))
    }
}

/// Times `CALLS` round trips of `method` on a held-open link, each followed by a reference
/// round trip on the daemon at `port`, so both medians see the same load.
async fn round_trips(
    mcp: &mut RawMcp,
    port: u16,
    method: &str,
    params: &Value,
) -> Result<Latency, String> {
    let mut samples = Vec::with_capacity(CALLS);
    let mut references = Vec::with_capacity(CALLS);
    for n in 0..WARM_UP + CALLS {
        let started = Instant::now();
        let id = mcp.request(method, params.clone()).await;
        let answer = mcp
            .answer(&id, ANSWER_BOUND)
            .await
            .ok_or_else(|| format!("{method} was not answered within {ANSWER_BOUND:?}"))?;
        if answer.get("result").is_none() {
            return Err(format!("{method} failed: {answer}"));
        }
        let took = started.elapsed();
        let started = Instant::now();
        status_round_trip(port).await?;
        let reference = started.elapsed();
        if n >= WARM_UP {
            samples.push(took.as_secs_f64() * 1000.0);
            references.push(reference.as_secs_f64() * 1000.0);
        }
    }
    Ok(Latency {
        median_ms: median(samples),
        reference_ms: median(references),
    })
}

/// The resident memory of `pid` and its child processes (the proxy's worker), kB.
fn tree_resident_kb(pid: u32) -> Option<u64> {
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).ok()?;
    let mut total = resident_kb(pid)?;
    for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
        total += resident_kb(child).unwrap_or(0);
    }
    Some(total)
}

fn mib(kb: Option<u64>) -> Result<f64, String> {
    kb.map(|kb| kb as f64 / 1024.0)
        .ok_or_else(|| "VmRSS could not be read".to_string())
}

/// One measurement: a daemon, a held-open link, the latencies, then both processes' memory.
pub async fn measure(env: &GateEnv) -> Result<Measured, String> {
    let state = tempfile::tempdir().map_err(|e| e.to_string())?;
    let daemon = OwnedDaemon::builder()
        .env(env::FIRST_SESSION_WAIT_MS, "0")
        .try_start()
        .await?;
    let mut mcp = RawMcp::start(proxy_options(env, daemon.port(), state.path()));
    mcp.initialize().await;
    let call = json!({ "name": "reticle_sessions", "arguments": {} });
    let measured = async {
        let call = round_trips(&mut mcp, daemon.port(), "tools/call", &call).await?;
        let list = round_trips(&mut mcp, daemon.port(), "tools/list", &json!({})).await?;
        Ok::<_, String>(Measured {
            call,
            list,
            proxy_mib: mib(tree_resident_kb(mcp.pid()))?,
            daemon_mib: mib(resident_kb(daemon.pid()))?,
        })
    }
    .await;
    mcp.close_stdin();
    mcp.wait_exit(Duration::from_secs(5)).await;
    daemon.shutdown().await;
    measured
}

/// Row `id`: measures at a small size, then judges against the committed figure, as a ratio.
/// A latency row judges a figure load cancels: its round trip's median over the median of a
/// reference round trip timed in the same run, interleaved call by call (`GET /status` on the
/// same daemon over a fresh loopback TCP connection, the kind the proxy's worker posts on); the
/// absolute medians go in the evidence beside it. The benches (`gates/benches/`) stay the source
/// of truth for the figures `docs/benchmarks.md` reports; these rows only guard against falling
/// back. The negative control: the judge's unit tests, and `gates/tests/gate_perf_figures.rs`
/// holding a real run against a release figure a third of ours (as a binary three times slower
/// would measure).
pub async fn figure_holds(env: &GateEnv, id: &str) -> Ran {
    let history = History::new();
    let figures = std::fs::read_to_string(figures_path())
        .map_err(|e| format!("{FIGURES_FILE}: {e}"))
        .and_then(|text| serde_json::from_str::<Value>(&text).map_err(|e| e.to_string()));
    let Some(release) = figures.as_ref().ok().and_then(|f| committed(f, id)) else {
        let why = format!(
            "no committed figure for {id} in {FIGURES_FILE} ({})",
            figures.err().unwrap_or_default()
        );
        return could_not_start(history, FAULT, &why);
    };
    record(&history, id, measure(env).await, &release);
    judged(history, judge_figure)
}

/// Records the measurement of `id` beside the committed figure it is judged against.
pub fn record(history: &History, id: &str, measured: Result<Measured, String>, release: &Value) {
    history.fault(
        FAULT,
        measured.is_ok(),
        json!({ "row": id, "error": measured.as_ref().err() }),
    );
    let Ok(measured) = measured else {
        return;
    };
    if let Some((value, unit)) = measured.figure(id) {
        let mut figure = json!({ "row": id, "value": value, "unit": unit, "release": release });
        if let Some(absolute) = measured.absolute(id) {
            figure["absolute"] = absolute;
        }
        observe(history, "figure", figure);
    }
}

/// The P rows' judge: survived while the figure is within its factor of the release's (2× for
/// latencies, 1.5× for memory), silent past it (a slowdown nobody is told of).
pub fn judge_figure(ops: &[Op]) -> Judgement {
    settle(|| {
        judge::established_fault(ops)?;
        let figure = ops
            .iter()
            .find(|o| o.actor == Actor::Harness && o.f == "figure")
            .map(|o| o.value.clone());
        let Some(figure) = figure else {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                "no figure was measured",
            ));
        };
        let read = |figure: &Value| {
            let release = &figure["release"];
            Some((
                figure["value"].as_f64()?,
                release["value"].as_f64().filter(|was| *was > 0.0)?,
                release["factor"].as_f64()?,
            ))
        };
        let Some((value, was, factor)) = read(&figure) else {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                format!("unreadable figure, or a release figure that is not positive: {figure}"),
            ));
        };
        let ratio = value / was;
        let unit = figure["unit"].as_str().unwrap_or("");
        let absolute = match (
            figure["absolute"]["ms"].as_f64(),
            figure["absolute"]["referenceMs"].as_f64(),
        ) {
            (Some(ms), Some(reference)) => {
                format!(" ({ms:.3} ms over a {reference:.3} ms reference round trip)")
            }
            _ => String::new(),
        };
        let within = ratio <= factor;
        Ok(Judgement::new(
            if within {
                RowOutcome::Survived
            } else {
                RowOutcome::Silent
            },
            format!(
                "{value:.3} {unit}{absolute} against the release's {was:.3} {unit}: {ratio:.2}× (fails past {factor}×)"
            ),
        ))
    })
}

#[cfg(test)]
pub(super) mod test_history {
    //! The measurements the judge's unit tests record: one figure against a release figure.
    use super::*;

    /// Row `id` measured at `value` (a latency over a 1 ms reference, or MiB), judged against
    /// a release figure `was` with its `factor`.
    pub(in crate::rows::perf) fn judged_as(
        id: &str,
        value: f64,
        was: f64,
        factor: f64,
    ) -> RowOutcome {
        let history = History::new();
        let latency = Latency {
            median_ms: value,
            reference_ms: 1.0,
        };
        let measured = Measured {
            call: latency,
            list: latency,
            proxy_mib: value,
            daemon_mib: value,
        };
        record(
            &history,
            id,
            Ok(measured),
            &json!({ "value": was, "factor": factor }),
        );
        judge_figure(&history.ops()).outcome
    }
}

#[cfg(test)]
mod tests {
    use super::test_history::judged_as;
    use super::*;

    fn judged_with(value: f64, was: f64, factor: f64) -> RowOutcome {
        judged_as("P1", value, was, factor)
    }

    #[test]
    fn a_figure_within_its_factor_holds_and_one_past_it_is_silent() {
        assert_eq!(judged_with(0.9, 0.5, 2.0), RowOutcome::Survived);
        assert_eq!(judged_with(1.0, 0.5, 2.0), RowOutcome::Survived);
        assert_eq!(judged_with(1.1, 0.5, 2.0), RowOutcome::Silent);
        assert_eq!(judged_with(16.0, 10.0, 1.5), RowOutcome::Silent);
    }

    #[test]
    fn no_measurement_proves_nothing() {
        let history = History::new();
        record(&history, "P1", Err("no daemon".into()), &json!({}));
        assert_eq!(
            judge_figure(&history.ops()).outcome,
            RowOutcome::Inconclusive
        );
    }

    #[test]
    fn the_committed_file_has_a_figure_for_every_p_row() {
        let text = std::fs::read_to_string(figures_path()).unwrap();
        let figures: Value = serde_json::from_str(&text).unwrap();
        for id in ["P1", "P2", "P3", "P4"] {
            let figure = committed(&figures, id).unwrap_or_else(|| panic!("{id}"));
            assert!(figure["value"].as_f64().is_some_and(|v| v > 0.0), "{id}");
            assert!(figure["factor"].as_f64().is_some(), "{id}");
            assert!(
                figure["command"].is_string(),
                "{id}: the command that made it"
            );
            if id == "P1" || id == "P2" {
                assert_eq!(figure["unit"], RATIO_UNIT, "{id}: judged as a ratio");
                assert!(
                    figure["absolute"]["ms"].as_f64().is_some_and(|v| v > 0.0),
                    "{id}: the absolute figure kept as information"
                );
            }
        }
    }
}
