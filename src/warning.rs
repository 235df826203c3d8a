//! [`Warning`]: a non-fatal condition that accompanies a result.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::object::FieldName;
use crate::object::{fields, read_once, required};

use crate::WarningCode;

/// A non-fatal condition: the call went on, but the agent should know that something was
/// adjusted, degraded or assumed. Warnings may accompany a success or a failure.
///
/// On the wire it is `{ "code": ..., "detail": ... }`, both required, nothing else allowed.
///
/// ```
/// use agent_tool_result::{Warning, WarningCode};
///
/// let warning = Warning::new(WarningCode::MINIMIZED_WINDOW, "Target was restored before capture.");
/// assert_eq!(
///     serde_json::to_string(&warning)?,
///     r#"{"code":"minimized-window","detail":"Target was restored before capture."}"#,
/// );
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schemars",
    schemars(description = "A non-fatal condition that accompanies a result.")
)]
#[serde(deny_unknown_fields)]
pub struct Warning {
    /// Stable machine code for the condition; agents may branch on it.
    code: WarningCode,
    /// Human-readable explanation of the condition.
    detail: String,
}

impl Warning {
    /// A warning with its code and a human-readable detail.
    #[must_use]
    pub fn new(code: WarningCode, detail: impl Into<String>) -> Self {
        Warning {
            code,
            detail: detail.into(),
        }
    }

    /// The warning's code.
    #[must_use]
    pub fn code(&self) -> &WarningCode {
        &self.code
    }

    /// The human-readable detail.
    #[must_use]
    pub fn detail(&self) -> &str {
        &self.detail
    }
}

fields! {
    /// A warning's fields.
    pub(crate) enum Field for "a warning" requires ["code", "detail"] {
        Code = "code",
        Detail = "detail",
    }
}

/// Reads only a JSON object, and rejects unknown and repeated keys.
impl<'de> Deserialize<'de> for Warning {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(WarningVisitor)
    }
}

struct WarningVisitor;

impl<'de> Visitor<'de> for WarningVisitor {
    type Value = Warning;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a warning object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Warning, A::Error> {
        let (mut code, mut detail) = (None, None);
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Code => read_once(&mut map, &mut code, "code", PhantomData)?,
                Field::Detail => read_once(&mut map, &mut detail, "detail", PhantomData)?,
            }
        }
        Ok(Warning {
            code: required(code, Field::OBJECT, "code")?,
            detail: required(detail, Field::OBJECT, "detail")?,
        })
    }
}
