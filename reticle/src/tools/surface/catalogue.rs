//! The catalogue: which tools this daemon has, which it advertises (the surface), and their
//! definitions: description, title and effect hints, input schemas generated from the argument
//! types (closed where the strict parse refuses other fields), output schemas when every tool is
//! advertised; a version (bumped by hand when tool shapes change) and a hash of the advertised
//! definitions. Fixed for a daemon life; `tools/list` is encoded once and served as those bytes.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::aliases;
use super::names::{Standing, ToolName};
use super::registration::Registration;
use crate::config::env;
use crate::wire::CatalogueSummary;

/// The catalogue's revision. Bump it when a tool's name, schema or meaning changes.
pub const CATALOGUE_VERSION: &str = "6";

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
    /// What every tool declares.
    registry: &'static [Registration],
    surface: Surface,
    /// Callable tools (advertised or not), in catalogue order.
    callable: Vec<ToolName>,
    /// The advertised definitions, in order.
    advertised: Vec<(ToolName, Tool)>,
    hash: String,
    /// The `tools/list` result (`{"tools":[..]}`), encoded once.
    list_result: Arc<str>,
}

/// The output schema of a tool: its principal fields, and the `session` block when it is
/// session-bound.
fn output_schema(registration: &Registration) -> Map<String, Value> {
    let mut properties = Map::new();
    properties.insert("ok".into(), json!({ "type": "boolean" }));
    for field in registration.output {
        properties.insert((*field).into(), json!({}));
    }
    if registration.session_bound() {
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

/// A tool's full definition on `surface`.
fn definition_of(registration: &Registration, surface: Surface) -> Tool {
    let tool = registration.name;
    let mut schema = registration.input_schema();
    if !aliases::of(tool).is_empty() {
        // The reference's spellings are accepted beside the listed fields.
        schema.remove("additionalProperties");
    }
    let mut definition = Tool::new(
        Cow::Borrowed(tool.as_str()),
        Cow::Borrowed(registration.description),
        Arc::new(schema),
    );
    if let Some((title, effect)) = registration.shown {
        let (read_only, destructive, idempotent, open_world) = effect.hints();
        definition = definition
            .with_title(title)
            .with_annotations(ToolAnnotations::from_raw(
                None,
                Some(read_only),
                Some(destructive),
                Some(idempotent),
                Some(open_world),
            ));
    }
    if surface == Surface::All && !matches!(tool.standing(), Standing::Test) {
        definition = definition.with_raw_output_schema(Arc::new(output_schema(registration)));
    }
    definition
}

/// A tool's full definition on `surface`, in the daemon's catalogue.
pub fn definition(tool: ToolName, surface: Surface) -> Tool {
    Catalogue::for_surface(surface).definition(tool)
}

/// The tools a surface advertises, in order (before test edits).
pub(in crate::tools) fn advertised_on(surface: Surface) -> Vec<ToolName> {
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
    /// The catalogue over `registry` on `surface`, advertising `advertised` (in order) and
    /// without the `removed` tools. The registry builds the daemon's (`tools::registry`).
    pub(in crate::tools) fn over(
        registry: &'static [Registration],
        surface: Surface,
        advertised: Vec<ToolName>,
        removed: &[ToolName],
    ) -> Self {
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
            .filter_map(|t| {
                let registration = registry.iter().find(|r| r.name == t)?;
                Some((t, definition_of(registration, surface)))
            })
            .collect();
        let tools: Vec<&Tool> = advertised.iter().map(|(_, t)| t).collect();
        let text = serde_json::to_string(&tools).unwrap_or_default();
        let hash = format!("{:016x}", fnv1a(text.as_bytes()));
        let list_result = format!(r#"{{"tools":{text}}}"#).into();
        Self {
            registry,
            surface,
            callable,
            advertised,
            hash,
            list_result,
        }
    }

    /// The catalogue over `registry` on `surface` with a test's edits applied (see
    /// `Catalogue::with_edits`).
    pub(in crate::tools) fn edited(
        registry: &'static [Registration],
        edits: &str,
        surface: Surface,
    ) -> Result<Self, String> {
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
        Ok(Self::over(registry, surface, advertised, &removed))
    }

    /// What `tool` declares, when this daemon has it.
    pub fn registration(&self, tool: ToolName) -> Option<&'static Registration> {
        self.registry.iter().find(|r| r.name == tool)
    }

    /// A tool's description, as advertised.
    pub fn description(&self, tool: ToolName) -> &'static str {
        self.registration(tool).map_or("", |r| r.description)
    }

    /// A tool's input schema, generated from its argument type.
    pub fn input_schema(&self, tool: ToolName) -> Map<String, Value> {
        self.registration(tool)
            .map(Registration::input_schema)
            .unwrap_or_default()
    }

    /// A tool's full definition on this catalogue's surface.
    pub fn definition(&self, tool: ToolName) -> Tool {
        match self.registration(tool) {
            Some(registration) => definition_of(registration, self.surface),
            None => Tool::new(
                Cow::Borrowed(tool.as_str()),
                Cow::Borrowed(""),
                Arc::new(Map::new()),
            ),
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
    fn a_schema_is_closed_where_the_parse_refuses_other_fields() {
        for surface in [Surface::Default, Surface::All] {
            for tool in Catalogue::for_surface(surface).tools() {
                let name = ToolName::parse(&tool.name).unwrap();
                let closed = tool.input_schema.get("additionalProperties") == Some(&json!(false));
                // Control: the tools that take the reference's spellings stay open.
                assert_eq!(closed, aliases::of(name).is_empty(), "{name}");
            }
        }
        let query = definition(ToolName::Query, Surface::Default);
        assert!(query.input_schema.get("additionalProperties").is_none());
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
