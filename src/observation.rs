//! [`Observation`]: what `error.lastObservation` holds, and the rule that it never holds base64.
//!
//! The last good state before a failure is a capture summary ([`CaptureSummary`]), a resolved
//! window ([`WindowInfo`]), or any other JSON object (a query tree, a find result). Whatever it
//! is, it never carries image bytes: a capture is summarized and its PNG written to the session's
//! artifact directory (see [`SessionArtifacts`](crate::artifact::SessionArtifacts)). The rule is checked
//! when an observation is built and when one is read.

mod capture;
mod skim;
mod window;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

pub use capture::{
    ArtifactOutcome, BlankCheck, CaptureSummary, EmptyArtifactText, InvalidFraction,
};
pub(crate) use capture::{BlankCheckField, CaptureField};
pub(crate) use window::WindowField;
pub use window::WindowInfo;

use crate::breach::{self, Breach};
use crate::object::json_type;
use crate::pointer::{self, push_token};
use crate::{JsonObject, Rule};

/// The `kind` that marks a capture summary.
pub(crate) const CAPTURE_SUMMARY_KIND: &str = "capture-summary";

/// Strings longer than this that decode as base64 are taken for inlined binary data.
pub const MAX_INLINE_BASE64: usize = 4096;

/// The last good state observed before a failure.
///
/// On the wire each variant is its own JSON object, exactly as the contract shows; reading
/// picks the variant by shape: `kind: "capture-summary"` is a capture summary (and must be a
/// valid one), an object with exactly the nine window fields is a window, anything else is
/// kept as it is.
///
/// ```
/// use agent_tool_result::Observation;
/// use serde_json::json;
///
/// let observation = Observation::try_from(json!({ "kind": "query", "nodes": 12 }))?;
/// assert!(matches!(observation, Observation::Other(_)));
///
/// // Image bytes are refused: summarize the capture instead.
/// let err = Observation::try_from(json!({ "width": 1, "base64": "iVBORw0KGgo=" })).unwrap_err();
/// assert_eq!(err.pointer(), "/base64");
/// # Ok::<(), agent_tool_result::observation::ObservationError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Observation {
    /// A capture, summarized: dimensions, blank check and where its PNG was written.
    Capture(CaptureSummary),
    /// The resolved target window.
    Window(WindowInfo),
    /// Any other observation (a query or find result, say), free of base64.
    Other(JsonObject),
}

/// Any JSON value as an observation, checked against the no-base64 rule: a window-shaped
/// object becomes [`Observation::Window`], a `capture-summary` a checked
/// [`Observation::Capture`], any other object [`Observation::Other`].
///
/// # Errors
///
/// [`ObservationError`] when the value is not an object, holds a `base64` key or a long
/// base64 string anywhere, or is a malformed capture summary.
impl TryFrom<Value> for Observation {
    type Error = ObservationError;

    fn try_from(value: Value) -> Result<Self, ObservationError> {
        match value {
            Value::Object(object) => Observation::from_object(object),
            other => Err(ObservationError::new(
                Rule::PayloadIsObject,
                String::new(),
                format!("an observation is a JSON object, not {}", json_type(&other)),
            )),
        }
    }
}

/// Any JSON object as an observation; see [`Observation::try_from`] for a value.
impl TryFrom<JsonObject> for Observation {
    type Error = ObservationError;

    fn try_from(object: JsonObject) -> Result<Self, ObservationError> {
        Observation::from_object(object)
    }
}

impl Observation {
    fn from_object(object: JsonObject) -> Result<Self, ObservationError> {
        if let Some(pointer) = find_base64(&object) {
            let breach = Breach::Base64InObservation;
            return Err(ObservationError::new(
                breach.rule(),
                pointer,
                breach.to_string(),
            ));
        }
        if object.get("kind").and_then(Value::as_str) == Some(CAPTURE_SUMMARY_KIND) {
            let value = Value::Object(object);
            return match CaptureSummary::deserialize(&value) {
                Ok(summary) => Ok(Observation::Capture(summary)),
                Err(_) => Err(ObservationError::locate::<CaptureSummary>(&value)),
            };
        }
        let value = Value::Object(object);
        if let Some(window) = WindowInfo::deserialize_from(&value) {
            return Ok(Observation::Window(window));
        }
        let Value::Object(object) = value else {
            unreachable!("built from an object above")
        };
        Ok(Observation::Other(object))
    }
}

