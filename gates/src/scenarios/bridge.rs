//! Hop 4 scenarios: each provokes one bridge row against a real daemon (with real Chromium and
//! our SDK where the row is about what a page sees), records the fault and every client call in
//! a history, and judges that history. A client call here is a page's hello (`ok` when it became
//! a session, `fail` with the close code and reason when refused), a bridge command (see
//! [`page_kit::classify`]) or `reticle status` as a user runs it. Controls run inside the scenario;
//! one that misbehaves makes the row inconclusive. The daemon each fault hits is traced, served a
//! tool call through an agent after the fault and its trace checked ([`super::traced`]).

use std::time::Duration;

use harness::wire_page::{self, Incoming, OpenError, Responder, echo_responder};
use harness::{BridgeClient, OwnedDaemon, SdkRig, WirePage, cli, poll};
use reticle::wire::close::code as close;
use serde_json::{Value, json};

use super::fault_segments::{Segment, established, first_segment};
use super::kit::{BOUND, control, controls_held, could_not_start, judged, settle, worst};
use super::{GateEnv, Ran, traced};
use super::{kit, page_kit};
use crate::fault;
use crate::history::{History, Op, OpType};
use crate::judge::{Judgement, RowOutcome, one_line, text};

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

// ------------------------------------------------------------------------------------------
// H4.1

/// H4.1: a page speaking another protocol version. A raw page's hello at version 2 must be closed
/// 1008 with a reason naming both versions and be listed by `reticle status`; our SDK in
/// Chromium, its hello rewritten to version 2 on the wire, must warn once in the page console and
/// back off (not give up, not hammer). Control: the same hello at version 1 becomes a session.
pub async fn version_mismatch(env: &GateEnv) -> Ran {
    let history = History::new();
    let rig = match SdkRig::launch_with(traced::TRACED).await {
        Ok(rig) => rig,
        Err(why) => return could_not_start(history, fault::HELLO_OTHER_VERSION, &why),
    };
    let port = rig.port();

    let mut hello = wire_page::hello("skewed-page", Some(rig.token()));
    hello["protocolVersion"] = json!(2);
    hello["url"] = json!("http://localhost:5173/checkout");
    let mut page = match WirePage::open(port, ORIGIN).await {
        Ok(page) => page,
        Err(err) => return could_not_start(history, fault::HELLO_OTHER_VERSION, &err.to_string()),
    };
    history.fault(
        fault::HELLO_OTHER_VERSION,
        true,
        json!({ "session": "skewed-page", "protocolVersion": 2, "daemonSpeaks": 1 }),
    );
    hello_call(&history, &rig.client, &mut page, &hello).await;
    history.invoke("bridge_status", json!({}));
    match rig.client.try_status().await {
        Ok(status) => history.complete(OpType::Ok, "bridge_status", status),
        Err(why) => history.complete(OpType::Info, "bridge_status", json!({ "message": why })),
    };
    let port_arg = port.to_string();
    history.invoke("status", json!({ "args": ["status", "--port", &port_arg] }));
    let said = cli::run_with(
        &env.reticle,
        rig.state_dir(),
        &["status", "--port", &port_arg],
    )
    .await;
    kit::complete_cli(&history, "status", &said);

    // Our SDK in a real page, its hello rewritten to version 2 by the page's instrumented socket.
    history.invoke("sdk_connect", json!({ "session": "skewed-sdk", "skew": 2 }));
    let tab = match rig
        .browser
        .open(&rig.url_with("skewed-sdk", "&skew=2"))
        .await
    {
        Ok(tab) => tab,
        Err(err) => {
            history.fault(
                fault::SDK_HELLO_OTHER_VERSION,
                false,
                json!({ "reason": err.to_string() }),
            );
            return judged(history, judge_version_mismatch);
        }
    };
    // The fault took once a version 2 hello left the page; what the daemon and the SDK do with
    // it is what is judged.
    let rewritten = poll::within(BOUND, async || {
        let gate: Value = tab.eval("window.__gate").await.ok()?;
        (gate["rewritten"].as_u64()? >= 1).then_some(gate)
    })
    .await;
    history.fault(
        fault::SDK_HELLO_OTHER_VERSION,
        rewritten.is_some(),
        json!({ "gate": rewritten }),
    );
    let warned = poll::within(BOUND, async || {
        let lines = tab.console_matching("warning", "refused this page");
        (!lines.is_empty()).then_some(lines)
    })
    .await
    .unwrap_or_default();
    let status: Value = tab
        .eval("window.__reticle.status()")
        .await
        .unwrap_or(Value::Null);
    let lines: Vec<&str> = warned.iter().map(|l| l.text.as_str()).collect();
    history.complete(
        if lines.is_empty() {
            OpType::Info
        } else {
            OpType::Fail
        },
        "sdk_connect",
        json!({ "message": lines.first().copied().unwrap_or("no warning"), "warnings": lines, "status": status }),
    );

    // Control: the same page at version 1 becomes a session.
    hello["protocolVersion"] = json!(1);
    let admitted = match WirePage::open(port, ORIGIN).await {
        Ok(mut page) => {
            page.send_json(&hello).await;
            admitted_or_closed(&rig.client, &mut page, "skewed-page").await
        }
        Err(err) => (OpType::Info, json!({ "message": err.to_string() })),
    };
    control(
        &history,
        "the same hello at version 1 becomes a session",
        admitted.0 == OpType::Ok,
        admitted.1,
    );
    traced::call_on_rig_then_check_trace(env, &history, &rig).await;
    judged(history, judge_version_mismatch)
}

