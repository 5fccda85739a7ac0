//! The tool surface as an agent sees it, read off the real stack (`McpClient` → `reticle mcp`
//! → daemon): the three counts (names, tools advertised under `RETICLE_ADVERTISE_ALL_TOOLS=1`,
//! tools advertised by default) and the lists behind them, snapshot with insta; every family
//! member listed with the action that reaches it; output schemas only under ALL; input schemas
//! with the predicate defined once; the default list's size in bytes, snapshot (and under its
//! budget) so growth is a reviewed change. And a proptest over argument shapes: every advertised tool,
//! called with empty, null, wrong-typed, `__proto__`-keyed and 100,000-character arguments,
//! answers with a tool result (a structured refusal when it refuses) and no crash text.

mod support;

use harness::{McpClient, OwnedDaemon, ProxyOptions};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{Map, Value, json};
use support::tools::{assert_no_crash_text, assert_structured_refusal};

async fn agent(env: &[(&str, &str)]) -> (OwnedDaemon, McpClient) {
    let mut builder = OwnedDaemon::builder().env("RETICLE_FIRST_SESSION_WAIT_MS", "0");
    for (k, v) in env {
        builder = builder.env(k, *v);
    }
    let daemon = builder.start().await;
    let client = McpClient::start(ProxyOptions::new(daemon.port(), daemon.state_dir()))
        .await
        .unwrap();
    (daemon, client)
}

async fn listed(client: &McpClient) -> Vec<Value> {
    let result = client.custom("tools/list", json!({})).await.unwrap();
    result["tools"].as_array().unwrap().clone()
}

