//! H4.5: pages from the opaque origins the user listed are accepted with the token, an unlisted one
//! is still refused (the list is compared verbatim). Its scenario, judge and the unit test of that
//! judge.

use harness::wire_page::OpenError;
use harness::{BridgeClient, OwnedDaemon, WirePage};
use serde_json::{Value, json};

use super::connect_call;
use crate::fault;
use crate::history::{History, Op, OpType};
use crate::judge::{Judgement, RowOutcome, one_line, text};
use crate::rows::RowGate;
use crate::scenarios::fault_segments::established;
use crate::scenarios::kit::{control, controls_held, could_not_start, judged, settle, worst};
use crate::scenarios::{GateEnv, Ran, traced};
use crate::scenarios::{kit, page_kit};

/// The opaque origins H4.5 lists, and the session each connects as.
const OPAQUE: [(&str, &str); 2] = [("tauri://localhost", "tauri"), ("file://", "file")];

/// H4.5: opaque origins. A daemon with `RETICLE_ALLOWED_ORIGINS=tauri://localhost,file://`
/// admits a page from each (with the token) and the page is drivable; an unlisted opaque origin
/// (`tauri://other`) is still refused, so the list is compared verbatim. Control: a daemon
/// without the list refuses both origins at the upgrade (so they really are not loopback).
pub async fn opaque_origins_accepted(env: &GateEnv) -> Ran {
    let history = History::new();
    let started = (
        kit::daemon(traced::builder().env(
            reticle::config::env::ALLOWED_ORIGINS,
            "tauri://localhost,file://",
        ))
        .await,
        OwnedDaemon::builder().try_start().await,
    );
    let ((listed, token), plain) = match started {
        (Ok(l), Ok(p)) => (l, p),
        (Err(why), _) | (_, Err(why)) => {
            return could_not_start(history, fault::OPAQUE_ORIGIN, &why);
        }
    };
    let client = BridgeClient::new(listed.port());
    let mut pages = Vec::new();
    for (origin, session) in OPAQUE {
        let refused = WirePage::open(plain.port(), Some(origin)).await;
        let held = matches!(refused, Err(OpenError::Refused { status: 403, .. }));
        control(
            &history,
            &format!("a daemon without the list refuses {origin}"),
            held,
            json!({ "origin": origin, "answer": format!("{:?}", refused.err()) }),
        );
        history.fault(fault::OPAQUE_ORIGIN, held, json!({ "origin": origin }));
        if let Some(page) =
            connect_call(&history, &client, listed.port(), origin, session, &token).await
        {
            page_kit::query_buttons(&history, &client, session).await;
            pages.push(page);
        }
    }
    history.fault(
        fault::UNLISTED_OPAQUE_ORIGIN,
        true,
        json!({ "origin": "tauri://other" }),
    );
    connect_call(
        &history,
        &client,
        listed.port(),
        "tauri://other",
        "other",
        &token,
    )
    .await;
    drop(pages);
    traced::call_then_check_trace(env, &history, &listed).await;
    judged(history, judge_opaque_origins)
}

/// Judges H4.5's history.
pub fn judge_opaque_origins(ops: &[Op]) -> Judgement {
    settle(|| {
        controls_held(ops)?;
        let mut parts = Vec::new();
        for segment in established(ops, fault::OPAQUE_ORIGIN)? {
            let origin = segment.fault.value["origin"].as_str().unwrap_or("?");
            let connect = segment.completion("connect");
            let command = segment.completion("command");
            parts.push(
                match (connect.map(|o| o.op_type), command.map(|o| o.op_type)) {
                    (Some(OpType::Ok), Some(OpType::Ok)) => Judgement::new(
                        RowOutcome::Survived,
                        format!("{origin} admitted and drivable"),
                    ),
                    (Some(OpType::Ok), _) => Judgement::new(
                        RowOutcome::Silent,
                        format!(
                            "{origin} admitted but not drivable: {}",
                            one_line(&command.map(|o| text(&o.value)).unwrap_or_default())
                        ),
                    ),
                    (Some(OpType::Fail), _) => {
                        let said = one_line(&connect.map(|o| text(&o.value)).unwrap_or_default());
                        let outcome = if said.contains(origin) {
                            RowOutcome::Surfaced
                        } else {
                            RowOutcome::Silent
                        };
                        Judgement::new(outcome, format!("{origin} refused: {said}"))
                    }
                    _ => Judgement::new(
                        RowOutcome::Silent,
                        format!("{origin} was neither admitted nor refused"),
                    ),
                },
            );
        }
        for segment in established(ops, fault::UNLISTED_OPAQUE_ORIGIN)? {
            let origin = segment.fault.value["origin"].as_str().unwrap_or("?");
            let connect = segment.completion("connect");
            parts.push(match connect.map(|o| o.op_type) {
                Some(OpType::Fail) => judge_unlisted_refusal(origin, connect.map(|o| &o.value)),
                _ => Judgement::new(
                    RowOutcome::Silent,
                    format!("the unlisted {origin} was let in: the list is not compared verbatim"),
                ),
            });
        }
        Ok(worst(parts))
    })
}

/// The refusal of an unlisted origin counts only as the origin refusal itself: a 403 whose
/// reason names the origin. A refusal for another reason (a token, a bad hello) never reached
/// the origin check, so it shows nothing about the list.
fn judge_unlisted_refusal(origin: &str, refusal: Option<&Value>) -> Judgement {
    let refusal = refusal.cloned().unwrap_or_default();
    let said = one_line(&text(&refusal));
    if refusal["status"] == 403 && said.contains(origin) {
        Judgement::new(
            RowOutcome::Survived,
            format!("unlisted {origin} still refused (verbatim)"),
        )
    } else {
        Judgement::new(
            RowOutcome::Inconclusive,
            format!(
                "unlisted {origin} was refused for another reason, the origin check was not shown: {said}"
            ),
        )
    }
}

/// H4.5 in the row table.
pub const H4_5: RowGate = RowGate {
    id: "H4.5",
    file: file!(),
    scenario: |env| Box::pin(opaque_origins_accepted(env)),
    judge: judge_opaque_origins,
    controls: &[],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_origin_refusal_itself_shows_the_list_is_compared_verbatim() {
        let origin = "tauri://other";
        let named = json!({"status": 403, "message": "origin tauri://other is not loopback and not in RETICLE_ALLOWED_ORIGINS"});
        let other = json!({"status": 403, "message": "a pairing token is required"});
        assert_eq!(
            judge_unlisted_refusal(origin, Some(&other)).outcome,
            RowOutcome::Inconclusive
        );
        let history = |refusal: Value| {
            let h = History::new();
            h.fault(fault::OPAQUE_ORIGIN, true, json!({"origin": "file://"}));
            h.complete(OpType::Ok, "connect", json!({}));
            h.complete(OpType::Ok, "command", json!({}));
            h.fault(
                fault::UNLISTED_OPAQUE_ORIGIN,
                true,
                json!({"origin": origin}),
            );
            h.complete(OpType::Fail, "connect", refusal);
            h.ops()
        };
        assert_eq!(
            judge_opaque_origins(&history(named)).outcome,
            RowOutcome::Survived
        );
        assert_eq!(
            judge_opaque_origins(&history(other)).outcome,
            RowOutcome::Inconclusive
        );
    }
}
