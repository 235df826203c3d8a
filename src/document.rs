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
//!
//! A text that is not JSON (anywhere: a member name or string with a raw control character, a
//! lone surrogate escape or an invalid escape; a number beyond a double's range, which I-JSON,
//! RFC 7493, rules out; a text cut short) is no contract's document. Every reader refuses it,
//! and the validator reports `well-formed-json` at its first break, whatever the names around
//! the break (after the contract's first finding before the break, if there is one). The
//! names read before the break still route it, so that a reader's error speaks of the
//! contract the text began as; a name after the break is never read, so a refusal whose
//! `status` follows a broken name is routed as an envelope and refused as not JSON all the
//! same.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// The contract a document is read under.
///
/// ```
/// use agent_tool_result::document::{self, Document};
///
/// let kinds = [r#"{"ok":true}"#, r#"{"schemaVersion":1}"#, r#"{"type":"about:blank","status":503}"#];
/// let read: Vec<Document> = kinds.iter().map(|text| document::of(text)).collect();
/// assert_eq!(read, [Document::Envelope, Document::Guarantee, Document::Refusal]);
/// ```
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
/// envelope, which its reader then refuses). A text that breaks off or breaks JSON is routed
/// by the top-level names read before the break.
#[must_use]
pub fn of(text: &str) -> Document {
    TopMembers::of(text).document()
}

/// The contract of a parsed value, by the same rule as [`of`].
///
/// ```
/// use agent_tool_result::document::{self, Document};
///
/// let value = serde_json::json!({ "schemaVersion": 1, "ok": false });
/// assert_eq!(document::of_value(&value), Document::Guarantee);
/// ```
#[must_use]
pub fn of_value(value: &Value) -> Document {
    TopMembers::of_value(value).document()
}

/// The contract of an RFC 9457 problem body, by the same rule, with the `type` and `status`
/// RFC 9457 gives a problem that omits them (`about:blank`, the status line).
#[cfg(feature = "http")]
pub(crate) fn of_problem(value: &Value) -> Document {
    TopMembers {
        type_member: true,
        status: true,
        ..TopMembers::of_value(value)
    }
    .document()
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
    #[cfg_attr(not(feature = "validate"), allow(dead_code))]
    pub(crate) structured_content: bool,
    #[cfg_attr(not(feature = "validate"), allow(dead_code))]
    pub(crate) result_type: bool,
}

impl TopMembers {
    /// The members of the object in `text`: every top-level name read before the text ends
    /// or breaks, however it breaks (in a name or a value: a control character, a lone
    /// surrogate, an invalid escape, a truncation), and none after, so that a broken
    /// document is refused under the contract the names before its break say.
    pub(crate) fn of(text: &str) -> Self {
        // Without one of the names `note` records (`ok` and `type` alone route nothing),
        // spelt out or escaped, there is nothing to look for (`ontent` is in `content` and
        // `structuredContent`: one pass finds both).
        let may_have = [
            "schemaVersion",
            "ontent",
            "isError",
            "status",
            "resultType",
            "\\u",
        ]
        .iter()
        .any(|needle| text.contains(needle));
        let mut members = TopMembers::default();
        if may_have {
            let mut deserializer = serde_json::Deserializer::from_str(text);
            // An error only stops the scan: what was read before it stands.
            let _ = serde::de::DeserializeSeed::deserialize(Scan(&mut members), &mut deserializer);
        }
        members
    }

    /// The members of a parsed value.
    pub(crate) fn of_value(value: &Value) -> Self {
        let mut members = TopMembers::default();
        if let Value::Object(object) = value {
            for key in object.keys() {
                members.note(key.as_bytes());
            }
        }
        members
    }

    fn note(&mut self, name: &[u8]) {
        match name {
            b"schemaVersion" => self.schema_version = true,
            b"ok" => self.ok = true,
            b"type" => self.type_member = true,
            b"status" => self.status = true,
            b"content" => self.content = true,
            b"isError" => self.is_error = true,
            b"structuredContent" => self.structured_content = true,
            b"resultType" => self.result_type = true,
            _ => {}
        }
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

/// Reads the top-level names into the members it holds, as it goes.
struct Scan<'m>(&'m mut TopMembers);

impl<'de> DeserializeSeed<'de> for Scan<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Scan<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(Name(name)) = map.next_key::<Name<'de>>()? {
            self.0.note(name.as_bytes());
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

/// A member name, read as JSON text must spell it: a name that breaks (a raw control
/// character, a lone surrogate escape, an invalid escape, the text ending inside it) is an
/// error, which ends the scan there, so that no name after the first break counts, as no
/// reader reads past it.
struct Name<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NameVisitor;
        impl<'de> Visitor<'de> for NameVisitor {
            type Value = Name<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }

            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Borrowed(v)))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(NameVisitor)
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
