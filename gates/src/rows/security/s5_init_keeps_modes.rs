//! S5: `reticle init` keeps a private config's mode and writes its `.gitignore` line once. Its
//! scenario, judge and the judge's unit test.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use super::{call, mode_of, observed};
use crate::history::{History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::kit::{could_not_start, judged, observe, settle, worst};
use crate::scenarios::{GateEnv, Ran};

/// S5: a 0600 `.mcp.json` holding another server's secret keeps its mode through `reticle init`,
/// and `.gitignore` gets the line ignoring `.reticle/runs/` once over two runs (and no line
/// ignoring the whole `.reticle/`, which would keep the saved flows out of git).
pub async fn init_keeps_modes(env: &GateEnv) -> Ran {
    const FAULT: &str = "private_config";
    let history = History::new();
    let (Ok(project), Ok(state)) = (tempfile::tempdir(), tempfile::tempdir()) else {
        return could_not_start(history, FAULT, "no temporary dir");
    };
    let config = project.path().join(".mcp.json");
    let ignore = project.path().join(".gitignore");
    let written = std::fs::write(
        &config,
        r#"{"mcpServers": {"other": {"command": "other", "env": {"API_KEY": "s3cret"}}}}"#,
    )
    .and_then(|()| std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)))
    .and_then(|()| std::fs::write(&ignore, "node_modules/\n"));
    history.fault(
        FAULT,
        written.is_ok(),
        json!({ "config": config, "mode": "0600" }),
    );
    let dir = project.path().to_string_lossy().to_string();
    let args = ["init", "--dir", &dir, "--client", "claude"];
    call(&history, env, "init", Some(state.path()), &args, &[], &[]).await;
    call(
        &history,
        env,
        "init_again",
        Some(state.path()),
        &args,
        &[],
        &[],
    )
    .await;
    let ignored = std::fs::read_to_string(&ignore).unwrap_or_default();
    observe(
        &history,
        "files",
        json!({
            "configMode": mode_of(&config),
            "reticleLines": ignored.lines().filter(|l| l.trim() == "/.reticle/runs/").count(),
            "wholeWorkspaceLines": ignored.lines().filter(|l| l.trim().trim_matches('/') == ".reticle").count(),
            "keptLines": ignored.lines().filter(|l| l.trim() == "node_modules/").count(),
        }),
    );
    judged(history, judge_init)
}

/// S5's judge: both runs succeed, the config keeps 0600, `.gitignore` keeps its lines, ignores
/// `.reticle/runs/` exactly once and never the whole `.reticle/`, and the first run says so.
pub fn judge_init(ops: &[Op]) -> Judgement {
    settle(|| {
        let fault = judge::established_fault(ops)?;
        let Some(files) = observed(ops, "files").first().map(|o| o.value.clone()) else {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                "the files were not observed",
            ));
        };
        if files["configMode"] != 0o600 {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "init left the private config mode {:o}",
                    files["configMode"].as_u64().unwrap_or(0)
                ),
            ));
        }
        if files["reticleLines"] != 1
            || files["keptLines"] != 1
            || files["wholeWorkspaceLines"].as_u64().unwrap_or(0) != 0
        {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(".gitignore after two runs: {files}"),
            ));
        }
        let runs = judge::completions(ops, fault.index, "init");
        let said = runs
            .last()
            .map(|o| judge::text(&o.value))
            .unwrap_or_default();
        if !said.contains(".gitignore") {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                "init changed .gitignore without saying so",
            ));
        }
        Ok(worst(vec![
            judge::must_survive(ops, "init"),
            judge::must_survive(ops, "init_again"),
        ]))
    })
}

/// S5 in the row table.
pub const S5: RowGate = RowGate {
    id: "S5",
    file: file!(),
    scenario: |env| Box::pin(init_keeps_modes(env)),
    judge: judge_init,
    controls: &[],
};

#[cfg(test)]
mod tests {
    //! Negative controls: each judge fed the history the old behaviour produced scores `silent`,
    //! and fed the fixed behaviour's history scores its target.
    use super::*;
    use crate::rows::security::test_history::{cli, fault};

    #[test]
    fn init_that_widens_a_private_config_is_silent() {
        let old = History::new();
        fault(&old, "private_config", json!({}));
        cli(&old, "init", true, "added the reticle server");
        cli(&old, "init_again", true, "unchanged");
        observe(
            &old,
            "files",
            json!({ "configMode": 0o644, "reticleLines": 0, "keptLines": 1 }),
        );
        assert_eq!(judge_init(&old.ops()).outcome, RowOutcome::Silent);

        let fixed = History::new();
        fault(&fixed, "private_config", json!({}));
        cli(&fixed, "init", true, ".gitignore: added .reticle/");
        cli(
            &fixed,
            "init_again",
            true,
            ".gitignore: already ignores .reticle/",
        );
        observe(
            &fixed,
            "files",
            json!({ "configMode": 0o600, "reticleLines": 1, "keptLines": 1 }),
        );
        assert_eq!(judge_init(&fixed.ops()).outcome, RowOutcome::Survived);

        let hides_flows = History::new();
        fault(&hides_flows, "private_config", json!({}));
        cli(&hides_flows, "init", true, ".gitignore: added .reticle/");
        cli(&hides_flows, "init_again", true, "unchanged");
        observe(
            &hides_flows,
            "files",
            json!({ "configMode": 0o600, "reticleLines": 1, "keptLines": 1, "wholeWorkspaceLines": 1 }),
        );
        assert_eq!(judge_init(&hides_flows.ops()).outcome, RowOutcome::Silent);
    }
}
