//! `reticle_network_mock`: answer a driven tab's requests from rules (a URL fragment and method
//! → a status, headers and body, an abort, or a delay), list them, or clear them, through the
//! DevTools Fetch domain. A malformed rule is refused and leaves the rules in force as they were.
//! It refuses on a person's tab; it proves nothing about the app.

use serde_json::{Value, json};

use crate::drive::mock::MockRule;
use crate::tools::call::Call;
use crate::tools::driven::driven_tab;
use crate::tools::refusal::Refusal;
use crate::tools::surface::args::{MockRuleArgs, NetworkMockArgs};
use crate::tools::surface::names::ToolName;
use crate::tools::surface::registration::{Answer, Effect, SessionUse, Tool};

/// The most rules a tab holds, the longest URL fragment, body and delay a rule may have.
const MAX_RULES: usize = 50;
const MAX_FRAGMENT: usize = 2_000;
const MAX_BODY: usize = 1 << 20;
const MAX_DELAY_MS: u64 = 30_000;

async fn network_mock(call: &Call<'_>, a: NetworkMockArgs) -> Result<Value, Refusal> {
    let tool = call.tool.as_str();
    let asked = [
        a.rules.is_some(),
        a.clear == Some(true),
        a.list == Some(true),
    ];
    if asked.iter().filter(|x| **x).count() != 1 {
        return Err(Refusal::bad_arguments(
            tool,
            "give exactly one of `rules` (alias `mocks`), `clear: true` or `list: true`",
        ));
    }
    let rules = match a.rules {
        Some(rules) => Some(checked(rules).map_err(|why| Refusal::bad_arguments(tool, &why))?),
        None => None,
    };
    let tab = driven_tab(call).await?;
    let drives = &call.ctx.host.drives;
    if a.clear == Some(true) {
        let cleared = drives.clear_mocks(&tab).await;
        return Ok(json!({ "cleared": cleared, "rules": [] }));
    }
    if let Some(rules) = rules {
        let count = drives.set_mocks(&tab, rules).await.map_err(|why| {
            Refusal::new(
                format!("{tool}: the driven tab's DevTools link failed ({why}); no rule was set"),
                "call again (a browser that died is launched again), or reticle_sessions to see the tab",
            )
        })?;
        let (rules, _) = drives.mocks(&tab.session).await;
        return Ok(json!({ "applied": true, "count": count, "rules": rules }));
    }
    let (rules, answered) = drives.mocks(&tab.session).await;
    Ok(json!({ "rules": rules, "count": rules.len(), "answered": answered }))
}

/// The rules as given, checked whole: the first malformed one refuses them all.
fn checked(rules: Vec<MockRuleArgs>) -> Result<Vec<MockRule>, String> {
    if rules.len() > MAX_RULES {
        return Err(format!("at most {MAX_RULES} rules"));
    }
    rules
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let at = |why: &str| format!("rules[{i}]: {why}");
            if r.url_contains.is_empty() || r.url_contains.len() > MAX_FRAGMENT {
                return Err(at(&format!(
                    "urlContains must be 1 to {MAX_FRAGMENT} characters"
                )));
            }
            let status = r.status.unwrap_or(200);
            if !(100..=599).contains(&status) {
                return Err(at("status must be 100 to 599"));
            }
            let abort = r.abort == Some(true);
            if abort && (r.status.is_some() || r.body.is_some()) {
                return Err(at("an abort has no status or body"));
            }
            let delay_ms = r.delay_ms.unwrap_or(0);
            if delay_ms > MAX_DELAY_MS {
                return Err(at(&format!("delayMs must be at most {MAX_DELAY_MS}")));
            }
            let (body, json_body) = match r.body {
                None => (String::new(), false),
                Some(Value::String(text)) => (text, false),
                Some(other) => (other.to_string(), true),
            };
            if body.len() > MAX_BODY {
                return Err(at("the body is over 1 MiB"));
            }
            let mut headers: Vec<(String, String)> = Vec::new();
            for (name, value) in r.headers.unwrap_or_default() {
                let Some(value) = value.as_str() else {
                    return Err(at(&format!("header '{name}' must be a string")));
                };
                headers.push((name, value.to_string()));
            }
            let content_type = r
                .content_type
                .or_else(|| json_body.then(|| "application/json".to_string()));
            if let Some(ct) = content_type
                && !headers
                    .iter()
                    .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            {
                headers.push(("Content-Type".into(), ct));
            }
            Ok(MockRule {
                url_contains: r.url_contains,
                method: r.method.map(|m| m.to_ascii_uppercase()),
                status,
                body,
                headers,
                delay_ms,
                abort,
            })
        })
        .collect()
}

/// `reticle_network_mock`, as the registry knows it.
pub struct NetworkMock;

impl Tool for NetworkMock {
    const NAME: ToolName = ToolName::NetworkMock;
    const TITLE: &'static str = "Mock the network";
    const EFFECT: Effect = Effect::Changes;
    const DESCRIPTION: &'static str = "Answer a driven tab's requests from rules (urlContains, method → status, body, headers, delayMs, or abort), list or clear them.";
    const OUTPUT: &'static [&'static str] = &["applied", "count", "rules"];
    const SESSION: SessionUse = SessionUse::Bound;
    const DRIVES_SESSION: bool = true;
    type Args = NetworkMockArgs;

    fn run<'a>(call: &'a Call<'a>, a: NetworkMockArgs) -> Answer<'a> {
        Box::pin(network_mock(call, a))
    }
}
