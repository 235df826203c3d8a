//! The tool output schema: what a tool advertises as its MCP `outputSchema`, compact because
//! every byte of it goes into a model's context.
//!
//! It describes the whole envelope (successes and every failure, so a client that validates
//! `structuredContent` on `isError: true` accepts the failure), with the tool's own result
//! schema in `$defs/result`. It keeps the rules a client must not miss (the `ok`/`error`
//! invariant, the closed category set, the code form, no unknown envelope fields) and leaves
//! the rest (unknown fields inside an error or a warning, the observation rules) to the full
//! schema, [`ENVELOPE_SCHEMA`](crate::schema::ENVELOPE_SCHEMA), which CI validation uses. Only
//! standard `format`s appear, and no prose: under 950 bytes beyond the result schema. It is
//! written in the portable spelling strict tooling reads: one `type` per schema, and no
//! boolean subschema but a closed object's `additionalProperties: false`.

use serde_json::{Value, json};

use super::portable::make_portable;

use crate::{ErrorCategory, JsonObject};

/// Why a result schema cannot be a tool's result schema.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OutputSchemaError {
    /// The schema is not a JSON object or boolean.
    #[error("a result schema is a JSON object or a boolean, not {found}")]
    NotASchema {
        /// The JSON type found.
        found: &'static str,
    },
    /// The schema admits no JSON object, so no success could carry a result.
    #[error("the result schema cannot describe a JSON object ({why}): a result is an object")]
    NotAnObjectSchema {
        /// What rules objects out.
        why: String,
    },
}

/// The compact tool output schema around `result_schema`, the JSON Schema of the tool's
/// result (as `schemars` or a hand-written file gives it).
///
/// `$ref`s inside the result schema that are relative to its root (`#`, `#/$defs/...`) are
/// rewritten to point into `$defs/result`, so recursive result schemas keep working; its
/// `$schema` and `$id` are dropped, and non-standard `format`s (`uint32`, `int64`, ...) with
/// them.
///
/// ```
/// use agent_tool_result::schema::output_schema_for;
/// use serde_json::json;
///
/// let tree = json!({
///     "type": "object",
///     "properties": { "children": { "type": "array", "items": { "$ref": "#" } } },
/// });
/// let schema = output_schema_for(&tree)?;
/// assert_eq!(
///     schema["$defs"]["result"]["properties"]["children"]["items"]["$ref"],
///     "#/$defs/result"
/// );
/// assert!(output_schema_for(&json!({ "type": "array" })).is_err());
/// # Ok::<(), agent_tool_result::schema::OutputSchemaError>(())
/// ```
///
/// # Errors
///
/// [`OutputSchemaError`] when `result_schema` is not a schema, or admits no object.
pub fn output_schema_for(result_schema: &Value) -> Result<JsonObject, OutputSchemaError> {
    let result = match result_schema {
        Value::Bool(true) => None,
        Value::Bool(false) => {
            return Err(OutputSchemaError::NotAnObjectSchema {
                why: "it is `false`".to_owned(),
            });
        }
        Value::Object(object) if object.keys().all(|key| is_annotation(key)) => None,
        Value::Object(object) => {
            admits_objects(object)?;
            let mut object = object.clone();
            object.remove("$schema");
            object.remove("$id");
            let mut result = Value::Object(object);
            rebase_refs(&mut result);
            standard_formats_only(&mut result);
            make_portable(&mut result);
            Some(result)
        }
        other => {
            return Err(OutputSchemaError::NotASchema {
                found: crate::object::json_type(other),
            });
        }
    };
    Ok(compact(result))
}

/// The envelope around an optional result schema.
fn compact(result: Option<Value>) -> JsonObject {
    let categories: Vec<&str> = ErrorCategory::ALL.iter().map(|c| c.as_str()).collect();
    let code = json!({ "type": "string", "pattern": crate::code::CODE_PATTERN });
    let mut defs = JsonObject::new();
    defs.insert("code".to_owned(), code);
    // One `type` per schema, as strict tooling reads it: nullable as `anyOf` branches.
    let result_property = match result {
        None => json!({ "anyOf": [{ "type": "object" }, { "type": "null" }] }),
        Some(result) => {
            // The result must be an object (or null) whatever its own schema says of other
            // types. A schema of object keywords only takes `type: object`; any other is
            // wrapped.
            let def = match result {
                Value::Object(mut schema) if speaks_of_objects_only(&schema) => {
                    schema.insert("type".to_owned(), json!("object"));
                    Value::Object(schema)
                }
                other => json!({ "allOf": [{ "type": "object" }, other] }),
            };
            defs.insert("result".to_owned(), def);
            json!({ "anyOf": [{ "type": "null" }, { "$ref": "#/$defs/result" }] })
        }
    };
    let schema = json!({
        "type": "object",
        "required": ["ok"],
        "additionalProperties": false,
        "properties": {
            "ok": { "type": "boolean" },
            "sessionId": { "anyOf": [{ "type": "string" }, { "type": "null" }] },
            "result": result_property,
            "warnings": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["code", "detail"],
                    "properties": {
                        "code": { "$ref": "#/$defs/code" },
                        "detail": { "type": "string" },
                    },
                },
            },
            "error": {
                "type": "object",
                "required": ["code", "category", "detail"],
                "properties": {
                    "code": { "$ref": "#/$defs/code" },
                    "category": { "enum": categories },
                    "detail": { "type": "string" },
                },
            },
        },
        "if": { "properties": { "ok": { "const": true } } },
        "then": { "not": { "required": ["error"] } },
        "else": { "required": ["error"], "properties": { "result": { "type": "null" } } },
        "$defs": defs,
    });
    match schema {
        Value::Object(schema) => schema,
        _ => unreachable!("built as an object"),
    }
}

