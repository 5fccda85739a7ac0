//! Healing flows and replaying capsules through the real stack (an agent's `McpClient` on
//! `reticle mcp`, the daemon with a private project dir, Chromium with the fixture app and its
//! `variant=` switch, apps/e2e/API.md): a sign-in flow replays `yes`; on a page whose sign-in
//! button's testid was renamed it replays `no` naming step 3, heal proposes the new testid
//! without writing, and applied writes version 2 (the old one kept in `heals/`) after which the
//! flow replays `yes`. Where the renamed button no longer submits, or two buttons are as
//! likely, or the flow checks no consequence, heal applies nothing. A red act_and_wait's
//! capsule replays still red on the page that broke it and green on one that works; a capsule
//! that cannot be re-run is refused by name.

mod support;

use serde_json::{Value, json};
use support::tools::ToolRig;

/// The variable the sign-in flow's password comes from at replay.
const PASSWORD_ENV: &str = "RETICLE_SECRET_LOGIN_PASSWORD";

fn sign_in(name: &str, until: Option<Value>) -> Value {
    let mut submit =
        json!({"target": {"testid": "login-submit"}, "action": "click", "timeout_ms": 3000});
    if let Some(until) = until {
        submit["until"] = until;
    }
    json!({
        "name": name,
        "startPath": "/",
        "overwrite": true,
        "steps": [
            {"target": {"testid": "login-user"}, "action": "fill", "args": {"value": "ann"}},
            {"target": {"testid": "login-password"}, "action": "fill", "args": {"value": "pw"}},
            submit
        ]
    })
}

fn succeeded() -> Option<Value> {
    Some(json!({"kind": "signal", "name": "login.succeeded"}))
}

fn secrets() -> Value {
    json!({ PASSWORD_ENV: "pw" })
}

/// Opens the fixture app as `session` with `variant` in its URL.
async fn open_variant(rig: &ToolRig, session: &str, variant: &str) -> harness::Tab {
    let url = format!("{}&variant={variant}", rig.fixture_url(session));
    rig.open_at(&url, session).await
}

