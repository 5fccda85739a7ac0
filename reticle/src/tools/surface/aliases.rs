//! The reference implementation's argument spellings that agents already use, accepted as
//! aliases: each is rewritten to our one canonical shape before the strict parse, and
//! `reticle_tools` names them. Defined once here. It must not guess: an alias beside its
//! canonical field with another value, or a `by` word we cannot serve, is a refusal naming both.

use serde_json::{Map, Value};

use super::names::ToolName;

/// One field spelled the reference's way, on the tools (families) that take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alias {
    pub tools: &'static [ToolName],
    pub alias: &'static str,
    pub canonical: &'static str,
}

/// The flow tools that name a saved flow by `name`.
const FLOW_NAMED: &[ToolName] = &[
    ToolName::Flow,
    ToolName::FlowSave,
    ToolName::FlowReplay,
    ToolName::FlowHeal,
    ToolName::FlowSaveRecorded,
];

/// Every renamed field.
pub const ALIASES: &[Alias] = &[
    Alias {
        tools: &[ToolName::Query],
        alias: "count_only",
        canonical: "countOnly",
    },
    Alias {
        tools: FLOW_NAMED,
        alias: "flowName",
        canonical: "name",
    },
    Alias {
        tools: FLOW_NAMED,
        alias: "flow",
        canonical: "name",
    },
];

/// `reticle_query {by, value}`: the words `by` may take, each the field `value` goes to.
pub const QUERY_BY: &[&str] = &["role", "text", "label", "placeholder", "testid", "alt"];

/// The aliases `tool` accepts, as `(alias, canonical)`; `tool` is a family or a top tool.
pub fn of(tool: ToolName) -> Vec<(&'static str, &'static str)> {
    let mut found: Vec<(&str, &str)> = ALIASES
        .iter()
        .filter(|a| a.tools.contains(&tool))
        .map(|a| (a.alias, a.canonical))
        .collect();
    if tool == ToolName::Query {
        found.push(("by + value", "the field `by` names"));
    }
    found
}

/// Rewrites `arguments` of `tool` to the canonical shape; the error says which fields clash.
pub fn to_canonical(tool: ToolName, arguments: &mut Map<String, Value>) -> Result<(), String> {
    for alias in ALIASES.iter().filter(|a| a.tools.contains(&tool)) {
        if let Some(value) = arguments.remove(alias.alias) {
            merge(arguments, alias.canonical, value, alias.alias)?;
        }
    }
    if tool == ToolName::Query {
        query_by(arguments)?;
    }
    Ok(())
}

/// Puts `value` at `canonical`, unless a different value is already there.
fn merge(
    arguments: &mut Map<String, Value>,
    canonical: &str,
    value: Value,
    alias: &str,
) -> Result<(), String> {
    match arguments.get(canonical) {
        Some(existing) if *existing != value => Err(format!(
            "`{alias}` is another spelling of `{canonical}` and they differ: give one"
        )),
        _ => {
            arguments.insert(canonical.to_string(), value);
            Ok(())
        }
    }
}

/// `{by: "testid", value: "save"}` becomes `{testid: "save"}`.
fn query_by(arguments: &mut Map<String, Value>) -> Result<(), String> {
    let (by, value) = (arguments.remove("by"), arguments.remove("value"));
    match (by, value) {
        (None, None) => Ok(()),
        (Some(Value::String(by)), Some(value)) if QUERY_BY.contains(&by.as_str()) => {
            merge(arguments, &by, value, "value")
        }
        (Some(Value::String(by)), Some(_)) => Err(format!(
            "`by` takes one of {} (got '{}')",
            QUERY_BY.join(", "),
            crate::tools::bounds::clip(&by, 40)
        )),
        (Some(_), Some(_)) => Err(format!("`by` is a word: one of {}", QUERY_BY.join(", "))),
        _ => Err("`by` and `value` go together: give both, or neither".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rewritten(tool: ToolName, v: Value) -> Result<Value, String> {
        let mut map = v.as_object().cloned().unwrap();
        to_canonical(tool, &mut map).map(|()| Value::Object(map))
    }

    #[test]
    fn the_references_spellings_become_ours() {
        assert_eq!(
            rewritten(
                ToolName::Query,
                json!({"by": "testid", "value": "save", "count_only": true})
            ),
            Ok(json!({"testid": "save", "countOnly": true}))
        );
        assert_eq!(
            rewritten(
                ToolName::Query,
                json!({"by": "role", "value": "button", "name": "Add"})
            ),
            Ok(json!({"role": "button", "name": "Add"}))
        );
        assert_eq!(
            rewritten(ToolName::FlowReplay, json!({"flowName": "login"})),
            Ok(json!({"name": "login"}))
        );
        assert_eq!(
            rewritten(ToolName::Flow, json!({"action": "load", "flow": "login"})),
            Ok(json!({"action": "load", "name": "login"}))
        );
        // The same value under both spellings is one field.
        assert_eq!(
            rewritten(ToolName::FlowHeal, json!({"flowName": "a", "name": "a"})),
            Ok(json!({"name": "a"}))
        );
    }

    #[test]
    fn an_alias_never_guesses() {
        let clash = rewritten(ToolName::FlowHeal, json!({"flowName": "a", "name": "b"}));
        assert!(clash.unwrap_err().contains("`flowName`"));
        let unknown = rewritten(ToolName::Query, json!({"by": "component", "value": "Todo"}));
        assert!(unknown.unwrap_err().contains("testid"));
        let half = rewritten(ToolName::Query, json!({"by": "testid"}));
        assert!(half.unwrap_err().contains("go together"));
        let clash = rewritten(
            ToolName::Query,
            json!({"by": "testid", "value": "a", "testid": "b"}),
        );
        assert!(clash.is_err());
    }

    #[test]
    fn a_tool_without_aliases_is_left_as_given() {
        // Control: the same fields on a tool that has no such alias are passed to the strict
        // parse unchanged, which refuses them by name.
        let args = json!({"flowName": "x", "by": "testid", "value": "v"});
        assert_eq!(rewritten(ToolName::Act, args.clone()), Ok(args));
        assert!(of(ToolName::Act).is_empty());
        assert!(of(ToolName::Query).iter().any(|(a, _)| *a == "count_only"));
    }
}
