//! Recording flows through the real stack (an agent's `McpClient` on `reticle mcp`, the daemon
//! with a private project dir, Chromium with the fixture app): the agent's own acts by ref,
//! recorded, come back as steps naming each element as a user would (never a ref) with the
//! `until` it used, the typed password as a placeholder; saved, the flow replays `yes`, and 20
//! replays on the unchanged app give 20 identical verdicts. A person's clicks and typing (real
//! DevTools input, not script calls) recorded by the page's SDK are saved with
//! `reticle_flow_save_recorded` and replay `yes`. No secret reaches a flow file; a replay is
//! never recorded. A `reticle_assert` or `reticle_wait_for` that held while the agent recorded
//! becomes the `until` of the step it follows, so the recorded flow is asserted. A page running
//! the published 2.0.0 SDK, which does not record, refuses a person's recording by cause.

mod support;

use serde_json::{Value, json};
use support::tools::{ToolRig, verdict_shape};

/// The variable the recorded password is read from at replay (its field is named "Password").
const PASSWORD_ENV: &str = "RETICLE_SECRET_PASSWORD";
/// What the password really is; it must never be in a flow file or an answer.
const PASSWORD: &str = "pw-never-stored";

#[tokio::test]
async fn the_agents_recorded_sign_in_names_elements_as_a_user_and_replays_yes_20_times() {
    let rig = ToolRig::start(&[
        ("RETICLE_ADVERTISE_ALL_TOOLS", "1"),
        (PASSWORD_ENV, PASSWORD),
    ])
    .await;
    let _tab = rig.open("recorder").await;

    let started = rig.ok("reticle_record", json!({"action": "start"})).await;
    assert_eq!(
        (&started["source"], &started["startPath"]),
        (&json!("agent"), &json!("/")),
        "{started}"
    );
    // A person's recording cannot start over the agent's.
    let other = rig
        .refused(
            "reticle_record",
            json!({"action": "start", "source": "person"}),
        )
        .await;
    assert!(
        other["reason"].as_str().unwrap().contains("in progress"),
        "{other}"
    );

    // The agent acts by ref, as agents do after a snapshot.
    let user = rig.first_ref(json!({"testid": "login-user"})).await;
    rig.ok(
        "reticle_act",
        json!({"ref": user, "action": "fill", "args": {"value": "ann"}}),
    )
    .await;
    let password = rig.first_ref(json!({"testid": "login-password"})).await;
    rig.ok(
        "reticle_act_sequence",
        json!({"steps": [{"ref": password, "action": "fill", "args": {"value": PASSWORD}}]}),
    )
    .await;
    let submit = rig.first_ref(json!({"testid": "login-submit"})).await;
    let signed_in = rig
        .ok(
            "reticle_act_and_wait",
            json!({"ref": submit, "action": "click",
                   "until": {"kind": "signal", "name": "login.succeeded"}, "timeout_ms": 8000}),
        )
        .await;
    assert_eq!(signed_in["verified"], "yes", "{signed_in}");

    let stopped = rig
        .ok(
            "reticle_run",
            json!({"tool": "reticle_record_stop", "args": {"name": "recorded-sign-in", "overwrite": true}}),
        )
        .await;
    let text = stopped.to_string();
    assert!(!text.contains(PASSWORD), "{text}");
    assert!(
        !text.contains("\"ref\""),
        "a recorded step keeps no ref: {text}"
    );
    assert_eq!(stopped["stepCount"], 3, "{stopped}");
    assert_eq!(
        stopped["steps"][0],
        json!({"target": {"role": "textbox", "name": "Username"}, "action": "fill",
               "args": {"value": "ann"}}),
        "{stopped}"
    );
    assert_eq!(
        stopped["steps"][1]["args"],
        json!({"value": {"fromEnv": PASSWORD_ENV}}),
        "{stopped}"
    );
    assert_eq!(
        stopped["steps"][2],
        json!({"target": {"role": "button", "name": "Sign in"}, "action": "click",
               "until": {"kind": "signal", "name": "login.succeeded"}, "timeout_ms": 8000}),
        "{stopped}"
    );
    assert_eq!(
        stopped["saved"]["assertions"]["grade"], "asserted",
        "{stopped}"
    );
    assert_eq!(stopped["saved"]["secrets"][0]["env"], PASSWORD_ENV);
    let file = rig.flow_file("recorded-sign-in");
    assert!(!file.contains(PASSWORD), "{file}");
    assert!(file.contains(PASSWORD_ENV), "{file}");

    // Nothing records now: stopping again says so, and saving nothing is refused.
    let nothing = rig.ok("reticle_record", json!({"action": "stop"})).await;
    assert_eq!(nothing["stopped"], false, "{nothing}");
    rig.refused("reticle_record", json!({"action": "stop", "name": "x"}))
        .await;

    // The same flow replayed 20 times on the unchanged app: 20 identical verdicts, all yes.
    let mut shapes = Vec::new();
    for _ in 0..20 {
        let replayed = rig
            .ok("reticle_flow_replay", json!({"name": "recorded-sign-in"}))
            .await;
        shapes.push(verdict_shape(&replayed));
    }
    assert_eq!(shapes[0]["verified"], "yes", "{:#}", shapes[0]);
    assert!(shapes.windows(2).all(|w| w[0] == w[1]), "{shapes:#?}");
    // The password came from the daemon's environment: the page's store shows who signed in.
    let state = rig
        .ok("reticle_state", json!({"store": "app", "path": "user"}))
        .await;
    assert_eq!(state["value"], "ann", "{state}");

    // A replay is never recorded: only the agent's own act tools are.
    rig.ok("reticle_record", json!({"action": "start"})).await;
    rig.ok("reticle_flow_replay", json!({"name": "recorded-sign-in"}))
        .await;
    let replay_only = rig.ok("reticle_record", json!({"action": "stop"})).await;
    assert_eq!(replay_only["stepCount"], 0, "{replay_only}");
}

