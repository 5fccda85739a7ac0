//! The catalogue: which tools this daemon has, which it advertises (the surface), their
//! definitions (descriptions, input schemas generated from the argument types, and output
//! schemas when every tool is advertised; on the default surface the input schemas leave out
//! `additionalProperties: false`, as the strict parse refuses any unlisted field by name and
//! `reticle_tools` and the full surface still state it), with a version (bumped by hand when tool shapes
//! change) and a hash of the advertised definitions (so any change, including a test's edit,
//! is visible). Fixed for a daemon life; read at start. The `tools/list` result is encoded once,
//! when the catalogue is built, and served as those bytes.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::Tool;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::args::{self, schema_of};
use super::names::{Standing, ToolName};
use crate::config::env;
use crate::wire::CatalogueSummary;

/// The catalogue's revision. Bump it when a tool's name, schema or meaning changes.
pub const CATALOGUE_VERSION: &str = "5";

/// Which tools are advertised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Surface {
    /// The default tools, lean (no output schemas).
    Default,
    /// Every catalogued tool, with output schemas (`RETICLE_ADVERTISE_ALL_TOOLS=1`).
    All,
}

impl Surface {
    /// The surface the environment asks for.
    pub fn from_env() -> Self {
        if crate::config::switch_on(env::ADVERTISE_ALL_TOOLS) {
            Surface::All
        } else {
            Surface::Default
        }
    }
}

/// The three counts: names, tools advertised under ALL, tools advertised by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub names: usize,
    pub all: usize,
    pub default: usize,
}

/// The tools one daemon life has.
#[derive(Debug, Clone)]
pub struct Catalogue {
    surface: Surface,
    /// Callable tools (advertised or not), in catalogue order.
    callable: Vec<ToolName>,
    /// The advertised definitions, in order.
    advertised: Vec<(ToolName, Tool)>,
    hash: String,
    /// The `tools/list` result (`{"tools":[..]}`), encoded once.
    list_result: Arc<str>,
}