fn flow_file(rig: &ToolRig, name: &str) -> Value {
    let path = rig
        .project
        .path()
        .join(format!(".reticle/flows/{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Heals `flow` with `apply: true` where it must come to `outcome` and write nothing; the answer.
async fn heal_applies_nothing(rig: &ToolRig, flow: &str, outcome: &str) -> Value {
    let before = flow_file(rig, flow);
    let healed = rig
        .ok(
            "reticle_flow_heal",
            json!({"name": flow, "secrets": secrets(), "apply": true}),
        )
        .await;
    assert_eq!(healed["outcome"], outcome, "{healed}");
    assert_eq!(healed["applied"], false, "{healed}");
    assert_eq!(flow_file(rig, flow), before, "{flow} was written: {healed}");
    healed
}

#[tokio::test]
async fn a_renamed_testid_is_healed_only_when_its_consequence_still_fires() {
    let rig = ToolRig::start(&[("RETICLE_ADVERTISE_ALL_TOOLS", "1")]).await;
    let _plain = rig.open("plain").await;
    for name in ["sign-in", "sign-in-b", "sign-in-t"] {
        rig.ok("reticle_flow_save", sign_in(name, succeeded()))
            .await;
    }
    rig.ok("reticle_flow_save", sign_in("unchecked", None))
        .await;
    let replayed = rig
        .ok(
            "reticle_flow_replay",
            json!({"name": "sign-in", "secrets": secrets()}),
        )
        .await;
    assert_eq!(replayed["verified"], "yes", "{replayed}");
    let steady = rig
        .ok(
            "reticle_flow_heal",
            json!({"name": "sign-in", "secrets": secrets(), "apply": true}),
        )
        .await;
    assert_eq!(steady["outcome"], "nothing_to_heal", "{steady}");
    assert_eq!(steady["applied"], false, "{steady}");

    // Renamed: replay names step 3; heal proposes without writing, then applies.
    let _renamed = open_variant(&rig, "renamed", "renamed").await;
    let broken = rig
        .ok(
            "reticle_flow_replay",
            json!({"name": "sign-in", "secrets": secrets()}),
        )
        .await;
    assert_eq!(broken["verified"], "no", "{broken}");
    assert_eq!(broken["failingStep"], 3, "{broken}");
    assert_eq!(broken["failure"]["reason"], "target_not_found", "{broken}");
    let before = flow_file(&rig, "sign-in");
    let proposed = rig
        .ok(
            "reticle_flow_heal",
            json!({"name": "sign-in", "secrets": secrets()}),
        )
        .await;
    assert_eq!(proposed["outcome"], "proposed", "{proposed}");
    assert_eq!(proposed["applied"], false, "{proposed}");
    assert_eq!(proposed["rebindings"][0]["step"], 3, "{proposed}");
    assert_eq!(
        proposed["rebindings"][0]["to"],
        json!({"testid": "login-submit-v2"}),
        "{proposed}"
    );
    assert_eq!(
        flow_file(&rig, "sign-in"),
        before,
        "a proposal wrote the flow"
    );
    let healed = rig
        .ok(
            "reticle_run",
            json!({"tool": "reticle_flow_heal", "args": {"name": "sign-in", "secrets": secrets(), "apply": true}}),
        )
        .await;
    assert_eq!(healed["outcome"], "healed", "{healed}");
    assert_eq!(
        (healed["applied"].as_bool(), healed["version"].as_u64()),
        (Some(true), Some(2))
    );
    let now = flow_file(&rig, "sign-in");
    assert_eq!(now["version"], 2, "{now}");
    assert_eq!(
        now["steps"][2]["target"],
        json!({"testid": "login-submit-v2"}),
        "{now}"
    );
    assert_eq!(
        now["steps"][1]["args"]["value"],
        json!({"fromEnv": PASSWORD_ENV}),
        "the heal wrote a secret: {now}"
    );
    let kept: Value = serde_json::from_str(
        &std::fs::read_to_string(healed["previousKept"].as_str().unwrap()).unwrap(),
    )
    .unwrap();
    assert_eq!(kept["format"], 1, "{kept}");
    assert_eq!(kept["previous"]["steps"], before["steps"], "{kept}");
    assert_eq!(
        kept["diff"][0]["from"],
        json!({"testid": "login-submit"}),
        "{kept}"
    );
    let again = rig
        .ok(
            "reticle_flow_replay",
            json!({"name": "sign-in", "secrets": secrets()}),
        )
        .await;
    assert_eq!(again["verified"], "yes", "{again}");
    let listed = rig.ok("reticle_flow", json!({"action": "list"})).await;
    assert_eq!(listed["count"], 4, "{listed}");

    // Without a consequence nothing proves the new target: never applied.
    heal_applies_nothing(&rig, "unchecked", "unproved").await;

    // Broken: the candidate is tried, its consequence does not follow, nothing is written.
    let _broken = open_variant(&rig, "broken", "broken").await;
    let refused = heal_applies_nothing(&rig, "sign-in-b", "consequence_broken").await;
    assert!(refused["notApplied"].is_string(), "{refused}");

    // Twin: two buttons are as likely; both listed, neither tried, nothing written.
    let _twin = open_variant(&rig, "twin", "twin").await;
    let ambiguous = heal_applies_nothing(&rig, "sign-in-t", "ambiguous").await;
    assert_eq!(
        ambiguous["candidates"].as_array().map(Vec::len),
        Some(2),
        "{ambiguous}"
    );
    assert_eq!(ambiguous["rebindings"], json!([]), "{ambiguous}");

    let unknown = rig
        .refused("reticle_flow_heal", json!({"name": "nope"}))
        .await;
    assert!(
        unknown["reason"].as_str().unwrap().contains("nope"),
        "{unknown}"
    );
}

#[tokio::test]
async fn a_red_capsule_replays_red_where_it_broke_and_green_where_it_works() {
    let rig = ToolRig::start(&[("RETICLE_ADVERTISE_ALL_TOOLS", "1")]).await;
    let _broken = open_variant(&rig, "broken", "broken").await;
    rig.ok(
        "reticle_act",
        json!({"target": {"testid": "login-user"}, "action": "fill", "args": {"value": "ann"}}),
    )
    .await;
    let act = json!({"target": {"role": "button", "name": "Sign in"}, "action": "click",
                     "until": {"kind": "signal", "name": "login.succeeded"}, "timeout_ms": 1500});
    let red = rig.ok("reticle_act_and_wait", act).await;
    assert_ne!(red["verified"], "yes", "{red}");
    let capsule = red["capsuleSaved"].as_str().unwrap().to_string();

    let still = rig.ok("reticle_replay", json!({"capsule": capsule})).await;
    assert_eq!(still["stillRed"], true, "{still}");
    assert_eq!(still["original"]["verified"], red["verified"], "{still}");
    assert!(still["because"].is_string(), "{still}");

    let _plain = rig.open("plain").await;
    rig.ok(
        "reticle_act",
        json!({"target": {"testid": "login-user"}, "action": "fill", "args": {"value": "ann"}}),
    )
    .await;
    let green = rig
        .ok(
            "reticle_run",
            json!({"tool": "reticle_replay", "args": {"capsule": capsule}}),
        )
        .await;
    assert_eq!(green["stillRed"], false, "{green}");
    assert_eq!(green["verified"], "yes", "{green}");
    assert!(green["evidence"].is_object(), "{green}");

    // A capsule that is not there, or not a capsule this build reads, is refused by name.
    let missing = rig
        .refused(
            "reticle_replay",
            json!({"capsule": ".reticle/capsules/nope.json"}),
        )
        .await;
    assert!(
        missing["reason"].as_str().unwrap().contains("nope"),
        "{missing}"
    );
    let dir = rig.project.path().join(".reticle/capsules");
    std::fs::write(
        dir.join("future.json"),
        r#"{"format": 99, "tool": "reticle_act_and_wait"}"#,
    )
    .unwrap();
    let future = rig
        .refused("reticle_replay", json!({"capsule": "future"}))
        .await;
    assert!(
        future["reason"].as_str().unwrap().contains("future.json"),
        "{future}"
    );
    std::fs::write(dir.join("torn.json"), "{\"format\": 1, \"tool\"").unwrap();
    let torn = rig
        .refused("reticle_replay", json!({"capsule": "torn.json"}))
        .await;
    assert!(
        torn["reason"].as_str().unwrap().contains("torn.json"),
        "{torn}"
    );
    let by_ref = {
        let mut doc: Value = serde_json::from_str(
            &std::fs::read_to_string(rig.project.path().join(&capsule)).unwrap(),
        )
        .unwrap();
        doc["arguments"] = json!({"ref": "e3", "action": "click"});
        std::fs::write(dir.join("by-ref.json"), doc.to_string()).unwrap();
        rig.refused("reticle_replay", json!({"capsule": "by-ref"}))
            .await
    };
    assert!(
        by_ref["reason"].as_str().unwrap().contains("e3"),
        "{by_ref}"
    );
}