#[tokio::test]
async fn the_three_counts_are_read_off_the_real_surface() {
    let (_d1, lean) = agent(&[]).await;
    let (_d2, all) = agent(&[("RETICLE_ADVERTISE_ALL_TOOLS", "1")]).await;
    let default_tools = listed(&lean).await;
    let all_tools = listed(&all).await;
    for tool in &default_tools {
        assert!(
            tool.get("outputSchema").is_none(),
            "the default surface is lean: {tool}"
        );
        assert!(tool["title"].is_string(), "a host shows a title: {tool}");
        for hint in [
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        ] {
            assert!(tool["annotations"][hint].is_boolean(), "{hint}: {tool}");
        }
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
    }
    for tool in &all_tools {
        assert_eq!(
            tool["outputSchema"]["type"], "object",
            "ALL carries output schemas: {tool}"
        );
    }
    let hint = |name: &str, hint: &str| {
        default_tools.iter().find(|t| t["name"] == name).unwrap()["annotations"][hint].clone()
    };
    assert_eq!(hint("reticle_query", "readOnlyHint"), true);
    assert_eq!(hint("reticle_act", "readOnlyHint"), false);
    assert_eq!(hint("reticle_act", "destructiveHint"), true);
    let act_and_wait = all_tools
        .iter()
        .find(|t| t["name"] == "reticle_act_and_wait")
        .unwrap();
    assert_eq!(
        act_and_wait["inputSchema"]["properties"]["until"]["$ref"],
        "#/$defs/Predicate"
    );
    assert!(
        act_and_wait["inputSchema"]["$defs"]["Predicate"]["properties"]["kind"]["enum"].is_array()
    );

    // Every name: the catalogue as reticle_tools lists it, members with their actions.
    let catalogue =
        all.call_tool("reticle_tools", json!({})).await.unwrap()["structuredContent"].clone();
    let mut names: Vec<String> = Vec::new();
    let mut members: Vec<Value> = Vec::new();
    for tool in catalogue["tools"].as_array().unwrap() {
        names.push(tool["name"].as_str().unwrap().to_string());
        for member in tool["members"].as_array().into_iter().flatten() {
            names.push(member["name"].as_str().unwrap().to_string());
            members.push(
                json!({"name": member["name"], "family": tool["name"], "action": member["action"]}),
            );
        }
    }
    // Each member is reachable by its name through reticle_run: it answers as its family with
    // its action, or its refusal names both (a session member reports no page to act on here).
    for member in &members {
        let answer = all
            .call_tool("reticle_run", json!({"tool": member["name"]}))
            .await
            .unwrap();
        let content = &answer["structuredContent"];
        let reason = content["reason"].as_str().unwrap_or("").to_string();
        let family_and_action = format!(
            "{} {}",
            member["family"].as_str().unwrap(),
            member["action"].as_str().unwrap()
        );
        assert!(
            reason.contains(&family_and_action)
                || (content["ok"] == true && content["action"] == member["action"]),
            "{member}: {answer}"
        );
    }
    let names_of = |tools: &[Value]| -> Vec<String> {
        tools
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    insta::assert_json_snapshot!(
        "tool_surface_counts",
        json!({
            "counts": { "names": names.len(), "all": all_tools.len(), "default": default_tools.len() },
            "default": names_of(&default_tools),
            "all": names_of(&all_tools),
            "members": members,
        })
    );
    assert_eq!(catalogue["counts"]["names"], names.len());
    assert_eq!(catalogue["counts"]["all"], all_tools.len());
    assert_eq!(catalogue["counts"]["default"], default_tools.len());
}

/// The most bytes the default `tools/list` result may take (compact JSON, as served): issue 34's
/// ceiling, 0.8 of the reference's 21,749, once every tool carries a title, four effect hints and
/// a closed input schema (16,823 then; docs/benchmarks.md).
const DEFAULT_LIST_BUDGET: usize = 17_400;

#[tokio::test]
async fn the_default_list_size_is_pinned() {
    let (_daemon, lean) = agent(&[]).await;
    let result = lean.custom("tools/list", json!({})).await.unwrap();
    let bytes = result.to_string().len();
    let names: Vec<&str> = result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    // Growth is a reviewed change: the snapshot moves with any byte of it.
    insta::assert_snapshot!(
        "default_tools_list_size",
        format!("{bytes} bytes\n{}", names.join("\n"))
    );
    assert!(
        bytes <= DEFAULT_LIST_BUDGET,
        "the default tools/list is {bytes} bytes, over its {DEFAULT_LIST_BUDGET}-byte budget"
    );
}

/// A JSON value of any shape, big or small.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[a-z_]{0,12}".prop_map(Value::from),
        Just(Value::from("x".repeat(100_000))),
    ];
    leaf.prop_recursive(2, 8, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
            prop::collection::btree_map("[a-z]{1,6}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// One argument shape for a tool whose parameters are `params`.
fn shape(params: Vec<String>) -> impl Strategy<Value = Value> {
    let some_param = prop::sample::select(if params.is_empty() {
        vec!["x".to_string()]
    } else {
        params
    });
    prop_oneof![
        Just(json!({})),
        Just(Value::Null),
        (some_param.clone(), any_json()).prop_map(|(k, v)| json!({ k: v })),
        any_json().prop_map(|v| json!({ "__proto__": v })),
        Just(json!({ "__proto__": { "polluted": true }, "constructor": { "prototype": {} } })),
        some_param.prop_map(|k| json!({ k: "y".repeat(100_000) })),
    ]
}

#[tokio::test]
async fn every_advertised_tool_answers_any_argument_shape_with_a_structured_result() {
    // Every tool any surface advertises: the ALL surface is a superset of the default one.
    let (_daemon, client) = agent(&[("RETICLE_ADVERTISE_ALL_TOOLS", "1")]).await;
    let tools = listed(&client).await;
    let mut runner = TestRunner::deterministic();
    let mut seen = 0;
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        let params: Vec<String> = tool["inputSchema"]["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let strategy = shape(params);
        for _ in 0..24 {
            let args = strategy.new_tree(&mut runner).unwrap().current();
            let answer = client
                .call_tool(name, args.clone())
                .await
                .unwrap_or_else(|e| panic!("{name} {args:.200}: a tool result, got {e:?}"));
            let text = answer.to_string();
            assert_no_crash_text(&text);
            let content = &answer["structuredContent"];
            assert!(content.is_object(), "{name}: {text:.300}");
            if answer["isError"] == true {
                assert_structured_refusal(content);
            }
            let big = args
                .as_object()
                .map(Map::values)
                .into_iter()
                .flatten()
                .any(|v| v.as_str().is_some_and(|s| s.len() >= 100_000));
            if big {
                assert_eq!(
                    answer["isError"], true,
                    "{name}: a 100,000-character argument is refused"
                );
                assert!(
                    content["reason"].as_str().unwrap().contains("bytes"),
                    "{content}"
                );
            }
            seen += 1;
        }
    }
    assert_eq!(seen, tools.len() * 24);
}
