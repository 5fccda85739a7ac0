//! The compatibility suite's probes: every tool family and action, in one fixed order, against
//! the fixture page of a [`Stack`]. Each probe reduces what the agent got to a short
//! deterministic verdict (`ok` or `refused`, the facts the tool promises, and what the page did,
//! read from the page itself), so two runs with different SDKs compare cell by cell.
//!
//! This module calls tools and reads the page; it must not compare runs (see `compat`).

use serde_json::{Value, json};

use super::Cell;
use super::stack::{BOUND, Stack};

/// Reduces a tool's structured content to the facts a probe compares.
type Facts = fn(&Value) -> String;

fn nothing(_: &Value) -> String {
    String::new()
}

fn element_count(v: &Value) -> String {
    format!("{} elements", v["elements"].as_array().map_or(0, Vec::len))
}

fn counted(v: &Value) -> String {
    format!("count {}", v["count"])
}

fn verdict(v: &Value) -> String {
    format!("verified {} ({})", v["verified"], v["reason"])
}

fn confirmed(v: &Value) -> String {
    format!("confirmed {}", v["confirmed"])
}

fn found(v: &Value) -> String {
    format!("found {}, value {}", v["found"], v["value"])
}

fn completed(v: &Value) -> String {
    format!("completed {}", v["completed"])
}

fn has_tree(v: &Value) -> String {
    format!("tree {}", v.get("tree").is_some())
}

fn action_word(v: &Value) -> String {
    format!("action {}", v["action"])
}

/// The probes' recorder: runs each call and keeps its cell.
struct Run<'a> {
    stack: &'a Stack,
    cells: Vec<Cell>,
}

impl Run<'_> {
    /// Calls `tool` with `args`, reduces the answer with `facts`, then reads `effect` (a page
    /// expression) when given.
    async fn probe(
        &mut self,
        family: &str,
        name: &str,
        tool: &str,
        args: Value,
        facts: Facts,
        effect: Option<&str>,
    ) -> Value {
        let answer = self.stack.call(tool, args).await;
        let content = answer
            .as_ref()
            .map(|r| r["structuredContent"].clone())
            .unwrap_or(Value::Null);
        let mut verdict = match &answer {
            Err(_) => "call failed".to_string(),
            Ok(r) if r["isError"] == true => "refused".to_string(),
            Ok(_) => {
                let said = facts(&content);
                if said.is_empty() {
                    "ok".into()
                } else {
                    format!("ok, {said}")
                }
            }
        };
        if let Some(expression) = effect {
            verdict.push_str(&format!("; page: {}", self.stack.page(expression).await));
        }
        self.cells.push(Cell {
            family: family.into(),
            probe: name.into(),
            verdict,
        });
        content
    }

    /// One act_and_wait probe per `(kind, testid clicked, until)`, named after the kind.
    async fn until_each(
        &mut self,
        kinds: impl IntoIterator<Item = (impl std::fmt::Display, &str, Value)>,
    ) {
        for (kind, id, until) in kinds {
            self.probe(
                "act_and_wait",
                &format!("act_and_wait until {kind}"),
                "reticle_act_and_wait",
                act_until(id, until),
                verdict,
                None,
            )
            .await;
        }
    }

    /// The ref of the one element `criteria` names, or an empty string.
    async fn ref_of(&self, criteria: Value) -> String {
        let found = self.stack.call("reticle_query", criteria).await;
        found
            .ok()
            .and_then(|r| {
                r["structuredContent"]["elements"][0]["ref"]
                    .as_str()
                    .map(str::to_string)
            })
            .unwrap_or_default()
    }
}

fn testid(id: &str) -> Value {
    json!({ "testid": id })
}

fn on(id: &str) -> String {
    format!("document.querySelector('[data-testid=\"{id}\"]')")
}

/// An act by testid.
fn act(id: &str, action: &str, args: Value) -> Value {
    json!({ "target": testid(id), "action": action, "args": args })
}

