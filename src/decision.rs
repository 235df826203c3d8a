//! What an answer calls for an agent to do: the [`Decision`], one closed set, and the
//! [`Reading`], the one outcome form every reader of the contracts gives, a plain JSON object:
//! this crate, `atr classify --format json`, and the Python and TypeScript reader packages
//! print the same line for the same bytes.
//!
//! ```
//! use agent_tool_result::decision::{Decision, Reading};
//!
//! let reading = Reading::of_document(
//!     r#"{"type":"about:blank","title":"Too Many Requests","status":429,"retryAt":"2026-12-05T21:40:07Z"}"#,
//! );
//! assert_eq!(reading.decision(), Decision::Retry);
//! assert_eq!(reading.retry_at(), Some("2026-12-05T21:40:07Z"));
//! assert_eq!(
//!     reading.to_json(),
//!     r#"{"decision":"retry","kind":"refusal","refusal":"rate-limited","status":429,"retryAt":"2026-12-05T21:40:07Z"}"#
//! );
//!
//! let broken = Reading::of_document(r#"{"ok":true,"error":{}}"#);
//! assert_eq!(broken.decision(), Decision::Stop);
//! assert_eq!(broken.to_json(), r#"{"decision":"stop","kind":"not-contract","why":"breaks-contract"}"#);
//! ```
//!
//! The decision comes from the contracts' own tables: an envelope's failure by its category's
//! [`RetryClass`], a guarantee result by its settlement and its policy decision, a refusal by
//! its [`RefusalKind`], a REST response by its status and challenge.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::category::RetryClass;
use crate::document::{self, Document};
use crate::guarantee::{
    Answer, GuaranteeResult, PolicyDecision, Refusal, RefusalKind, SettlementState, format_instant,
};
use crate::{Envelope, ErrorCategory, JsonObject};

/// The error for a name that is not in one of this module's closed sets.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{input}`: expected one of {expected}")]
pub struct UnknownName {
    what: &'static str,
    input: String,
    expected: String,
}

