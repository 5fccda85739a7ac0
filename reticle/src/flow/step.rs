//! The shape of a flow's step as saved and as tools take it: the element as a user names it
//! ([`Target`]), the action and its args, and the consequence that must follow (a
//! [`PredicateArg`], whose schema lists every kind once). Tools' argument types reuse these;
//! this module defines shapes and schemas, it must not check a flow or run one.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::verdict::predicate::KINDS;

/// A predicate, parsed strictly by `verdict::parse` when the tool runs; its schema lists every
/// kind and the fields each accepts (from `verdict::predicate::KINDS`).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(transparent)]
pub struct PredicateArg(pub Value);

impl JsonSchema for PredicateArg {
    fn schema_name() -> Cow<'static, str> {
        "Predicate".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let kinds: Vec<&str> = KINDS.iter().map(|(kind, _)| *kind).collect();
        json_schema!({
            "description": predicate_description(),
            "type": "object",
            "required": ["kind"],
            "properties": {
                "kind": { "enum": kinds },
                "predicates": { "type": "array", "items": { "$ref": "#/$defs/Predicate" } },
                "predicate": { "$ref": "#/$defs/Predicate" },
            },
        })
    }
}

/// The predicate's description: an example, then each kind with the fields it takes, once.
fn predicate_description() -> String {
    let kinds: Vec<String> = KINDS
        .iter()
        .map(|(kind, fields)| format!("{kind}({})", fields.join(",")))
        .collect();
    format!(
        "What must hold, e.g. {{\"kind\":\"net\",\"urlContains\":\"/api/login\",\"status\":200}}; each kind takes only its fields: {}.",
        kinds.join(" ")
    )
}

/// What an action does to an element: protocol 1's word, defined in [`crate::wire::args`].
pub use crate::wire::args::ActAction as Action;

/// The element as a user names it; must match exactly one.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Target {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub testid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub css: Option<String>,
    /// false: name as a substring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact: Option<bool>,
}

impl Target {
    /// The target as query criteria: only the fields given.
    pub fn criteria(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        }
    }
}

/// fill/select: value; type: text; press: key; a destructive action: confirmDangerous true.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ActionArgs {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirm_dangerous: Option<bool>,
}

/// One step of a flow: the element as a user names it (never a ref), the action, and what must
/// follow it.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FlowStep {
    /// The element as a user names it: testid, role and name, label, text, placeholder or alt.
    pub target: Target,
    pub action: Action,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<ActionArgs>,
    /// The consequence that must follow the action; omitted, the page must settle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<PredicateArg>,
    /// How long to wait for the consequence in milliseconds (default 4000).
    #[serde(rename = "timeout_ms", skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 60000))]
    pub timeout_ms: Option<u64>,
}
