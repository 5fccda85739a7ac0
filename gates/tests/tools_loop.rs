//! The look, act, observe, assert loop through the real stack: an agent's `McpClient` on
//! `reticle mcp`, the daemon, the bridge, Chromium with the fixture app. A true assertion is
//! `yes`; a false one is `no` with evidence; act and act_sequence return `since` and `actionId`
//! and prove nothing; a red act_and_wait leaves a capsule; every live result carries the
//! `session` block.

mod support;

use serde_json::{Value, json};
use support::tools::ToolRig;

fn session_block(result: &Value) {
    let block = &result["session"];
    assert_eq!(block["id"], "loop", "{result}");
    assert!(block["lastSeenMs"].is_u64(), "{result}");
    assert!(block["throttled"].is_boolean(), "{result}");
}

#[tokio::test]
async fn the_look_act_observe_assert_loop_gives_honest_verdicts() {
    let rig = ToolRig::start(&[]).await;
    let _tab = rig.open("loop").await;

    // Look.
    let snapshot = rig.ok("reticle_snapshot", json!({})).await;
    assert!(
        snapshot["tree"].as_str().unwrap().contains("Sign in"),
        "{snapshot}"
    );
    assert!(snapshot["cost"]["bytes"].as_u64().unwrap() > 0);
    assert!(snapshot["cost"]["tokens"].as_u64().unwrap() > 0);
    session_block(&snapshot);
    let again = rig.ok("reticle_snapshot", json!({"diff": true})).await;
    assert_eq!(again["diff"]["baseline"], true, "{again}");
    assert!(
        again.get("tree").is_none(),
        "a diff carries only what changed"
    );
    let none = rig
        .ok("reticle_query", json!({"testid": "no-such-thing"}))
        .await;
    assert_eq!(none["count"], 0);
    assert!(
        none["hint"]["presentTestids"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "login-submit"),
        "{none}"
    );
    let user = rig.first_ref(json!({"testid": "login-user"})).await;
    let inspected = rig.ok("reticle_inspect", json!({"ref": user})).await;
    assert!(inspected["element"].is_object(), "{inspected}");

    // Act: dispatch only, a cursor and an action id, no verdict.
    let fill = rig
        .ok(
            "reticle_act",
            json!({"ref": user, "action": "fill", "args": {"value": "ann"}}),
        )
        .await;
    assert!(fill["since"].as_str().unwrap().contains(':'), "{fill}");
    assert_eq!(fill["actionId"], "a1");
    assert!(fill.get("verified").is_none(), "act proves nothing: {fill}");
    assert!(fill["note"].as_str().unwrap().contains("proves nothing"));
    session_block(&fill);
    let sequence = rig
        .ok(
            "reticle_act_sequence",
            json!({"steps": [
                {"target": {"testid": "login-password"}, "action": "fill", "args": {"value": "pw"}},
                {"target": {"testid": "login-submit"}, "action": "click"}
            ]}),
        )
        .await;
    assert_eq!(sequence["completed"], 2, "{sequence}");
    assert_eq!(sequence["actionId"], "a2");
    assert!(sequence.get("verified").is_none());

    // Observe the action's window.
    let observed = rig
        .ok(
            "reticle_observe",
            json!({"actionId": "a2", "filters": ["net", "signal"]}),
        )
        .await;
    assert_eq!(observed["lost"]["complete"], true, "{observed}");
    let network = support::tools::poll_network(&rig, "/api/login").await;
    assert_eq!(network["requests"][0]["status"], 200, "{network}");

    // Assert: a true claim is yes, a false one is no with evidence.
    let yes = rig
        .ok(
            "reticle_assert",
            json!({"predicate": {"kind": "signal", "name": "login.succeeded"}, "timeout_ms": 5000}),
        )
        .await;
    assert_eq!(
        (yes["verified"].as_str(), yes["reason"].as_str()),
        (Some("yes"), Some("proved")),
        "{yes}"
    );
    session_block(&yes);
    let no = rig
        .ok(
            "reticle_assert",
            json!({"predicate": {"kind": "net", "urlContains": "/api/login", "status": 500}}),
        )
        .await;
    assert_eq!(no["verified"], "no", "{no}");
    assert_eq!(no["reason"], "assertion_failed", "{no}");
    assert!(
        no["because"].as_str().unwrap().contains("status 500"),
        "{no}"
    );
    assert_eq!(no["evidence"]["status"], "fail", "{no}");
    let presence = rig
        .ok(
            "reticle_assert",
            json!({"predicate": {"kind": "text", "contains": "Signed in as ann"}}),
        )
        .await;
    assert_eq!(presence["verified"], "yes", "{presence}");
    assert!(
        presence["advice"].is_string(),
        "a presence-only pass carries advice"
    );
    let contradicted = rig
        .ok(
            "reticle_assert",
            json!({"predicate": {"kind": "state", "store": "app", "path": "user", "equals": "bob"}}),
        )
        .await;
    assert_eq!(
        (
            contradicted["verified"].as_str(),
            contradicted["reason"].as_str()
        ),
        (Some("no"), Some("contradicted")),
        "{contradicted}"
    );

    // State.
    let state = rig
        .ok("reticle_state", json!({"store": "app", "path": "user"}))
        .await;
    assert_eq!(
        (state["found"].as_bool(), state["value"].as_str()),
        (Some(true), Some("ann"))
    );
    let wrong = rig
        .ok(
            "reticle_state",
            json!({"store": "app", "path": "nope.deeper"}),
        )
        .await;
    assert_eq!(wrong["found"], false);
    assert!(
        wrong["availableKeys"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k == "user"),
        "{wrong}"
    );

    // Console: nothing yet, with a hint; then an error shows up, most recent first.
    let quiet = rig.ok("reticle_console", json!({"level": "error"})).await;
    assert_eq!(quiet["count"], 0);
    assert!(quiet["hint"]["totalInWindow"].is_u64(), "{quiet}");

    // act_and_wait: a consequence that happens is yes; one that never does is no, with a
    // capsule.
    let counted = rig
        .ok(
            "reticle_act_and_wait",
            json!({"target": {"testid": "counter-increment"}, "action": "click",
                   "until": {"kind": "signal", "name": "counter.changed", "dataMatches": {"value": 1}}}),
        )
        .await;
    assert_eq!(counted["verified"], "yes", "{counted}");
    assert_eq!(
        counted["reaction"]["signals"][0], "counter.changed",
        "{counted}"
    );
    assert!(counted.get("capsuleSaved").is_none());
    assert!(counted["next"].as_str().unwrap().contains(':'));
    let red = rig
        .ok(
            "reticle_act_and_wait",
            json!({"target": {"testid": "log-error"}, "action": "click",
                   "until": {"kind": "console", "level": "error", "absent": true}, "timeout_ms": 1500}),
        )
        .await;
    assert_eq!(
        (red["verified"].as_str(), red["reason"].as_str()),
        (Some("no"), Some("contradicted")),
        "{red}"
    );
    let capsule = red["capsuleSaved"]
        .as_str()
        .expect("a red verdict saves a capsule");
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(rig.project.path().join(capsule)).unwrap())
            .unwrap();
    assert_eq!(saved["verdict"]["verified"], "no");
    assert_eq!(saved["arguments"]["action"], "click");
    let errors = rig.ok("reticle_console", json!({"level": "error"})).await;
    assert!(
        errors["messages"][0]["message"]
            .as_str()
            .unwrap()
            .contains("deliberate console error"),
        "{errors}"
    );
    let settled = rig
        .ok(
            "reticle_act_and_wait",
            json!({"target": {"testid": "counter-increment"}, "action": "click"}),
        )
        .await;
    assert_eq!(
        settled["verified"], "yes",
        "without until the page must settle: {settled}"
    );
    assert_eq!(settled["until"]["kind"], "settled");

    // A predicate that does not parse makes no verdict and says what the kind accepts.
    let bad = rig
        .refused(
            "reticle_assert",
            json!({"predicate": {"kind": "net", "urlcontains": "/api"}}),
        )
        .await;
    assert!(
        bad["reason"].as_str().unwrap().contains("urlcontains"),
        "{bad}"
    );
    assert!(
        bad["accepts"].as_str().unwrap().contains("urlContains"),
        "{bad}"
    );
    assert!(bad.get("verified").is_none());

    // Navigate: arrival confirmed when the page reconnects on its new document.
    let url = rig.fixture_url("loop");
    let moved = rig
        .ok(
            "reticle_navigate",
            json!({"url": format!("{url}&view=details")}),
        )
        .await;
    assert_eq!(moved["confirmed"], true, "{moved}");
    let view = rig
        .ok(
            "reticle_assert",
            json!({"predicate": {"kind": "text", "contains": "This is the details view."}, "timeout_ms": 5000}),
        )
        .await;
    assert_eq!(view["verified"], "yes", "{view}");

    // Feedback stays on the machine, in the state dir's outbox.
    let feedback = rig
        .ok(
            "reticle_feedback",
            json!({"kind": "experience", "text": "the loop works"}),
        )
        .await;
    let saved = rig
        .daemon
        .state_dir()
        .join(feedback["saved"].as_str().unwrap());
    assert!(
        std::fs::read_to_string(saved)
            .unwrap()
            .contains("the loop works")
    );
}

