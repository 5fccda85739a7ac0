//! Makes a generated input schema lean before it is advertised, saying each thing once: inlines
//! a `$defs` entry used once, and drops descriptions every reference repeats, schemars' integer
//! `format`s, `additionalProperties: true` and a `type` its `enum` already says.
//!
//! It rewrites schema JSON; it must not change which arguments a schema accepts, and it knows no
//! tool.

use serde_json::{Map, Value};

const DEFS: &str = "$defs";
const REF: &str = "$ref";
const DESCRIPTION: &str = "description";

/// The lean form of one input schema (a root object, possibly with `$defs`).
pub fn lean(mut schema: Map<String, Value>) -> Map<String, Value> {
    drop_integer_formats(&mut schema);
    drop_default_additional_properties(&mut schema);
    drop_types_an_enum_says(&mut schema);
    if let Some(Value::Object(mut defs)) = schema.remove(DEFS) {
        inline_single_use(&mut schema, &mut defs);
        drop_repeated_descriptions(&schema, &mut defs);
        if !defs.is_empty() {
            schema.insert(DEFS.into(), Value::Object(defs));
        }
    }
    schema
}

fn pointer(name: &str) -> String {
    format!("#/{DEFS}/{name}")
}

/// Calls `visit` on `map` and every object inside it.
fn each_object_in(map: &mut Map<String, Value>, visit: &mut impl FnMut(&mut Map<String, Value>)) {
    visit(map);
    map.values_mut().for_each(|v| each_object(v, visit));
}

fn each_object(value: &mut Value, visit: &mut impl FnMut(&mut Map<String, Value>)) {
    match value {
        Value::Object(map) => each_object_in(map, visit),
        Value::Array(items) => items.iter_mut().for_each(|v| each_object(v, visit)),
        _ => {}
    }
}

/// The objects that reference `name`, anywhere in the schema and its definitions.
fn references<'a>(
    roots: impl IntoIterator<Item = &'a Value>,
    name: &str,
) -> Vec<Map<String, Value>> {
    let target = pointer(name);
    let mut found = Vec::new();
    for root in roots {
        each_object(&mut root.clone(), &mut |map| {
            if map.get(REF).and_then(Value::as_str) == Some(target.as_str()) {
                found.push(map.clone());
            }
        });
    }
    found
}

fn drop_integer_formats(schema: &mut Map<String, Value>) {
    each_object_in(schema, &mut |map| {
        if map.get("type").and_then(Value::as_str) == Some("integer")
            && map
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| f.starts_with("int") || f.starts_with("uint"))
        {
            map.remove("format");
        }
    });
}

fn drop_default_additional_properties(schema: &mut Map<String, Value>) {
    each_object_in(schema, &mut |map| {
        if map.get("additionalProperties") == Some(&Value::Bool(true)) {
            map.remove("additionalProperties");
        }
    });
}

fn drop_types_an_enum_says(schema: &mut Map<String, Value>) {
    each_object_in(schema, &mut |map| {
        let said = match (map.get("type"), map.get("enum")) {
            (Some(Value::String(kind)), Some(Value::Array(values))) => {
                !values.is_empty() && values.iter().all(|v| json_type(v) == kind)
            }
            _ => false,
        };
        if said {
            map.remove("type");
        }
    });
}

/// The JSON Schema `type` of a value (a whole number is an integer).
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Writes each definition referenced exactly once (and not by itself) where it is referenced;
/// the reference's own keywords (its description) win over the definition's.
fn inline_single_use(schema: &mut Map<String, Value>, defs: &mut Map<String, Value>) {
    loop {
        let roots = [Value::Object(schema.clone()), Value::Object(defs.clone())];
        let single = defs.iter().find_map(|(name, body)| {
            let recursive = !references([body], name).is_empty();
            (!recursive && references(&roots, name).len() == 1).then(|| name.clone())
        });
        let Some(name) = single else {
            return;
        };
        let Some(Value::Object(body)) = defs.remove(&name) else {
            return;
        };
        let target = pointer(&name);
        let mut place = |map: &mut Map<String, Value>| {
            if map.get(REF).and_then(Value::as_str) == Some(target.as_str()) {
                map.remove(REF);
                for (key, value) in &body {
                    map.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
        };
        each_object_in(schema, &mut place);
        each_object_in(defs, &mut place);
    }
}

/// Drops a definition's description when every reference to it says its own.
fn drop_repeated_descriptions(schema: &Map<String, Value>, defs: &mut Map<String, Value>) {
    let roots = [Value::Object(schema.clone()), Value::Object(defs.clone())];
    for (name, body) in defs.iter_mut() {
        let refs = references(&roots, name);
        if !refs.is_empty()
            && refs.iter().all(|r| r.contains_key(DESCRIPTION))
            && let Value::Object(body) = body
        {
            body.remove(DESCRIPTION);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lean_of(value: Value) -> Value {
        Value::Object(lean(value.as_object().cloned().unwrap()))
    }

    #[test]
    fn a_definition_used_once_is_written_in_place_and_its_reference_keeps_its_words() {
        let schema = lean_of(json!({
            "type": "object",
            "properties": {"mode": {"description": "which", "$ref": "#/$defs/Mode"}},
            "$defs": {"Mode": {"type": "string", "pattern": "^[ab]$", "description": "long"}}
        }));
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {"mode": {"description": "which", "type": "string", "pattern": "^[ab]$"}}
            })
        );
    }

    #[test]
    fn shared_and_recursive_definitions_stay_shared() {
        let input = json!({
            "type": "object",
            "properties": {
                "a": {"$ref": "#/$defs/T"},
                "b": {"$ref": "#/$defs/T", "description": "b"},
                "p": {"$ref": "#/$defs/P"}
            },
            "$defs": {
                "T": {"type": "string", "description": "a thing"},
                "P": {"oneOf": [{"properties": {"not": {"$ref": "#/$defs/P"}}}]}
            }
        });
        let schema = lean_of(input.clone());
        assert_eq!(
            schema["$defs"]["T"]["description"], "a thing",
            "a keeps needing it"
        );
        assert_eq!(schema["properties"]["p"]["$ref"], "#/$defs/P");
        assert_eq!(schema["$defs"]["P"], input["$defs"]["P"]);
    }

    #[test]
    fn the_default_additional_properties_goes_and_a_closed_object_stays_closed() {
        let schema = lean_of(json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"args": {"type": "object", "additionalProperties": true}}
        }));
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {"args": {"type": "object"}}
            })
        );
    }

    #[test]
    fn a_type_its_enum_already_says_goes_and_any_other_stays() {
        let schema = lean_of(json!({
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": ["a", "b"]},
                "n": {"type": "number", "enum": [1, 2]},
                "mixed": {"type": "string", "enum": ["a", 1]}
            }
        }));
        assert_eq!(schema["properties"]["mode"], json!({"enum": ["a", "b"]}));
        assert_eq!(schema["properties"]["n"]["type"], "number");
        assert_eq!(schema["properties"]["mixed"]["type"], "string");
    }

    #[test]
    fn integer_formats_go_and_bounds_stay() {
        let schema = lean_of(json!({
            "type": "object",
            "properties": {"n": {"type": "integer", "format": "uint32", "minimum": 0, "maximum": 9}}
        }));
        assert_eq!(
            schema["properties"]["n"],
            json!({"type": "integer", "minimum": 0, "maximum": 9})
        );
    }
}
