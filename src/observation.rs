//! [`Observation`]: what `error.lastObservation` holds, and the rule that it never holds base64.
//!
//! The last good state before a failure is a capture summary ([`CaptureSummary`]), a resolved
//! window ([`WindowInfo`]), or any other JSON object (a query tree, a find result). Whatever it
//! is, it never carries image bytes: a capture is summarized and its PNG written to the session's
//! artifact directory (see [`SessionArtifacts`](crate::artifact::SessionArtifacts)). The rule is checked
//! when an observation is built and when one is read.
//!
//! ```
//! use agent_tool_result::Observation;
//! use serde_json::json;
//!
//! let window = Observation::try_from(json!({ "title": "Untitled - Notepad", "handle": 4242 }))?;
//! assert!(serde_json::to_string(&window)?.contains("Notepad"));
//! // Image bytes never ride in an observation.
//! assert!(Observation::try_from(json!({ "base64": "iVBORw0KGgo=" })).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod base64;
mod capture;
mod last;
mod skim;
mod window;

pub use base64::{MAX_INLINE_BASE64, find_base64, is_inline_base64};
pub use capture::{
    ArtifactOutcome, BlankCheck, CaptureSummary, EmptyArtifactText, InvalidFraction,
};
#[cfg(feature = "validate")]
pub(crate) use capture::{BlankCheckField, CAPTURE_SUMMARY_KIND, CaptureField};
pub use last::{Observation, ObservationError};
#[cfg(feature = "validate")]
pub(crate) use window::WindowField;
pub use window::WindowInfo;

#[cfg(feature = "schemars")]
mod generated {
    use std::borrow::Cow;

    use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

    use super::capture::CAPTURE_SUMMARY_KIND;
    use super::{CaptureSummary, MAX_INLINE_BASE64, Observation};

    /// Any JSON value with no `base64` key and no long base64 string anywhere inside.
    struct NoBase64;

    /// The schema form of the base64 test in [`is_inline_base64`](super::is_inline_base64).
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