impl From<CaptureSummary> for Observation {
    fn from(summary: CaptureSummary) -> Self {
        Observation::Capture(summary)
    }
}

impl From<WindowInfo> for Observation {
    fn from(window: WindowInfo) -> Self {
        Observation::Window(window)
    }
}

impl Serialize for Observation {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Observation::Capture(summary) => summary.serialize(serializer),
            Observation::Window(window) => window.serialize(serializer),
            Observation::Other(object) => object.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Observation {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if crate::strict::Skimming::active() {
            // A verdict-only read: checked, not built.
            skim::check(deserializer)?;
            return Ok(Observation::Other(JsonObject::new()));
        }
        let object = JsonObject::deserialize(deserializer)?;
        Observation::from_object(object)
            .map_err(|err| breach::raise_at(err.rule, err.pointer, err.message))
    }
}

/// Why a value cannot be an [`Observation`]: the rule it breaks and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}{}", inside(.pointer))]
pub struct ObservationError {
    rule: Rule,
    pointer: String,
    message: String,
}

impl ObservationError {
    fn new(rule: Rule, pointer: String, message: String) -> Self {
        ObservationError {
            rule,
            pointer,
            message,
        }
    }

    /// Reads `value` again as a `T`, tracking the path, to say why it is not one.
    fn locate<T: serde::de::DeserializeOwned>(value: &Value) -> Self {
        breach::clear();
        let Err(err) = serde_path_to_error::deserialize::<_, T>(value) else {
            return ObservationError::new(
                Rule::FieldType,
                String::new(),
                "the observation could not be read".to_owned(),
            );
        };
        let mut at = pointer::of_path(err.path());
        let rule = match breach::take() {
            Some(pending) => {
                at.push_str(&pending.at);
                pending.rule
            }
            None => Rule::FieldType,
        };
        ObservationError::new(rule, at, err.into_inner().to_string())
    }

    /// The rule the value breaks.
    #[must_use]
    pub fn rule(&self) -> Rule {
        self.rule
    }

    /// The JSON Pointer, relative to the observation, of the offending value.
    #[must_use]
    pub fn pointer(&self) -> &str {
        &self.pointer
    }
}

/// ` (at /x inside lastObservation)`, or nothing at the observation itself.
fn inside(pointer: &str) -> String {
    if pointer.is_empty() {
        String::new()
    } else {
        format!(" (at {pointer} inside lastObservation)")
    }
}

/// The JSON Pointer of the first place inside `object` that breaks the no-base64 rule: a
/// `base64` key, or a string longer than [`MAX_INLINE_BASE64`] that decodes as base64.
#[must_use]
pub fn find_base64(object: &JsonObject) -> Option<String> {
    // The common case, nothing found, walks without building pointers.
    if !object.iter().any(|(key, value)| breaks_rule(key, value)) {
        return None;
    }
    let mut pointer = String::new();
    let mut value = object;
    loop {
        let (key, child) = value.iter().find(|(key, child)| breaks_rule(key, child))?;
        push_token(&mut pointer, key);
        if key == "base64" {
            return Some(pointer);
        }
        match descend(child, &mut pointer) {
            Some(object) => value = object,
            None => return Some(pointer),
        }
    }
}

/// Whether the member `key: value` is, or holds, a break of the no-base64 rule.
fn breaks_rule(key: &str, value: &Value) -> bool {
    key == "base64" || holds_base64(value)
}

fn holds_base64(value: &Value) -> bool {
    match value {
        Value::String(s) => is_inline_base64(s),
        Value::Array(items) => items.iter().any(holds_base64),
        Value::Object(object) => object.iter().any(|(key, value)| breaks_rule(key, value)),
        _ => false,
    }
}

/// Follows `value` down to the object that holds the break (through arrays), extending the
/// pointer; `None` when `value` itself is the offending string.
fn descend<'a>(mut value: &'a Value, pointer: &mut String) -> Option<&'a JsonObject> {
    loop {
        match value {
            Value::Object(object) => return Some(object),
            Value::Array(items) => {
                let (index, item) = items
                    .iter()
                    .enumerate()
                    .find(|(_, item)| holds_base64(item))?;
                push_token(pointer, &index.to_string());
                value = item;
            }
            _ => return None,
        }
    }
}