/// Judges H4.1's history.
pub fn judge_version_mismatch(ops: &[Op]) -> Judgement {
    settle(|| {
        controls_held(ops)?;
        let wire = established(ops, fault::HELLO_OTHER_VERSION)?;
        let sdk = established(ops, fault::SDK_HELLO_OTHER_VERSION)?;
        let mut parts = Vec::new();
        parts.push(judge_policy_refusal(
            wire[0].completion("hello"),
            &["page speaks 2", "daemon speaks 1"],
            Wording {
                unnamed: "without naming both versions",
                admitted: "a page speaking version 2 was admitted as a session",
                neither: "the version 2 hello",
            },
        ));
        parts.push(match wire[0].completion("status") {
            Some(op)
                if op.op_type == OpType::Ok
                    && op.value["stdout"].as_str().is_some_and(|s| {
                        s.contains("refused skewed-page") && s.contains("version_mismatch")
                    }) =>
            {
                Judgement::new(
                    RowOutcome::Surfaced,
                    "`reticle status` lists the refused page",
                )
            }
            other => Judgement::new(
                RowOutcome::Silent,
                format!(
                    "`reticle status` does not list the refused page: {}",
                    one_line(&other.map(|o| text(&o.value)).unwrap_or_default())
                ),
            ),
        });
        parts.push(judge_sdk_refusal(&sdk[0]));
        Ok(worst(parts))
    })
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

/// The SDK half of H4.1: one warning naming the versions, and a retry scheduled well later.
fn judge_sdk_refusal(segment: &Segment<'_>) -> Judgement {
    let Some(op) = segment.completion("sdk_connect") else {
        return Judgement::new(RowOutcome::Silent, "the SDK page never finished connecting");
    };
    let warnings: Vec<&str> = op.value["warnings"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let state = op.value["status"]["state"].as_str().unwrap_or("");
    let delay = op.value["status"]["transport"]["lastDelayMs"]
        .as_u64()
        .unwrap_or(0);
    match warnings.as_slice() {
        [] => Judgement::new(
            RowOutcome::Silent,
            "the SDK never told the page console it was refused",
        ),
        [one] if !one.contains("page speaks 2") => Judgement::new(
            RowOutcome::Silent,
            format!(
                "the SDK's warning does not name the versions: {}",
                one_line(one)
            ),
        ),
        [_] if state == "stopped" => Judgement::new(
            RowOutcome::Silent,
            "the SDK gave up for good after the refusal (terminal)",
        ),
        [_] if delay < 10_000 => Judgement::new(
            RowOutcome::Silent,
            format!("the SDK retries the refused hello after only {delay} ms"),
        ),
        [_] => Judgement::new(
            RowOutcome::Surfaced,
            format!(
                "the SDK warned once and retries in {:.1} s",
                delay as f64 / 1000.0
            ),
        ),
        many => Judgement::new(
            RowOutcome::Silent,
            format!("the SDK warned {} times for one refusal", many.len()),
        ),
    }
}

// ------------------------------------------------------------------------------------------
// H4.2

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

// ------------------------------------------------------------------------------------------
// H4.3

/// Sends `snapshot` to `session`, waits until the daemon shows it pending, then runs `lose` (the
/// page goes away) and records the fault and how the command ended. Shared by the real scenario
/// (a Chromium tab closed) and the negative control (a stand-in page).
pub async fn lose_page_mid_command(
    history: &History,
    client: &BridgeClient,
    session: &str,
    lose: impl AsyncFnOnce() -> Result<Value, String>,
) {
    history.invoke("command", json!({ "session": session, "name": "snapshot" }));
    let task = {
        let (client, session) = (client.clone(), session.to_string());
        tokio::spawn(async move {
            client
                .try_command(
                    Some(&session),
                    "snapshot",
                    json!({}),
                    Some(Duration::from_secs(60)),
                )
                .await
        })
    };
    let pending = poll::within(BOUND, async || match client.try_session(session).await {
        Ok(Some(entry)) if entry["pendingCommands"] == 1 => Some(()),
        _ => None,
    })
    .await
    .is_some();
    let lost = if pending {
        lose().await
    } else {
        Err("the command never showed pending at the page".into())
    };
    match lost {
        Ok(detail) => {
            history.fault(fault::LOSE_PAGE_MID_COMMAND, true, detail);
        }
        Err(why) => {
            task.abort();
            history.fault(
                fault::LOSE_PAGE_MID_COMMAND,
                false,
                json!({ "reason": why }),
            );
            return;
        }
    }
    let answer = match tokio::time::timeout(Duration::from_secs(70), task).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(join)) => Err(join.to_string()),
        Err(_) => Err("no answer within 70 s".into()),
    };
    let (op, value) = page_kit::classify(&answer);
    history.complete(op, "command", value);
}

