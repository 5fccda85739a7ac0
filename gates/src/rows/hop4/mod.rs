//! Hop 4 rows (page ↔ daemon, the bridge), one file each, and what they share: a page's hello
//! recorded as a call (`ok` when it became a session, `fail` with the close code and reason),
//! the judge of a refusal's wording, and what a command's answer says. Controls run inside each
//! scenario; the daemon each fault hits is traced and its trace checked after a tool call.

pub mod h4_1_version_mismatch;
pub mod h4_2_another_projects_page;
pub mod h4_3_tab_closed_mid_command;
pub mod h4_4_reaped_session;
pub mod h4_5_opaque_origins;
pub mod h4_6_hostile_frames;

use std::time::Duration;

use harness::wire_page::{Incoming, OpenError, echo_responder};
use harness::{BridgeClient, WirePage, poll};
use reticle::wire::close::code as close;
use serde_json::{Value, json};

use crate::history::{History, Op, OpType};
use crate::judge::{Judgement, RowOutcome, one_line, text};
use crate::scenarios::fault_segments::first_segment;
use crate::scenarios::kit::BOUND;

const ORIGIN: Option<&str> = Some("http://localhost:5173");

/// Waits until `page`'s hello made `session` a session (`ok`), or the bridge closed the socket
/// (`fail`, with the code and reason), or neither within the bound (`info`).
async fn admitted_or_closed(
    client: &BridgeClient,
    page: &mut WirePage,
    session: &str,
) -> (OpType, Value) {
    let seen = poll::within(BOUND, async || {
        if let Some(Incoming::Closed { code, reason }) = page.next(Duration::from_millis(5)).await {
            return Some((OpType::Fail, json!({ "code": code, "reason": reason })));
        }
        match client.try_session(session).await {
            Ok(Some(entry)) => Some((OpType::Ok, json!({ "session": entry }))),
            Ok(None) => None,
            Err(why) => Some((OpType::Info, json!({ "message": why }))),
        }
    })
    .await;
    seen.unwrap_or((
        OpType::Info,
        json!({ "message": format!("neither admitted nor closed within {BOUND:?}") }),
    ))
}

/// Sends `hello` on `page` as the client call `hello` and records how it ended.
async fn hello_call(
    history: &History,
    client: &BridgeClient,
    page: &mut WirePage,
    hello: &Value,
) -> (OpType, Value) {
    let session = hello["sessionId"].as_str().unwrap_or("").to_string();
    history.invoke("hello", hello.clone());
    let (op, value) = if page.send_json(hello).await {
        admitted_or_closed(client, page, &session).await
    } else {
        (
            OpType::Info,
            json!({ "message": "the socket was gone before the hello went out" }),
        )
    };
    history.complete(op, "hello", value.clone());
    (op, value)
}

/// Opens a page socket with `origin` and says hello with `token`, as the client call `connect`:
/// `ok` when it became a session, `fail` when refused at the upgrade (HTTP status and body) or
/// closed, `info` when neither happened. Returns the page when it was admitted.
async fn connect_call(
    history: &History,
    client: &BridgeClient,
    port: u16,
    origin: &str,
    session: &str,
    token: &str,
) -> Option<WirePage> {
    history.invoke("connect", json!({ "origin": origin, "session": session }));
    let opened = WirePage::open_with(port, Some(origin), Some(echo_responder())).await;
    let mut page = match opened {
        Ok(page) => page,
        Err(OpenError::Refused { status, body }) => {
            history.complete(
                OpType::Fail,
                "connect",
                json!({ "status": status, "message": body }),
            );
            return None;
        }
        Err(OpenError::Io(why)) => {
            history.complete(OpType::Info, "connect", json!({ "message": why }));
            return None;
        }
    };
    let (op, value) = if page.hello(session, Some(token)).await {
        admitted_or_closed(client, &mut page, session).await
    } else {
        (OpType::Info, json!({ "message": "the socket was gone" }))
    };
    history.complete(op, "connect", value);
    (op == OpType::Ok).then_some(page)
}

/// How [`judge_policy_refusal`] words a hello that was not refused as it must be.
struct Wording {
    /// After "closed <code>", when the close did not name everything it must.
    unnamed: &'static str,
    /// The whole evidence when the page was admitted.
    admitted: &'static str,
    /// The hello, when it was neither refused nor admitted.
    neither: &'static str,
}

/// A page's hello that must be refused: closed with the policy code and a reason naming every
/// one of `names` is surfaced; anything else (a close that does not name them, an admission, no
/// end at all) is silent.
fn judge_policy_refusal(hello: Option<&Op>, names: &[&str], wording: Wording) -> Judgement {
    match hello {
        Some(op) if op.op_type == OpType::Fail => {
            let reason = op.value["reason"].as_str().unwrap_or("");
            if op.value["code"] == close::POLICY && names.iter().all(|n| reason.contains(n)) {
                Judgement::new(
                    RowOutcome::Surfaced,
                    format!("closed {} \"{reason}\"", close::POLICY),
                )
            } else {
                Judgement::new(
                    RowOutcome::Silent,
                    format!(
                        "closed {} {}: \"{}\"",
                        op.value["code"],
                        wording.unnamed,
                        one_line(reason)
                    ),
                )
            }
        }
        Some(op) if op.op_type == OpType::Ok => {
            Judgement::new(RowOutcome::Silent, wording.admitted)
        }
        other => Judgement::new(
            RowOutcome::Silent,
            format!(
                "{} was neither refused nor admitted: {}",
                wording.neither,
                other.map(|o| text(&o.value)).unwrap_or_default()
            ),
        ),
    }
}

/// The answer to the command sent after the fault `f` (the last in its first segment), and what
/// it said on one line; silent, as `unanswered` says, when it was never answered; or the
/// judgement [`first_segment`] gives.
fn command_answer<'a>(
    ops: &'a [Op],
    f: &str,
    unanswered: &str,
) -> Result<(&'a Op, String), Judgement> {
    let segment = first_segment(ops, f)?;
    let Some(done) = segment.completion("command") else {
        return Err(Judgement::new(RowOutcome::Silent, unanswered.to_string()));
    };
    Ok((done, one_line(&text(&done.value))))
}

/// A command the daemon itself did not answer (`said` is why): nothing is known of the page.
fn daemon_stopped_answering(said: &str) -> Judgement {
    Judgement::new(
        RowOutcome::Inconclusive,
        format!("the daemon stopped answering: {said}"),
    )
}
