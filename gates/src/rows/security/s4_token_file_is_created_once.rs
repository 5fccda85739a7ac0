//! S4: a token file readable by others is tightened to 0600 and logged; daemons racing on a
//! fresh state dir share one token. Its scenario, judge and the judge's unit test.

use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::Duration;

use harness::cli::{self};
use harness::{free_port, poll};
use serde_json::json;

use super::{BOUND, admits, call, end_daemon, mode_of, observed};
use crate::history::{History, Op};
use crate::judge::{self, Judgement, RowOutcome, one_line};
use crate::rows::RowGate;
use crate::scenarios::kit::{could_not_start, judged, observe, settle};
use crate::scenarios::{GateEnv, Ran};

const RACE_ROUNDS: usize = 3;

/// S4: a readable-by-others token file is tightened to 0600 and the daemon's log says so; two
/// daemons started at once on a fresh state dir both admit a page with the one token the file
/// holds ([`RACE_ROUNDS`] rounds).
pub async fn token_file_is_created_once(env: &GateEnv) -> Ran {
    const FAULT: &str = "token_file_readable_and_raced";
    let history = History::new();
    let Ok(state) = tempfile::tempdir() else {
        return could_not_start(history, FAULT, "no temporary dir");
    };
    let token_path = state.path().join("pairing-token");
    let written = std::fs::write(
        &token_path,
        "0123456789abcdef0123456789abcdef0123456789abcdef",
    )
    .and_then(|()| std::fs::set_permissions(&token_path, std::fs::Permissions::from_mode(0o644)));
    history.fault(
        FAULT,
        written.is_ok(),
        json!({ "token": token_path, "mode": "0644" }),
    );
    let port = free_port();
    let port_text = port.to_string();
    let ran = call(
        &history,
        env,
        "serve_readable_token",
        Some(state.path()),
        &["serve", "--port", &port_text],
        &[],
        &[],
    )
    .await;
    let log = std::fs::read_to_string(state.path().join(format!("daemon-{port}.log")))
        .unwrap_or_default();
    let said = log
        .lines()
        .find(|l| l.contains("pairing_token_tightened"))
        .unwrap_or_default()
        .to_string();
    end_daemon(env, port).await;
    observe(
        &history,
        "token_mode",
        json!({ "mode": mode_of(&token_path), "started": ran.ok(), "logged": said }),
    );
    for round in 0..RACE_ROUNDS {
        let admitted = race_round(env).await;
        observe(
            &history,
            "race_round",
            json!({ "round": round, "admitted": admitted }),
        );
    }
    judged(history, judge_token_file)
}

/// Two daemons on one fresh state dir: whether each admits a page with the file's token (none
/// when the round could not be run).
async fn race_round(env: &GateEnv) -> Option<Vec<bool>> {
    let state = tempfile::tempdir().ok()?;
    let ports = [free_port(), free_port()];
    let mut children = Vec::new();
    for port in ports {
        let mut command = cli::command_with(
            &env.reticle,
            state.path(),
            &["serve", "--foreground", "--port", &port.to_string()],
        );
        command.stdout(Stdio::null()).stderr(Stdio::null());
        children.push(command.spawn().ok()?);
    }
    let up = poll::within(BOUND, async || {
        for port in ports {
            reticle::probe::fetch_status(port, Duration::from_millis(300)).await?;
        }
        Some(())
    })
    .await;
    let mut admitted = Vec::new();
    if up.is_some() {
        let token = std::fs::read_to_string(state.path().join("pairing-token")).unwrap_or_default();
        for (i, port) in ports.into_iter().enumerate() {
            admitted.push(admits(port, &format!("s4-race-{i}"), Some(token.trim())).await);
        }
    }
    for child in &mut children {
        let _ = child.kill();
        let _ = child.wait();
    }
    up.map(|()| admitted)
}

/// S4's judge: a token file still readable by others, or a race round where a daemon refused the
/// file's token, is silent; a tightening the log does not mention is silent too.
pub fn judge_token_file(ops: &[Op]) -> Judgement {
    settle(|| {
        judge::established_fault(ops)?;
        let Some(mode) = observed(ops, "token_mode").first().map(|o| o.value.clone()) else {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                "the token file's mode was not observed",
            ));
        };
        if mode["mode"].as_u64().is_none_or(|m| m & 0o077 != 0) {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "the token file is left readable by others (mode {:o})",
                    mode["mode"].as_u64().unwrap_or(0)
                ),
            ));
        }
        let rounds = observed(ops, "race_round");
        if rounds.iter().all(|o| o.value["admitted"].is_null()) {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                "no race round could be run",
            ));
        }
        if let Some(op) = rounds.iter().find(|o| {
            o.value["admitted"]
                .as_array()
                .is_some_and(|a| a.iter().any(|b| b == false))
        }) {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "race round {}: a daemon refused the token its state dir holds",
                    op.value["round"]
                ),
            ));
        }
        let logged = mode["logged"].as_str().unwrap_or_default();
        if logged.is_empty() {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                "the token file's mode changed but the daemon's log does not say so",
            ));
        }
        Ok(Judgement::new(
            RowOutcome::Surfaced,
            format!("tightened and logged: {}", one_line(logged)),
        ))
    })
}

/// S4 in the row table.
pub const S4: RowGate = RowGate {
    id: "S4",
    file: file!(),
    scenario: |env| Box::pin(token_file_is_created_once(env)),
    judge: judge_token_file,
    controls: &[],
};

#[cfg(test)]
mod tests {
    //! Negative controls: each judge fed the history the old behaviour produced scores `silent`,
    //! and fed the fixed behaviour's history scores its target.
    use super::*;
    use crate::rows::security::test_history::fault;

    /// S4's history: the token file's `mode` after the start, what the log said, and one race
    /// round's admissions.
    fn token_history(mode: u32, logged: &str, admitted: [bool; 2]) -> Vec<Op> {
        let history = History::new();
        fault(&history, "token_file_readable_and_raced", json!({}));
        observe(
            &history,
            "token_mode",
            json!({ "mode": mode, "logged": logged }),
        );
        observe(
            &history,
            "race_round",
            json!({ "round": 0, "admitted": admitted }),
        );
        history.ops()
    }

    #[test]
    fn a_readable_or_raced_token_is_silent() {
        let tightened = "pairing_token_tightened";
        let readable = token_history(0o644, "", [true, true]);
        assert_eq!(judge_token_file(&readable).outcome, RowOutcome::Silent);
        let raced = token_history(0o600, tightened, [true, false]);
        assert_eq!(judge_token_file(&raced).outcome, RowOutcome::Silent);
        let fixed = token_history(0o600, tightened, [true, true]);
        assert_eq!(judge_token_file(&fixed).outcome, RowOutcome::Surfaced);
    }
}