/// One sentence (or two) per tool, as advertised.
pub fn description(tool: ToolName) -> &'static str {
    use ToolName as T;
    match tool {
        T::Sessions => {
            "The browser sessions (app tabs running the Reticle SDK) connected to this daemon; when none, `why` names the case and the next step. Reads only."
        }
        T::Snapshot => {
            "The page as an outline of roles, names, refs and states, with its cost in bytes and tokens. Reads only."
        }
        T::Query => {
            "Find elements as a user names them (role and name, text, label, testid...); returns refs. No match carries a hint (route, testids present). Reads only."
        }
        T::Inspect => {
            "All the SDK knows of one element: role, name, value, states, box, occlusion, styles. Reads only."
        }
        T::Navigate => {
            "Go to a URL or reload, and say whether the new document's arrival was confirmed."
        }
        T::Act => {
            "Do one action to one element. Returns `since` and `actionId` to read what followed; verify with reticle_act_and_wait or reticle_assert."
        }
        T::ActSequence => {
            "Do several actions in order, stopping at the first that fails. Returns `since` and one `actionId`."
        }
        T::ActAndWait => {
            "Act, then wait until `until` holds (without it, until the page settles); returns a verdict (yes, no or unknown, with a reason), its evidence, a digest of what the app did and a cursor."
        }
        T::Observe => {
            "The timeline the page reported (DOM, network, routes, console, signals) since a cursor or action, with a summary and what was lost. Reads only."
        }
        T::WaitFor => {
            "Block until a predicate holds or the timeout passes; returns the evaluation, not a verdict."
        }
        T::Assert => {
            "Judge a predicate over the window since the last act (or `since`): yes only on positive evidence, no on an observed contradiction, unknown when evidence is missing."
        }
        T::Network => {
            "The page's requests (method, url, status, duration), newest first; a hint with totals when none match. Reads only."
        }
        T::Console => {
            "The page's console messages and uncaught errors, newest first; a hint with totals when none match. Reads only."
        }
        T::State => {
            "Read a store the app registered; a wrong path answers found:false with the keys that exist. Reads only."
        }
        T::Feedback => {
            "Leave feedback about Reticle, kept in a local outbox; nothing leaves this machine."
        }
        T::Session => "Share the page with its human, by `action`.",
        T::Tools => {
            "Every catalogued tool (family members with the action reaching each), or the parameters of the tools in `names`."
        }
        T::Run => {
            "Run any catalogued tool or family member by name, with the same checks as a direct call."
        }
        T::Yield => "reticle_session {action:\"yield\"}: hand the page to its human.",
        T::Resume => "reticle_session {action:\"resume\"}: take the page back.",
        T::EndSession => "reticle_session {action:\"end\"}: end the agent's session on the page.",
        T::Messages => {
            "reticle_session {action:\"messages\"}: read what the human left on the page."
        }
        T::Capabilities => {
            "What the page offers: its testids, signals, stores and commands. Reads only."
        }
        T::Clock => {
            "Control the page's clock: freeze its timers, advance them, or reset to real time."
        }
        T::FlowSave => {
            "Save a flow: a name, the path it starts from, and steps (each element named as a user names it, the action, and the `until` consequence that must follow), to .reticle/flows/. Answers its assertion grade; typed secrets are stored as placeholders."
        }
        T::FlowReplay => {
            "Replay a saved flow: go to its start path, run each step on its target resolved afresh, check each consequence as reticle_act_and_wait does, and answer one verdict (yes, no or unknown) with the failing step, its evidence, a capsule and a run artifact. An assertion-free flow never answers yes."
        }
        T::Verify => {
            "Verify the app: action flows replays every saved flow (or those named, `repeat` times each) and answers a suite verdict, yes only when every flow is yes; a flow whose replays disagree is flaky, not yes. Writes a run artifact."
        }
        T::FlowVerify => {
            "reticle_verify {action:\"flows\"}: replay saved flows and answer a suite verdict."
        }
        T::RunExport => {
            "A run artifact (every replay and verify writes one, `runId`): format json (the run) or junit (JUnit XML, one testcase per flow, a failure naming the step). Omit runId for the newest run."
        }
        T::Flow => {
            "The saved flows: action list (names, start paths, grades), load (one flow), delete (one flow)."
        }
        T::FlowList => "reticle_flow {action:\"list\"}: the saved flows with their grades.",
        T::FlowLoad => "reticle_flow {action:\"load\", name}: one saved flow.",
        T::FlowDelete => "reticle_flow {action:\"delete\", name}: delete one saved flow.",
        T::Baseline => {
            "Semantic baselines of a page, kept in .reticle/baselines/: action save (the page's outline now: route, roles, names, states, console errors), list, diff (the page now against a saved one, as added and removed lines; not a verdict)."
        }
        T::BaselineSave => {
            "reticle_baseline {action:\"save\", name, overwrite?}: save the page's outline."
        }
        T::BaselineList => "reticle_baseline {action:\"list\"}: the saved baselines.",
        T::BaselineDiff => {
            "reticle_baseline {action:\"diff\", name}: the page now against a saved outline."
        }
        T::Lease => {
            "Lease a browser session so only you drive it: action acquire (sessionId, or url: the session whose page URL matches) and release. While you hold it, other agents' acts on it are refused naming you and when the lease expires; reads stay open. It expires after a while without your calls and ends with your reticle mcp; leases live in the daemon's memory and do not survive its restart."
        }
        T::LeaseAcquire => {
            "reticle_lease {action:\"acquire\", sessionId or url}: lease a session for yourself."
        }
        T::LeaseRelease => {
            "reticle_lease {action:\"release\", sessionId?}: let your lease go (all of them without sessionId or url)."
        }
        T::Record => {
            "Record a flow: action start (source agent: the agent's own act, act_sequence and act_and_wait calls on the session; source person: the person's clicks and typing in the page), stop (the steps, each element named as a user would, with each `until` and the assertion grade; `name` saves them as a flow). Typed secrets become placeholders."
        }
        T::RecordStart => {
            "reticle_record {action:\"start\", source?}: begin recording the agent's acts or a person's."
        }
        T::RecordStop => {
            "reticle_record {action:\"stop\", name?}: end the recording; its steps, saved as a flow when named."
        }
        T::FlowSaveRecorded => {
            "Save the latest person's recording the page sent (reticle_record with source person) as a flow in .reticle/flows/, its elements named as a user would and typed secrets as placeholders."
        }
        T::FlowHeal => {
            "Heal a saved flow whose step no longer finds its element (a renamed testid, a reworded button): replay it, propose the element the page shows now for that step, and try it; apply:true writes a new version (the old one kept, the diff recorded) only when the step's consequence fires with the new target. Ambiguous candidates are listed, never applied."
        }
        T::Replay => {
            "Re-run a red reticle_act_and_wait from its capsule (`capsule`: its capsuleSaved path) on the page now, resolving its target afresh, and say whether it is still red, with the verdict and evidence."
        }
        T::TestSleep => "Test only: wait `ms` milliseconds, then answer.",
        T::TestEcho => "Test only: answer with the arguments given.",
    }
}

