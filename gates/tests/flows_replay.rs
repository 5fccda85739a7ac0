//! Regression flows through the real stack (an agent's `McpClient` on `reticle mcp`, the daemon
//! with a private project dir, Chromium with the fixture app): a saved sign-in flow replays
//! `yes`, the same on every replay; a step whose target is gone or ambiguous is `no` naming the
//! step (and the candidates); an assertion-free flow is never `yes`; a missing secret is a
//! refusal naming it; every replay and verify writes a run artifact; a verify of two flows
//! answers the suite verdict; its JUnit export parses with one testcase per flow.

mod support;

use serde_json::{Value, json};
use support::tools::{ToolRig, verdict_shape};

/// The variable the sign-in flow's password comes from at replay.
const PASSWORD_ENV: &str = "RETICLE_SECRET_LOGIN_PASSWORD";

fn sign_in(submit: Value) -> Value {
    json!({
        "name": "sign-in",
        "startPath": "/",
        "overwrite": true,
        "steps": [
            {"target": {"testid": "login-user"}, "action": "fill", "args": {"value": "ann"}},
            {"target": {"testid": "login-password"}, "action": "fill", "args": {"value": "pw"}},
            {"target": submit, "action": "click",
             "until": {"kind": "signal", "name": "login.succeeded"}, "timeout_ms": 8000}
        ]
    })
}

