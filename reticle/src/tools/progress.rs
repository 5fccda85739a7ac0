//! A call's progress, for a client that asked with `_meta.progressToken`: once the call has run
//! a second, `notifications/progress` on its session's stream, each with more progress than the
//! last. A call says its steps (a flow: step i of n; a suite: flow i of n, its steps within);
//! one that says nothing is reported by its heartbeat, in seconds waited. A leaf: no tool logic.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// How long a call runs before its first report.
pub const FIRST_REPORT_AFTER: Duration = Duration::from_secs(1);

/// The progress sink of one call; [`Progress::none`] for a call no one asked about.
#[derive(Debug, Clone, Default)]
pub struct Progress(Option<Arc<Sink>>);

#[derive(Debug)]
struct Sink {
    token: Value,
    out: mpsc::Sender<String>,
    started: Instant,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The progress last sent (each report must exceed it).
    sent: f64,
    /// The part under way: (index from 0, how many, its label).
    part: Option<(u64, u64, String)>,
    /// The latest stage said: (progress, total, message).
    staged: Option<(f64, u64, String)>,
}

impl Progress {
    /// A call no one asked about: every report is dropped.
    pub fn none() -> Self {
        Self(None)
    }

    /// The sink for a call carrying `token`, reporting on `out` (its session's stream).
    pub fn new(token: Value, out: mpsc::Sender<String>) -> Self {
        Self(Some(Arc::new(Sink {
            token,
            out,
            started: Instant::now(),
            state: Mutex::new(State::default()),
        })))
    }

    /// Whether anyone asked.
    pub fn asked(&self) -> bool {
        self.0.is_some()
    }

    /// Part `index` (from 0) of `of` begins (a suite's flow): said as `of` parts, `index` done.
    pub fn part(&self, index: u64, of: u64, label: &str) {
        self.stage(|state| {
            state.part = Some((index, of, label.to_string()));
            (index as f64, of, format!("{} of {of}: {label}", index + 1))
        });
    }

    /// Step `done` (from 1) of `of` finished: within the part under way, if there is one.
    pub fn step(&self, done: u64, of: u64, label: &str) {
        self.stage(|state| match &state.part {
            Some((index, parts, name)) => (
                *index as f64 + done as f64 / of.max(1) as f64,
                *parts,
                format!(
                    "{} of {parts} ({name}): step {done} of {of}, {label}",
                    index + 1
                ),
            ),
            None => (done as f64, of, format!("step {done} of {of}: {label}")),
        });
    }

    /// The heartbeat: a call that staged nothing is said in seconds waited; one that did is
    /// said at its latest stage, if that was not sent yet.
    pub fn beat(&self, tool: &str) {
        let Some(sink) = &self.0 else { return };
        let waited = sink.started.elapsed().as_secs();
        let mut state = sink.state.lock().unwrap_or_else(|p| p.into_inner());
        let (progress, total, message) = match &state.staged {
            Some((progress, total, message)) => (*progress, Some(*total), message.clone()),
            None => (
                waited as f64,
                None,
                format!("{tool} still running after {waited} s"),
            ),
        };
        sink.send(&mut state, progress, total, &message);
    }

    fn stage(&self, said: impl FnOnce(&mut State) -> (f64, u64, String)) {
        let Some(sink) = &self.0 else { return };
        let mut state = sink.state.lock().unwrap_or_else(|p| p.into_inner());
        let (progress, total, message) = said(&mut state);
        state.staged = Some((progress, total, message.clone()));
        if sink.started.elapsed() >= FIRST_REPORT_AFTER {
            sink.send(&mut state, progress, Some(total), &message);
        }
    }
}

impl Sink {
    fn send(&self, state: &mut State, progress: f64, total: Option<u64>, message: &str) {
        if progress <= state.sent {
            return;
        }
        state.sent = progress;
        let mut params =
            json!({ "progressToken": self.token, "progress": progress, "message": message });
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        let note =
            json!({ "jsonrpc": "2.0", "method": "notifications/progress", "params": params });
        // A stream with no room drops it: progress is a courtesy, never a reason to wait.
        let _ = self.out.try_send(note.to_string());
    }
}

/// Runs `call`, beating `progress` every second after the first while it runs.
pub async fn beating<T>(progress: &Progress, tool: &str, call: impl Future<Output = T>) -> T {
    if !progress.asked() {
        return call.await;
    }
    tokio::pin!(call);
    let first = tokio::time::Instant::now() + FIRST_REPORT_AFTER;
    let mut beats = tokio::time::interval_at(first, Duration::from_secs(1));
    beats.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            done = &mut call => return done,
            _ = beats.tick() => progress.beat(tool),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(rx: &mut mpsc::Receiver<String>) -> Vec<Value> {
        std::iter::from_fn(|| rx.try_recv().ok())
            .map(|line| serde_json::from_str(&line).unwrap())
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_past_a_second_is_reported_each_second_with_more_each_time() {
        let (tx, mut rx) = mpsc::channel(16);
        let progress = Progress::new(json!("tok"), tx);
        let waited = beating(&progress, "reticle_wait_for", async {
            tokio::time::sleep(Duration::from_millis(3500)).await;
            7
        })
        .await;
        assert_eq!(waited, 7);
        let notes = read(&mut rx);
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(
            notes
                .iter()
                .all(|n| n["method"] == "notifications/progress")
        );
        assert!(notes.iter().all(|n| n["params"]["progressToken"] == "tok"));
        let values: Vec<f64> = notes
            .iter()
            .map(|n| n["params"]["progress"].as_f64().unwrap())
            .collect();
        assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
        // Control: a call under a second, or one no one asked about, says nothing.
        let (tx, mut rx) = mpsc::channel(16);
        let quick = Progress::new(json!(1), tx);
        beating(&quick, "t", tokio::time::sleep(Duration::from_millis(900))).await;
        assert!(read(&mut rx).is_empty());
        beating(
            &Progress::none(),
            "t",
            tokio::time::sleep(Duration::from_secs(3)),
        )
        .await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_suite_says_flow_i_of_n_and_its_steps_within_always_forward() {
        let (tx, mut rx) = mpsc::channel(16);
        let progress = Progress::new(json!(5), tx);
        progress.part(0, 2, "login");
        assert!(read(&mut rx).is_empty(), "nothing in the first second");
        tokio::time::advance(FIRST_REPORT_AFTER).await;
        progress.step(1, 2, "click");
        progress.step(2, 2, "assert");
        progress.part(1, 2, "checkout");
        progress.step(1, 4, "fill");
        progress.beat("reticle_verify"); // the same stage again: not said twice
        let notes = read(&mut rx);
        let said: Vec<(f64, u64)> = notes
            .iter()
            .map(|n| {
                (
                    n["params"]["progress"].as_f64().unwrap(),
                    n["params"]["total"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(said, [(0.5, 2), (1.0, 2), (1.25, 2)], "{notes:?}");
        assert_eq!(
            notes[2]["params"]["message"],
            "2 of 2 (checkout): step 1 of 4, fill"
        );
    }
}
