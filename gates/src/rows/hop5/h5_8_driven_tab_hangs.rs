//! H5.8: a driven tab whose page spins in an endless loop: calls on it are refused within their
//! bound naming a busy page, never hang; a driven tab of another site and the daemon itself keep
//! answering. Its scenario and judge.

use std::time::{Duration, Instant};

use harness::poll;
use serde_json::json;

use super::driven::DrivenRig;
use crate::fault;
use crate::history::{History, Op, OpType};
use crate::judge::{Judgement, RowOutcome, one_line, text};
use crate::rows::RowGate;
use crate::scenarios::fault_segments::first_segment;
use crate::scenarios::kit::{BOUND, control, could_not_start, judged, ms_since, observe, settle};
use crate::scenarios::{GateEnv, Ran};

/// A page that starts spinning in the task after its click (so the click itself is answered);
/// the hang is then established by the harness's own look at the tab, not by any timing.
const SPIN: &str = r#"<!doctype html><title>Spin</title>
<button data-testid="spin" onclick="setTimeout(() => { for (;;) {} })">Spin</button>"#;
/// A healthy page, on another site (its own renderer).
const CALM: &str = r#"<!doctype html><title>Calm</title><button data-testid="calm">Calm</button>"#;

/// The longest a call on the hung tab may take: the SDK command bound and some slack.
const ANSWER_BOUND_MS: u64 = 12_000;

/// H5.8's scenario.
pub async fn driven_tab_hangs(env: &GateEnv) -> Ran {
    let history = History::new();
    let fault = fault::HANG_DRIVEN_TAB;
    let rig = match DrivenRig::start(env, &[]).await {
        Ok(rig) => rig,
        Err(why) => return could_not_start(history, fault, &why),
    };
    rig.app.page("/spin.html", SPIN);
    rig.app.page("/calm.html", CALM);
    let Some(spin) = rig
        .launch(&history, "launch", "/spin.html", "127.0.0.1")
        .await
    else {
        return could_not_start(history, fault, "the driven tab did not open");
    };
    let Some(calm) = rig
        .launch(&history, "launch", "/calm.html", "localhost")
        .await
    else {
        return could_not_start(history, fault, "the second driven tab did not open");
    };
    let query = |session: &str, testid: &str| json!({"sessionId": session, "by": "testid", "value": testid});
    let (op, answer) = rig
        .call(&history, "query", "reticle_query", query(&spin, "spin"))
        .await;
    control(
        &history,
        "the tab answers before it hangs",
        op == OpType::Ok,
        answer,
    );
    rig.call(
        &history,
        "act",
        "reticle_act",
        json!({"sessionId": spin, "target": {"testid": "spin"}, "action": "click"}),
    )
    .await;
    // The hang, seen by the harness's own DevTools look at the tab: it runs no script.
    let mut last = String::new();
    let hung = poll::within(BOUND, async || {
        let answers =
            harness::driven::tab_answers(rig.tmp.path(), "/spin.html", Duration::from_secs(1))
                .await;
        last = format!("{answers:?}");
        matches!(answers, Ok(false)).then_some(())
    })
    .await
    .is_some();
    history.fault(
        fault,
        hung,
        json!({ "seenBy": "the harness's DevTools evaluate, 1 s bound", "lastLook": last }),
    );
    if !hung {
        return judged(history, judge_hung_tab);
    }
    let started = Instant::now();
    rig.call(
        &history,
        "hung_query",
        "reticle_query",
        query(&spin, "spin"),
    )
    .await;
    observe(
        &history,
        "hung_query_ms",
        json!({ "ms": ms_since(started) }),
    );
    rig.call(
        &history,
        "calm_query",
        "reticle_query",
        query(&calm, "calm"),
    )
    .await;
    rig.call(&history, "sessions", "reticle_sessions", json!({}))
        .await;
    judged(history, judge_hung_tab)
}

