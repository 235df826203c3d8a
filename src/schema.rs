//! The contract's JSON Schema: the hand-written file, embedded, and (feature `schemars`) the
//! schema generated from the types.
//!
//! The hand-written `schema/agent-tool-result.schema.json` is the source of truth. The
//! generated schema is held against it by verdict on the conformance corpus in the tests; it is
//! never written over the file.

use std::sync::OnceLock;

use serde_json::Value;

/// The envelope schema (JSON Schema draft 2020-12), exactly as shipped in
/// `schema/agent-tool-result.schema.json`.
///
/// ```
/// let schema: serde_json::Value = serde_json::from_str(agent_tool_result::ENVELOPE_SCHEMA)?;
/// assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
/// # Ok::<(), serde_json::Error>(())
/// ```
pub const ENVELOPE_SCHEMA: &str = include_str!("../schema/agent-tool-result.schema.json");

/// The envelope schema, parsed once.
///
/// # Panics
///
/// Never in practice: the embedded file is valid JSON, which the crate's tests check.
#[must_use]
pub fn envelope_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        serde_json::from_str(ENVELOPE_SCHEMA).expect("the embedded envelope schema is valid JSON")
    })
}

#[cfg(feature = "schemars")]
mod generated {
    use std::borrow::Cow;

    use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

    use crate::{Envelope, ToolError, Warning};

    impl<T: JsonSchema> JsonSchema for Envelope<T> {
        fn schema_name() -> Cow<'static, str> {
            format!("Envelope_for_{}", T::schema_name()).into()
        }

        fn json_schema(generator: &mut SchemaGenerator) -> Schema {
            let result = generator.subschema_for::<T>();
            let result = if result.as_bool() == Some(true) {
                json_schema!({ "type": ["object", "null"] })
            } else {
                json_schema!({
                    "anyOf": [{ "type": "null" }, { "type": "object", "allOf": [result] }]
                })
            };
            let ok_is = |value: bool| {
                json_schema!({
                    "type": "object",
                    "properties": { "ok": { "const": value } },
                    "required": ["ok"],
                })
            };
            json_schema!({
                "description": "An agent tool result: a success with an optional result, or a failure with an error.",
                "type": "object",
                "required": ["ok"],
                "additionalProperties": false,
                "properties": {
                    "ok": { "type": "boolean" },
                    "sessionId": { "type": ["string", "null"] },
                    "result": result,
                    "warnings": { "type": "array", "items": generator.subschema_for::<Warning>() },
                    "error": generator.subschema_for::<ToolError>(),
                },
                "allOf": [
                    { "if": ok_is(false), "then": { "required": ["error"] } },
                    { "if": ok_is(true), "then": { "not": { "required": ["error"] } } },
                    { "if": ok_is(false), "then": { "properties": { "result": { "type": "null" } } } },
                ],
            })
        }
    }
}

#[cfg(feature = "schemars")]
impl<T: schemars::JsonSchema> crate::Envelope<T> {
    /// The JSON Schema (draft 2020-12) of this envelope type, with `T`'s schema as `result`:
    /// what a tool advertises as its MCP `outputSchema`.
    ///
    /// It describes success and failure alike, so a client that validates `structuredContent`
    /// against `outputSchema` also on `isError: true` accepts the tool's error results.
    ///
    /// ```
    /// use agent_tool_result::Envelope;
    ///
    /// #[derive(serde::Serialize, schemars::JsonSchema)]
    /// struct Found {
    ///     automation_id: String,
    /// }
    ///
    /// let schema = Envelope::<Found>::output_schema();
    /// assert_eq!(schema["type"], "object");
    /// assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    /// assert!(schema["$defs"]["Found"].is_object());
    /// ```
    ///
    /// # Panics
    ///
    /// Never: a root schema is always a JSON object.
    #[must_use]
    pub fn output_schema() -> crate::JsonObject {
        let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
        match generator.into_root_schema_for::<Self>().to_value() {
            Value::Object(schema) => schema,
            other => unreachable!("a root schema is an object, not {other}"),
        }
    }
}

/// A tool's MCP `outputSchema` for a result described by any JSON Schema (for tools not written
/// in Rust): the envelope's schema with `result_schema` in the place of `result`.
///
/// The result schema's `$defs` (or draft-07 `definitions`) move to the root, where its
/// references then point.
///
/// # Errors
///
/// When `result_schema` is not an object or `true`, or one of its definitions has the name of
/// one of the envelope's own.
///
/// # Panics
///
/// Never: the envelope's own schema always has a `$defs` object.
#[cfg(feature = "schemars")]
pub fn output_schema_for(result_schema: &Value) -> Result<crate::JsonObject, String> {
    let mut root = crate::Envelope::<Value>::output_schema();
    let mut result = match result_schema {
        Value::Object(object) => object.clone(),
        Value::Bool(true) => return Ok(root),
        _ => return Err("a result schema is a JSON object (or true)".to_owned()),
    };
    for key in ["$schema", "$id"] {
        result.remove(key);
    }
    let defs = root
        .entry("$defs")
        .or_insert_with(|| Value::Object(crate::JsonObject::new()))
        .as_object_mut()
        .expect("the envelope schema's $defs is an object");
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(theirs)) = result.remove(key) {
            for (name, definition) in theirs {
                if defs.contains_key(&name) {
                    return Err(format!(
                        "the result schema's definition `{name}` has the name of one of the envelope's"
                    ));
                }
                defs.insert(name, definition);
            }
        }
    }
    let mut result = Value::Object(result);
    rewrite_definitions_refs(&mut result);
    for definition in defs.values_mut() {
        rewrite_definitions_refs(definition);
    }
    root["properties"]["result"] = serde_json::json!({
        "anyOf": [{ "type": "null" }, { "type": "object", "allOf": [result] }]
    });
    Ok(root)
}

/// Points draft-07 `#/definitions/...` references at `#/$defs/...`.
#[cfg(feature = "schemars")]
fn rewrite_definitions_refs(value: &mut Value) {
    match value {
        Value::Object(object) => {
            if let Some(Value::String(reference)) = object.get_mut("$ref")
                && let Some(rest) = reference.strip_prefix("#/definitions/")
            {
                *reference = format!("#/$defs/{rest}");
            }
            object.values_mut().for_each(rewrite_definitions_refs);
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_definitions_refs),
        _ => {}
    }
}

/// The envelope schema generated by `schemars` from the types, for `Envelope<serde_json::Value>`.
///
/// Useful to see what the types promise; the hand-written [`ENVELOPE_SCHEMA`] stays the
/// contract artifact.
#[cfg(feature = "schemars")]
#[must_use]
pub fn generated_envelope_schema() -> Value {
    schemars::schema_for!(crate::Envelope<serde_json::Value>).to_value()
}