/// Whether every keyword of `schema` is an annotation, `type: object`, or one that constrains
/// objects only (so that it admits `null` once its `type` does).
fn speaks_of_objects_only(schema: &JsonObject) -> bool {
    schema
        .iter()
        .all(|(keyword, value)| match keyword.as_str() {
            "type" => value == "object",
            "properties"
            | "required"
            | "additionalProperties"
            | "patternProperties"
            | "propertyNames"
            | "minProperties"
            | "maxProperties"
            | "dependentRequired"
            | "dependentSchemas"
            | "unevaluatedProperties"
            | "$defs"
            | "definitions" => true,
            other => is_annotation(other),
        })
}

/// Keywords that only annotate: a schema of nothing else accepts everything.
fn is_annotation(keyword: &str) -> bool {
    matches!(
        keyword,
        "$schema" | "$id" | "$comment" | "title" | "description" | "default" | "examples"
    )
}

/// Fails when a schema's `type`, `const` or `enum` rules out every object.
fn admits_objects(schema: &JsonObject) -> Result<(), OutputSchemaError> {
    let why = |why: String| Err(OutputSchemaError::NotAnObjectSchema { why });
    match schema.get("type") {
        Some(Value::String(t)) if t != "object" => return why(format!("its type is `{t}`")),
        Some(Value::Array(types)) if !types.iter().any(|t| t == "object") => {
            return why(format!("its types are {}", Value::Array(types.clone())));
        }
        _ => {}
    }
    if let Some(value) = schema.get("const")
        && !value.is_object()
    {
        return why(format!("its const is {value}"));
    }
    if let Some(Value::Array(values)) = schema.get("enum")
        && !values.iter().any(Value::is_object)
    {
        return why("its enum holds no object".to_owned());
    }
    Ok(())
}

/// Rewrites every `$ref` relative to the result schema's root to point into `$defs/result`,
/// and the draft-07 `#/definitions/...` with them.
fn rebase_refs(value: &mut Value) {
    rebase_refs_to(value, "#/$defs/result");
}

/// Rewrites every root-relative `$ref` in `value` to be relative to `base` instead.
pub(crate) fn rebase_refs_to(value: &mut Value, base: &str) {
    match value {
        Value::Object(object) => {
            if let Some(Value::String(reference)) = object.get_mut("$ref")
                && let Some(rest) = reference.strip_prefix('#')
                && (rest.is_empty() || rest.starts_with('/'))
            {
                *reference = format!("{base}{rest}");
            }
            object.values_mut().for_each(|v| rebase_refs_to(v, base));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rebase_refs_to(v, base)),
        _ => {}
    }
}

/// The formats JSON Schema draft 2020-12 defines; any other is dropped.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

pub(crate) fn standard_formats_only(value: &mut Value) {
    match value {
        Value::Object(object) => {
            if object
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|format| !STANDARD_FORMATS.contains(&format))
            {
                object.remove("format");
            }
            object.values_mut().for_each(standard_formats_only);
        }
        Value::Array(items) => items.iter_mut().for_each(standard_formats_only),
        _ => {}
    }
}

impl<T: schemars::JsonSchema> crate::Envelope<T> {
    /// The compact tool output schema for envelopes of `T`: the MCP `outputSchema` of a tool
    /// that returns `Envelope<T>`. See [`output_schema_for`].
    ///
    /// ```
    /// use agent_tool_result::Envelope;
    ///
    /// #[derive(schemars::JsonSchema)]
    /// struct Found {
    ///     automation_id: String,
    /// }
    ///
    /// let schema = serde_json::to_string(&Envelope::<Found>::output_schema())?;
    /// assert!(schema.len() < 1_200, "{} bytes", schema.len());
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    ///
    /// # Panics
    ///
    /// If `T`'s schema admits no JSON object (its `JsonSchema` says it is a string, say): such
    /// a `T` cannot be a result, which `Envelope::<T>::to_json` would also refuse.
    #[must_use]
    pub fn output_schema() -> JsonObject {
        output_schema_for(&result_schema::<T>())
            .unwrap_or_else(|err| panic!("{}: {err}", std::any::type_name::<T>()))
    }
}

/// `T`'s own JSON Schema, as a tool's result schema.
pub(crate) fn result_schema<T: schemars::JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    generator.into_root_schema_for::<T>().to_value()
}

