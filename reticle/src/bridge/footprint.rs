//! What a parsed JSON value holds in memory, estimated from serde_json's layout: every value's
//! slot, every string's and key's bytes, every array's and object's table. A frame's text can
//! understate it many times over (`[0,0,…]` costs a slot per two bytes), so the event ring bounds
//! this figure, not the frame's size. This module measures; it must not decide what to keep.

use std::mem::size_of;

use serde_json::{Map, Value};

/// Bytes an object entry costs beyond its key and value (the ordered map's hash and index).
const ENTRY_OVERHEAD: usize = 2 * size_of::<u64>();

/// The estimated bytes `map`'s entries hold (not counting the map's own slot).
pub fn of_map(map: &Map<String, Value>) -> usize {
    map.iter()
        .map(|(key, value)| {
            ENTRY_OVERHEAD
                + size_of::<String>()
                + key.capacity()
                + size_of::<Value>()
                + beyond_slot(value)
        })
        .sum()
}

/// The estimated bytes `value` holds beyond its own slot.
fn beyond_slot(value: &Value) -> usize {
    match value {
        Value::String(text) => text.capacity(),
        Value::Array(items) => {
            items.capacity() * size_of::<Value>() + items.iter().map(beyond_slot).sum::<usize>()
        }
        Value::Object(map) => of_map(map),
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

/// The estimated bytes `value` holds, its own slot included.
pub fn of_value(value: &Value) -> usize {
    size_of::<Value>() + beyond_slot(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_array_of_zeros_costs_far_more_than_its_text() {
        let text = format!("{{\"zeros\":[{}0]}}", "0,".repeat(10_000));
        let Value::Object(map) = serde_json::from_str::<Value>(&text).unwrap() else {
            panic!("an object")
        };
        assert!(
            of_map(&map) > 10 * text.len(),
            "{} vs {}",
            of_map(&map),
            text.len()
        );
        let word = json!("a string of some length");
        assert!(of_value(&word) >= size_of::<Value>() + 23);
    }
}