#[tokio::test]
async fn a_persons_clicks_and_typing_are_recorded_saved_and_replayed_yes() {
    let rig = ToolRig::start(&[
        ("RETICLE_ADVERTISE_ALL_TOOLS", "1"),
        (PASSWORD_ENV, PASSWORD),
    ])
    .await;
    let tab = rig.open("person").await;

    // Nothing recorded yet: saving is a refusal naming the cause.
    let none = rig
        .refused(
            "reticle_flow_save_recorded",
            json!({"name": "person-sign-in"}),
        )
        .await;
    assert_eq!(none["cause"], "no_recording", "{none}");

    let started = rig
        .ok(
            "reticle_record",
            json!({"action": "start", "source": "person"}),
        )
        .await;
    assert_eq!(started["source"], "person", "{started}");

    // The person: real clicks and key presses through DevTools input.
    tab.type_into("[data-testid=login-user]", "ann")
        .await
        .unwrap();
    tab.type_into("[data-testid=login-password]", PASSWORD)
        .await
        .unwrap();
    tab.click("[data-testid=login-submit]").await.unwrap();
    let seen = rig
        .ok(
            "reticle_wait_for",
            json!({"predicate": {"kind": "signal", "name": "login.succeeded"}, "timeout_ms": 10000}),
        )
        .await;
    assert_eq!(seen["status"], "pass", "{seen}");

    let stopped = rig.ok("reticle_record", json!({"action": "stop"})).await;
    let text = stopped.to_string();
    assert!(!text.contains(PASSWORD), "{text}");
    assert_eq!(stopped["source"], "person", "{stopped}");
    assert_eq!(
        stopped["steps"],
        json!([
            {"target": {"role": "textbox", "name": "Username"}, "action": "fill", "args": {"value": "ann"}},
            {"target": {"role": "textbox", "name": "Password"}, "action": "fill",
             "args": {"value": {"fromEnv": PASSWORD_ENV}}},
            {"target": {"role": "button", "name": "Sign in"}, "action": "click",
             "until": {"kind": "signal", "name": "login.succeeded"}}
        ]),
        "{stopped}"
    );

    let saved = rig
        .ok(
            "reticle_flow_save_recorded",
            json!({"name": "person-sign-in", "overwrite": true}),
        )
        .await;
    assert_eq!(saved["assertions"]["grade"], "asserted", "{saved}");
    assert_eq!(saved["secrets"][0]["env"], PASSWORD_ENV, "{saved}");
    let file = rig.flow_file("person-sign-in");
    assert!(!file.contains(PASSWORD), "{file}");

    let replayed = rig
        .ok("reticle_flow_replay", json!({"name": "person-sign-in"}))
        .await;
    assert_eq!(replayed["verified"], "yes", "{replayed}");
}