/// H4.3: a tab closed mid-command. Our SDK in Chromium answers a query (control: a live page
/// answers); then the page's instrumented socket holds what the daemon sends, so the next command
/// reaches the page and stays unanswered (the harness sees it held in the page) while the daemon
/// shows it pending, and the tab is closed. The command must resolve as `observation_lost`,
/// never as the app's `ok:false`.
pub async fn tab_closed_mid_command(env: &GateEnv) -> Ran {
    tab_closed_mid_command_with(env, traced::TRACED).await
}

/// H4.3's scenario with `daemon_env` set on its daemon (traced only when it says so): the
/// negative control of the trace check on the bridge gives it the switch that breaks its trace.
pub async fn tab_closed_mid_command_with(env: &GateEnv, daemon_env: &[(&str, &str)]) -> Ran {
    let history = History::new();
    let rig = match SdkRig::launch_with(daemon_env).await {
        Ok(rig) => rig,
        Err(why) => return could_not_start(history, fault::LOSE_PAGE_MID_COMMAND, &why),
    };
    let tab = match rig.browser.open(&rig.url("closing")).await {
        Ok(tab) => tab,
        Err(err) => {
            return could_not_start(history, fault::LOSE_PAGE_MID_COMMAND, &err.to_string());
        }
    };
    page_kit::session_appears(&history, &rig.client, "closing", BOUND).await;
    let (op, answer) = page_kit::query_buttons(&history, &rig.client, "closing").await;
    control(
        &history,
        "the live page answers a command",
        op == OpType::Ok,
        answer,
    );
    if tab.eval::<bool>("window.__gate.hold = true").await.is_err() {
        return could_not_start(
            history,
            fault::LOSE_PAGE_MID_COMMAND,
            "could not make the page hold its commands",
        );
    }
    lose_page_mid_command(&history, &rig.client, "closing", async move || {
        let held = poll::within(BOUND, async || {
            let held: Vec<String> = tab.eval("window.__gate.held").await.ok()?;
            held.iter()
                .any(|frame| frame.contains("\"snapshot\""))
                .then_some(held)
        })
        .await
        .ok_or("the command never reached the page")?;
        tab.close()
            .await
            .map_err(|e| format!("the tab did not close: {e}"))?;
        Ok(json!({ "closed": "the tab, through CDP", "heldByThePage": held }))
    })
    .await;
    traced::call_on_rig_then_check_trace(env, &history, &rig).await;
    judged(history, judge_lost_page)
}

