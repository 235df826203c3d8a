//! Which contract a JSON document is: one rule, by its top-level member names alone, the same
//! in every reader (the typed readers of `tools/call` results, the validator, `atr`).
//!
//! ```
//! use agent_tool_result::document::{self, Document};
//!
//! assert_eq!(document::of(r#"{"ok":true}"#), Document::Envelope);
//! // A tool's own field may be called `ok`: the schemaVersion decides.
//! assert_eq!(document::of(r#"{"schemaVersion":1,"ok":false}"#), Document::Guarantee);
//! assert_eq!(
//!     document::of(r#"{"type":"about:blank","title":"Bad Request","status":400}"#),
//!     Document::Refusal
//! );
//! ```
//!
//! - a top-level `schemaVersion`: a guarantee result, whatever else it holds (a tool's own
//!   field may be called `ok`);
//! - otherwise, no `ok` but a `type` and a `status`: a guarantee tool's refusal, an RFC 9457
//!   problem;
//! - otherwise: an envelope.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// The contract a document is read under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Document {
    /// The first contract's envelope.
    Envelope,
    /// A guarantee result.
    Guarantee,
    /// A guarantee tool's refusal (a problem).
    Refusal,
}

/// The contract of the JSON text `text` (anything that is not a JSON object is an
/// envelope, which its reader then refuses).
#[must_use]
pub fn of(text: &str) -> Document {
    TopMembers::of(text).document()
}

/// The top-level members that route a document, read in one pass, keys borrowed, values
/// skipped. A text that is not a JSON object has none.
#[derive(Clone, Copy, Debug, Default)]
#[allow(clippy::struct_excessive_bools)] // a set of flags, one per member name
pub(crate) struct TopMembers {
    pub(crate) schema_version: bool,
    pub(crate) ok: bool,
    pub(crate) type_member: bool,
    pub(crate) status: bool,
    #[cfg_attr(not(feature = "validate"), allow(dead_code))]
    pub(crate) content: bool,
    #[cfg_attr(not(feature = "validate"), allow(dead_code))]
    pub(crate) is_error: bool,
}

impl TopMembers {
    /// The members of the object in `text`.
    pub(crate) fn of(text: &str) -> Self {
        // Without a name in the text, spelt out or escaped, there is nothing to look for.
        let may_have = ["schemaVersion", "content", "isError", "status", "\\u"]
            .iter()
            .any(|needle| text.contains(needle));
        if !may_have {
            // Neither a guarantee result nor a refusal (no `status`): an envelope.
            return TopMembers::default();
        }
        serde_json::from_str::<TopMembers>(text).unwrap_or_default()
    }

    /// The one rule.
    pub(crate) fn document(self) -> Document {
        if self.schema_version {
            Document::Guarantee
        } else if !self.ok && self.type_member && self.status {
            Document::Refusal
        } else {
            Document::Envelope
        }
    }
}

impl<'de> Deserialize<'de> for TopMembers {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = TopMembers;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TopMembers, A::Error> {
                let mut members = TopMembers::default();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match &*key {
                        "schemaVersion" => members.schema_version = true,
                        "ok" => members.ok = true,
                        "type" => members.type_member = true,
                        "status" => members.status = true,
                        "content" => members.content = true,
                        "isError" => members.is_error = true,
                        _ => {}
                    }
                    map.next_value::<IgnoredAny>()?;
                }
                Ok(members)
            }
        }
        deserializer
            .deserialize_map(MembersVisitor)
            .map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rule_routes_every_document() {
        for (text, document) in [
            (r#"{"ok":true}"#, Document::Envelope),
            (r#"{"ok":false,"error":{}}"#, Document::Envelope),
            (r#"{"schemaVersion":1,"ok":false}"#, Document::Guarantee),
            (r#"{"ok":true,"schemaVersion":1}"#, Document::Guarantee),
            (
                r#"{"type":"about:blank","title":"x","status":503}"#,
                Document::Refusal,
            ),
            (r#"{"ok":false,"type":"x","status":1}"#, Document::Envelope),
            (r#"{"\u0073chemaVersion":1}"#, Document::Guarantee),
            ("[1]", Document::Envelope),
            ("not json", Document::Envelope),
        ] {
            assert_eq!(TopMembers::of(text).document(), document, "{text}");
        }
    }
}