/// The compact tool output schema of a guarantee tool whose own fields have `fields_schema`
/// (the JSON Schema of its fields, as `schemars` gives it, or `true`): what such a tool
/// advertises as its MCP `outputSchema`.
///
/// It admits everything the tool can answer, since a client (the TypeScript SDK, the MCP
/// Inspector) validates `structuredContent` on `isError: true` too:
///
/// - every valid guarantee result: allow, defer, **deny** and **unknown**. The tool's own fields
///   keep their types but none is required at the top level, because a deny happens before the
///   tool creates anything and an `unknown` may know no id;
/// - every [`Refusal`](crate::guarantee::Refusal) (a key missing, malformed, reused or in
///   flight, arguments that do not fit, the tool unavailable): its RFC 9457 problem, the same
///   object REST answers with.
///
/// It keeps the closed sets and the shapes; the invariants between fields are left to the full
/// schema, [`GUARANTEE_SCHEMA`](crate::schema::GUARANTEE_SCHEMA), which CI validation uses. The
/// tool's own fields sit in `$defs/fields` with their `$ref`s rebased; a top-level
/// `additionalProperties` of theirs is dropped, since the contract's fields stand beside them.
///
/// ```
/// use agent_tool_result::schema::guarantee_output_schema_for;
/// use serde_json::json;
///
/// let fields = json!({
///     "type": "object",
///     "properties": { "campaignId": { "type": "string" } },
///     "required": ["campaignId"],
/// });
/// let schema = guarantee_output_schema_for(&fields)?;
/// assert!(serde_json::to_string(&schema)?.len() < 1_000);
/// assert!(schema["$defs"]["fields"].get("required").is_none(), "a deny has no campaignId");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`OutputSchemaError`] when `fields_schema` is not a schema or admits no object.
pub fn guarantee_output_schema_for(fields_schema: &Value) -> Result<JsonObject, OutputSchemaError> {
    let fields = match fields_schema {
        Value::Bool(true) => None,
        Value::Object(object) if object.keys().all(|key| is_annotation(key)) => None,
        Value::Object(object) => {
            admits_objects(object)?;
            let mut object = object.clone();
            for key in [
                "$schema",
                "$id",
                "additionalProperties",
                "unevaluatedProperties",
                "required",
            ] {
                object.remove(key);
            }
            let mut fields = Value::Object(object);
            rebase_refs_to(&mut fields, "#/$defs/fields");
            standard_formats_only(&mut fields);
            make_portable(&mut fields);
            Some(fields)
        }
        Value::Bool(false) => {
            return Err(OutputSchemaError::NotAnObjectSchema {
                why: "it is `false`".to_owned(),
            });
        }
        other => {
            return Err(OutputSchemaError::NotASchema {
                found: crate::object::json_type(other),
            });
        }
    };
    let count = json!({ "type": "integer", "minimum": 0 });
    let mut result = json!({
        "required": ["schemaVersion", "settlement", "policy"],
        "properties": {
            "schemaVersion": { "const": 1 },
            "settlement": {
                "type": "object",
                "required": ["state"],
                "properties": { "state": { "enum": ["not_started", "committed", "unknown"] } },
            },
            "policy": {
                "type": "object",
                "required": ["decision"],
                "properties": {
                    "decision": { "enum": ["allow", "deny", "defer"] },
                    "code": { "type": "string" },
                    "retryAt": { "type": "string", "format": "date-time" },
                },
            },
            "impact": { "type": "object", "additionalProperties": count },
            "recovery": {
                "type": "object",
                "properties": { "suggestedNextTool": { "type": "string" } },
            },
        },
    });
    let mut defs = JsonObject::new();
    if let (Some(fields), Value::Object(object)) = (fields, &mut result) {
        object.insert("allOf".to_owned(), json!([{ "$ref": "#/$defs/fields" }]));
        defs.insert("fields".to_owned(), fields);
    }
    let refusal = json!({
        "required": ["type", "title", "status"],
        "properties": {
            "type": { "type": "string" },
            "title": { "type": "string" },
            "status": { "type": "integer" },
            "detail": { "type": "string" },
            "retryAt": { "type": "string", "format": "date-time" },
        },
    });
    let mut schema = json!({ "type": "object", "anyOf": [result, refusal] });
    if let Value::Object(object) = &mut schema
        && !defs.is_empty()
    {
        object.insert("$defs".to_owned(), Value::Object(defs));
    }
    match schema {
        Value::Object(schema) => Ok(schema),
        _ => unreachable!("built as an object"),
    }
}

impl<T: schemars::JsonSchema> crate::guarantee::GuaranteeResult<T> {
    /// The compact tool output schema of a guarantee tool whose own fields are `T`; see
    /// [`guarantee_output_schema_for`].
    ///
    /// # Panics
    ///
    /// If `T`'s schema admits no JSON object: such a `T` cannot be a tool's fields.
    #[must_use]
    pub fn output_schema() -> JsonObject {
        guarantee_output_schema_for(&result_schema::<T>())
            .unwrap_or_else(|err| panic!("{}: {err}", std::any::type_name::<T>()))
    }
}
