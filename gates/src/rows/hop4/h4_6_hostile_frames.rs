//! H4.6: malformed and oversized frames close their socket, a flood is dropped and counted, and
//! a bystander page still answers after each. Its scenario, judge and the unit tests of that judge.

use std::time::Duration;

use harness::wire_page::{self, Incoming, echo_responder};
use harness::{BridgeClient, WirePage, poll};
use reticle::wire::close::code as close;
use serde_json::{Value, json};

use super::{ORIGIN, admitted_or_closed, connect_call};
use crate::fault;
use crate::history::{History, Op, OpType};
use crate::judge::{Judgement, RowOutcome, one_line, text};
use crate::rows::RowGate;
use crate::scenarios::fault_segments::{Segment, established};
use crate::scenarios::kit::{BOUND, controls_held, could_not_start, judged, settle, worst};
use crate::scenarios::{GateEnv, Ran, traced};
use crate::scenarios::{kit, page_kit};

/// The hostile frames H4.6 sends, each on its own page, and the close code each must get.
enum Hostile {
    Text(&'static str),
    Json(Value),
    Binary(Vec<u8>),
    Oversized,
}

/// H4.6: malformed, oversized and flooding frames against a live daemon with a bystander page.
/// Each malformed frame (not JSON, an unknown kind, binary) must close its socket 1008, a frame
/// of 1 MiB + 1 byte 1009, and a flood of 5000 events over a 100/s cap must be dropped and
/// counted, never closed; after each, the bystander must still answer a command.
pub async fn hostile_frames(env: &GateEnv) -> Ran {
    let history = History::new();
    let (daemon, token) = match kit::daemon(
        traced::builder().env(reticle::config::env::MAX_EVENTS_PER_SECOND, "100"),
    )
    .await
    {
        Ok(started) => started,
        Err(why) => return could_not_start(history, fault::MALFORMED_JSON, &why),
    };
    let client = BridgeClient::new(daemon.port());
    let Some(bystander) = connect_call(
        &history,
        &client,
        daemon.port(),
        "http://127.0.0.1:3000",
        "bystander",
        &token,
    )
    .await
    else {
        return could_not_start(
            history,
            fault::MALFORMED_JSON,
            "the bystander page was not admitted",
        );
    };
    let cases = [
        (
            fault::MALFORMED_JSON,
            Hostile::Text("{\"kind\":"),
            close::POLICY,
        ),
        (
            fault::UNKNOWN_KIND,
            Hostile::Json(json!({"kind": "shout"})),
            close::POLICY,
        ),
        (
            fault::BINARY_FRAME,
            Hostile::Binary(vec![0xff, 0xfe, 0x00]),
            close::POLICY,
        ),
        (fault::OVERSIZED_FRAME, Hostile::Oversized, close::TOO_BIG),
    ];
    for (n, (fault, frame, code)) in cases.into_iter().enumerate() {
        let session = format!("hostile-{n}");
        let page = admitted_page(&client, daemon.port(), &session, &token).await;
        let Some(mut page) = page else {
            history.fault(
                fault,
                false,
                json!({ "reason": "the hostile page was not admitted" }),
            );
            continue;
        };
        let written = match frame {
            Hostile::Text(text) => page.send_text(text).await,
            Hostile::Json(value) => page.send_json(&value).await,
            Hostile::Binary(bytes) => page.send_binary(bytes).await,
            Hostile::Oversized => {
                let mut event = wire_page::event(&session, "signal", json!({"blob": ""}));
                let pad = reticle::wire::limits::MAX_FRAME_BYTES + 1 - event.to_string().len();
                event["event"]["data"]["blob"] = json!("x".repeat(pad));
                page.send_json(&event).await
            }
        };
        // The daemon may close the socket before the client finishes writing: its close is the
        // evidence the frame reached it, the client's own write result is not.
        let closed = page.closed(BOUND).await;
        history.fault(
            fault,
            written || closed.is_some(),
            json!({ "session": session, "expect": code, "written": written }),
        );
        history.invoke("frame", json!({ "session": session }));
        match closed {
            Some((code, reason)) => history.complete(
                OpType::Fail,
                "frame",
                json!({ "code": code, "reason": reason }),
            ),
            None => history.complete(
                OpType::Info,
                "frame",
                json!({ "message": format!("not closed within {BOUND:?}") }),
            ),
        };
        page_kit::query_buttons(&history, &client, "bystander").await;
    }

    // The flood: 5000 events as fast as the socket takes them, over a cap of 100 a second.
    const FLOOD: u64 = 5000;
    match admitted_page(&client, daemon.port(), "flooder", &token).await {
        None => {
            history.fault(
                fault::FLOOD,
                false,
                json!({ "reason": "the flooding page was not admitted" }),
            );
        }
        Some(mut flooder) => {
            let frames = (0..FLOOD).map(|i| {
                wire_page::event(
                    "flooder",
                    "dom.text",
                    json!({ "text": format!("tick {i}") }),
                )
                .to_string()
            });
            let written = flooder.send_burst(frames).await;
            let counted = poll::within(BOUND, async || {
                let entry = client.try_session("flooder").await.ok().flatten()?;
                let c = &entry["counters"];
                (c["eventsStored"].as_u64()? + c["eventsDropped"].as_u64()? >= FLOOD)
                    .then(|| c.clone())
            })
            .await;
            let closed = match flooder.next(Duration::from_millis(50)).await {
                Some(Incoming::Closed { code, reason }) => Some((code, reason)),
                _ => None,
            };
            // Established when the burst was written or the daemon answered it with a close
            // (it may close before the client finishes writing); shown only by dropped events.
            history.fault(
                fault::FLOOD,
                written || closed.is_some(),
                json!({ "events": FLOOD, "capPerSecond": 100, "expect": "open", "written": written }),
            );
            history.invoke("frame", json!({ "session": "flooder", "events": FLOOD }));
            match closed {
                Some((code, reason)) => history.complete(
                    OpType::Fail,
                    "frame",
                    json!({ "code": code, "reason": reason }),
                ),
                _ => {
                    let counters = match counted {
                        Some(c) => c,
                        None => client
                            .try_session("flooder")
                            .await
                            .ok()
                            .flatten()
                            .map(|s| s["counters"].clone())
                            .unwrap_or(Value::Null),
                    };
                    history.complete(
                        OpType::Ok,
                        "frame",
                        json!({ "open": true, "counters": counters }),
                    )
                }
            };
            page_kit::query_buttons(&history, &client, "bystander").await;
        }
    }
    drop(bystander);
    traced::call_then_check_trace(env, &history, &daemon).await;
    judged(history, judge_hostile_frames)
}

/// Opens a page that answers commands and waits until it is a session.
async fn admitted_page(
    client: &BridgeClient,
    port: u16,
    session: &str,
    token: &str,
) -> Option<WirePage> {
    let mut page = WirePage::open_with(port, ORIGIN, Some(echo_responder()))
        .await
        .ok()?;
    page.hello(session, Some(token)).await;
    let (op, _) = admitted_or_closed(client, &mut page, session).await;
    (op == OpType::Ok).then_some(page)
}

/// Judges H4.6's history.
pub fn judge_hostile_frames(ops: &[Op]) -> Judgement {
    settle(|| {
        controls_held(ops)?;
        let mut parts = Vec::new();
        for fault in [
            fault::MALFORMED_JSON,
            fault::UNKNOWN_KIND,
            fault::BINARY_FRAME,
            fault::OVERSIZED_FRAME,
            fault::FLOOD,
        ] {
            for segment in established(ops, fault)? {
                parts.push(judge_hostile(&segment));
            }
        }
        let all_held = parts.iter().all(|p| p.outcome == RowOutcome::Survived);
        if all_held {
            return Ok(Judgement::new(
                RowOutcome::Survived,
                format!(
                    "{}; the daemon and the bystander answered after each",
                    parts
                        .iter()
                        .map(|p| p.evidence.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        Ok(worst(parts))
    })
}

fn judge_hostile(segment: &Segment<'_>) -> Judgement {
    let f = segment.fault.f.as_str();
    let frame = segment.completion("frame");
    let frame_part = match (segment.fault.value["expect"].as_u64(), frame) {
        (Some(expect), Some(op)) if op.op_type == OpType::Fail => {
            if op.value["code"].as_u64() == Some(expect) {
                Judgement::new(RowOutcome::Survived, format!("{f} closed {expect}"))
            } else {
                Judgement::new(
                    RowOutcome::Silent,
                    format!(
                        "{f} closed {} \"{}\" (expected {expect})",
                        op.value["code"],
                        one_line(op.value["reason"].as_str().unwrap_or(""))
                    ),
                )
            }
        }
        (Some(_), _) => Judgement::new(RowOutcome::Silent, format!("{f} was never closed")),
        (None, Some(op)) if op.op_type == OpType::Ok => {
            let c = &op.value["counters"];
            let events = segment.fault.value["events"].as_u64().unwrap_or(0);
            match (c["eventsStored"].as_u64(), c["eventsDropped"].as_u64()) {
                (Some(stored), Some(0)) if stored >= events => Judgement::new(
                    RowOutcome::Inconclusive,
                    format!(
                        "a flood of {events}: all {stored} stored, none dropped: the cap never bit, the fault was not shown"
                    ),
                ),
                (Some(stored), Some(dropped)) if stored + dropped >= events => Judgement::new(
                    RowOutcome::Survived,
                    format!(
                        "a flood of {events}: {stored} stored + {dropped} dropped and counted, never closed"
                    ),
                ),
                _ => Judgement::new(
                    RowOutcome::Silent,
                    format!("a flood of {events} lost events nobody counted: {c}"),
                ),
            }
        }
        (None, Some(op)) if op.op_type == OpType::Fail => Judgement::new(
            RowOutcome::Surfaced,
            format!(
                "the flood closed its socket {} \"{}\" instead of dropping and counting",
                op.value["code"],
                one_line(op.value["reason"].as_str().unwrap_or(""))
            ),
        ),
        (None, _) => Judgement::new(RowOutcome::Silent, format!("{f}: no record of the page")),
    };
    let bystander = segment.completion("command");
    if bystander.is_some_and(|o| o.op_type == OpType::Ok) {
        frame_part
    } else {
        worst(vec![
            frame_part,
            Judgement::new(
                RowOutcome::Silent,
                format!(
                    "after {f} the bystander was not drivable: {}",
                    one_line(&bystander.map(|o| text(&o.value)).unwrap_or_default())
                ),
            ),
        ])
    }
}

/// H4.6 in the row table.
pub const H4_6: RowGate = RowGate {
    id: "H4.6",
    file: file!(),
    scenario: |env| Box::pin(hostile_frames(env)),
    judge: judge_hostile_frames,
    controls: &[],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::fault_segments;

    #[test]
    fn a_flood_that_loses_uncounted_events_is_silent() {
        let h = History::new();
        h.fault(fault::FLOOD, true, json!({"events": 5000}));
        h.complete(
            OpType::Ok,
            "frame",
            json!({"counters": {"eventsStored": 100, "eventsDropped": 10}}),
        );
        h.complete(OpType::Ok, "command", json!({}));
        assert_eq!(
            judge_hostile_frames(&h.ops()).outcome,
            RowOutcome::Inconclusive,
            "the other faults were never injected"
        );
        let ops = h.ops();
        let flood = fault_segments::segments(&ops).into_iter().next().unwrap();
        assert_eq!(judge_hostile(&flood).outcome, RowOutcome::Silent);
    }

    /// One flood segment whose page stayed open with `counters`, the bystander answering.
    fn flood_with(counters: Value) -> Vec<Op> {
        let h = History::new();
        h.fault(fault::FLOOD, true, json!({"events": 5000}));
        h.complete(
            OpType::Ok,
            "frame",
            json!({"open": true, "counters": counters}),
        );
        h.complete(OpType::Ok, "command", json!({}));
        h.ops()
    }

    #[test]
    fn a_flood_that_dropped_nothing_did_not_show_the_fault() {
        let ops = flood_with(json!({"eventsStored": 5000, "eventsDropped": 0}));
        let flood = fault_segments::segments(&ops).into_iter().next().unwrap();
        assert_eq!(judge_hostile(&flood).outcome, RowOutcome::Inconclusive);
        let ops = flood_with(json!({"eventsStored": 100, "eventsDropped": 4900}));
        let flood = fault_segments::segments(&ops).into_iter().next().unwrap();
        assert_eq!(judge_hostile(&flood).outcome, RowOutcome::Survived);
    }
}
