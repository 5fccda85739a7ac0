//! S3: `serve` with a state dir others can write, with no home for it, or with its log planted
//! as a link fails naming the problem, and the linked file keeps its content. Its scenario,
//! judge and the judge's unit test.

use std::os::unix::fs::PermissionsExt;

use harness::free_port;
use reticle::config::env;
use serde_json::json;

use super::{call, end_daemon, observed};
use crate::history::{History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::kit::{could_not_start, judged, observe, settle, worst};
use crate::scenarios::{GateEnv, Ran};

/// S3: `serve` with a state dir others can write, with neither `HOME` nor `RETICLE_STATE_DIR`, and
/// with its log planted as a link to another file must fail naming the problem, and the linked
/// file must keep its content.
pub async fn state_dir_is_private(env: &GateEnv) -> Ran {
    const FAULT: &str = "unsafe_state_dirs";
    const VICTIM_TEXT: &str = "the victim's own content\n";
    let history = History::new();
    let (Ok(shared), Ok(linked), Ok(elsewhere)) = (
        tempfile::tempdir(),
        tempfile::tempdir(),
        tempfile::tempdir(),
    ) else {
        return could_not_start(history, FAULT, "no temporary dir");
    };
    let link_port = free_port();
    let victim = elsewhere.path().join("victim.txt");
    let planted = std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o777))
        .and_then(|()| std::fs::write(&victim, VICTIM_TEXT))
        .and_then(|()| {
            std::os::unix::fs::symlink(
                &victim,
                linked.path().join(format!("daemon-{link_port}.log")),
            )
        });
    history.fault(
        FAULT,
        planted.is_ok(),
        json!({ "shared": shared.path(), "linked": linked.path(), "victim": victim }),
    );
    let port = free_port();
    let port_text = port.to_string();
    call(
        &history,
        env,
        "serve_shared_dir",
        Some(shared.path()),
        &["serve", "--port", &port_text],
        &[],
        &[],
    )
    .await;
    end_daemon(env, port).await;
    let port = free_port();
    let port_text = port.to_string();
    call(
        &history,
        env,
        "serve_without_home",
        None,
        &["serve", "--port", &port_text],
        &[],
        &["HOME"],
    )
    .await;
    end_daemon(env, port).await;
    let link_text = link_port.to_string();
    call(
        &history,
        env,
        "serve_through_link",
        Some(linked.path()),
        &["serve", "--port", &link_text],
        &[],
        &[],
    )
    .await;
    end_daemon(env, link_port).await;
    let kept = std::fs::read_to_string(&victim).is_ok_and(|t| t == VICTIM_TEXT);
    observe(
        &history,
        "linked_file",
        json!({ "path": victim, "kept": kept }),
    );
    judged(history, judge_state_dir)
}

/// S3's judge: a linked file written through is silent; each `serve` must fail naming what to fix.
pub fn judge_state_dir(ops: &[Op]) -> Judgement {
    settle(|| {
        let fault = judge::established_fault(ops)?;
        if observed(ops, "linked_file")
            .iter()
            .any(|o| o.value["kept"] == false)
        {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                "the daemon wrote through a link planted in its state dir",
            ));
        }
        let shared = fault.value["shared"].as_str().unwrap_or("?");
        Ok(worst(vec![
            judge::must_surface(ops, "serve_shared_dir", &[shared]),
            judge::must_surface(ops, "serve_without_home", &["HOME", env::STATE_DIR]),
            judge::must_surface(ops, "serve_through_link", &["link"]),
        ]))
    })
}

/// S3 in the row table.
pub const S3: RowGate = RowGate {
    id: "S3",
    file: file!(),
    scenario: |env| Box::pin(state_dir_is_private(env)),
    judge: judge_state_dir,
    controls: &[],
};

#[cfg(test)]
mod tests {
    //! Negative controls: each judge fed the history the old behaviour produced scores `silent`,
    //! and fed the fixed behaviour's history scores its target.
    use super::*;
    use crate::rows::security::test_history::{cli, fault};

    #[test]
    fn a_write_through_a_planted_link_is_silent() {
        let old = History::new();
        fault(&old, "unsafe_state_dirs", json!({ "shared": "/tmp/s" }));
        cli(&old, "serve_shared_dir", true, "started");
        cli(&old, "serve_without_home", true, "started");
        cli(&old, "serve_through_link", true, "started");
        observe(&old, "linked_file", json!({ "kept": false }));
        assert_eq!(judge_state_dir(&old.ops()).outcome, RowOutcome::Silent);

        let started_anyway = History::new();
        fault(
            &started_anyway,
            "unsafe_state_dirs",
            json!({ "shared": "/tmp/s" }),
        );
        cli(&started_anyway, "serve_shared_dir", true, "started");
        cli(
            &started_anyway,
            "serve_without_home",
            false,
            "set HOME or RETICLE_STATE_DIR",
        );
        cli(&started_anyway, "serve_through_link", false, "a link");
        observe(&started_anyway, "linked_file", json!({ "kept": true }));
        assert_eq!(
            judge_state_dir(&started_anyway.ops()).outcome,
            RowOutcome::Silent
        );
    }
}
