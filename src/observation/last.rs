//! [`Observation`]: the last good state observed before a failure, and why a value cannot be
//! one ([`ObservationError`]).

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::base64::find_base64;
use super::capture::{CAPTURE_SUMMARY_KIND, CaptureSummary};
use super::window::WindowInfo;
use crate::breach::{self, Breach};
use crate::object::json_type;
use crate::pointer;
use crate::{JsonObject, Rule};

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
    pub(super) fn from_object(object: JsonObject) -> Result<Self, ObservationError> {
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

    /// Raises this error where a reader meets it, keeping its rule and place.
    pub(super) fn raise<E: serde::de::Error>(self) -> E {
        breach::raise_at(self.rule, self.pointer, self.message)
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