/// Declares a closed enum and its one table: wire name and meaning.
macro_rules! closed {
    (
        $(#[$meta:meta])* $name:ident, $what:literal {
            $( $(#[$doc:meta])* $variant:ident = $wire:literal, $meaning:literal; )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$doc])* $variant, )+
        }

        impl $name {
            /// Every value, in table order.
            pub const ALL: [$name; [$($wire),+].len()] = [$($name::$variant),+];

            /// The wire name.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self { $( $name::$variant => $wire, )+ }
            }

            /// What it means for the agent.
            #[must_use]
            pub const fn meaning(self) -> &'static str {
                match self { $( $name::$variant => $meaning, )+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownName;

            fn from_str(s: &str) -> Result<Self, UnknownName> {
                $name::ALL.into_iter().find(|v| v.as_str() == s).ok_or_else(|| UnknownName {
                    what: $what,
                    input: s.chars().take(64).collect(),
                    expected: [$($wire),+].join(", "),
                })
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
                name.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

closed! {
    /// The next step an agent takes after a tool's answer.
    ///
    /// ```
    /// use agent_tool_result::decision::Decision;
    ///
    /// for decision in Decision::ALL {
    ///     assert_eq!(decision.as_str().parse::<Decision>()?, decision);
    /// }
    /// assert_eq!(Decision::Retry.to_string(), "retry");
    /// # Ok::<(), agent_tool_result::decision::UnknownName>(())
    /// ```
    Decision, "decision" {
        /// Go on with the result.
        Continue = "continue", "Go on with the result.";
        /// Wait until the retry time (when given), then call again with the same key.
        Retry = "retry",
            "Wait until retryAt (when given), then call again with the same idempotency key.";
        /// Look the operation up with the tool the result names; never send it again.
        LookUp = "look-up",
            "Look the operation up (the tool nextTool names, after retryAt when given); do not send again.";
        /// Observe again (query, find, recapture), then retry.
        ObserveThenRetry = "observe-then-retry",
            "Observe again (query, find, capture), then retry.";
        /// Ask a person: the policy code, or the failure, says why.
        AskPerson = "ask-person", "Ask a person: the policy code, or the failure, says why.";
        /// Change the request (its arguments or its key), then call again.
        FixArguments = "fix-arguments",
            "Change the request (its arguments or its key), then call again.";
        /// Get a fresh token, then call again.
        Reauthenticate = "reauthenticate", "Get a fresh token, then call again.";
        /// Get a token with the scopes named, then call again.
        StepUp = "step-up", "Get a token with the scopes named, then call again.";
        /// Not a contract result: stop, and report why.
        Stop = "stop", "Not a result of the contracts: stop, and report why.";
    }
}

closed! {
    /// What a reader found.
    Kind, "kind" {
        /// An envelope (`ok`, then `result` or `error`).
        Envelope = "envelope", "An envelope tool's answer.";
        /// A guarantee result (`schemaVersion`, settlement, policy).
        Guarantee = "guarantee", "A guarantee tool's result.";
        /// A guarantee tool's refusal: nothing ran.
        Refusal = "refusal", "A guarantee tool refused the call; nothing ran.";
        /// HTTP 401: the credentials were refused.
        Unauthorized = "unauthorized", "The credentials were refused.";
        /// HTTP 403 `insufficient_scope`.
        InsufficientScope = "insufficient-scope", "The token lacks the scopes named.";
        /// A transport fault: the call reached no tool.
        Fault = "fault", "The call reached no tool (an unknown route, a body not read).";
        /// Not a result of the contracts.
        NotContract = "not-contract", "Not a result of the contracts.";
    }
}

closed! {
    /// Why an answer is not a result of the contracts.
    Why, "reason" {
        /// The text is not JSON as every reader reads it (I-JSON, RFC 7493).
        NotJson = "not-json", "The text is not JSON.";
        /// JSON whose contract (by the document rule) it breaks.
        BreaksContract = "breaks-contract", "JSON that breaks the contract its members name.";
        /// Not a `tools/call` result, or one that carries no result of the contracts.
        NotAToolResult = "not-a-tool-result", "Not a tools/call result of the contracts.";
        /// A REST response outside the REST profile.
        NotAProfileResponse = "not-a-profile-response", "A REST response outside the profile.";
    }
}

/// What a reader made of one answer: the [`Decision`] and what it rests on. Written as one
/// JSON object, members in this order, absent ones left out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Reading {
    decision: Decision,
    kind: Kind,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    ok: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    category: Option<ErrorCategory>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    settlement: Option<SettlementState>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    policy: Option<PolicyDecision>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    policy_code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    refusal: Option<RefusalKind>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    retry_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    retry_after: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    next_tool: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    scopes: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    why: Option<Why>,
}

impl Reading {
    fn new(decision: Decision, kind: Kind) -> Self {
        Reading {
            decision,
            kind,
            ok: None,
            category: None,
            code: None,
            settlement: None,
            policy: None,
            policy_code: None,
            refusal: None,
            status: None,
            retry_at: None,
            retry_after: None,
            next_tool: None,
            scopes: None,
            why: None,
        }
    }

    /// Not a result of the contracts, for `why`.
    #[must_use]
    pub fn not_contract(why: Why) -> Self {
        Reading {
            why: Some(why),
            ..Reading::new(Decision::Stop, Kind::NotContract)
        }
    }

    /// An envelope: a success continues; a failure's category says how to recover, by its
    /// retry class (after waiting: retry; after re-observing; after changing the request:
    /// fix the arguments; not recoverable: ask a person).
    #[must_use]
    pub fn of_envelope<T>(envelope: &Envelope<T>) -> Self {
        let Some(error) = envelope.error() else {
            return Reading {
                ok: Some(true),
                ..Reading::new(Decision::Continue, Kind::Envelope)
            };
        };
        let decision = match error.category().retry_class() {
            RetryClass::AfterWaiting => Decision::Retry,
            RetryClass::AfterReobserving => Decision::ObserveThenRetry,
            RetryClass::AfterChangingRequest => Decision::FixArguments,
            _ => Decision::AskPerson,
        };
        Reading {
            ok: Some(false),
            category: Some(error.category()),
            code: Some(error.code().as_str().to_owned()),
            ..Reading::new(decision, Kind::Envelope)
        }
    }

    /// A guarantee result: an unknown settlement is looked up before anything else; then a
    /// deny asks a person, a defer is looked up after its retry time, an allow continues.
    #[must_use]
    pub fn of_result<T>(result: &GuaranteeResult<T>) -> Self {
        let policy = result.policy();
        let decision = match (result.settlement(), policy.decision()) {
            (SettlementState::Unknown, _) | (_, PolicyDecision::Defer) => Decision::LookUp,
            (_, PolicyDecision::Deny) => Decision::AskPerson,
            (_, PolicyDecision::Allow) => Decision::Continue,
        };
        Reading {
            settlement: Some(result.settlement()),
            policy: Some(policy.decision()),
            policy_code: policy.code().map(|code| code.as_str().to_owned()),
            retry_at: policy.retry_at().map(format_instant),
            next_tool: result.suggested_next_tool().map(str::to_owned),
            ..Reading::new(decision, Kind::Guarantee)
        }
    }

    /// A refusal: nothing ran. A key in flight, a rate limit or an unavailable tool is
    /// retried with the same key after its retry time; any other is fixed first.
    #[must_use]
    pub fn of_refusal(refusal: &Refusal) -> Self {
        let kind = refusal.kind();
        let decision = match kind.retry_class() {
            RetryClass::AfterWaiting => Decision::Retry,
            _ => Decision::FixArguments,
        };
        Reading {
            refusal: Some(kind),
            status: Some(kind.status()),
            retry_at: refusal.retry_at().map(format_instant),
            ..Reading::new(decision, Kind::Refusal)
        }
    }

    /// A guarantee tool's answer: its result or its refusal.
    #[must_use]
    pub fn of_answer<T>(answer: &Answer<T>) -> Self {
        match answer {
            Answer::Result(result) => Reading::of_result(result),
            Answer::Refused(refusal) => Reading::of_refusal(refusal),
        }
    }

    /// A bare result document (the JSON a tool answered, out of any transport), read under
    /// the contract the document rule gives it.
    #[must_use]
    pub fn of_document(text: &str) -> Self {
        let read = match document::of(text) {
            Document::Envelope => Envelope::<JsonObject>::from_json(text)
                .map(|envelope| Reading::of_envelope(&envelope))
                .map_err(|err| err.rule() == crate::Rule::WellFormedJson),
            Document::Guarantee => GuaranteeResult::<JsonObject>::from_json(text)
                .map(|result| Reading::of_result(&result))
                .map_err(|err| err.rule() == crate::Rule::WellFormedJson),
            Document::Refusal => Refusal::from_json(text)
                .map(|refusal| Reading::of_refusal(&refusal))
                .map_err(|_| serde_json::from_str::<serde::de::IgnoredAny>(text).is_err()),
        };
        read.unwrap_or_else(|not_json| {
            // The typed reader stops at the first breach: text that is not JSON past it is
            // not JSON all the same.
            let not_json = not_json || serde_json::from_str::<serde_json::Value>(text).is_err();
            Reading::not_contract(if not_json {
                Why::NotJson
            } else {
                Why::BreaksContract
            })
        })
    }

    /// A `tools/call` result's JSON: the document it carries (its `structuredContent`, else
    /// its first text block), read as [`Reading::of_document`] reads it, with `isError`
    /// mirroring it.
    #[must_use]
    pub fn of_call_tool_result(text: &str) -> Self {
        let Ok(result) = crate::mcp::CallToolResult::from_json(text) else {
            return Reading::not_contract(
                if serde_json::from_str::<serde_json::Value>(text).is_err() {
                    Why::NotJson
                } else {
                    Why::NotAToolResult
                },
            );
        };
        let read = match result.carried_document() {
            Some(Document::Envelope) => result
                .envelope::<JsonObject>()
                .map(|envelope| Reading::of_envelope(&envelope)),
            Some(_) => result
                .answer::<JsonObject>()
                .map(|answer| Reading::of_answer(&answer)),
            None => return Reading::not_contract(Why::NotAToolResult),
        };
        read.unwrap_or_else(|_| Reading::not_contract(Why::NotAToolResult))
    }

    /// A result document or a `tools/call` result, told apart by their top-level names: an
    /// object with `content`, `structuredContent` or `isError` and no `schemaVersion` is a
    /// `tools/call` result ([`Reading::of_call_tool_result`]), anything else a document
    /// ([`Reading::of_document`]).
    ///
    /// ```
    /// use agent_tool_result::decision::{Decision, Reading};
    ///
    /// let carried = r#"{"content":[{"type":"text","text":"{\"ok\":true}"}],"isError":false}"#;
    /// assert_eq!(Reading::of_any(carried).decision(), Decision::Continue);
    /// assert_eq!(Reading::of_any(r#"{"ok":true}"#), Reading::of_call_tool_result(carried));
    /// ```
    #[must_use]
    pub fn of_any(text: &str) -> Self {
        let members = crate::document::TopMembers::of(text);
        if !members.schema_version
            && (members.content || members.structured_content || members.is_error)
        {
            Reading::of_call_tool_result(text)
        } else {
            Reading::of_document(text)
        }
    }

    /// A REST response from its parts, classified by `types` (see
    /// [`classify_with`](crate::http::classify::classify_with)). A `Retry-After` in seconds
    /// is kept as it was said (`retryAfter`), since the instant it names depends on when it
    /// was read; an HTTP-date, or the body's `retryAt`, is the reading's `retryAt`.
    #[cfg(feature = "http")]
    #[must_use]
    pub fn of_rest_parts(
        types: &crate::http::rest::ProblemTypes,
        status: http::StatusCode,
        headers: &http::HeaderMap,
        body: &[u8],
    ) -> Self {
        let outcome = crate::http::classify::classify_with(types, status, headers, body);
        let reading = Reading::of_rest(&outcome);
        let seconds = headers
            .get(http::header::RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().parse::<u64>().ok());
        match seconds {
            Some(seconds) if reading.retry_at.is_some() => Reading {
                retry_at: None,
                retry_after: Some(seconds),
                ..reading
            },
            _ => reading,
        }
    }

    /// A REST response, as [`classify`](crate::http::classify::classify) read it.
    #[cfg(feature = "http")]
    #[must_use]
    pub fn of_rest(outcome: &crate::http::RestOutcome) -> Self {
        use crate::http::RestOutcome;
        match outcome {
            RestOutcome::Settled(result) => Reading::of_result(result),
            RestOutcome::Envelope(envelope) => Reading::of_envelope(envelope),
            RestOutcome::Deferred { result, retry_at }
            | RestOutcome::PolicyDenied { result, retry_at } => Reading {
                retry_at: retry_at.map(format_instant),
                ..Reading::of_result(result)
            },
            RestOutcome::Unauthorized { .. } => {
                Reading::new(Decision::Reauthenticate, Kind::Unauthorized)
            }
            RestOutcome::InsufficientScope { scopes } => Reading {
                scopes: Some(scopes.clone()),
                ..Reading::new(Decision::StepUp, Kind::InsufficientScope)
            },
            RestOutcome::Refused { status, refusal } => Reading {
                status: Some(status.as_u16()),
                ..Reading::of_refusal(refusal)
            },
            RestOutcome::Fault { status, .. } => Reading {
                status: Some(status.as_u16()),
                ..Reading::new(Decision::FixArguments, Kind::Fault)
            },
            _ => Reading::not_contract(Why::NotAProfileResponse),
        }
    }

    /// The decision.
    #[must_use]
    pub fn decision(&self) -> Decision {
        self.decision
    }

    /// What was read.
    #[must_use]
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// An envelope's `ok`.
    #[must_use]
    pub fn ok(&self) -> Option<bool> {
        self.ok
    }

    /// An envelope failure's category.
    #[must_use]
    pub fn category(&self) -> Option<ErrorCategory> {
        self.category
    }

    /// An envelope failure's code.
    #[must_use]
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// A guarantee result's settlement.
    #[must_use]
    pub fn settlement(&self) -> Option<SettlementState> {
        self.settlement
    }

    /// A guarantee result's policy decision.
    #[must_use]
    pub fn policy(&self) -> Option<PolicyDecision> {
        self.policy
    }

    /// The policy's code, which a person asked reads.
    #[must_use]
    pub fn policy_code(&self) -> Option<&str> {
        self.policy_code.as_deref()
    }

    /// A refusal's kind.
    #[must_use]
    pub fn refusal(&self) -> Option<RefusalKind> {
        self.refusal
    }

    /// A refusal's or a fault's HTTP status.
    #[must_use]
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    /// When to call again or look up: RFC 3339 in UTC, the fraction of a second without
    /// trailing zeros.
    #[must_use]
    pub fn retry_at(&self) -> Option<&str> {
        self.retry_at.as_deref()
    }

    /// A `Retry-After` in seconds, as a REST response said it.
    #[must_use]
    pub fn retry_after(&self) -> Option<u64> {
        self.retry_after
    }

    /// The tool to call next (a lookup).
    #[must_use]
    pub fn next_tool(&self) -> Option<&str> {
        self.next_tool.as_deref()
    }

    /// The scopes to step up to.
    #[must_use]
    pub fn scopes(&self) -> Option<&[String]> {
        self.scopes.as_deref()
    }

    /// Why the answer is not a result of the contracts.
    #[must_use]
    pub fn why(&self) -> Option<Why> {
        self.why
    }

    /// The one outcome form: compact JSON, one line.
    ///
    /// # Panics
    ///
    /// Never: a reading holds only strings, numbers and names.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a reading serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_round_trips_and_an_unknown_one_says_what_is_expected() {
        for decision in Decision::ALL {
            assert_eq!(decision.as_str().parse(), Ok(decision));
        }
        for kind in Kind::ALL {
            assert_eq!(kind.as_str().parse(), Ok(kind));
        }
        for why in Why::ALL {
            assert_eq!(why.as_str().parse(), Ok(why));
        }
        let err = "Retry".parse::<Decision>().unwrap_err().to_string();
        assert!(err.contains("continue, retry, look-up"), "{err}");
    }

    #[test]
    fn a_reading_reads_back_as_written() {
        let reading = Reading::of_document(
            r#"{"schemaVersion":1,"settlement":{"state":"committed"},"policy":{"decision":"defer","code":"window","retryAt":"2026-12-05T22:39:06.500Z"},"impact":{"requested":2,"committed":1,"deferred":1},"recovery":{"suggestedNextTool":"lookup"}}"#,
        );
        assert_eq!(reading.decision(), Decision::LookUp);
        assert_eq!(reading.retry_at(), Some("2026-12-05T22:39:06.5Z"));
        assert_eq!(
            serde_json::from_str::<Reading>(&reading.to_json()).unwrap(),
            reading
        );
    }
}