/// An act_and_wait by testid until `until`.
fn act_until(id: &str, until: Value) -> Value {
    json!({ "target": testid(id), "action": "click", "until": until, "timeout_ms": 5000 })
}

/// Runs every probe, in order, and returns their cells.
pub async fn run(stack: &Stack) -> Vec<Cell> {
    let mut run = Run {
        stack,
        cells: Vec::new(),
    };
    query(&mut run).await;
    acts(&mut run).await;
    waits(&mut run).await;
    states_and_bodies(&mut run).await;
    baselines(&mut run).await;
    reads(&mut run).await;
    refs_and_guards(&mut run).await;
    navigation(&mut run).await;
    session(&mut run).await;
    run.cells
}

async fn query(run: &mut Run<'_>) {
    let by: [(&str, Value); 10] = [
        (
            "query by role and name",
            json!({"role": "button", "name": "Sign in"}),
        ),
        (
            "query a password field by role and label",
            json!({"role": "textbox", "name": "Password"}),
        ),
        ("query by testid", testid("login-submit")),
        ("query by text", json!({"text": "Delete item"})),
        ("query by label", json!({"label": "Username"})),
        ("query by placeholder", json!({"placeholder": "ann"})),
        ("query by alt", json!({"alt": "no such image"})),
        ("query by css", json!({"css": "[data-testid=item-list] li"})),
        (
            "query by exact text",
            json!({"text": "Delete", "exact": true}),
        ),
        ("query with a limit", json!({"role": "button", "limit": 2})),
    ];
    for (name, args) in by {
        run.probe("query", name, "reticle_query", args, element_count, None)
            .await;
    }
    run.probe(
        "query",
        "query count only",
        "reticle_query",
        json!({"role": "button", "countOnly": true}),
        counted,
        None,
    )
    .await;
    let form = run.ref_of(testid("login-form")).await;
    run.probe(
        "query",
        "query in a scope",
        "reticle_query",
        json!({"role": "button", "scope": form}),
        element_count,
        None,
    )
    .await;
    let user = run.ref_of(testid("login-user")).await;
    run.probe(
        "query",
        "inspect a ref",
        "reticle_inspect",
        json!({ "ref": user }),
        |v| format!("element {}", v["element"].is_object()),
        None,
    )
    .await;
}

async fn acts(run: &mut Run<'_>) {
    let value = |id: &str| format!("{}.value", on(id));
    let active = "document.activeElement && document.activeElement.dataset.testid || null";
    let cases: Vec<(&str, Value, String)> = vec![
        (
            "click",
            act("counter-increment", "click", json!({})),
            format!("{}.textContent", on("counter-value")),
        ),
        (
            "dblclick",
            act("dblclick-target", "dblclick", json!({})),
            format!("{}.textContent", on("dblclick-target")),
        ),
        (
            "hover",
            act("hover-target", "hover", json!({})),
            format!("{}.hidden", on("hover-tooltip")),
        ),
        (
            "focus",
            act("notes", "focus", json!({})),
            active.to_string(),
        ),
        ("blur", act("notes", "blur", json!({})), active.to_string()),
        (
            "fill",
            act("login-user", "fill", json!({"value": "ann"})),
            value("login-user"),
        ),
        (
            "type",
            act("notes", "type", json!({"text": "hi"})),
            value("notes"),
        ),
        (
            "press",
            act("notes", "press", json!({"key": "Enter"})),
            value("notes"),
        ),
        ("clear", act("notes", "clear", json!({})), value("notes")),
        (
            "select",
            act("colour", "select", json!({"value": "blue"})),
            value("colour"),
        ),
        (
            "check",
            act("subscribe", "check", json!({})),
            format!("{}.checked", on("subscribe")),
        ),
        (
            "uncheck",
            act("subscribe", "uncheck", json!({})),
            format!("{}.checked", on("subscribe")),
        ),
        (
            "scrollIntoView",
            act("jump-row-150", "scrollIntoView", json!({})),
            format!(
                "(r => r.top >= 0 && r.bottom <= innerHeight)({}.getBoundingClientRect())",
                on("jump-row-150")
            ),
        ),
    ];
    for (name, args, effect) in cases {
        run.probe(
            "act",
            &format!("act {name}"),
            "reticle_act",
            args,
            nothing,
            Some(effect.as_str()),
        )
        .await;
    }
    let counter = format!("{}.textContent", on("counter-value"));
    let button = run.ref_of(testid("counter-increment")).await;
    run.probe(
        "act",
        "act by ref",
        "reticle_act",
        json!({"ref": button, "action": "click"}),
        nothing,
        Some(counter.as_str()),
    )
    .await;
    run.probe(
        "act",
        "act on a target naming several",
        "reticle_act",
        json!({"target": {"css": "[data-testid=item-list] li"}, "action": "click"}),
        nothing,
        None,
    )
    .await;
    run.probe(
        "act",
        "act on a target naming none",
        "reticle_act",
        act("no-such-thing", "click", json!({})),
        nothing,
        None,
    )
    .await;
    run.probe(
        "act_sequence",
        "act_sequence fill, fill, click",
        "reticle_act_sequence",
        json!({"steps": [
            act("login-user", "fill", json!({"value": "ann"})),
            act("login-password", "fill", json!({"value": "pw"})),
            act("login-submit", "click", json!({})),
        ]}),
        completed,
        None,
    )
    .await;
}