#[tokio::test]
async fn the_references_argument_spellings_reach_the_same_tools() {
    let rig = ToolRig::start(&[]).await;
    let _tab = rig.open("spelled").await;

    let ours = rig
        .ok(
            "reticle_query",
            json!({"testid": "login-submit", "countOnly": true}),
        )
        .await;
    let theirs = rig
        .ok(
            "reticle_query",
            json!({"by": "testid", "value": "login-submit", "count_only": true}),
        )
        .await;
    assert_eq!(ours["count"], 1, "{ours}");
    assert_eq!(theirs["count"], ours["count"], "{theirs}");
    let by_role = rig
        .ok(
            "reticle_query",
            json!({"by": "role", "value": "button", "name": "Sign in"}),
        )
        .await;
    assert!(by_role["count"].as_u64().unwrap() >= 1, "{by_role}");

    // A flow named the reference's way reaches the flow store: the refusal is about the flow,
    // not about the field.
    let missing = rig
        .refused(
            "reticle_run",
            json!({"tool": "reticle_flow", "args": {"action": "load", "flowName": "never-saved"}}),
        )
        .await;
    let reason = missing["reason"].as_str().unwrap();
    assert!(
        reason.contains("never-saved") && !reason.contains("flowName"),
        "{missing}"
    );

    // Never a guess: the alias beside its canonical field with another value is refused.
    let clash = rig
        .refused(
            "reticle_query",
            json!({"by": "testid", "value": "login-submit", "testid": "login-user"}),
        )
        .await;
    assert!(
        clash["reason"].as_str().unwrap().contains("value"),
        "{clash}"
    );
    // Control: a tool with no such alias refuses the reference's field by name.
    let control = rig
        .refused("reticle_snapshot", json!({"flowName": "never-saved"}))
        .await;
    assert!(
        control["reason"].as_str().unwrap().contains("flowName"),
        "{control}"
    );

    // `{url, reload: true}` reloads in place, as the reference does, and says so.
    let reloaded = rig
        .ok(
            "reticle_navigate",
            json!({"url": rig.fixture_url("spelled"), "reload": true}),
        )
        .await;
    assert_eq!(reloaded["confirmed"], true, "{reloaded}");
    assert!(
        reloaded["note"]
            .as_str()
            .unwrap()
            .contains("`url` was not used"),
        "{reloaded}"
    );

    // reticle_tools names the aliases it accepts.
    let listed = rig
        .ok(
            "reticle_tools",
            json!({"names": ["reticle_query", "reticle_flow_load"]}),
        )
        .await;
    let aliases = |i: usize| listed["tools"][i]["aliases"].to_string();
    assert!(aliases(0).contains("count_only"), "{listed}");
    assert!(aliases(1).contains("flowName"), "{listed}");
}
