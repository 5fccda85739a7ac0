//! What the hop 4 and 5 scenarios share: bridge commands recorded as client calls, each answer
//! classified as Jepsen would ([`classify`]: `ok` when the page did it, `fail` when something
//! said it did not, `info` when nobody knows), [`query_buttons`] as the probe that a page
//! answers, and a page's hello awaited as a call ([`session_appears`]). It records; it must not
//! judge.

use std::time::Duration;

use harness::BridgeClient;
use serde_json::{Value, json};

use crate::history::{History, OpType};

/// Classifies a `POST /bridge/commands` answer: answered `ok:true` is `ok`; answered `ok:false`
/// and a refusal (HTTP 4xx) are `fail`; `observation_lost`, `timed_out` and a daemon that did
/// not answer are `info` (indeterminate: the command may or may not have run).
pub fn classify(answer: &Result<Value, String>) -> (OpType, Value) {
    match answer {
        Err(why) => (OpType::Info, json!({ "message": why })),
        Ok(value) => {
            let op = match (value["outcome"].as_str(), value["ok"].as_bool()) {
                (Some("answered"), Some(true)) => OpType::Ok,
                (Some("answered"), _) => OpType::Fail,
                (Some(_), _) => OpType::Info,
                (None, _) if value["httpStatus"].as_u64().unwrap_or(0) >= 400 => OpType::Fail,
                (None, _) => OpType::Info,
            };
            (op, value.clone())
        }
    }
}

/// Runs one bridge command as a client call, recorded with its answer.
pub async fn command(
    history: &History,
    client: &BridgeClient,
    session: &str,
    name: &str,
    args: Value,
) -> (OpType, Value) {
    history.invoke(
        "command",
        json!({ "session": session, "name": name, "args": args }),
    );
    let answer = client.try_command(Some(session), name, args, None).await;
    let (op, value) = classify(&answer);
    history.complete(op, "command", value.clone());
    (op, value)
}

/// Queries the buttons of `session`, recorded as a [`command`]: how a scenario sees that a page
/// answers (every page these scenarios drive has one).
pub async fn query_buttons(
    history: &History,
    client: &BridgeClient,
    session: &str,
) -> (OpType, Value) {
    command(history, client, session, "query", json!({"role": "button"})).await
}

/// Waits for a page's hello to make `session` a connected session, recorded as the client call
/// `hello`: `ok` when it is listed, `info` when the bound ran out (or the daemon stopped
/// answering) without it.
pub async fn session_appears(
    history: &History,
    client: &BridgeClient,
    session: &str,
    bound: Duration,
) -> bool {
    history.invoke("hello", json!({ "session": session }));
    let listed = harness::poll::within(bound, async || match client.try_session(session).await {
        Ok(Some(entry)) => Some(Ok(entry)),
        Ok(None) => None,
        Err(why) => Some(Err(why)),
    })
    .await;
    match listed {
        Some(Ok(entry)) => {
            history.complete(OpType::Ok, "hello", json!({ "session": entry }));
            true
        }
        Some(Err(why)) => {
            history.complete(OpType::Info, "hello", json!({ "message": why }));
            false
        }
        None => {
            history.complete(
                OpType::Info,
                "hello",
                json!({ "message": format!("{session} was not a session within {bound:?}") }),
            );
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_classified_ok_fail_or_unknown() {
        let answered = |ok| Ok(json!({ "outcome": "answered", "ok": ok }));
        assert_eq!(classify(&answered(true)).0, OpType::Ok);
        assert_eq!(classify(&answered(false)).0, OpType::Fail);
        assert_eq!(
            classify(&Ok(json!({ "outcome": "observation_lost" }))).0,
            OpType::Info
        );
        assert_eq!(
            classify(&Ok(json!({ "error": "no session", "httpStatus": 404 }))).0,
            OpType::Fail
        );
        assert_eq!(classify(&Err("refused".into())).0, OpType::Info);
    }
}