/// Whether `s` looks like inlined binary data: longer than [`MAX_INLINE_BASE64`] bytes,
/// decodes as standard base64 (padded or not), and mixes upper case, lower case and digits, as
/// encoded binary of that length always does (a PNG's base64 starts `iVBORw0KGgo`). A long
/// run of one letter, a hex digest or a lowercase identifier is text, not an image. The
/// schema's patterns for the same rule are tested against this function.
///
/// ```
/// use agent_tool_result::observation::is_inline_base64;
///
/// assert!(!is_inline_base64(&"A".repeat(4_100)));
/// assert!(!is_inline_base64(&"0123456789abcdef".repeat(300)));
/// assert!(is_inline_base64(&"iVBORw0KGgoAAAANSUhEUgAA".repeat(200)));
/// ```
#[must_use]
pub fn is_inline_base64(s: &str) -> bool {
    s.len() > MAX_INLINE_BASE64
        && is_base64(s)
        && s.bytes().any(|b| b.is_ascii_uppercase())
        && s.bytes().any(|b| b.is_ascii_lowercase())
        && s.bytes().any(|b| b.is_ascii_digit())
}

fn is_base64(s: &str) -> bool {
    let body = s.trim_end_matches('=');
    let padding = s.len() - body.len();
    let alphabet = |b: u8| b.is_ascii_alphanumeric() || b == b'+' || b == b'/';
    body.bytes().all(alphabet)
        && matches!((padding, body.len() % 4), (0, 0 | 2 | 3) | (1, 3) | (2, 2))
}

#[cfg(feature = "schemars")]
mod generated {
    use std::borrow::Cow;

    use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

    use super::{CAPTURE_SUMMARY_KIND, CaptureSummary, MAX_INLINE_BASE64, Observation};

    /// Any JSON value with no `base64` key and no long base64 string anywhere inside.
    struct NoBase64;

    /// The schema form of the base64 test in [`super::is_inline_base64`].
    pub(crate) const BASE64_PATTERN: &str =
        "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$";

    impl JsonSchema for NoBase64 {
        fn schema_name() -> Cow<'static, str> {
            "NoBase64".into()
        }

        fn json_schema(generator: &mut SchemaGenerator) -> Schema {
            let this = generator.subschema_for::<NoBase64>();
            json_schema!({
                "description": "No base64 key, and no string over 4 KiB that decodes as base64, at any depth.",
                "propertyNames": { "not": { "const": "base64" } },
                "additionalProperties": this,
                "items": this,
                "if": { "type": "string", "minLength": MAX_INLINE_BASE64 + 1 },
                "then": { "not": { "allOf": [
                    { "pattern": BASE64_PATTERN },
                    { "pattern": "[A-Z]" },
                    { "pattern": "[a-z]" },
                    { "pattern": "[0-9]" },
                ] } },
            })
        }
    }

    impl JsonSchema for Observation {
        fn schema_name() -> Cow<'static, str> {
            "Observation".into()
        }

        fn json_schema(generator: &mut SchemaGenerator) -> Schema {
            let no_base64 = generator.subschema_for::<NoBase64>();
            let capture = generator.subschema_for::<CaptureSummary>();
            json_schema!({
                "description": "The last good state before the failure: a capture summary, a window, or any object without base64.",
                "type": "object",
                "allOf": [no_base64],
                "if": {
                    "type": "object",
                    "properties": { "kind": { "const": CAPTURE_SUMMARY_KIND } },
                    "required": ["kind"],
                },
                "then": capture,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_shapes() {
        for ok in ["", "QQ", "QQ==", "QUI", "QUI=", "QUJD", "a+/9"] {
            assert!(is_base64(ok), "{ok}");
        }
        for bad in ["Q", "Q===", "QQ=", "QUJD=", "QU JD", "QU-_", "QUI==", "=QQ"] {
            assert!(!is_base64(bad), "{bad}");
        }
    }

    #[test]
    fn pointer_names_the_first_offender() {
        let long = "iVBORw0KGgo".repeat(MAX_INLINE_BASE64 / 8);
        let object = serde_json::json!({ "a": [1, { "b~/": long }] });
        let Value::Object(object) = object else {
            unreachable!()
        };
        assert_eq!(find_base64(&object).as_deref(), Some("/a/1/b~0~1"));
        let short = serde_json::json!({ "a": "QUJD", "text": "lorem ipsum ".repeat(1_000) });
        let Value::Object(short) = short else {
            unreachable!()
        };
        assert_eq!(find_base64(&short), None);
    }
}