/// The input schema of a tool, generated from its argument type.
pub fn input_schema(tool: ToolName) -> Map<String, Value> {
    use ToolName as T;
    match tool {
        T::Sessions | T::Yield | T::Resume | T::EndSession | T::Messages => {
            schema_of::<args::NoArgs>()
        }
        T::Snapshot => schema_of::<args::SnapshotArgs>(),
        T::Query => schema_of::<args::QueryArgs>(),
        T::Inspect => schema_of::<args::InspectArgs>(),
        T::Navigate => schema_of::<args::NavigateArgs>(),
        T::Act => schema_of::<args::ActArgs>(),
        T::ActSequence => schema_of::<args::ActSequenceArgs>(),
        T::ActAndWait => schema_of::<args::ActAndWaitArgs>(),
        T::Observe => schema_of::<args::ObserveArgs>(),
        T::WaitFor | T::Assert => schema_of::<args::WaitArgs>(),
        T::Network => schema_of::<args::NetworkArgs>(),
        T::Console => schema_of::<args::ConsoleArgs>(),
        T::State => schema_of::<args::StateArgs>(),
        T::Feedback => schema_of::<args::FeedbackArgs>(),
        T::Session => schema_of::<args::SessionFamilyArgs>(),
        T::Tools => schema_of::<args::ToolsArgs>(),
        T::Run => schema_of::<args::RunArgs>(),
        T::Capabilities => schema_of::<args::SessionOnly>(),
        T::Clock => schema_of::<args::ClockArgs>(),
        T::FlowSave => schema_of::<args::FlowSaveArgs>(),
        T::Flow | T::FlowList | T::FlowLoad | T::FlowDelete => schema_of::<args::FlowFamilyArgs>(),
        T::Baseline | T::BaselineSave | T::BaselineList | T::BaselineDiff => {
            schema_of::<args::BaselineFamilyArgs>()
        }
        T::FlowReplay => schema_of::<args::FlowReplayArgs>(),
        T::Lease | T::LeaseAcquire | T::LeaseRelease => schema_of::<args::LeaseFamilyArgs>(),
        T::Verify | T::FlowVerify => schema_of::<args::VerifyArgs>(),
        T::RunExport => schema_of::<args::RunExportArgs>(),
        T::Record | T::RecordStart | T::RecordStop => schema_of::<args::RecordArgs>(),
        T::FlowSaveRecorded => schema_of::<args::FlowSaveRecordedArgs>(),
        T::FlowHeal => schema_of::<args::FlowHealArgs>(),
        T::Replay => schema_of::<args::ReplayArgs>(),
        T::TestSleep => schema_of::<args::SleepArgs>(),
        T::TestEcho => {
            let mut map = Map::new();
            map.insert("type".into(), json!("object"));
            map
        }
    }
}

