//! The tool-surface sweep: every behaviour the catalogue has, called once with valid arguments
//! through the whole stack (`McpClient` → `reticle mcp` → daemon → Chromium with the fixture
//! app), each answering with its own result rather than a refusal. The list of behaviours is
//! read off the real surface (`reticle_tools` under `RETICLE_ADVERTISE_ALL_TOOLS=1`), family
//! members included with the action that reaches each, so a tool added to the catalogue without
//! a sweep case fails here. Each member is reached both as its family with its action and by its
//! own name through `reticle_run`.

mod support;

use serde_json::{Value, json};
use support::tools::ToolRig;

/// One behaviour's call: the tool (a family for members), its arguments, and a key its result
/// must carry.
struct Case {
    tool: String,
    args: Value,
    carries: &'static str,
}

fn case(tool: &str, args: Value, carries: &'static str) -> Case {
    Case {
        tool: tool.to_string(),
        args,
        carries,
    }
}

/// The sweep case for a behaviour, by name; `element` is a live ref on the page, `capsule` one a
/// red act_and_wait left, `driven` the session of a tab Reticle drives (for what needs DevTools).
fn case_for(name: &str, element: &str, capsule: &str, driven: &str) -> Option<Case> {
    let signal = json!({"kind": "signal", "name": "counter.changed"});
    Some(match name {
        "reticle_sessions" => case(name, json!({}), "sessions"),
        "reticle_snapshot" => case(name, json!({"mode": "interactive"}), "tree"),
        "reticle_query" => case(
            name,
            json!({"role": "button", "name": "Sign in"}),
            "elements",
        ),
        "reticle_inspect" => case(name, json!({"ref": element}), "element"),
        "reticle_navigate" => case(name, json!({"reload": true}), "confirmed"),
        "reticle_act" => case(
            name,
            json!({"target": {"testid": "counter-increment"}, "action": "click"}),
            "actionId",
        ),
        "reticle_act_sequence" => case(
            name,
            json!({"steps": [
                {"target": {"testid": "login-user"}, "action": "fill", "args": {"value": "ann"}},
                {"target": {"testid": "counter-increment"}, "action": "click"}
            ]}),
            "actionId",
        ),
        "reticle_act_and_wait" => case(
            name,
            json!({"target": {"testid": "counter-increment"}, "action": "click",
                   "until": signal, "timeout_ms": 5000}),
            "verified",
        ),
        "reticle_observe" => case(name, json!({"window_ms": 0}), "events"),
        "reticle_wait_for" => case(
            name,
            json!({"predicate": {"kind": "element", "testid": "login-submit"}, "timeout_ms": 5000}),
            "timedOut",
        ),
        "reticle_assert" => case(
            name,
            json!({"predicate": signal, "timeout_ms": 5000}),
            "verified",
        ),
        "reticle_network" => case(name, json!({}), "requests"),
        "reticle_console" => case(name, json!({}), "messages"),
        "reticle_state" => case(name, json!({"store": "app", "path": "counter"}), "found"),
        "reticle_feedback" => case(
            name,
            json!({"kind": "experience", "text": "the sweep reached feedback"}),
            "saved",
        ),
        "reticle_tools" => case(name, json!({"names": ["reticle_query"]}), "tools"),
        "reticle_run" => case(
            name,
            json!({"tool": "reticle_query", "args": {"testid": "login-submit"}}),
            "elements",
        ),
        "reticle_capabilities" => case(name, json!({}), "commands"),
        "reticle_clock" => case(name, json!({"freeze": true}), "frozen"),
        "reticle_flow_save" => case(
            name,
            json!({"name": "sweep", "startPath": "/", "overwrite": true, "steps": [
                {"target": {"testid": "counter-increment"}, "action": "click", "until": signal}
            ]}),
            "assertions",
        ),
        // Replay, verify and export (after flow_save in catalogue order, so `sweep` is saved
        // and a run exists to export).
        "reticle_flow_replay" => case(name, json!({"name": "sweep"}), "verified"),
        "reticle_flow_heal" => case(name, json!({"name": "sweep"}), "outcome"),
        "reticle_replay" => case(name, json!({"capsule": capsule}), "stillRed"),
        "reticle_flow_verify" => case(
            "reticle_verify",
            json!({"action": "flows", "flows": ["sweep"]}),
            "verified",
        ),
        "reticle_run_export" => case(name, json!({"format": "junit"}), "junit"),
        // The flow family (after flow_save in catalogue order, so `sweep` is saved).
        "reticle_flow_list" => case("reticle_flow", json!({"action": "list"}), "flows"),
        "reticle_flow_load" => case(
            "reticle_flow",
            json!({"action": "load", "name": "sweep"}),
            "steps",
        ),
        "reticle_flow_delete" => case(
            "reticle_flow",
            json!({"action": "delete", "name": "sweep"}),
            "deleted",
        ),
        // The baseline family: save first (catalogue order), so list and diff find `sweep`.
        "reticle_baseline_save" => case(
            "reticle_baseline",
            json!({"action": "save", "name": "sweep", "overwrite": true}),
            "lineCount",
        ),
        "reticle_baseline_list" => case("reticle_baseline", json!({"action": "list"}), "baselines"),
        "reticle_baseline_diff" => case(
            "reticle_baseline",
            json!({"action": "diff", "name": "sweep"}),
            "changed",
        ),
        // The lease family: acquire first (catalogue order), so release has a lease to let go.
        "reticle_lease_acquire" => case("reticle_lease", json!({"action": "acquire"}), "lease"),
        "reticle_lease_release" => case("reticle_lease", json!({"action": "release"}), "released"),
        // Recording: a person's (the page records; nothing is clicked by a person here), then
        // saving it (an empty recording answers `saved: false`).
        "reticle_record_start" => case(
            "reticle_record",
            json!({"action": "start", "source": "person"}),
            "startPath",
        ),
        "reticle_record_stop" => case("reticle_record", json!({"action": "stop"}), "stepCount"),
        "reticle_flow_save_recorded" => case(name, json!({"name": "sweep-recorded"}), "saved"),
        // What needs a page under control, on the driven tab.
        "reticle_viewport" => case(
            name,
            json!({"sessionId": driven, "width": 800, "height": 600}),
            "applied",
        ),
        "reticle_network_mock" => case(
            name,
            json!({"sessionId": driven, "rules": [{"urlContains": "/never-requested"}]}),
            "applied",
        ),
        "reticle_refresh" => case(name, json!({}), "confirmed"),
        "reticle_wait_ready" => case(name, json!({"timeoutMs": 1000}), "ready"),
        // The session family, one case per member (the family itself is swept through them).
        "reticle_yield" => case(
            "reticle_session",
            json!({"action": "yield", "note": "the sweep hands over"}),
            "action",
        ),
        "reticle_resume" => case("reticle_session", json!({"action": "resume"}), "action"),
        "reticle_messages" => case("reticle_session", json!({"action": "messages"}), "messages"),
        "reticle_end_session" => case(
            "reticle_session",
            json!({"action": "end", "summary": "the sweep is done"}),
            "action",
        ),
        _ => return None,
    })
}

