//! S9: two documents on one session id, in Chromium (a same-origin iframe loading the SDK, and a
//! second tab seeded with the first's sessionStorage); documents sharing an id, or a command
//! landing in another document, are `silent`. Negative control: the stand-in bridge that swaps
//! sessions silently ([`env::TEST_STAND_IN_SESSION_SWAP`]), and the judge's unit tests.

use std::time::Duration;

use harness::{SdkRig, Tab, poll};
use reticle::config::env;
use serde_json::{Value, json};

use crate::controls::StandIn;
use crate::history::{Actor, History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::kit::{control, controls_held, could_not_start, judged, observe, settle};
use crate::scenarios::{GateEnv, Ran};

/// The session the first tab connects as.
const SESSION: &str = "shared-tab";

/// The fault: more documents than one claiming [`SESSION`].
const FAULT: &str = "two_documents_one_session";

/// How long the documents get to connect, and to settle who holds which id.
const BOUND: Duration = Duration::from_secs(20);

/// The SDK's sessionStorage key (`sdk/src/protocol.js` `StorageKey.SESSION_ID`).
const SESSION_KEY: &str = "__reticle_session";

/// One document claiming the id: its name, and the script reaching its window from its tab.
struct Document {
    name: &'static str,
    window: &'static str,
}

const FIRST: Document = Document {
    name: "first tab",
    window: "window",
};

const FRAME: Document = Document {
    name: "same-origin frame",
    window: "document.querySelector('[data-testid=same-origin-frame]').contentWindow",
};

const DUPLICATE: Document = Document {
    name: "duplicated tab",
    window: "window",
};

/// Each document's mark: a button only that document has, so a command's answer says where it
/// landed.
fn mark(document: &Document) -> String {
    format!("Document: {}", document.name)
}

/// S9 at its target: every document must end up on a session of its own (or refused naming the
/// conflict), and a command sent to a document's session must land in that document.
pub async fn shared_session_ids_are_kept_apart(_env: &GateEnv) -> Ran {
    run(&[]).await
}

/// S9's negative control: the same run against the stand-in bridge that lets a hello take a
/// session from a live socket; it must score `silent`.
pub async fn stand_in_swaps_silently() -> Ran {
    run(&[(env::TEST_STAND_IN_SESSION_SWAP, "1")]).await
}

async fn run(daemon_env: &[(&str, &str)]) -> Ran {
    let history = History::new();
    let rig = match SdkRig::launch_with(daemon_env).await {
        Ok(rig) => rig,
        Err(why) => return could_not_start(history, FAULT, &why),
    };
    let first_url = format!("{}&sameOriginFrame=1", rig.fixture_url(SESSION));
    let first = match rig.browser.open_in_window(&first_url).await {
        Ok(tab) => tab,
        Err(why) => return could_not_start(history, FAULT, &why.to_string()),
    };
    let connected = rig.wait_session(SESSION, BOUND).await;
    control(
        &history,
        "the first tab connects as its session",
        connected,
        json!({ "session": SESSION }),
    );
    // The duplicate: the same app, its sessionStorage a copy of the first tab's.
    let duplicate_url = rig.app.url(&format!(
        "/?reticlePort={}&reticleToken={}&tab=duplicate",
        rig.port(),
        rig.token()
    ));
    let seed = format!(
        "if (window === window.top) {{ try {{ sessionStorage.setItem('{SESSION_KEY}', '{SESSION}'); }} catch (_) {{}} }}"
    );
    let duplicate = match rig.browser.open_seeded(&duplicate_url, &seed).await {
        Ok(tab) => tab,
        Err(why) => return could_not_start(history, FAULT, &why.to_string()),
    };
    let documents = [(&first, FIRST), (&first, FRAME), (&duplicate, DUPLICATE)];
    let claimed = poll::within(BOUND, async || {
        let mut all = true;
        for (tab, document) in &documents {
            all &= session_of(tab, document).await.is_some();
        }
        all.then_some(())
    })
    .await
    .is_some();
    history.fault(
        FAULT,
        claimed,
        json!({ "session": SESSION, "documents": documents.iter().map(|(_, d)| d.name).collect::<Vec<_>>() }),
    );
    for (tab, document) in &documents {
        let _ = tab
            .eval::<Value>(&format!(
                "(() => {{ const w = {}; const b = w.document.createElement('button'); b.textContent = {}; w.document.body.append(b); return true; }})()",
                document.window,
                json!(mark(document))
            ))
            .await;
    }
    // Settled: each document on an id the daemon lists, or the bound passed.
    let _ = poll::within(BOUND, async || {
        let ids = document_ids(&documents).await;
        let listed = rig.client.try_sessions().await.ok()?;
        let listed = listed["sessions"].as_array()?.clone();
        let distinct: std::collections::BTreeSet<&String> = ids.iter().flatten().collect();
        let all_listed = ids
            .iter()
            .flatten()
            .all(|id| listed.iter().any(|s| s["id"] == **id));
        (distinct.len() == documents.len() && all_listed).then_some(())
    })
    .await;
    let ids = document_ids(&documents).await;
    let mut claims = Vec::new();
    for ((tab, document), id) in documents.iter().zip(ids) {
        let landed = match &id {
            Some(id) => rig
                .client
                .try_command(Some(id), "query", json!({ "role": "button" }), None)
                .await
                .unwrap_or_else(|why| json!({ "message": why })),
            None => Value::Null,
        };
        let replaced = tab
            .console()
            .iter()
            .filter(|l| l.text.contains("session replaced"))
            .count();
        claims.push(json!({
            "document": document.name,
            "mark": mark(document),
            "session": id,
            "landed": landed,
            "replacedWarnings": replaced,
        }));
    }
    let refusals = rig
        .client
        .try_status()
        .await
        .map(|s| s["refused"].clone())
        .unwrap_or(Value::Null);
    observe(
        &history,
        "documents",
        json!({ "claims": claims, "refused": refusals }),
    );
    drop((first, duplicate));
    rig.browser.close().await;
    judged(history, judge_shared_session)
}

/// The session id `document`'s SDK says it connects as (once `connect()` ran).
async fn session_of(tab: &Tab, document: &Document) -> Option<String> {
    let script = format!(
        "(() => {{ try {{ return {}.__reticleStatus().sessionId; }} catch (_) {{ return null; }} }})()",
        document.window
    );
    tab.eval::<Option<String>>(&script).await.ok().flatten()
}

async fn document_ids(documents: &[(&Tab, Document); 3]) -> Vec<Option<String>> {
    let mut ids = Vec::new();
    for (tab, document) in documents {
        ids.push(session_of(tab, document).await);
    }
    ids
}

/// S9's judge: each document must be on its own session, the daemon's, where a command lands in
/// that document; two documents on one id, a command landing elsewhere, or a document told its
/// session was replaced is a silent swap.
pub fn judge_shared_session(ops: &[Op]) -> Judgement {
    settle(|| {
        controls_held(ops)?;
        judge::established_fault(ops)?;
        let observed = ops
            .iter()
            .find(|o| o.actor == Actor::Harness && o.f == "documents")
            .ok_or_else(|| {
                Judgement::new(RowOutcome::Inconclusive, "the documents were not asked")
            })?;
        let claims = observed.value["claims"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut seen: Vec<(&str, &str)> = Vec::new();
        for claim in &claims {
            let document = claim["document"].as_str().unwrap_or("?");
            let Some(id) = claim["session"].as_str() else {
                return Ok(Judgement::new(
                    RowOutcome::Silent,
                    format!("the {document} is on no session and was not told why"),
                ));
            };
            if let Some((other, _)) = seen.iter().find(|(_, seen_id)| *seen_id == id) {
                return Ok(Judgement::new(
                    RowOutcome::Silent,
                    format!(
                        "the {other} and the {document} both hold session {id}: commands land in whichever said hello last"
                    ),
                ));
            }
            seen.push((document, id));
            if claim["replacedWarnings"].as_u64().unwrap_or(0) > 0 {
                return Ok(Judgement::new(
                    RowOutcome::Silent,
                    format!(
                        "the {document} lost its session to another document (told 'session replaced')"
                    ),
                ));
            }
            let answer = &claim["landed"];
            let mark = claim["mark"].as_str().unwrap_or("");
            if answer["outcome"] != "answered" || !answer.to_string().contains(mark) {
                return Ok(Judgement::new(
                    RowOutcome::Silent,
                    format!(
                        "a command to the {document}'s session {id} did not land in it: {}",
                        judge::one_line(&answer.to_string())
                    ),
                ));
            }
        }
        let ids: Vec<&str> = seen.iter().map(|(_, id)| *id).collect();
        let in_use = observed.value["refused"]
            .as_array()
            .map(|r| r.iter().filter(|p| p["kind"] == "session_in_use").count())
            .unwrap_or(0);
        Ok(Judgement::new(
            RowOutcome::Surfaced,
            format!(
                "{} documents claiming {SESSION} ended on sessions of their own ({}), each command landing in its document ({in_use} hello(s) refused 'session in use')",
                claims.len(),
                ids.join(", ")
            ),
        ))
    })
}

/// S9 in the row table.
pub const S9: RowGate = RowGate {
    id: "S9",
    file: file!(),
    scenario: |env| Box::pin(shared_session_ids_are_kept_apart(env)),
    judge: judge_shared_session,
    controls: &[StandIn::BridgeSwapsSessions],
};

#[cfg(test)]
mod tests {
    //! Negative control: the old bridge's history (three documents on one id, a command to it
    //! landing in the last one, the first told 'session replaced') scores `silent`; the fixed
    //! one `surfaced`.
    use super::*;

    fn claim(document: &Document, session: &str, landed_in: &Document, replaced: u64) -> Value {
        json!({
            "document": document.name,
            "mark": mark(document),
            "session": session,
            "landed": { "outcome": "answered", "ok": true, "result": { "matches": [ { "name": mark(landed_in) } ] } },
            "replacedWarnings": replaced,
        })
    }

    fn history(claims: Vec<Value>) -> Vec<Op> {
        let history = History::new();
        control(&history, "the first tab connects", true, json!({}));
        history.fault(FAULT, true, json!({}));
        observe(&history, "documents", json!({ "claims": claims }));
        history.ops()
    }

    #[test]
    fn documents_sharing_an_id_or_a_command_landing_elsewhere_is_silent() {
        let swapped = history(vec![
            claim(&FIRST, SESSION, &DUPLICATE, 1),
            claim(&FRAME, SESSION, &DUPLICATE, 0),
            claim(&DUPLICATE, SESSION, &DUPLICATE, 0),
        ]);
        assert_eq!(judge_shared_session(&swapped).outcome, RowOutcome::Silent);
        let misrouted = history(vec![
            claim(&FIRST, SESSION, &DUPLICATE, 0),
            claim(&FRAME, "s-frame", &FRAME, 0),
            claim(&DUPLICATE, "s-dup", &DUPLICATE, 0),
        ]);
        assert_eq!(judge_shared_session(&misrouted).outcome, RowOutcome::Silent);
        let kept_apart = history(vec![
            claim(&FIRST, SESSION, &FIRST, 0),
            claim(&FRAME, "s-frame", &FRAME, 0),
            claim(&DUPLICATE, "s-dup", &DUPLICATE, 0),
        ]);
        assert_eq!(
            judge_shared_session(&kept_apart).outcome,
            RowOutcome::Surfaced
        );
    }
}