/// The principal fields of a tool's result (every result may also be a refusal
/// `{ok:false, reason, recovery}`, and live results carry `session`).
fn output_fields(tool: ToolName) -> &'static [&'static str] {
    use ToolName as T;
    match tool {
        T::Sessions => &["sessions", "count", "why", "next"],
        T::Snapshot => &[
            "tree",
            "status",
            "mode",
            "nodes",
            "truncated",
            "cost",
            "diff",
        ],
        T::Query => &["elements", "count", "hint"],
        T::Inspect => &["element"],
        T::Navigate => &["dispatched", "url", "confirmed", "note"],
        T::Act => &["since", "actionId", "dispatched", "effect", "note"],
        T::ActSequence => &[
            "since",
            "actionId",
            "completed",
            "steps",
            "stalledAt",
            "note",
        ],
        T::ActAndWait | T::Assert => &[
            "verified",
            "reason",
            "because",
            "evidence",
            "advice",
            "lost",
            "reaction",
            "since",
            "next",
            "capsuleSaved",
        ],
        T::Observe => &["events", "summary", "lost", "next"],
        T::WaitFor => &["status", "evaluation", "waitedMs", "timedOut"],
        T::Network => &["requests", "count", "hint"],
        T::Console => &["messages", "count", "hint"],
        T::State => &["found", "value", "availableKeys"],
        T::Feedback => &["saved", "note"],
        T::Session => &["action", "done"],
        T::Tools => &["total", "tools"],
        T::Run => &["tool"],
        T::FlowSave => &["name", "path", "stepCount", "assertions", "secrets"],
        T::Flow => &["action", "flows", "steps", "deleted"],
        T::Baseline => &["action", "baselines", "changed", "added", "removed"],
        T::FlowReplay => &[
            "verified",
            "reason",
            "because",
            "failingStep",
            "failure",
            "steps",
            "grade",
            "runId",
            "capsuleSaved",
        ],
        T::Verify => &["action", "verified", "because", "flows", "flaky", "runId"],
        T::RunExport => &["runId", "format", "run", "junit"],
        T::Lease => &["action", "sessionId", "lease", "released"],
        T::Record => &[
            "action",
            "source",
            "startPath",
            "steps",
            "assertions",
            "notes",
            "saved",
        ],
        T::FlowSaveRecorded => &["name", "path", "stepCount", "assertions", "secrets"],
        T::FlowHeal => &[
            "outcome",
            "applied",
            "because",
            "rebindings",
            "candidates",
            "diff",
            "version",
        ],
        T::Replay => &["stillRed", "verified", "because", "evidence", "original"],
        _ => &[],
    }
}

fn output_schema(tool: ToolName) -> Map<String, Value> {
    let mut properties = Map::new();
    properties.insert("ok".into(), json!({ "type": "boolean" }));
    for field in output_fields(tool) {
        properties.insert((*field).into(), json!({}));
    }
    if tool.session_bound() {
        properties.insert(
            "session".into(),
            json!({ "type": "object", "properties": {
                "id": {"type": "string"}, "lastSeenMs": {"type": "integer"},
                "focused": {"type": ["boolean", "null"]}, "throttled": {"type": "boolean"}
            }}),
        );
    }
    let mut map = Map::new();
    map.insert("type".into(), json!("object"));
    map.insert("properties".into(), Value::Object(properties));
    map
}

