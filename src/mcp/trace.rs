//! [`TraceParent`]: the W3C Trace Context `traceparent` a client sends in a request's
//! `_meta` (MCP SEP-414), read and checked, so a server carries the client's trace into its
//! own spans.

use std::fmt;
use std::str::FromStr;

/// The `_meta` key of a request's trace context.
pub const TRACEPARENT: &str = "traceparent";

/// A W3C `traceparent`: the trace's id, the caller's span id and the flags, read from version
/// 00 or, by its rules, from a later version; written as version 00.
///
/// ```
/// use agent_tool_result::mcp::TraceParent;
///
/// let meta = serde_json::json!({ "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" });
/// let parent = TraceParent::from_meta(meta.as_object().unwrap()).expect("a valid traceparent");
/// assert_eq!(parent.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
/// assert_eq!(parent.parent_id(), "00f067aa0ba902b7");
/// assert!(parent.is_sampled());
/// assert!("00-00000000000000000000000000000000-00f067aa0ba902b7-01".parse::<TraceParent>().is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TraceParent {
    trace_id: String,
    parent_id: String,
    flags: u8,
}

/// Why a text is not a `traceparent`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "a traceparent is a version (2 lowercase hex digits, not ff), -, 32 lowercase hex digits \
     (not all zero), -, 16 (not all zero), - and 2 (and, past version 00, nothing or - and \
     more): `{0}` is not"
)]
pub struct InvalidTraceParent(String);

impl TraceParent {
    /// The `traceparent` of a request's `_meta`; `None` when it has none or one that does not
    /// parse (a bad one is ignored, as the W3C recommendation has it: a new trace starts).
    #[must_use]
    pub fn from_meta(meta: &crate::JsonObject) -> Option<Self> {
        meta.get(TRACEPARENT)?.as_str()?.parse().ok()
    }

    /// The trace's id: 32 lowercase hex digits.
    #[must_use]
    pub fn trace_id(&self) -> &str {
        &self.trace_id
    }

    /// The caller's span id: 16 lowercase hex digits.
    #[must_use]
    pub fn parent_id(&self) -> &str {
        &self.parent_id
    }

    /// Whether the caller sampled the trace (flag `01`).
    #[must_use]
    pub fn is_sampled(&self) -> bool {
        self.flags & 1 == 1
    }
}

impl FromStr for TraceParent {
    type Err = InvalidTraceParent;

    /// Reads a `traceparent` as W3C Trace Context (section 3.2) says: version `00` is exactly
    /// `00-{trace}-{parent}-{flags}`; a later version (any two lowercase hex digits but `ff`)
    /// is read by the version-00 rules from its first 55 characters, which may be followed
    /// only by `-` and that version's further fields (section 3.2.4), so a newer client's
    /// trace is kept rather than restarted.
    fn from_str(text: &str) -> Result<Self, InvalidTraceParent> {
        let invalid = || InvalidTraceParent(text.chars().take(64).collect());
        let hex = |part: &str| part.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        let zero = |part: &str| part.bytes().all(|b| b == b'0');
        // Byte positions are character positions once the text is ASCII.
        if !text.is_ascii() || text.len() < VERSION_00_LEN {
            return Err(invalid());
        }
        let b = text.as_bytes();
        let (version, trace, parent, flags) =
            (&text[..2], &text[3..35], &text[36..52], &text[53..55]);
        let dashes = [b[2], b[35], b[52]] == [b'-'; 3];
        let rest_ok = if version == "00" {
            text.len() == VERSION_00_LEN
        } else {
            text.len() == VERSION_00_LEN || b[VERSION_00_LEN] == b'-'
        };
        if !dashes
            || !rest_ok
            || !hex(version)
            || version == "ff"
            || !hex(trace)
            || !hex(parent)
            || !hex(flags)
            || zero(trace)
            || zero(parent)
        {
            return Err(invalid());
        }
        Ok(TraceParent {
            trace_id: trace.to_owned(),
            parent_id: parent.to_owned(),
            flags: u8::from_str_radix(flags, 16).map_err(|_| invalid())?,
        })
    }
}

/// The length of a version-00 `traceparent`, and of the part of a later version read by its
/// rules.
const VERSION_00_LEN: usize = 55;

impl fmt::Display for TraceParent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "00-{}-{}-{:02x}",
            self.trace_id, self.parent_id, self.flags
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_well_formed_version_00_parses_and_reads_back() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
        let parsed: TraceParent = good.parse().unwrap();
        assert_eq!(parsed.to_string(), good);
        assert!(!parsed.is_sampled());
        for bad in [
            "",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-+1",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01é",
            "0é-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert!(bad.parse::<TraceParent>().is_err(), "{bad}");
        }
    }

    /// Every later version (01 to fe) is read by the version-00 rules, alone or followed by
    /// `-` and further fields; `ff`, uppercase, and anything else after the flags are refused.
    #[test]
    fn a_later_version_is_read_by_the_version_00_rules() {
        let ids = "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        for version in 1..=0xfe_u8 {
            for tail in ["", "-", "-what-comes-next", "-00"] {
                let text = format!("{version:02x}-{ids}{tail}");
                let parsed: TraceParent = text.parse().unwrap_or_else(|err| panic!("{err}"));
                assert_eq!(parsed.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
                assert_eq!(parsed.parent_id(), "00f067aa0ba902b7");
                assert!(parsed.is_sampled());
                assert_eq!(parsed.to_string(), format!("00-{ids}"));
            }
            for tail in ["x", "01", " "] {
                let text = format!("{version:02x}-{ids}{tail}");
                assert!(text.parse::<TraceParent>().is_err(), "{text}");
            }
        }
        for bad in [
            format!("ff-{ids}"),
            format!("CC-{ids}"),
            format!("cc-{}", &ids[..50]),
        ] {
            assert!(bad.parse::<TraceParent>().is_err(), "{bad}");
        }
    }
}