async fn waits(run: &mut Run<'_>) {
    let kinds: [(&str, &str, Value); 8] = [
        (
            "signal",
            "counter-increment",
            json!({"kind": "signal", "name": "counter.changed"}),
        ),
        (
            "net",
            "health-xhr",
            json!({"kind": "net", "urlContains": "/api/health"}),
        ),
        (
            "route",
            "nav-details",
            json!({"kind": "route", "contains": "view=details"}),
        ),
        (
            "text",
            "nav-home",
            json!({"kind": "text", "contains": "This is the home view."}),
        ),
        (
            "state",
            "counter-increment",
            json!({"kind": "state", "store": "app", "path": "counter", "exists": true}),
        ),
        (
            "element",
            "open-dialog",
            json!({"kind": "element", "testid": "close-dialog"}),
        ),
        (
            "console",
            "log-error",
            json!({"kind": "console", "level": "error"}),
        ),
        (
            "allOf and not",
            "counter-increment",
            json!({"kind": "allOf", "predicates": [
                {"kind": "signal", "name": "counter.changed"},
                {"kind": "not", "predicate": {"kind": "text", "contains": "no such text"}}
            ]}),
        ),
    ];
    run.until_each(kinds).await;
    run.probe(
        "act_and_wait",
        "act_and_wait until settled",
        "reticle_act_and_wait",
        act("close-dialog", "click", json!({})),
        verdict,
        None,
    )
    .await;
    run.probe(
        "act_and_wait",
        "wait_for an element",
        "reticle_wait_for",
        json!({"predicate": {"kind": "element", "testid": "login-submit"}, "timeout_ms": 5000}),
        |v| format!("timedOut {}", v["timedOut"]),
        None,
    )
    .await;
    run.probe(
        "act_and_wait",
        "assert a signal",
        "reticle_assert",
        json!({"predicate": {"kind": "signal", "name": "login.succeeded"}, "timeout_ms": 5000}),
        verdict,
        None,
    )
    .await;
}