/// `schema` without `additionalProperties: false` anywhere: the default surface's form, where
/// the listed properties say what a tool takes and the parse refuses any other by name.
fn without_closure(schema: Map<String, Value>) -> Map<String, Value> {
    fn open(value: &mut Value) {
        match value {
            Value::Object(map) => {
                if map.get("additionalProperties") == Some(&Value::Bool(false)) {
                    map.remove("additionalProperties");
                }
                map.values_mut().for_each(open);
            }
            Value::Array(items) => items.iter_mut().for_each(open),
            _ => {}
        }
    }
    let mut value = Value::Object(schema);
    open(&mut value);
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A tool's full definition on `surface`.
pub fn definition(tool: ToolName, surface: Surface) -> Tool {
    let schema = match surface {
        Surface::Default => without_closure(input_schema(tool)),
        Surface::All => input_schema(tool),
    };
    let mut definition = Tool::new(
        Cow::Borrowed(tool.as_str()),
        Cow::Borrowed(description(tool)),
        Arc::new(schema),
    );
    if surface == Surface::All && !matches!(tool.standing(), Standing::Test) {
        definition = definition.with_raw_output_schema(Arc::new(output_schema(tool)));
    }
    definition
}

/// The tools a surface advertises, in order (before test edits).
fn advertised_on(surface: Surface) -> Vec<ToolName> {
    ToolName::ALL
        .iter()
        .copied()
        .filter(|t| match t.standing() {
            Standing::Default => true,
            Standing::Extended => surface == Surface::All,
            Standing::Member { .. } | Standing::Test => false,
        })
        .collect()
}

impl Catalogue {
    /// The product catalogue on the default surface.
    pub fn standard() -> Self {
        Self::for_surface(Surface::Default)
    }

    /// The product catalogue on `surface`.
    pub fn for_surface(surface: Surface) -> Self {
        Self::of(surface, advertised_on(surface), &[])
    }

    fn of(surface: Surface, advertised: Vec<ToolName>, removed: &[ToolName]) -> Self {
        let mut callable: Vec<ToolName> = ToolName::ALL
            .iter()
            .copied()
            .filter(|t| matches!(t.standing(), Standing::Default | Standing::Extended))
            .filter(|t| !removed.contains(t))
            .collect();
        for tool in &advertised {
            if !callable.contains(tool) {
                callable.push(*tool);
            }
        }
        let advertised: Vec<(ToolName, Tool)> = advertised
            .into_iter()
            .map(|t| (t, definition(t, surface)))
            .collect();
        let tools: Vec<&Tool> = advertised.iter().map(|(_, t)| t).collect();
        let text = serde_json::to_string(&tools).unwrap_or_default();
        let hash = format!("{:016x}", fnv1a(text.as_bytes()));
        let list_result = format!(r#"{{"tools":{text}}}"#).into();
        Self {
            surface,
            callable,
            advertised,
            hash,
            list_result,
        }
    }

    /// The catalogue on `surface` with a test's edits applied: a comma-separated list of
    /// `+name` (add a test tool) and `-name` (remove a tool). Any name it cannot apply is an
    /// error.
    pub fn with_edits(edits: &str, surface: Surface) -> Result<Self, String> {
        let mut advertised = advertised_on(surface);
        let mut removed = Vec::new();
        for edit in edits.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (add, name) = match edit.split_at(1) {
                ("+", name) => (true, name),
                ("-", name) => (false, name),
                _ => {
                    return Err(format!(
                        "{}: '{edit}' must start with + (add) or - (remove)",
                        env::TEST_CATALOGUE
                    ));
                }
            };
            let tool = ToolName::parse(name)
                .filter(|t| !matches!(t.standing(), Standing::Member { .. }))
                .ok_or_else(|| format!("{}: no tool named '{name}'", env::TEST_CATALOGUE))?;
            advertised.retain(|t| *t != tool);
            removed.retain(|t| *t != tool);
            if add {
                advertised.push(tool);
            } else {
                removed.push(tool);
            }
        }
        Ok(Self::of(surface, advertised, &removed))
    }

    /// The catalogue for this daemon life: the surface `RETICLE_ADVERTISE_ALL_TOOLS` asks for,
    /// edited by `RETICLE_TEST_CATALOGUE`.
    pub fn from_env() -> Result<Self, String> {
        let surface = Surface::from_env();
        match std::env::var(env::TEST_CATALOGUE) {
            Ok(edits) if !edits.trim().is_empty() => Self::with_edits(&edits, surface),
            _ => Ok(Self::for_surface(surface)),
        }
    }

    /// The surface in force.
    pub fn surface(&self) -> Surface {
        self.surface
    }

    /// The advertised definitions, in order.
    pub fn tools(&self) -> Vec<Tool> {
        self.advertised.iter().map(|(_, t)| t.clone()).collect()
    }

    /// The `tools/list` result, already encoded: `{"tools":[..]}` with every advertised
    /// definition, in order.
    pub fn list_result(&self) -> &str {
        &self.list_result
    }

    /// The advertised tool behind a name.
    pub fn find(&self, name: &str) -> Option<ToolName> {
        self.advertised
            .iter()
            .find(|(_, t)| t.name == name)
            .map(|(k, _)| *k)
    }

    /// Whether a tool is advertised on this surface.
    pub fn advertises(&self, tool: ToolName) -> bool {
        self.advertised.iter().any(|(t, _)| *t == tool)
    }

    /// Whether a tool can be run (advertised, or reachable through `reticle_run`).
    pub fn callable(&self, tool: ToolName) -> bool {
        self.callable.contains(&tool)
    }

    /// Callable tools, in order.
    pub fn callable_tools(&self) -> &[ToolName] {
        &self.callable
    }

    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// Version, hash and size, as `/status` and each MCP stream report them.
    pub fn summary(&self) -> CatalogueSummary {
        CatalogueSummary {
            version: CATALOGUE_VERSION.to_string(),
            hash: self.hash.clone(),
            tools: self.advertised.len(),
        }
    }
}

/// The three counts of the product catalogue: every product name (tools and family members,
/// test tools excluded), the tools advertised under ALL, and those advertised by default.
pub fn counts() -> Counts {
    Counts {
        names: ToolName::ALL
            .iter()
            .filter(|t| t.standing() != Standing::Test)
            .count(),
        all: advertised_on(Surface::All).len(),
        default: advertised_on(Surface::Default).len(),
    }
}

/// 64-bit FNV-1a: a stable content hash (not a security measure).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_change_the_hash_and_the_tools() {
        let standard = Catalogue::standard();
        assert_eq!(standard.find("reticle_sessions"), Some(ToolName::Sessions));
        let edited = Catalogue::with_edits("+reticle_test_echo", Surface::Default).unwrap();
        assert_ne!(standard.hash(), edited.hash());
        assert_eq!(edited.tools().len(), standard.tools().len() + 1);
        assert!(edited.callable(ToolName::TestEcho));
        assert!(!standard.callable(ToolName::TestEcho));
        let removed = Catalogue::with_edits("-reticle_sessions", Surface::Default).unwrap();
        assert!(removed.find("reticle_sessions").is_none());
        assert!(!removed.callable(ToolName::Sessions));
        assert_eq!(
            Catalogue::with_edits("", Surface::Default).unwrap().hash(),
            standard.hash(),
            "the same tools hash the same"
        );
    }

    #[test]
    fn the_encoded_list_is_the_list_rmcp_would_encode() {
        for catalogue in [
            Catalogue::standard(),
            Catalogue::for_surface(Surface::All),
            Catalogue::with_edits("+reticle_test_echo", Surface::Default).unwrap(),
        ] {
            let mut expected = rmcp::model::ListToolsResult::with_all_items(catalogue.tools());
            expected.result_type = None;
            let served: Value = serde_json::from_str(catalogue.list_result()).unwrap();
            assert_eq!(served, serde_json::to_value(expected).unwrap());
        }
    }

    #[test]
    fn an_edit_it_cannot_apply_is_named() {
        assert!(
            Catalogue::with_edits("+no_such_tool", Surface::Default)
                .unwrap_err()
                .contains("no_such_tool")
        );
        assert!(Catalogue::with_edits("reticle_sessions", Surface::Default).is_err());
    }

    #[test]
    fn all_advertises_more_with_output_schemas_and_default_is_lean() {
        let all = Catalogue::for_surface(Surface::All);
        let default = Catalogue::standard();
        assert!(all.tools().len() > default.tools().len());
        assert!(all.tools().iter().all(|t| t.output_schema.is_some()));
        assert!(default.tools().iter().all(|t| t.output_schema.is_none()));
        assert!(
            default.callable(ToolName::Capabilities) && !default.advertises(ToolName::Capabilities)
        );
        assert!(
            !default.callable(ToolName::Yield),
            "members are reached through their family"
        );
        for tool in all.tools() {
            assert_eq!(
                tool.input_schema.get("type"),
                Some(&json!("object")),
                "{}",
                tool.name
            );
        }
    }

    #[test]
    fn the_default_surface_leaves_closure_out_and_the_full_surface_states_it() {
        let closed = |tools: &[Tool]| {
            tools.iter().any(|t| {
                Value::Object((*t.input_schema).clone())
                    .to_string()
                    .contains(r#""additionalProperties":false"#)
            })
        };
        assert!(!closed(&Catalogue::standard().tools()));
        assert!(closed(&Catalogue::for_surface(Surface::All).tools()));
        let act = Value::Object(
            definition(ToolName::Act, Surface::Default)
                .input_schema
                .as_ref()
                .clone(),
        );
        assert_eq!(
            act["properties"]["target"]["properties"]["testid"]["type"],
            "string"
        );
    }
}
