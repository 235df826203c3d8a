//! [`ToolError`]: why a tool call failed.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::object::FieldName;
use crate::object::{Inside, OptionalObject, fields, read_once, required};

use crate::code::IntoClassified;
use crate::{ErrorCategory, ErrorCode, JsonObject, Observation};

/// The failure descriptor of an envelope whose `ok` is `false`.
///
/// On the wire: `{ code, category, detail, lastObservation?, partialResult? }`, in that order,
/// with absent fields omitted and no other field allowed.
///
/// Build one with [`ToolError::new`] from a [`Classified`](crate::Classified): the code and the category the
/// failure is under, paired when the tool compiles, so building one never fails:
///
/// ```
/// use agent_tool_result::{Classified, ErrorCategory, ToolError, classified};
///
/// let known = ToolError::new(Classified::ELEMENT_NOT_FOUND, "No element named 'Save'.");
/// assert_eq!(known.category(), ErrorCategory::NoTarget);
///
/// let ocr = ToolError::new(classified!("frame-all-black", OcrBlank), "Nothing to read.");
/// assert_eq!(ocr.category(), ErrorCategory::OcrBlank);
///
/// const CACHE_COLD: Classified = classified!("cache-cold", Timeout);
/// let custom = ToolError::new(CACHE_COLD, "The index was still warming up.");
/// assert_eq!(custom.code().as_str(), "cache-cold");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, thiserror::Error)]
#[error("{code} ({category}): {detail}")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(description = "Why the call failed."))]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolError {
    /// Fine-grained, open machine code (kebab-case). Agents must tolerate unknown codes by
    /// falling back to `category`.
    code: ErrorCode,
    /// Coarse failure class from the closed taxonomy.
    category: ErrorCategory,
    /// Human-readable explanation of what failed and, where possible, how to recover.
    detail: String,
    /// The last good observation before the failure, from a prior call. Never holds base64
    /// image data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_observation: Option<Box<Observation>>,
    /// The failing call's own partial payload, when the tool kept one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    partial_result: Option<JsonObject>,
}

impl ToolError {
    /// A failure under `code` (a [`Classified`](crate::Classified): its code and category) with `detail`, what
    /// failed and, where possible, how to recover. It cannot fail: the pair was checked when
    /// it was made.
    ///
    /// A bare [`ErrorCode`] is refused when the tool compiles, with what to write instead:
    ///
    /// ```compile_fail
    /// use agent_tool_result::{ToolError, error_code};
    ///
    /// let failure = ToolError::new(error_code!("cache-cold"), "The index was warming up.");
    /// ```
    #[must_use]
    pub fn new(code: impl IntoClassified, detail: impl Into<String>) -> Self {
        let (code, category) = code.into_classified().into_parts();
        ToolError::build(code, category, detail.into())
    }

    /// A failure with `code` under `category` as they were read or migrated, unchecked: a
    /// mismatch there is a lint, not a reason to lose the result.
    pub(crate) fn build(code: ErrorCode, category: ErrorCategory, detail: String) -> Self {
        ToolError {
            code,
            category,
            detail,
            last_observation: None,
            partial_result: None,
        }
    }

    /// Attaches the last good observation from a prior call: a [`CaptureSummary`](crate::observation::CaptureSummary),
    /// a [`WindowInfo`](crate::observation::WindowInfo), or any object checked by `Observation::try_from`.
    #[must_use]
    pub fn with_last_observation(mut self, observation: impl Into<Observation>) -> Self {
        self.last_observation = Some(Box::new(observation.into()));
        self
    }

    /// Attaches the failing call's own partial payload.
    #[must_use]
    pub fn with_partial_result(mut self, partial: JsonObject) -> Self {
        self.partial_result = Some(partial);
        self
    }

    /// The fine-grained code.
    #[must_use]
    pub fn code(&self) -> &ErrorCode {
        &self.code
    }

    /// The category from the closed taxonomy.
    #[must_use]
    pub fn category(&self) -> ErrorCategory {
        self.category
    }

    /// The human-readable detail.
    #[must_use]
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// The last good observation before the failure, if any.
    #[must_use]
    pub fn last_observation(&self) -> Option<&Observation> {
        self.last_observation.as_deref()
    }

    /// The failing call's own partial payload, if any.
    #[must_use]
    pub fn partial_result(&self) -> Option<&JsonObject> {
        self.partial_result.as_ref()
    }
}

fields! {
    /// An error's fields.
    pub(crate) enum Field for "an error" requires ["code", "category", "detail"] {
        Code = "code",
        Category = "category",
        Detail = "detail",
        LastObservation = "lastObservation",
        PartialResult = "partialResult",
    }
}

/// Reads only a JSON object (serde's derive would also take an array), rejects unknown and
/// repeated keys, and takes `null` for an absent optional field.
impl<'de> Deserialize<'de> for ToolError {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ToolErrorVisitor)
    }
}

struct ToolErrorVisitor;

impl<'de> Visitor<'de> for ToolErrorVisitor {
    type Value = ToolError;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an error object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ToolError, A::Error> {
        let (mut code, mut category, mut detail) = (None, None, None);
        let (mut last_observation, mut partial_result) = (None, None);
        let mut skimmed = None;
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Code => read_once(&mut map, &mut code, "code", PhantomData)?,
                Field::Category => read_once(&mut map, &mut category, "category", PhantomData)?,
                Field::Detail => read_once(&mut map, &mut detail, "detail", PhantomData)?,
                Field::LastObservation => {
                    let seed = OptionalObject {
                        field: "lastObservation",
                        inside: Inside::Contract,
                        marker: PhantomData,
                    };
                    read_once(&mut map, &mut last_observation, "lastObservation", seed)?;
                }
                Field::PartialResult if crate::strict::Skimming::active() => {
                    // A verdict-only read: the payload is checked, not built.
                    let seed = OptionalObject::<crate::strict::Checked> {
                        field: "partialResult",
                        inside: Inside::Contract,
                        marker: PhantomData,
                    };
                    read_once(&mut map, &mut skimmed, "partialResult", seed)?;
                    partial_result = Some(None);
                }
                Field::PartialResult => {
                    let seed = OptionalObject {
                        field: "partialResult",
                        inside: Inside::Contract,
                        marker: PhantomData,
                    };
                    read_once(&mut map, &mut partial_result, "partialResult", seed)?;
                }
            }
        }
        Ok(ToolError {
            code: required(code, Field::OBJECT, "code")?,
            category: required(category, Field::OBJECT, "category")?,
            detail: required(detail, Field::OBJECT, "detail")?,
            last_observation: last_observation.flatten(),
            partial_result: partial_result.flatten(),
        })
    }
}