/// The predicate kinds that read element states, console text, response bodies and animations:
/// each through act_and_wait, with a false case and a check made while an animation runs.
async fn states_and_bodies(run: &mut Run<'_>) {
    // (state, the control clicked, the element that must then be in the state)
    let states = [
        ("checked", "subscribe", "subscribe"),
        ("expanded", "disclosure-toggle", "disclosure-toggle"),
        ("disabled", "lock-toggle", "locked-target"),
        ("selected", "tab-two", "tab-two"),
        ("pressed", "bold-toggle", "bold-toggle"),
    ];
    let mut kinds: Vec<(String, &str, Value)> = states
        .into_iter()
        .map(|(state, clicked, element)| {
            (
                format!("element {state}"),
                clicked,
                json!({"kind": "element", "testid": element, "state": state}),
            )
        })
        .collect();
    kinds.extend([
        (
            "console contains".to_string(),
            "log-error",
            json!({"kind": "console", "contains": "deliberate console error"}),
        ),
        (
            "net bodyContains".to_string(),
            "quote-fetch",
            json!({"kind": "net", "urlContains": "/api/quote", "bodyContains": "serendipity"}),
        ),
        (
            "animation".to_string(),
            "animate-start",
            json!({"kind": "animation"}),
        ),
    ]);
    run.until_each(kinds).await;
    // A name held whole by default; `exact: false` asks for a part of it ("Log a console error").
    for (probe, exact) in [
        ("assert an element by a part of its name, whole", None),
        (
            "assert an element by a part of its name, exact false",
            Some(false),
        ),
    ] {
        let mut predicate = json!({"kind": "element", "role": "button", "name": "console error"});
        if let Some(exact) = exact {
            predicate["exact"] = json!(exact);
        }
        run.probe(
            "act_and_wait",
            probe,
            "reticle_assert",
            json!({ "predicate": predicate }),
            verdict,
            None,
        )
        .await;
    }
    run.probe(
        "act_and_wait",
        "act_and_wait until a state that does not follow",
        "reticle_act_and_wait",
        json!({ "target": testid("counter-increment"), "action": "click", "timeout_ms": 500,
                "until": {"kind": "element", "testid": "disclosure-toggle", "state": "checked"} }),
        verdict,
        None,
    )
    .await;
    run.probe(
        "act",
        "act start an animation",
        "reticle_act",
        act("animate-start", "click", json!({})),
        nothing,
        None,
    )
    .await;
    run.probe(
        "act_and_wait",
        "assert animation while it runs",
        "reticle_assert",
        json!({"predicate": {"kind": "animation"}, "timeout_ms": 0}),
        verdict,
        None,
    )
    .await;
}

/// A baseline (read through protocol 1's snapshot) saved, diffed at once, and diffed after the
/// disclosure was toggled; reached through reticle_run as an extended tool.
async fn baselines(run: &mut Run<'_>) {
    let member = |tool: &str, args: Value| json!({ "tool": tool, "args": args });
    let changed = |v: &Value| format!("changed {}", v["changed"]);
    run.probe(
        "baseline",
        "baseline save",
        "reticle_run",
        member("reticle_baseline_save", json!({"name": "compat"})),
        |v| format!("outline {}", v["lineCount"].as_u64().is_some_and(|n| n > 0)),
        None,
    )
    .await;
    run.probe(
        "baseline",
        "baseline diff of the unchanged page",
        "reticle_run",
        member("reticle_baseline_diff", json!({"name": "compat"})),
        changed,
        None,
    )
    .await;
    run.probe(
        "baseline",
        "toggle the disclosure",
        "reticle_act",
        act("disclosure-toggle", "click", json!({})),
        nothing,
        None,
    )
    .await;
    run.probe(
        "baseline",
        "baseline diff after the toggle",
        "reticle_run",
        member("reticle_baseline_diff", json!({"name": "compat"})),
        changed,
        None,
    )
    .await;
}