/// Every behaviour on the surface: top-level tools, and each family's members with the action
/// that reaches them (a family is swept through its members).
fn behaviours(catalogue: &Value) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for tool in catalogue["tools"].as_array().expect("a catalogue") {
        let members = tool["members"].as_array().cloned().unwrap_or_default();
        if members.is_empty() {
            out.push((tool["name"].as_str().unwrap().to_string(), None));
        }
        for member in members {
            out.push((
                member["name"].as_str().unwrap().to_string(),
                Some(member["action"].as_str().unwrap().to_string()),
            ));
        }
    }
    out
}

#[tokio::test]
async fn every_behaviour_on_the_surface_answers_through_the_real_stack() {
    let rig = ToolRig::start(&[("RETICLE_ADVERTISE_ALL_TOOLS", "1")]).await;
    let _tab = rig.open("sweep").await;
    let catalogue = rig.ok("reticle_tools", json!({})).await;
    let all = behaviours(&catalogue);
    // A red act_and_wait leaves the capsule reticle_replay re-runs.
    let red = rig
        .ok(
            "reticle_act_and_wait",
            json!({"target": {"testid": "counter-increment"}, "action": "click",
                   "until": {"kind": "signal", "name": "never.sent"}, "timeout_ms": 300}),
        )
        .await;
    let capsule = red["capsuleSaved"].as_str().unwrap_or_default().to_string();
    let uncovered: Vec<&String> = all
        .iter()
        .filter(|(name, _)| case_for(name, "e1", "c", "d").is_none())
        .map(|(name, _)| name)
        .collect();
    assert!(
        uncovered.is_empty(),
        "catalogued behaviours without a sweep case: {uncovered:?}"
    );

    // A tab Reticle drives, on the same app (wired: its own SDK connects).
    let plain = rig.app.url(&format!(
        "/?reticlePort={}&reticleToken={}",
        rig.daemon.port(),
        rig.daemon.token()
    ));
    let launched = rig
        .ok("reticle_session", json!({"action": "launch", "url": plain}))
        .await;
    assert_eq!(launched["sdk"], "app", "{launched}");
    let driven = launched["sessionId"].as_str().unwrap().to_string();

    let mut wrong: Vec<String> = Vec::new();
    for (name, action) in &all {
        // A fresh ref for each case: a reload or re-render may have ended the previous one.
        let element = rig.first_ref(json!({"testid": "login-user"})).await;
        let case = case_for(name, &element, &capsule, &driven).unwrap();
        if let Some(action) = action {
            assert_eq!(case.args["action"], action.as_str(), "{name}");
        }
        let direct = answer(&rig, &case.tool, case.args.clone()).await;
        match &direct {
            Ok(result) if result.get(case.carries).is_some() => {}
            other => wrong.push(format!(
                "{name} (as {}) should carry `{}`: {other:?}",
                case.tool, case.carries
            )),
        }
        if action.is_some() {
            // The member by its own name, through reticle_run.
            let mut args = case.args.clone();
            args.as_object_mut().unwrap().remove("action");
            let via_run = answer(&rig, "reticle_run", json!({"tool": name, "args": args})).await;
            match (&via_run, &direct) {
                (Ok(run), Ok(direct)) if run["action"] == direct["action"] => {}
                other => wrong.push(format!("{name} through reticle_run: {other:?}")),
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A call's structured result, or the refusal (or failure) that stood in its place.
async fn answer(rig: &ToolRig, tool: &str, args: Value) -> Result<Value, String> {
    match rig.result(tool, args).await {
        Ok(result) if result["isError"] != true => Ok(result["structuredContent"].clone()),
        Ok(refused) => Err(refused["structuredContent"].to_string()),
        Err(failure) => Err(format!("{failure:?}")),
    }
}
