//! S8: a web page on a foreign origin reaching the daemon's HTTP routes. The scenario sends what
//! a page's `fetch` or `EventSource` sends (an `Origin`, or only a `Referer`) to every route, and
//! records each answer; the pure judge scores a route that served the page `silent`. Its unit
//! tests feed it the old behaviour's history (the negative control).

use std::time::Duration;

use harness::OwnedDaemon;
use serde_json::{Value, json};

use crate::history::{Actor, History, Op};
use crate::judge::{self, Judgement, RowOutcome};
use crate::rows::RowGate;
use crate::scenarios::kit::{control, controls_held, could_not_start, judged, observe, settle};
use crate::scenarios::{GateEnv, Ran};

/// The page the probes claim to come from.
pub const FOREIGN_PAGE: &str = "https://evil.example";

const ANSWER_BOUND: Duration = Duration::from_secs(5);

/// One probe: the method, the route, and the header a page would send.
struct Probe {
    method: &'static str,
    path: &'static str,
    header: &'static str,
    value: String,
}

fn probes() -> Vec<Probe> {
    let page = FOREIGN_PAGE;
    let origin = |method, path| Probe {
        method,
        path,
        header: "origin",
        value: page.to_string(),
    };
    vec![
        origin("GET", "/status"),
        origin("GET", reticle::mcp::SSE_PATH),
        origin("POST", reticle::mcp::MESSAGE_PATH),
        origin("GET", "/no-such-route"),
        Probe {
            method: "GET",
            path: "/status",
            header: "origin",
            value: "null".into(),
        },
        Probe {
            method: "GET",
            path: reticle::mcp::SSE_PATH,
            header: "referer",
            value: format!("{page}/steal.html"),
        },
    ]
}

/// Sends `probe` to `port`; the status and, for a refusal, its body (a served stream is not read).
async fn send(client: &reqwest::Client, port: u16, probe: &Probe) -> Value {
    let url = format!("http://127.0.0.1:{port}{}", probe.path);
    let request = match probe.method {
        "POST" => client
            .post(&url)
            .header("content-type", "application/json")
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
        _ => client.get(&url),
    };
    let answer = tokio::time::timeout(
        ANSWER_BOUND,
        request.header(probe.header, &probe.value).send(),
    )
    .await;
    let sent = json!({ "method": probe.method, "path": probe.path, "header": probe.header, "value": probe.value });
    match answer {
        Ok(Ok(response)) => {
            let status = response.status().as_u16();
            let body = if status >= 400 {
                tokio::time::timeout(ANSWER_BOUND, response.json::<Value>())
                    .await
                    .ok()
                    .and_then(Result::ok)
                    .unwrap_or(Value::Null)
            } else {
                Value::Null
            };
            json!({ "sent": sent, "status": status, "body": body })
        }
        Ok(Err(error)) => json!({ "sent": sent, "error": error.to_string() }),
        Err(_) => json!({ "sent": sent, "error": "no answer within the bound" }),
    }
}

/// S8: every HTTP route, asked by a page on a foreign origin, must refuse with a structured body
/// naming the header (controls: `/status` answers a tool with no Origin and a loopback page).
pub async fn foreign_pages_are_refused(_env: &GateEnv) -> Ran {
    const FAULT: &str = "foreign_page_requests";
    let history = History::new();
    let daemon = match OwnedDaemon::builder().try_start().await {
        Ok(daemon) => daemon,
        Err(why) => return could_not_start(history, FAULT, &why),
    };
    let client = reqwest::Client::new();
    let port = daemon.port();
    for (what, header) in [
        ("status answers a tool that sends no Origin", None),
        (
            "status answers a loopback page",
            Some("http://localhost:5173"),
        ),
    ] {
        let mut request = client.get(format!("http://127.0.0.1:{port}/status"));
        if let Some(origin) = header {
            request = request.header("origin", origin);
        }
        let status = request.send().await.map(|r| r.status().as_u16()).ok();
        control(
            &history,
            what,
            status == Some(200),
            json!({ "status": status }),
        );
    }
    history.fault(FAULT, true, json!({ "page": FOREIGN_PAGE }));
    for probe in probes() {
        let answer = send(&client, port, &probe).await;
        observe(&history, "answer", answer);
    }
    daemon.shutdown().await;
    judged(history, judge_foreign_pages)
}

/// S8's judge: a route that served the page (any status below 400) is silent; every route must
/// refuse it with `{"error", "status"}` naming the header it came by.
pub fn judge_foreign_pages(ops: &[Op]) -> Judgement {
    settle(|| {
        controls_held(ops)?;
        judge::established_fault(ops)?;
        let answers: Vec<&Value> = ops
            .iter()
            .filter(|o| o.actor == Actor::Harness && o.f == "answer")
            .map(|o| &o.value)
            .collect();
        if answers.len() != probes().len() {
            return Err(Judgement::new(
                RowOutcome::Inconclusive,
                format!("{} of {} probes answered", answers.len(), probes().len()),
            ));
        }
        for answer in answers {
            let sent = &answer["sent"];
            let text = |key: &str| sent[key].as_str().unwrap_or("").to_string();
            let route = format!(
                "{} {} ({}: {})",
                text("method"),
                text("path"),
                text("header"),
                text("value")
            );
            let Some(status) = answer["status"].as_u64() else {
                return Ok(Judgement::new(
                    RowOutcome::Inconclusive,
                    format!("{route}: {}", answer["error"]),
                ));
            };
            if status < 400 {
                return Ok(Judgement::new(
                    RowOutcome::Silent,
                    format!("{route} was served ({status}) to a page on a foreign origin"),
                ));
            }
            let sentence = answer["body"]["error"].as_str().unwrap_or("");
            let header = sent["header"].as_str().unwrap_or("");
            let structured = answer["body"]["status"] == status
                && sentence.to_ascii_lowercase().contains(header);
            if !structured {
                return Ok(Judgement::new(
                    RowOutcome::Silent,
                    format!("{route} was refused ({status}) without a body naming the {header}"),
                ));
            }
        }
        Ok(Judgement::new(
            RowOutcome::Surfaced,
            format!(
                "every route refused the page with 403 naming its Origin or Referer ({} probes)",
                probes().len()
            ),
        ))
    })
}

/// S8 in the row table.
pub const S8: RowGate = RowGate {
    id: "S8",
    file: file!(),
    scenario: |env| Box::pin(foreign_pages_are_refused(env)),
    judge: judge_foreign_pages,
    controls: &[],
};

#[cfg(test)]
mod tests {
    //! Negative control: the history the old router produced (every route served the page)
    //! scores `silent`; the fixed one `surfaced`.
    use super::*;

    fn history(served: bool) -> Vec<Op> {
        let history = History::new();
        control(&history, "status answers a tool", true, json!({}));
        history.fault("foreign_page_requests", true, json!({}));
        for probe in probes() {
            let sent = json!({ "method": probe.method, "path": probe.path, "header": probe.header, "value": probe.value });
            let answer = if served {
                json!({ "sent": sent, "status": 200, "body": null })
            } else {
                let sentence =
                    format!("forbidden: a request from a web page ({}: x)", probe.header);
                json!({ "sent": sent, "status": 403, "body": { "error": sentence, "status": 403 } })
            };
            observe(&history, "answer", answer);
        }
        history.ops()
    }

    #[test]
    fn routes_serving_a_foreign_page_are_silent() {
        assert_eq!(
            judge_foreign_pages(&history(true)).outcome,
            RowOutcome::Silent
        );
        assert_eq!(
            judge_foreign_pages(&history(false)).outcome,
            RowOutcome::Surfaced
        );
    }
}