async fn reads(run: &mut Run<'_>) {
    run.probe(
        "observe",
        "observe the last action",
        "reticle_observe",
        json!({"filters": ["signal"]}),
        |v| format!("window complete {}", v["lost"]["complete"]),
        None,
    )
    .await;
    let request = harness::poll::within(BOUND, async || {
        let read = run
            .stack
            .call("reticle_network", json!({"urlContains": "/api/login"}))
            .await
            .ok()?;
        let first = read["structuredContent"]["requests"]
            .as_array()?
            .iter()
            .find(|r| r["status"].is_u64())?
            .clone();
        Some(first)
    })
    .await;
    run.cells.push(Cell {
        family: "network".into(),
        probe: "network lists the login request".into(),
        verdict: request.map_or_else(
            || "never listed".into(),
            |r| format!("ok, status {}", r["status"]),
        ),
    });
    run.probe(
        "console",
        "console errors",
        "reticle_console",
        json!({"level": "error"}),
        |v| {
            let said = v["messages"].as_array().into_iter().flatten().any(|m| {
                m["message"]
                    .as_str()
                    .is_some_and(|t| t.contains("deliberate console error"))
            });
            format!("the deliberate error listed {said}")
        },
        None,
    )
    .await;
    run.probe(
        "state",
        "state of a path",
        "reticle_state",
        json!({"store": "app", "path": "user"}),
        found,
        None,
    )
    .await;
    run.probe(
        "state",
        "state of a missing path",
        "reticle_state",
        json!({"store": "app", "path": "nope.deeper"}),
        found,
        None,
    )
    .await;
    for mode in ["full", "interactive", "status"] {
        run.probe(
            "snapshot",
            &format!("snapshot {mode}"),
            "reticle_snapshot",
            json!({ "mode": mode }),
            has_tree,
            None,
        )
        .await;
    }
    run.probe(
        "snapshot",
        "snapshot diff",
        "reticle_snapshot",
        json!({"diff": true}),
        nothing,
        None,
    )
    .await;
}

async fn refs_and_guards(run: &mut Run<'_>) {
    let items = format!("{}.children.length", on("item-list"));
    run.probe(
        "guards",
        "destructive act without confirmation",
        "reticle_act",
        act("delete-item", "click", json!({})),
        nothing,
        Some(items.as_str()),
    )
    .await;
    run.probe(
        "guards",
        "destructive act confirmed",
        "reticle_act",
        act("delete-item", "click", json!({"confirmDangerous": true})),
        nothing,
        Some(items.as_str()),
    )
    .await;
    let stale = run.ref_of(testid("rerender-target")).await;
    let _ = run
        .stack
        .page(&format!("{}.click(); true", on("rerender")))
        .await;
    run.probe(
        "stale refs",
        "act on a ref held across a re-render",
        "reticle_act",
        json!({"ref": stale, "action": "click"}),
        nothing,
        Some(format!("{}.textContent", on("rerender-clicks")).as_str()),
    )
    .await;
}

async fn navigation(run: &mut Run<'_>) {
    let url = format!("{}&view=details", run.stack.url);
    run.probe(
        "navigate",
        "navigate to a url",
        "reticle_navigate",
        json!({ "url": url }),
        confirmed,
        None,
    )
    .await;
    run.stack.session_listed().await;
    run.probe(
        "navigate",
        "navigate reload",
        "reticle_navigate",
        json!({"reload": true}),
        confirmed,
        None,
    )
    .await;
    run.stack.session_listed().await;
}

async fn session(run: &mut Run<'_>) {
    run.probe(
        "session",
        "sessions lists the page",
        "reticle_sessions",
        json!({}),
        |v| {
            let listed = v["sessions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|s| s["sessionId"] == super::stack::SESSION);
            format!("listed {listed}")
        },
        None,
    )
    .await;
    let members: [(&str, Value); 4] = [
        (
            "yield",
            json!({"action": "yield", "note": "the suite hands over"}),
        ),
        ("resume", json!({"action": "resume"})),
        ("messages", json!({"action": "messages"})),
        (
            "end",
            json!({"action": "end", "summary": "the suite is done"}),
        ),
    ];
    for (name, args) in members {
        let facts: Facts = if name == "messages" {
            |v| format!("messages {}", v["messages"].is_array())
        } else {
            action_word
        };
        run.probe(
            "session",
            &format!("session {name}"),
            "reticle_session",
            args,
            facts,
            None,
        )
        .await;
    }
}
