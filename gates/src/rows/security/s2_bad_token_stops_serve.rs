//! S2: bad token material stops `serve` naming the culprit; a daemon that starts anyway admits
//! no page without a token. Its cases, scenario, judge and the judge's unit test.

use harness::free_port;
use reticle::config::env;
use serde_json::json;

use super::{admits, call, end_daemon, observed};
use crate::history::{History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::kit::{could_not_start, judged, observe, settle, worst};
use crate::scenarios::{GateEnv, Ran};

/// One way to start a daemon with bad token material: the call's name, the token file's content
/// (none: no file), the environment, and what the refusal must name.
struct TokenCase {
    f: &'static str,
    file: Option<String>,
    set: &'static [(&'static str, &'static str)],
    names: &'static [&'static str],
}

fn token_cases() -> Vec<TokenCase> {
    vec![
        TokenCase {
            f: "serve_oversized_file_and_empty_variable",
            file: Some("a".repeat(600)),
            set: &[(env::TOKEN, "")],
            names: &[env::TOKEN],
        },
        TokenCase {
            f: "serve_oversized_token_file",
            file: Some("a".repeat(600)),
            set: &[],
            names: &["pairing-token"],
        },
        TokenCase {
            f: "serve_malformed_token_file",
            file: Some("two words\n".into()),
            set: &[],
            names: &["pairing-token"],
        },
        TokenCase {
            f: "serve_empty_token_variable",
            file: None,
            set: &[(env::TOKEN, "")],
            names: &[env::TOKEN],
        },
        TokenCase {
            f: "serve_beyond_loopback_with_empty_token",
            file: Some("0123456789abcdef0123456789abcdef0123456789abcdef".into()),
            set: &[(env::TOKEN, ""), (env::HOST, "0.0.0.0")],
            names: &[env::TOKEN],
        },
    ]
}

/// S2: each bad token case must stop `serve` naming the culprit; a daemon that starts anyway must
/// not admit a page that sends no token.
pub async fn bad_token_stops_serve(env: &GateEnv) -> Ran {
    const FAULT: &str = "bad_token_material";
    let history = History::new();
    let cases = token_cases();
    let mut dirs = Vec::new();
    for case in &cases {
        let Ok(dir) = tempfile::tempdir() else {
            return could_not_start(history, FAULT, "no temporary dir");
        };
        if let Some(text) = &case.file
            && std::fs::write(dir.path().join("pairing-token"), text).is_err()
        {
            return could_not_start(history, FAULT, "could not write a token file");
        }
        dirs.push(dir);
    }
    let names: Vec<&str> = cases.iter().map(|c| c.f).collect();
    history.fault(FAULT, true, json!({ "cases": names }));
    for (case, dir) in cases.iter().zip(&dirs) {
        let port = free_port();
        let port_text = port.to_string();
        let ran = call(
            &history,
            env,
            case.f,
            Some(dir.path()),
            &["serve", "--port", &port_text],
            case.set,
            &[],
        )
        .await;
        if ran.ok() {
            let admitted = admits(port, "s2-no-token", None).await;
            observe(
                &history,
                "admitted_without_token",
                json!({ "case": case.f, "admitted": admitted }),
            );
        }
        end_daemon(env, port).await;
    }
    judged(history, judge_bad_token)
}

/// S2's judge: every case's `serve` must fail naming its culprit; a page admitted with no token is
/// silent.
pub fn judge_bad_token(ops: &[Op]) -> Judgement {
    settle(|| {
        judge::established_fault(ops)?;
        if let Some(op) = observed(ops, "admitted_without_token")
            .into_iter()
            .find(|o| o.value["admitted"] == true)
        {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                format!(
                    "{}: a daemon started and admitted a page that sent no token",
                    op.value["case"]
                ),
            ));
        }
        Ok(worst(
            token_cases()
                .iter()
                .map(|case| judge::must_surface(ops, case.f, case.names))
                .collect(),
        ))
    })
}

/// S2 in the row table.
pub const S2: RowGate = RowGate {
    id: "S2",
    file: file!(),
    scenario: |env| Box::pin(bad_token_stops_serve(env)),
    judge: judge_bad_token,
    controls: &[],
};

#[cfg(test)]
mod tests {
    //! Negative controls: each judge fed the history the old behaviour produced scores `silent`,
    //! and fed the fixed behaviour's history scores its target.
    use super::*;
    use crate::rows::security::test_history::{cli, fault};

    #[test]
    fn a_daemon_started_on_bad_token_material_is_silent() {
        let old = History::new();
        fault(&old, "bad_token_material", json!({}));
        for case in token_cases() {
            cli(&old, case.f, true, "started Reticle daemon");
        }
        observe(
            &old,
            "admitted_without_token",
            json!({ "case": "serve_oversized_token_file", "admitted": true }),
        );
        assert_eq!(judge_bad_token(&old.ops()).outcome, RowOutcome::Silent);

        let fixed = History::new();
        fault(&fixed, "bad_token_material", json!({}));
        for case in token_cases() {
            cli(
                &fixed,
                case.f,
                false,
                &format!("refused: {}", case.names.join(" ")),
            );
        }
        assert_eq!(judge_bad_token(&fixed.ops()).outcome, RowOutcome::Surfaced);
    }
}