/// The negative control for H4.3: a stand-in page that, as its tab closes, answers the pending
/// command `ok:false` "app failed". The loss is blamed on the app, so the checker must score it
/// silent.
pub async fn stand_in_page_blames_the_app() -> Ran {
    let history = History::new();
    let (daemon, token) = match kit::daemon(OwnedDaemon::builder()).await {
        Ok(started) => started,
        Err(why) => return could_not_start(history, fault::LOSE_PAGE_MID_COMMAND, &why),
    };
    let client = BridgeClient::new(daemon.port());
    // It answers everything but `snapshot`, which it keeps for the moment its tab closes.
    let responder: Responder = std::sync::Arc::new(|command: &reticle::wire::Command| {
        (command.name != "snapshot").then(|| (true, json!({ "elements": [] })))
    });
    let mut page = match WirePage::open_with(daemon.port(), ORIGIN, Some(responder)).await {
        Ok(page) => page,
        Err(err) => {
            return could_not_start(history, fault::LOSE_PAGE_MID_COMMAND, &err.to_string());
        }
    };
    page.hello("stand-in", Some(&token)).await;
    page_kit::session_appears(&history, &client, "stand-in", BOUND).await;
    let (op, answer) = page_kit::command(&history, &client, "stand-in", "query", json!({})).await;
    control(
        &history,
        "the live page answers a command",
        op == OpType::Ok,
        answer,
    );
    lose_page_mid_command(&history, &client, "stand-in", async move || {
        let command = page
            .next_command(BOUND)
            .await
            .ok_or("the stand-in never received the command")?;
        page.answer(&command, false, json!("app failed")).await;
        page.close().await;
        Ok(json!({ "stand_in": "answered ok:false \"app failed\" as its tab closed" }))
    })
    .await;
    judged(history, judge_lost_page)
}

