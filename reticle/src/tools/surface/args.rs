//! The argument types of every tool. Each is parsed strictly (an unknown or wrongly typed field
//! is a refusal naming it) and its JSON Schema, advertised as the tool's `inputSchema`, is
//! generated from the type itself, then made lean ([`super::lean_schema`]). The predicate schema
//! is defined once ([`PredicateArg`]): one object shape (`kind` required, an enum of the kinds),
//! its description naming the fields each kind takes (the strict parse in `verdict` refuses any
//! other); only the composites' fields, which nest predicates, are spelled out as properties.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::flow::step::{Action, ActionArgs, FlowStep, PredicateArg, Target};

/// The session id every session-bound tool accepts.
pub const SESSION_ID: &str = "sessionId";

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SessionOnly {
    /// Which browser session (from reticle_sessions); omitted, the only or clearly most recent one.
    pub session_id: Option<String>,
}

pub use crate::wire::args::SnapshotMode;

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SnapshotArgs {
    pub session_id: Option<String>,
    /// full (default): the outline; interactive: controls only; status: route, title, dialogs.
    pub mode: Option<SnapshotMode>,
    /// A ref: outline only that element's subtree.
    pub scope: Option<String>,
    /// Only what changed since the last snapshot of this scope and mode.
    pub diff: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct QueryArgs {
    pub session_id: Option<String>,
    pub role: Option<String>,
    pub name: Option<String>,
    pub text: Option<String>,
    pub label: Option<String>,
    pub placeholder: Option<String>,
    pub testid: Option<String>,
    pub alt: Option<String>,
    pub css: Option<String>,
    /// A ref: search only inside that element.
    pub scope: Option<String>,
    /// false: names as substrings; true: text whole too.
    pub exact: Option<bool>,
    /// Most elements returned (default 50).
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
    /// Only the count, no elements.
    pub count_only: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InspectArgs {
    pub session_id: Option<String>,
    /// The element's ref (from reticle_query or reticle_snapshot).
    #[serde(rename = "ref")]
    pub element_ref: String,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NavigateArgs {
    pub session_id: Option<String>,
    /// Where to go (http or https); give this or `reload`.
    pub url: Option<String>,
    /// Reload the page instead.
    pub reload: Option<bool>,
    /// With reload: bypass the cache.
    pub hard: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RefreshArgs {
    pub session_id: Option<String>,
    /// Bypass the cache.
    pub hard: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ViewportArgs {
    pub session_id: Option<String>,
    /// CSS pixels, 1 to 8192.
    pub width: u32,
    /// CSS pixels, 1 to 8192.
    pub height: u32,
    /// 0.5 to 4 (default 1).
    pub device_scale_factor: Option<f64>,
    /// Emulate a phone (default false).
    pub mobile: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NetworkMockArgs {
    pub session_id: Option<String>,
    /// The rules, first match wins (replacing those set before); alias `mocks`.
    #[serde(alias = "mocks")]
    pub rules: Option<Vec<MockRuleArgs>>,
    /// Remove every rule.
    pub clear: Option<bool>,
    /// Answer the rules in force.
    pub list: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MockRuleArgs {
    /// A fragment of the request URL.
    pub url_contains: String,
    /// GET, POST, ...; omitted, every method.
    pub method: Option<String>,
    /// 100 to 599 (default 200).
    pub status: Option<u16>,
    /// The response body: text, or JSON (sent as JSON).
    pub body: Option<Value>,
    /// Shorthand for the Content-Type header.
    pub content_type: Option<String>,
    pub headers: Option<Map<String, Value>>,
    /// Answer after this many ms (at most 30000).
    pub delay_ms: Option<u64>,
    /// Fail the request as a network error instead.
    pub abort: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WaitReadyArgs {
    /// How long to wait, in ms (default 5000, at most 30000).
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ActArgs {
    pub session_id: Option<String>,
    /// The element's ref; give this or `target`.
    #[serde(rename = "ref")]
    pub element_ref: Option<String>,
    pub target: Option<Target>,
    pub action: Action,
    pub args: Option<ActionArgs>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Step {
    #[serde(rename = "ref")]
    pub element_ref: Option<String>,
    pub target: Option<Target>,
    pub action: Action,
    pub args: Option<ActionArgs>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ActSequenceArgs {
    pub session_id: Option<String>,
    /// The steps, in order; the sequence stops at the first that fails.
    #[schemars(length(min = 1, max = 50))]
    pub steps: Vec<Step>,
    /// Bound per step in milliseconds (default 8000).
    #[serde(rename = "timeout_ms")]
    #[schemars(range(max = 60000))]
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ActAndWaitArgs {
    pub session_id: Option<String>,
    #[serde(rename = "ref")]
    pub element_ref: Option<String>,
    pub target: Option<Target>,
    pub action: Action,
    pub args: Option<ActionArgs>,
    /// What must hold after the action; omitted, the page must settle.
    pub until: Option<PredicateArg>,
    /// How long to wait in milliseconds (default 4000; 0 evaluates once).
    #[serde(rename = "timeout_ms")]
    #[schemars(range(max = 60000))]
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ObserveArgs {
    pub session_id: Option<String>,
    /// A cursor (an act's `since`): events from there on.
    pub since: Option<String>,
    /// An action id (`a1`...): that action's events.
    pub action_id: Option<String>,
    /// Without since or actionId: the last this many milliseconds (default 2000).
    #[serde(rename = "window_ms")]
    #[schemars(range(min = 1, max = 60000))]
    pub window_ms: Option<u64>,
    /// Families (dom, net, route, console, signal, state, page) or types (net.request) to keep.
    pub filters: Option<Vec<String>>,
    /// Most events returned, newest kept (default 200).
    #[schemars(range(min = 1, max = 2000))]
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NetworkArgs {
    pub session_id: Option<String>,
    pub since: Option<String>,
    pub action_id: Option<String>,
    pub method: Option<String>,
    pub url_contains: Option<String>,
    pub status: Option<u16>,
    pub ok: Option<bool>,
    /// Most requests returned (default 50).
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ConsoleLevel {
    Log,
    Info,
    Warn,
    Error,
    Debug,
}

impl ConsoleLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            ConsoleLevel::Log => "log",
            ConsoleLevel::Info => "info",
            ConsoleLevel::Warn => "warn",
            ConsoleLevel::Error => "error",
            ConsoleLevel::Debug => "debug",
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConsoleArgs {
    pub session_id: Option<String>,
    pub since: Option<String>,
    pub action_id: Option<String>,
    /// Only this level (error includes uncaught errors).
    pub level: Option<ConsoleLevel>,
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StateArgs {
    pub session_id: Option<String>,
    /// A store the app registered; omitted, every store at a shallow depth.
    pub store: Option<String>,
    /// A dotted path inside the store, e.g. user.name or items[0].id.
    pub path: Option<String>,
    #[schemars(range(max = 8))]
    pub depth: Option<u32>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WaitArgs {
    pub session_id: Option<String>,
    pub predicate: PredicateArg,
    /// A cursor; omitted, the start of the last act (or of the session).
    pub since: Option<String>,
    /// How long it may wait for the predicate, in milliseconds.
    #[serde(rename = "timeout_ms")]
    #[schemars(range(max = 60000))]
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Clone, Copy, Deserialize, serde::Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FeedbackKind {
    Bug,
    Gap,
    Ambiguity,
    FeatureRequest,
    Improvement,
    Experience,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FeedbackArgs {
    pub kind: FeedbackKind,
    #[schemars(length(min = 1, max = 8000))]
    pub text: String,
    pub need: Option<String>,
    pub impact: Option<String>,
    #[schemars(range(min = 1, max = 5))]
    pub rating: Option<u8>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SessionAction {
    Yield,
    Resume,
    End,
    Messages,
    Launch,
    Attach,
}

impl SessionAction {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionAction::Yield => "yield",
            SessionAction::Resume => "resume",
            SessionAction::End => "end",
            SessionAction::Messages => "messages",
            SessionAction::Launch => "launch",
            SessionAction::Attach => "attach",
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum YieldMode {
    Waiting,
    Ask,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SessionFamilyArgs {
    pub session_id: Option<String>,
    /// yield (hand the page to its human), resume, end, messages (what the human left),
    /// launch/attach (a driven browser).
    pub action: SessionAction,
    /// With yield: waiting (default) or ask.
    pub mode: Option<YieldMode>,
    /// With yield: what to tell the human.
    pub note: Option<String>,
    /// With end: a closing line.
    pub summary: Option<String>,
    /// launch/attach: a local URL.
    pub url: Option<String>,
    /// attach: DevTools at http://127.0.0.1:<port>.
    pub cdp: Option<String>,
    /// launch: default true.
    pub headless: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolsArgs {
    /// Tools whose parameters to return; omitted, the catalogue.
    pub names: Option<Vec<String>>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RunArgs {
    /// Any catalogued tool or family member, e.g. reticle_yield.
    pub tool: String,
    /// Its arguments.
    pub args: Option<Map<String, Value>>,
    /// Forwarded to the tool when its args carry none.
    pub session_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClockArgs {
    pub session_id: Option<String>,
    /// Freeze the page's timers.
    pub freeze: Option<bool>,
    /// Advance frozen timers by this many milliseconds.
    pub advance_ms: Option<u64>,
    /// Restore the real clock.
    pub reset: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SleepArgs {
    #[schemars(range(max = 600000))]
    pub ms: u64,
}

/// The JSON Schema of `T` as an MCP input schema object.
pub fn schema_of<T: JsonSchema>() -> Map<String, Value> {
    let settings = schemars::generate::SchemaSettings::draft2020_12();
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut map = match schema.to_value() {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    map.remove("$schema");
    map.remove("title");
    let mut value = Value::Object(map);
    drop_null(&mut value);
    let Value::Object(mut map) = value else {
        return Map::new();
    };
    map.insert("type".into(), Value::String("object".into()));
    super::lean_schema::lean(map)
}

/// An omitted field is absent, never null: strips the `null` alternative schemars adds for
/// `Option` fields (`anyOf [X, null]` becomes X; `type [T, "null"]` becomes T).
fn drop_null(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    map.insert("type".into(), only);
                }
            }
            if let Some(Value::Array(any)) = map.get("anyOf")
                && any.len() == 2
                && let Some(other) = any
                    .iter()
                    .find(|s| s.get("type") != Some(&Value::from("null")))
                && any
                    .iter()
                    .any(|s| s.get("type") == Some(&Value::from("null")))
            {
                let other = other.clone();
                map.remove("anyOf");
                if let Value::Object(inner) = other {
                    for (k, v) in inner {
                        map.entry(k).or_insert(v);
                    }
                }
            }
            for v in map.values_mut() {
                drop_null(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(drop_null),
        _ => {}
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FlowSaveArgs {
    /// Accepted for uniformity; flows belong to the project, not to a session.
    pub session_id: Option<String>,
    /// The flow's name: 1 to 100 letters, digits, '.', '_' or '-'.
    pub name: String,
    /// The path the flow starts from; a replay navigates there first, e.g. /login.
    pub start_path: String,
    /// Globs of the app paths the flow covers, e.g. ["/login", "/account/*"].
    pub paths: Option<Vec<String>>,
    /// The steps, in order.
    #[schemars(length(min = 1, max = 200))]
    pub steps: Vec<FlowStep>,
    /// Replace a saved flow of the same name (default false: a refusal names it).
    pub overwrite: Option<bool>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FlowAction {
    List,
    Load,
    Delete,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FlowFamilyArgs {
    /// Accepted for uniformity; flows belong to the project, not to a session.
    pub session_id: Option<String>,
    /// list (every saved flow with its grade), load (one flow), delete (one flow).
    pub action: FlowAction,
    /// With load and delete: the flow's name.
    pub name: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LeaseAction {
    Acquire,
    Release,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LeaseFamilyArgs {
    /// The session to lease or release (from reticle_sessions).
    pub session_id: Option<String>,
    /// acquire (drive the session alone until release, expiry or your link ends), release.
    pub action: LeaseAction,
    /// Instead of sessionId: the session whose page URL is this one, or starts with it.
    #[schemars(length(max = 2048))]
    pub url: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FlowReplayArgs {
    pub session_id: Option<String>,
    /// The saved flow's name (reticle_flow {"action":"list"} lists them).
    pub name: String,
    /// Allow the flow's destructive steps (delete, remove...); without it the page refuses them.
    pub confirm_dangerous: Option<bool>,
    /// Values for the flow's secret placeholders, by the variable each names; a placeholder not
    /// given here is read from the daemon's environment.
    pub secrets: Option<BTreeMap<String, String>>,
    /// How long the page gets to come back on the flow's start path after the replay reloads
    /// or navigates it (default 15000).
    #[schemars(range(min = 1, max = 300000))]
    pub arrival_timeout_ms: Option<u64>,
    /// The page was opened at the flow's start path in a fresh browser context just now (as
    /// `reticle verify` opens it): when its route is the start path it is used as opened, not
    /// loaded again; a page elsewhere is still navigated.
    pub fresh_at_start: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FlowHealArgs {
    pub session_id: Option<String>,
    /// The saved flow's name.
    pub name: String,
    /// Write the healed flow (a new version; the old one is kept) when every rebinding is
    /// proved by a consequence; default false: only propose.
    pub apply: Option<bool>,
    /// Allow the flow's destructive steps while healing.
    pub confirm_dangerous: Option<bool>,
    /// Values for the flow's secret placeholders, by variable name (else the daemon's
    /// environment).
    pub secrets: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReplayArgs {
    pub session_id: Option<String>,
    /// The capsule a red reticle_act_and_wait left (its `capsuleSaved` path, or the file name).
    #[schemars(length(min = 1, max = 300))]
    pub capsule: String,
    /// Allow the action if it is destructive.
    pub confirm_dangerous: Option<bool>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum VerifyAction {
    Flows,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct VerifyArgs {
    pub session_id: Option<String>,
    /// flows: replay saved flows and answer a suite verdict.
    pub action: VerifyAction,
    /// The flows to replay; omitted, every saved flow.
    #[schemars(length(max = 200))]
    pub flows: Option<Vec<String>>,
    /// Replays of each flow (default 1); with 2 or more a flow whose replays disagree is flaky.
    #[schemars(range(min = 1, max = 5))]
    pub repeat: Option<u32>,
    /// Allow destructive steps in every flow replayed.
    pub confirm_dangerous: Option<bool>,
    /// Values for secret placeholders, by variable name (else the daemon's environment).
    pub secrets: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    Json,
    Junit,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RunExportArgs {
    /// Accepted for uniformity; runs belong to the project, not to a session.
    pub session_id: Option<String>,
    /// The run's id (a replay or verify answers it as `runId`); omitted, the newest run.
    pub run_id: Option<String>,
    /// json (default): the run artifact; junit: JUnit XML, one testcase per flow.
    pub format: Option<ExportFormat>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BaselineAction {
    Save,
    List,
    Diff,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BaselineFamilyArgs {
    pub session_id: Option<String>,
    /// save (the page's outline now), list (the saved baselines), diff (the page now against one).
    pub action: BaselineAction,
    /// With save and diff: the baseline's name.
    pub name: Option<String>,
    /// With save: replace a baseline of that name.
    pub overwrite: Option<bool>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RecordAction {
    Start,
    Stop,
}

/// Whose acts a recording captures.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RecordSource {
    /// The agent's own acts through this daemon (act, act_sequence, act_and_wait, navigate).
    Agent,
    /// A person's clicks and typing in the page (Reticle's SDK records them on request).
    Person,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RecordArgs {
    pub session_id: Option<String>,
    /// start (begin recording on the session) or stop (end it and answer the steps).
    pub action: RecordAction,
    /// With start: agent (default, the agent's own acts) or person (clicks and typing in the page).
    pub source: Option<RecordSource>,
    /// With stop: save the steps as a flow of this name.
    pub name: Option<String>,
    /// With stop and name: the flow's start path (default: where the recording began).
    pub start_path: Option<String>,
    /// With stop and name: replace a saved flow of that name.
    pub overwrite: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FlowSaveRecordedArgs {
    pub session_id: Option<String>,
    /// The flow's name (default: the name the page gave the recording).
    pub name: Option<String>,
    /// The flow's start path (default: where the person began recording).
    pub start_path: Option<String>,
    /// Replace a saved flow of that name.
    pub overwrite: Option<bool>,
}

/// Parses arguments into `T`; the error names the field at fault and what was wrong with it.
pub fn parse<T: serde::de::DeserializeOwned>(arguments: &Map<String, Value>) -> Result<T, String> {
    let value = Value::Object(arguments.clone());
    serde_path_to_error::deserialize::<_, T>(value).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.inner().to_string();
        let inner = clip(&inner, 300);
        if path == "." || path.is_empty() {
            inner
        } else {
            format!("field `{path}`: {inner}")
        }
    })
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() > max {
        format!("{}…", text.chars().take(max).collect::<String>())
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::predicate::KINDS;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn refusals_name_the_field() {
        let e = parse::<ActArgs>(&map(json!({"action": "jump", "ref": "e1"}))).unwrap_err();
        assert!(e.contains("action") && e.contains("click"), "{e}");
        let e = parse::<QueryArgs>(&map(json!({"testid": 3}))).unwrap_err();
        assert!(e.contains("testid"), "{e}");
        let e = parse::<QueryArgs>(&map(json!({"__proto__": {}}))).unwrap_err();
        assert!(e.contains("__proto__"), "{e}");
        let e = parse::<ActSequenceArgs>(&map(json!({"steps": [{"action": "click", "x": 1}]})))
            .unwrap_err();
        assert!(e.contains("steps[0]") && e.contains("`x`"), "{e}");
        assert!(
            parse::<WaitArgs>(&map(json!({})))
                .unwrap_err()
                .contains("predicate")
        );
    }

    #[test]
    fn the_predicate_schema_is_defined_once_and_referenced() {
        let schema = Value::Object(schema_of::<ActAndWaitArgs>());
        assert_eq!(schema["properties"]["until"]["$ref"], "#/$defs/Predicate");
        let predicate = &schema["$defs"]["Predicate"];
        let kinds: Vec<&str> = KINDS.iter().map(|(kind, _)| *kind).collect();
        assert_eq!(predicate["properties"]["kind"]["enum"], json!(kinds));
        let said = predicate["description"].as_str().unwrap();
        for (kind, fields) in KINDS {
            assert!(
                said.contains(&format!("{kind}({})", fields.join(","))),
                "{kind}: {said}"
            );
        }
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["additionalProperties"], false);
    }
}
