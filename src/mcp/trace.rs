//! [`TraceParent`]: the W3C Trace Context `traceparent` a client sends in a request's
//! `_meta` (MCP SEP-414), read and checked, so a server carries the client's trace into its
//! own spans.

use std::fmt;
use std::str::FromStr;

/// The `_meta` key of a request's trace context.
pub const TRACEPARENT: &str = "traceparent";

/// A W3C `traceparent` (version 00): the trace's id, the caller's span id and the flags.
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
    "a traceparent is 00-, 32 lowercase hex digits (not all zero), -, 16 (not all zero), - and \
     2: `{0}` is not"
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

    fn from_str(text: &str) -> Result<Self, InvalidTraceParent> {
        let invalid = || InvalidTraceParent(text.chars().take(64).collect());
        let hex = |part: &str, len: usize| {
            part.len() == len && part.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        };
        let mut parts = text.split('-');
        let (Some("00"), Some(trace), Some(parent), Some(flags), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return Err(invalid());
        };
        let zero = |part: &str| part.bytes().all(|b| b == b'0');
        if !hex(trace, 32) || !hex(parent, 16) || !hex(flags, 2) || zero(trace) || zero(parent) {
            return Err(invalid());
        }
        Ok(TraceParent {
            trace_id: trace.to_owned(),
            parent_id: parent.to_owned(),
            flags: u8::from_str_radix(flags, 16).map_err(|_| invalid())?,
        })
    }
}

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
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-+1",
        ] {
            assert!(bad.parse::<TraceParent>().is_err(), "{bad}");
        }
    }
}
