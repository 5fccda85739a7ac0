//! H4.2: another project's page at this daemon is refused naming both projects. Its scenario
//! and judge.

use harness::wire_page::{self};
use harness::{BridgeClient, OwnedDaemon, WirePage};
use serde_json::json;

use super::{ORIGIN, Wording, admitted_or_closed, hello_call, judge_policy_refusal};
use crate::fault;
use crate::history::{History, Op, OpType};
use crate::judge::Judgement;
use crate::rows::RowGate;
use crate::scenarios::fault_segments::first_segment;
use crate::scenarios::kit;
use crate::scenarios::kit::{control, could_not_start, judged, settle};
use crate::scenarios::{GateEnv, Ran, traced};

/// H4.2: two projects, one port. Project alpha's daemon has accepted alpha's page; project
/// beta's page (with beta's real pairing token, taken from beta's own daemon) reaches alpha's
/// port and must be refused naming both projects. Controls: alpha's page is admitted by alpha,
/// beta's page by beta (so the refusal is about the project, not a bad hello).
pub async fn another_projects_page(env: &GateEnv) -> Ran {
    let history = History::new();
    let ((alpha, alpha_token), (beta, beta_token)) = match (
        kit::daemon(traced::builder()).await,
        kit::daemon(OwnedDaemon::builder()).await,
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(why), _) | (_, Err(why)) => {
            return could_not_start(history, fault::PAGE_AT_ANOTHER_PROJECTS_PORT, &why);
        }
    };
    let alpha_client = BridgeClient::new(alpha.port());
    let beta_client = BridgeClient::new(beta.port());
    let mut ours = wire_page::hello("alpha-page", Some(&alpha_token));
    ours["projectId"] = json!("alpha");
    let mut theirs = wire_page::hello("beta-page", Some(&beta_token));
    theirs["projectId"] = json!("beta");

    let mut pages = Vec::new();
    for (what, client, port, hello) in [
        (
            "alpha's page is admitted by alpha's daemon",
            &alpha_client,
            alpha.port(),
            &ours,
        ),
        (
            "beta's page is admitted by beta's daemon",
            &beta_client,
            beta.port(),
            &theirs,
        ),
    ] {
        let result = match WirePage::open(port, ORIGIN).await {
            Ok(mut page) => {
                page.send_json(hello).await;
                let seen = admitted_or_closed(
                    client,
                    &mut page,
                    hello["sessionId"].as_str().unwrap_or(""),
                )
                .await;
                pages.push(page);
                seen
            }
            Err(err) => (OpType::Info, json!({ "message": err.to_string() })),
        };
        control(&history, what, result.0 == OpType::Ok, result.1);
    }

    match WirePage::open(alpha.port(), ORIGIN).await {
        Ok(mut page) => {
            history.fault(
                fault::PAGE_AT_ANOTHER_PROJECTS_PORT,
                true,
                json!({ "page": "beta", "port": alpha.port(), "serves": "alpha" }),
            );
            hello_call(&history, &alpha_client, &mut page, &theirs).await;
        }
        Err(err) => {
            history.fault(
                fault::PAGE_AT_ANOTHER_PROJECTS_PORT,
                false,
                json!({ "reason": err.to_string() }),
            );
        }
    }
    drop(pages);
    traced::call_then_check_trace(env, &history, &alpha).await;
    judged(history, judge_another_project)
}

/// Judges H4.2's history.
pub fn judge_another_project(ops: &[Op]) -> Judgement {
    settle(|| {
        let segment = first_segment(ops, fault::PAGE_AT_ANOTHER_PROJECTS_PORT)?;
        Ok(judge_policy_refusal(
            segment.completion("hello"),
            &["alpha", "beta"],
            Wording {
                unnamed: "without naming the projects",
                admitted: "project beta's page was admitted by project alpha's daemon",
                neither: "beta's hello",
            },
        ))
    })
}

/// H4.2 in the row table.
pub const H4_2: RowGate = RowGate {
    id: "H4.2",
    file: file!(),
    scenario: |env| Box::pin(another_projects_page(env)),
    judge: judge_another_project,
    controls: &[],
};