const PUBLISHED_PAGE: &str = r#"<!doctype html>
<html><head><title>Published SDK recording</title></head>
<body>
  <button>Add to cart</button>
  <script type="module">
    import { reticle } from '/published/reticle-sdk.mjs';
    const q = new URLSearchParams(location.search);
    reticle.connect({
      url: `ws://127.0.0.1:${q.get('port')}/reticle`,
      token: q.get('token'), session: 'published-record', present: false,
    });
  </script>
</body></html>"#;

#[tokio::test]
async fn the_published_sdk_refuses_a_persons_recording_by_cause() {
    let rig = ToolRig::start(&[("RETICLE_ADVERTISE_ALL_TOOLS", "1")]).await;
    let _tab = rig
        .open_published("/published-record.html", PUBLISHED_PAGE, "published-record")
        .await;

    let refused = rig
        .refused(
            "reticle_record",
            json!({"action": "start", "source": "person"}),
        )
        .await;
    assert_eq!(refused["cause"], "sdk_cannot_record", "{refused}");
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .contains("unknown command"),
        "the refusal carries what the page said: {refused}"
    );
    // Nothing was started: the agent's own recording may begin.
    rig.ok("reticle_record", json!({"action": "start"})).await;
}

#[tokio::test]
async fn a_check_the_agent_makes_while_recording_becomes_the_consequence_of_its_step() {
    let rig = ToolRig::start(&[("RETICLE_ADVERTISE_ALL_TOOLS", "1")]).await;
    let _tab = rig.open("checked").await;
    rig.ok("reticle_record", json!({"action": "start"})).await;
    let counter = json!({"testid": "counter-increment"});
    // A check before any act follows no step: noted, not attached.
    rig.ok(
        "reticle_wait_for",
        json!({"predicate": {"kind": "settled"}, "timeout_ms": 2000}),
    )
    .await;
    rig.ok("reticle_act", json!({"target": counter, "action": "click"}))
        .await;
    let asserted = rig
        .ok(
            "reticle_assert",
            json!({"predicate": {"kind": "signal", "name": "counter.changed"}, "timeout_ms": 2000}),
        )
        .await;
    assert_eq!(asserted["verified"], "yes", "{asserted}");
    rig.ok("reticle_act", json!({"target": counter, "action": "click"}))
        .await;
    let waited = rig
        .ok(
            "reticle_wait_for",
            json!({"predicate": {"kind": "signal", "name": "counter.changed"}, "timeout_ms": 2000}),
        )
        .await;
    assert_eq!(waited["status"], "pass", "{waited}");
    // A check that did not hold is no consequence: noted, not attached.
    rig.ok("reticle_act", json!({"target": counter, "action": "click"}))
        .await;
    rig.ok(
        "reticle_assert",
        json!({"predicate": {"kind": "signal", "name": "never.sent"}, "timeout_ms": 300}),
    )
    .await;
    let stopped = rig
        .ok(
            "reticle_record",
            json!({"action": "stop", "name": "checked-counter", "overwrite": true}),
        )
        .await;
    let steps = stopped["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3, "{stopped}");
    let signal = json!({"kind": "signal", "name": "counter.changed"});
    assert_eq!(steps[0]["until"], signal, "{stopped}");
    assert_eq!(steps[1]["until"], signal, "{stopped}");
    assert!(
        steps[2].get("until").is_none_or(Value::is_null),
        "{stopped}"
    );
    assert_eq!(stopped["assertions"]["grade"], "asserted", "{stopped}");
    let notes = stopped["notes"].as_array().unwrap();
    assert_eq!(
        notes
            .iter()
            .map(|n| n["afterStep"].clone())
            .collect::<Vec<_>>(),
        [json!(0), json!(3)],
        "{stopped}"
    );
    let replayed = rig
        .ok("reticle_flow_replay", json!({"name": "checked-counter"}))
        .await;
    assert_eq!(replayed["grade"]["grade"], "asserted", "{replayed}");
    assert_eq!(replayed["verified"], "yes", "{replayed}");
}