/// Judges H5.8's history: surfaced when the hung tab's call was refused within its bound
/// naming a page that did not answer, while the other tab's query and the session list
/// answered; silent when the hung call hung, answered as if the page were fine, or the hang
/// starved the other tab or the daemon.
pub fn judge_hung_tab(ops: &[Op]) -> Judgement {
    settle(|| {
        let segment = first_segment(ops, fault::HANG_DRIVEN_TAB)?;
        let Some(hung) = segment.completion("hung_query") else {
            return Ok(Judgement::new(
                RowOutcome::Silent,
                "the call on the hung tab was never answered",
            ));
        };
        let ms = segment
            .observed("hung_query_ms")
            .and_then(|o| o.value["ms"].as_u64())
            .unwrap_or(u64::MAX);
        let reason = hung.value["reason"].as_str().unwrap_or("");
        let answered_ok = |f: &str| {
            segment
                .completion(f)
                .is_some_and(|o| o.op_type == OpType::Ok)
        };
        Ok(match hung.op_type {
            OpType::Info => Judgement::new(
                RowOutcome::Silent,
                format!(
                    "the call on the hung tab hung: {}",
                    one_line(&text(&hung.value))
                ),
            ),
            OpType::Ok => Judgement::new(
                RowOutcome::Silent,
                "the call on the hung tab answered as if the page were fine",
            ),
            _ if ms > ANSWER_BOUND_MS => Judgement::new(
                RowOutcome::Silent,
                format!("the refusal took {ms} ms, past its {ANSWER_BOUND_MS} ms bound"),
            ),
            _ if !reason.contains("did not answer") => Judgement::new(
                RowOutcome::Silent,
                format!(
                    "the refusal does not name an unanswering page: {}",
                    one_line(reason)
                ),
            ),
            _ if !answered_ok("calm_query") || !answered_ok("sessions") => Judgement::new(
                RowOutcome::Silent,
                "the hung tab starved the other tab or the daemon",
            ),
            _ => Judgement::new(
                RowOutcome::Surfaced,
                format!(
                    "refused in {ms} ms: {}; the other tab and the daemon answered",
                    one_line(reason)
                ),
            ),
        })
    })
}

/// H5.8 in the row table.
pub const H5_8: RowGate = RowGate {
    id: "H5.8",
    file: file!(),
    scenario: |env| Box::pin(driven_tab_hangs(env)),
    judge: judge_hung_tab,
    controls: &[],
};

#[cfg(test)]
mod tests {
    use super::*;

    fn hung(op: OpType, reason: &str, ms: u64, calm: OpType) -> Vec<Op> {
        let h = History::new();
        control(&h, "the tab answers before it hangs", true, json!({}));
        h.fault(fault::HANG_DRIVEN_TAB, true, json!({}));
        h.invoke("hung_query", json!({}));
        h.complete(op, "hung_query", json!({ "reason": reason }));
        observe(&h, "hung_query_ms", json!({ "ms": ms }));
        h.invoke("calm_query", json!({}));
        h.complete(calm, "calm_query", json!({}));
        h.invoke("sessions", json!({}));
        h.complete(OpType::Ok, "sessions", json!({}));
        h.ops()
    }

    #[test]
    fn a_bounded_named_refusal_with_the_rest_answering_is_surfaced() {
        let named = "the page did not answer query within 8000 ms";
        assert_eq!(
            judge_hung_tab(&hung(OpType::Fail, named, 8_010, OpType::Ok)).outcome,
            RowOutcome::Surfaced
        );
        // Stand-ins that break the promise: a hang, a late refusal, a starved neighbour.
        assert_eq!(
            judge_hung_tab(&hung(OpType::Info, "", 30_000, OpType::Ok)).outcome,
            RowOutcome::Silent
        );
        assert_eq!(
            judge_hung_tab(&hung(OpType::Fail, named, 29_000, OpType::Ok)).outcome,
            RowOutcome::Silent
        );
        assert_eq!(
            judge_hung_tab(&hung(OpType::Fail, named, 8_010, OpType::Info)).outcome,
            RowOutcome::Silent
        );
        assert_eq!(
            judge_hung_tab(&hung(OpType::Fail, "nope", 8_010, OpType::Ok)).outcome,
            RowOutcome::Silent
        );
    }
}