/// Judges an H4.3 history: the pending command must end as `observation_lost`.
pub fn judge_lost_page(ops: &[Op]) -> Judgement {
    settle(|| {
        let (done, said) = command_answer(
            ops,
            fault::LOSE_PAGE_MID_COMMAND,
            "the pending command was never answered after the page went away",
        )?;
        let v = &done.value;
        Ok(match (done.op_type, v["outcome"].as_str()) {
            (OpType::Info, Some("observation_lost")) => {
                Judgement::new(RowOutcome::Surfaced, format!("observation_lost: {said}"))
            }
            (OpType::Info, Some(other)) => Judgement::new(
                RowOutcome::Silent,
                format!("the command ended `{other}` instead of observation_lost: {said}"),
            ),
            (OpType::Info, None) => return Err(daemon_stopped_answering(&said)),
            (OpType::Fail, Some("answered")) => Judgement::new(
                RowOutcome::Silent,
                format!("the loss was blamed on the app: answered ok:false \"{said}\""),
            ),
            (OpType::Fail, _) => Judgement::new(
                RowOutcome::Silent,
                format!("the pending command was refused instead of lost: {said}"),
            ),
            (_, _) => Judgement::new(
                RowOutcome::Silent,
                format!("the command reported success from a page that went away: {said}"),
            ),
        })
    })
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

// ------------------------------------------------------------------------------------------
// H4.4

/// H4.4: the reaper marks a quiet session idle (bound 300 ms); the next command must revive it
/// and be answered, or say why. Control: under the default bound a fresh session is not idle and
/// its command revives nothing (so `idle` and `revived` are not always on).
pub async fn reaped_session_is_revived(env: &GateEnv) -> Ran {
    let history = History::new();
    let (daemon, token) = match kit::daemon(
        traced::builder().env(reticle::config::env::SESSION_IDLE_MS, "300"),
    )
    .await
    {
        Ok(started) => started,
        Err(why) => return could_not_start(history, fault::IDLE_PAST_REAPER_BOUND, &why),
    };
    let client = BridgeClient::new(daemon.port());
    let page = match WirePage::open_with(daemon.port(), ORIGIN, Some(echo_responder())).await {
        Ok(page) => page,
        Err(err) => {
            return could_not_start(history, fault::IDLE_PAST_REAPER_BOUND, &err.to_string());
        }
    };
    page.hello("quiet", Some(&token)).await;
    page_kit::session_appears(&history, &client, "quiet", BOUND).await;
    let idle = poll::within(BOUND, async || match client.try_session("quiet").await {
        Ok(Some(entry)) if entry["idle"] == true => Some(entry),
        _ => None,
    })
    .await;
    history.fault(
        fault::IDLE_PAST_REAPER_BOUND,
        idle.is_some(),
        json!({ "boundMs": 300, "session": idle }),
    );
    page_kit::query_buttons(&history, &client, "quiet").await;

    let (patient, patient_token) = match kit::daemon(OwnedDaemon::builder()).await {
        Ok(started) => started,
        Err(why) => {
            control(
                &history,
                "a fresh session under the default bound",
                false,
                json!({ "message": why }),
            );
            return judged(history, judge_reaper);
        }
    };
    let patient_client = BridgeClient::new(patient.port());
    let held = match WirePage::open_with(patient.port(), ORIGIN, Some(echo_responder())).await {
        Ok(busy) => {
            busy.hello("busy", Some(&patient_token)).await;
            let seen = poll::within(BOUND, async || {
                patient_client.try_session("busy").await.ok().flatten()
            })
            .await;
            let answer = patient_client
                .try_command(Some("busy"), "query", json!({}), None)
                .await
                .unwrap_or(Value::Null);
            let held = seen.as_ref().is_some_and(|s| s["idle"] == false)
                && answer["outcome"] == "answered"
                && answer["revived"] == false;
            (held, json!({ "session": seen, "answer": answer }))
        }
        Err(err) => (false, json!({ "message": err.to_string() })),
    };
    control(
        &history,
        "a fresh session under the default bound is not idle and revives nothing",
        held.0,
        held.1,
    );
    drop(page);
    traced::call_then_check_trace(env, &history, &daemon).await;
    judged(history, judge_reaper)
}

/// Judges H4.4's history.
pub fn judge_reaper(ops: &[Op]) -> Judgement {
    settle(|| {
        let (done, said) = command_answer(
            ops,
            fault::IDLE_PAST_REAPER_BOUND,
            "the command to the reaped session was never answered",
        )?;
        let v = &done.value;
        Ok(match done.op_type {
            OpType::Ok => Judgement::new(
                RowOutcome::Survived,
                format!(
                    "the next command revived the reaped session and was answered (revived: {})",
                    v["revived"]
                ),
            ),
            OpType::Fail if said.contains("idle") || said.contains("reap") => {
                Judgement::new(RowOutcome::Surfaced, format!("refused naming it: {said}"))
            }
            OpType::Info if v["outcome"].is_null() => return Err(daemon_stopped_answering(&said)),
            _ => Judgement::new(
                RowOutcome::Silent,
                format!("the command to the reaped session: {} {said}", v["outcome"]),
            ),
        })
    })
}

// ------------------------------------------------------------------------------------------
// H4.5

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

// ------------------------------------------------------------------------------------------
// H4.6

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::fault_segments;

    fn lost_page(answer: Value, op: OpType) -> Vec<Op> {
        let h = History::new();
        control(&h, "the live page answers a command", true, json!({}));
        h.invoke("command", json!({}));
        h.fault(fault::LOSE_PAGE_MID_COMMAND, true, json!({}));
        h.complete(op, "command", answer);
        h.ops()
    }

    #[test]
    fn a_lost_page_is_surfaced_only_as_observation_lost() {
        let lost = lost_page(
            json!({"outcome": "observation_lost", "reason": "the page disconnected (closed)"}),
            OpType::Info,
        );
        assert_eq!(judge_lost_page(&lost).outcome, RowOutcome::Surfaced);
        let blamed = lost_page(
            json!({"outcome": "answered", "ok": false, "error": "app failed"}),
            OpType::Fail,
        );
        let judged = judge_lost_page(&blamed);
        assert_eq!(judged.outcome, RowOutcome::Silent);
        assert!(
            judged.evidence.contains("blamed on the app"),
            "{}",
            judged.evidence
        );
        let hung = lost_page(json!({"outcome": "timed_out"}), OpType::Info);
        assert_eq!(judge_lost_page(&hung).outcome, RowOutcome::Silent);
        let dead = lost_page(json!({"message": "connection refused"}), OpType::Info);
        assert_eq!(judge_lost_page(&dead).outcome, RowOutcome::Inconclusive);
    }

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
