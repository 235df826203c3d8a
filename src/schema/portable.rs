//! The portable spelling of a JSON Schema: the same meaning in the forms strict tooling reads
//! (the MCP Inspector's `--strict`, and clients that map tool schemas onto a dialect with one
//! `type` per schema): a `type` array becomes `anyOf` branches of one type each, and a boolean
//! subschema its object form (`{}` for `true`, `{"not": {}}` for `false`). A closed object's
//! `additionalProperties: false` (or `unevaluatedProperties: false`) stays as it is: that
//! idiom is read everywhere.

use serde_json::{Map, Value, json};

/// Keywords whose value is one subschema.
const ONE: &[&str] = &[
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "additionalItems",
    "contentSchema",
];

/// Keywords whose value is one subschema, where a boolean is the idiom of a closed object.
const CLOSING: &[&str] = &["additionalProperties", "unevaluatedProperties"];

/// Keywords whose value maps names to subschemas.
const BY_NAME: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Keywords whose value is a list of subschemas.
const LISTS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Rewrites `schema` in place into its portable spelling; its root, if a boolean, too.
pub(crate) fn make_portable(schema: &mut Value) {
    subschema(schema);
}

/// A subschema: a boolean becomes its object form; an object is rewritten.
fn subschema(schema: &mut Value) {
    match schema {
        Value::Bool(true) => *schema = json!({}),
        Value::Bool(false) => *schema = json!({ "not": {} }),
        Value::Object(object) => object_schema(object),
        _ => {}
    }
}

fn object_schema(object: &mut Map<String, Value>) {
    for (keyword, value) in object.iter_mut() {
        let keyword = keyword.as_str();
        if ONE.contains(&keyword) {
            // `items` may still be draft-07's list of schemas.
            match value {
                Value::Array(list) => list.iter_mut().for_each(subschema),
                _ => subschema(value),
            }
        } else if CLOSING.contains(&keyword) {
            if let Value::Object(inner) = value {
                object_schema(inner);
            }
        } else if BY_NAME.contains(&keyword) {
            if let Value::Object(named) = value {
                named.values_mut().for_each(subschema);
            }
        } else if LISTS.contains(&keyword)
            && let Value::Array(list) = value
        {
            list.iter_mut().for_each(subschema);
        }
    }
    let Some(Value::Array(types)) = object.get("type") else {
        return;
    };
    let mut branches: Vec<Value> = types.iter().map(|t| json!({ "type": t })).collect();
    object.remove("type");
    if branches.len() == 1 {
        object.insert("type".to_owned(), branches.remove(0)["type"].take());
        return;
    }
    let one_of_types = json!({ "anyOf": branches });
    match object.get_mut("anyOf") {
        None => {
            object.insert("anyOf".to_owned(), one_of_types["anyOf"].clone());
        }
        Some(_) => match object.get_mut("allOf") {
            Some(Value::Array(all)) => all.push(one_of_types),
            _ => {
                object.insert("allOf".to_owned(), json!([one_of_types]));
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_arrays_and_booleans_take_their_portable_forms() {
        let mut schema = json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "a": { "type": ["string", "null"], "format": "date-time" },
                "b": true,
                "c": false,
                "d": { "type": ["integer"], "anyOf": [{ "minimum": 1 }, { "maximum": -1 }] },
                "e": { "type": ["string", "number"], "anyOf": [{ "minLength": 1 }, { "minimum": 0 }] },
                "f": { "items": [true, { "type": ["boolean", "null"] }] },
            },
            "then": { "properties": { "error": false } },
            "enum": [true, false, { "type": ["a", "b"] }],
        });
        make_portable(&mut schema);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "a": { "anyOf": [{ "type": "string" }, { "type": "null" }], "format": "date-time" },
                    "b": {},
                    "c": { "not": {} },
                    "d": { "type": "integer", "anyOf": [{ "minimum": 1 }, { "maximum": -1 }] },
                    "e": {
                        "anyOf": [{ "minLength": 1 }, { "minimum": 0 }],
                        "allOf": [{ "anyOf": [{ "type": "string" }, { "type": "number" }] }],
                    },
                    "f": { "items": [{}, { "anyOf": [{ "type": "boolean" }, { "type": "null" }] }] },
                },
                "then": { "properties": { "error": { "not": {} } } },
                "enum": [true, false, { "type": ["a", "b"] }],
            })
        );
    }
}