fn run_file(rig: &ToolRig, run_id: &str) -> Value {
    let path = rig
        .project
        .path()
        .join(format!(".reticle/runs/{run_id}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn a_saved_flow_replays_with_honest_verdicts_and_leaves_run_artifacts() {
    let rig = ToolRig::start(&[
        ("RETICLE_ADVERTISE_ALL_TOOLS", "1"),
        (PASSWORD_ENV, "pw-from-env"),
    ])
    .await;
    let _tab = rig.open("replay").await;

    let saved = rig
        .ok(
            "reticle_flow_save",
            sign_in(json!({"testid": "login-submit"})),
        )
        .await;
    assert_eq!(saved["secrets"][0]["env"], PASSWORD_ENV, "{saved}");

    // Replay → yes, identically every time; each replay writes its run artifact.
    let mut shapes = Vec::new();
    for _ in 0..5 {
        let replayed = rig
            .ok("reticle_flow_replay", json!({"name": "sign-in"}))
            .await;
        assert_eq!(replayed["verified"], "yes", "{replayed}");
        assert_eq!(replayed["steps"].as_array().unwrap().len(), 3, "{replayed}");
        assert!(replayed.get("capsuleSaved").is_none(), "{replayed}");
        let run = run_file(&rig, replayed["runId"].as_str().unwrap());
        assert_eq!(run["format"], 1, "{run}");
        assert_eq!(run["kind"], "flow_replay");
        assert_eq!(run["flows"][0]["verified"], "yes", "{run}");
        assert!(run["flows"][0]["steps"][2]["evidence"].is_object(), "{run}");
        shapes.push(verdict_shape(&replayed));
    }
    assert!(shapes.windows(2).all(|w| w[0] == w[1]), "{shapes:#?}");
    // The password came from the environment: the page's store shows who signed in.
    let state = rig
        .ok("reticle_state", json!({"store": "app", "path": "user"}))
        .await;
    assert_eq!(state["value"], "ann", "{state}");

    // A step whose testid no longer exists → no, the step named, a capsule left.
    let mut renamed = sign_in(json!({"testid": "login-submit-renamed"}));
    renamed["name"] = json!("renamed");
    rig.ok("reticle_flow_save", renamed).await;
    let broken = rig
        .ok("reticle_flow_replay", json!({"name": "renamed"}))
        .await;
    assert_eq!(broken["verified"], "no", "{broken}");
    assert_eq!(broken["reason"], "step_failed", "{broken}");
    assert_eq!(broken["failingStep"], 3, "{broken}");
    assert_eq!(broken["failure"]["reason"], "target_not_found", "{broken}");
    assert!(
        broken["because"]
            .as_str()
            .unwrap()
            .contains("login-submit-renamed"),
        "{broken}"
    );
    assert!(broken["capsuleSaved"].is_string(), "{broken}");
    assert_eq!(
        verdict_shape(
            &rig.ok("reticle_flow_replay", json!({"name": "renamed"}))
                .await
        ),
        verdict_shape(&broken)
    );

    // A target matching several elements → no, the candidates listed, nothing guessed.
    rig.ok(
        "reticle_flow_save",
        json!({"name": "ambiguous", "startPath": "/", "steps": [
            {"target": {"role": "button"}, "action": "click",
             "until": {"kind": "signal", "name": "counter.changed"}}
        ]}),
    )
    .await;
    let ambiguous = rig
        .ok("reticle_flow_replay", json!({"name": "ambiguous"}))
        .await;
    assert_eq!(ambiguous["verified"], "no", "{ambiguous}");
    assert_eq!(
        ambiguous["failure"]["reason"], "target_ambiguous",
        "{ambiguous}"
    );
    assert!(
        ambiguous["failure"]["candidates"].as_array().unwrap().len() > 1,
        "{ambiguous}"
    );

    // An assertion-free flow runs but is never yes, and says why.
    rig.ok(
        "reticle_flow_save",
        json!({"name": "free", "startPath": "/", "steps": [
            {"target": {"testid": "counter-increment"}, "action": "click"}
        ]}),
    )
    .await;
    let free = rig.ok("reticle_flow_replay", json!({"name": "free"})).await;
    assert_eq!(
        (free["verified"].as_str(), free["reason"].as_str()),
        (Some("unknown"), Some("assertion_free")),
        "{free}"
    );
    assert!(
        free["because"].as_str().unwrap().contains("assertion-free"),
        "{free}"
    );

    // A secret the daemon was not given is a refusal naming its variable; nothing runs.
    rig.ok(
        "reticle_flow_save",
        json!({"name": "secretive", "startPath": "/", "steps": [
            {"target": {"label": "Passphrase"}, "action": "fill", "args": {"value": "x"}}
        ]}),
    )
    .await;
    let refused = rig
        .refused("reticle_flow_replay", json!({"name": "secretive"}))
        .await;
    assert_eq!(
        refused["missing"][0]["env"], "RETICLE_SECRET_PASSPHRASE",
        "{refused}"
    );
    let unknown = rig
        .refused("reticle_flow_replay", json!({"name": "nope"}))
        .await;
    assert!(unknown["saved"].as_array().unwrap().len() >= 4, "{unknown}");

    // Verify two flows: the suite is no because one flow is, each flow's verdict listed.
    let suite = rig
        .ok(
            "reticle_verify",
            json!({"action": "flows", "flows": ["sign-in", "renamed"]}),
        )
        .await;
    assert_eq!(suite["verified"], "no", "{suite}");
    assert_eq!(suite["flows"][0]["name"], "sign-in");
    assert_eq!(suite["flows"][0]["verified"], "yes", "{suite}");
    assert_eq!(suite["flows"][1]["verified"], "no", "{suite}");
    let steady = rig
        .ok(
            "reticle_run",
            json!({"tool": "reticle_flow_verify", "args": {"flows": ["sign-in"], "repeat": 2}}),
        )
        .await;
    assert_eq!(steady["verified"], "yes", "{steady}");
    assert_eq!(steady["flaky"], json!([]), "{steady}");
    assert_eq!(
        steady["flows"][0]["replays"],
        json!(["yes", "yes"]),
        "{steady}"
    );

    // Export: JSON is the artifact; JUnit parses, one testcase per flow, the failure named.
    let run_id = suite["runId"].as_str().unwrap();
    let exported = rig.ok("reticle_run_export", json!({"runId": run_id})).await;
    assert_eq!(exported["run"], run_file(&rig, run_id));
    let junit = rig
        .ok(
            "reticle_run_export",
            json!({"runId": run_id, "format": "junit"}),
        )
        .await;
    let xml = junit["junit"].as_str().unwrap();
    let testcases = support::xml::elements(xml)
        .unwrap_or_else(|e| panic!("the JUnit export does not parse: {e}\n{xml}"));
    let cases: Vec<_> = testcases.iter().filter(|e| e.name == "testcase").collect();
    assert_eq!(cases.len(), 2, "{xml}");
    assert_eq!(cases[0].attribute("name"), Some("sign-in"));
    let failure = testcases
        .iter()
        .find(|e| e.name == "failure")
        .unwrap_or_else(|| panic!("no failure in {xml}"));
    assert!(
        failure.attribute("message").unwrap().starts_with("step 3"),
        "{xml}"
    );
    let newest = rig
        .ok("reticle_run_export", json!({"format": "junit"}))
        .await;
    assert_eq!(newest["runId"], steady["runId"], "{newest}");
}

/// A page whose control renders a while after its SDK connects, as a route whose view loads
/// after the app mounts does (create-vue's lazy routes); clicking it says so.
const LATE_PAGE: &str = r#"<!doctype html><html><head><title>Late view</title></head><body><main id="view"></main>
<script type="module">
  import { connect } from '/sdk/reticle.js';
  const q = new URLSearchParams(location.search);
  connect({ port: Number(q.get('port')), token: q.get('token'), session: q.get('session'), present: false });
  setTimeout(() => {
    const button = document.createElement('button');
    button.textContent = 'Late';
    button.onclick = () => { document.getElementById('view').append('clicked'); };
    document.getElementById('view').append(button);
  }, 1000);
</script></body></html>"#;

/// A replayed step meets a page still rendering after the flow's reload: it waits (within the
/// step's bound) for its target to appear, so the flow is `yes`. Control: a target that never
/// appears is still `no` with `target_not_found`, once the bound has passed.
#[tokio::test]
async fn a_replayed_step_waits_for_a_target_the_page_renders_after_it_connects() {
    let rig = ToolRig::start(&[("RETICLE_ADVERTISE_ALL_TOOLS", "1")]).await;
    rig.app.page("/late.html", LATE_PAGE);
    let url = rig.app.url(&format!(
        "/late.html?port={}&token={}&session=late",
        rig.daemon.port(),
        rig.daemon.token()
    ));
    let _tab = rig.open_at(&url, "late").await;
    // The late step's bound is far above the page's one-second render, so a loaded machine
    // cannot turn its `yes` into a `no`; the control keeps the default bound.
    let flow = |name: &str, button: &str, bound_ms: u64| {
        json!({"name": name, "startPath": "/late.html", "overwrite": true, "steps": [
            {"target": {"role": "button", "name": button}, "action": "click",
             "until": {"kind": "text", "contains": "clicked"}, "timeout_ms": bound_ms}
        ]})
    };
    rig.ok("reticle_flow_save", flow("late", "Late", 30_000))
        .await;
    let replayed = rig.ok("reticle_flow_replay", json!({"name": "late"})).await;
    assert_eq!(replayed["startedBy"], "reload", "{replayed}");
    assert_eq!(replayed["verified"], "yes", "{replayed}");

    rig.ok("reticle_flow_save", flow("never", "Never", 4_000))
        .await;
    let missing = rig
        .ok("reticle_flow_replay", json!({"name": "never"}))
        .await;
    assert_eq!(missing["verified"], "no", "{missing}");
    assert_eq!(
        missing["failure"]["reason"], "target_not_found",
        "{missing}"
    );
}
