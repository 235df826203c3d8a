//! Refusals: what a guarantee tool answers when it does not run the call at all, and
//! [`Answer`], everything a guarantee tool can answer.
//!
//! A refusal is decided before the tool's own logic: nothing was sent, nothing was decided by
//! policy, and the call may be made again once its cause is fixed. Its wire form is the RFC 9457
//! problem REST answers with, the same object over every transport: REST sends it as an
//! `application/problem+json` body with its status (and `Retry-After`); MCP sends it as the
//! `structuredContent` of a result with `isError: true`, which the guarantee tool's
//! `outputSchema` admits beside the guarantee result. One table says, for every
//! [`RefusalKind`], its status, problem type, title and what an agent does next.
//!
//! ```
//! use agent_tool_result::guarantee::{Refusal, RefusalKind};
//!
//! let refused = Refusal::new(RefusalKind::KeyMissing, "send_sms needs an idempotencyKey");
//! assert_eq!(
//!     refused.to_json(),
//!     r#"{"type":"https://agentsfirst.ai/problems/idempotency-key-missing","title":"An Idempotency-Key is required","status":400,"detail":"send_sms needs an idempotencyKey"}"#,
//! );
//! let read = Refusal::from_json(&refused.to_json())?;
//! assert_eq!(read, refused);
//! # Ok::<(), agent_tool_result::guarantee::NotARefusal>(())
//! ```

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime};

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use super::instant::{self, Rfc3339};
use super::invariant::InvariantError;
use super::result::GuaranteeResult;
use crate::breach::Breach;
use crate::category::RetryClass;

/// The problem type of a policy deny, by default (REST answers it as a 422 problem).
pub const POLICY_DENY_TYPE: &str = "https://agentsfirst.ai/problems/policy-deny";

/// The problem type RFC 9457 gives a problem with no meaning beyond its status.
pub const ABOUT_BLANK: &str = "about:blank";

/// Declares the refusal kinds and their table in one place.
macro_rules! refusals {
    ($( $(#[$doc:meta])* $variant:ident = $wire:literal, $status:literal, $type_uri:expr,
        $title:literal, $retry:ident, next: $next:literal; )+) => {
        /// Why a guarantee tool refused a call without running it: one table of status,
        /// problem type, title, retry class and next step.
        ///
        /// ```
        /// use agent_tool_result::guarantee::RefusalKind;
        /// use agent_tool_result::category::RetryClass;
        ///
        /// let kind: RefusalKind = "key-in-flight".parse()?;
        /// assert_eq!(kind.status(), 409);
        /// assert_eq!(kind.problem_type(), "https://agentsfirst.ai/problems/idempotency-key-in-flight");
        /// assert_eq!(kind.retry_class(), RetryClass::AfterWaiting);
        /// # Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum RefusalKind {
            $( $(#[$doc])* $variant, )+
        }

        impl RefusalKind {
            /// Every kind, in table order.
            pub const ALL: [RefusalKind; [$($wire),+].len()] = [$(RefusalKind::$variant),+];

            /// The short name, as `FromStr` reads it.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self { $( RefusalKind::$variant => $wire, )+ }
            }

            /// The HTTP status of its problem (the `status` member over every transport).
            #[must_use]
            pub const fn status(self) -> u16 {
                match self { $( RefusalKind::$variant => $status, )+ }
            }

            /// The problem type URI, by default.
            #[must_use]
            pub const fn problem_type(self) -> &'static str {
                match self { $( RefusalKind::$variant => $type_uri, )+ }
            }

            /// The problem title.
            #[must_use]
            pub const fn title(self) -> &'static str {
                match self { $( RefusalKind::$variant => $title, )+ }
            }

            /// Whether, and after what, the agent may call again.
            #[must_use]
            pub const fn retry_class(self) -> RetryClass {
                match self { $( RefusalKind::$variant => RetryClass::$retry, )+ }
            }

            /// What an agent does next.
            #[must_use]
            pub const fn next_step(self) -> &'static str {
                match self { $( RefusalKind::$variant => $next, )+ }
            }
        }

        impl FromStr for RefusalKind {
            type Err = UnknownRefusalKind;

            fn from_str(s: &str) -> Result<Self, UnknownRefusalKind> {
                match s {
                    $( $wire => Ok(RefusalKind::$variant), )+
                    _ => Err(UnknownRefusalKind(s.chars().take(64).collect())),
                }
            }
        }
    };
}

refusals! {
    /// A guarantee call without an idempotency key.
    KeyMissing = "key-missing", 400,
        "https://agentsfirst.ai/problems/idempotency-key-missing",
        "An Idempotency-Key is required", AfterChangingRequest,
        next: "call again with an idempotency key (a new one for a new command)";
    /// The key is not an sf-string of at most 255 printable ASCII characters.
    KeyInvalid = "key-invalid", 400,
        "https://agentsfirst.ai/problems/idempotency-key-invalid",
        "The Idempotency-Key is malformed", AfterChangingRequest,
        next: "call again with a key of 1 to 255 printable ASCII characters";
    /// The key was used before with another payload.
    KeyMismatch = "key-mismatch", 422,
        "https://agentsfirst.ai/problems/idempotency-key-mismatch",
        "The Idempotency-Key was used with another request", AfterChangingRequest,
        next: "send the first request again to read its result, or use a new key for a new command";
    /// The first request with the key is still running.
    KeyInFlight = "key-in-flight", 409,
        "https://agentsfirst.ai/problems/idempotency-key-in-flight",
        "A request with this Idempotency-Key is in progress", AfterWaiting,
        next: "wait (until retryAt when given), then send the same request with the same key";
    /// The arguments do not fit the tool: refused before any policy decision.
    InvalidArguments = "invalid-arguments", 400, ABOUT_BLANK, "Bad Request",
        AfterChangingRequest,
        next: "fix the arguments the detail names, then call again";
    /// The tool cannot answer now (its store failed or is gone); nothing was sent.
    Unavailable = "unavailable", 503, ABOUT_BLANK, "Service Unavailable", AfterWaiting,
        next: "wait (until retryAt when given), then send the same request with the same key";
    /// The caller's account made more calls than its rate limit admits; nothing ran.
    RateLimited = "rate-limited", 429, ABOUT_BLANK, "Too Many Requests", AfterWaiting,
        next: "wait until retryAt (Retry-After), then send the same request with the same key";
}

impl RefusalKind {
    /// The kind a problem names: its type exactly, or for `about:blank` its status (400 is
    /// [`RefusalKind::InvalidArguments`], 429 [`RefusalKind::RateLimited`], any 5xx
    /// [`RefusalKind::Unavailable`]).
    #[must_use]
    pub fn from_problem(problem_type: &str, status: u16) -> Option<Self> {
        if problem_type == ABOUT_BLANK {
            return match status {
                400 => Some(RefusalKind::InvalidArguments),
                429 => Some(RefusalKind::RateLimited),
                500..=599 => Some(RefusalKind::Unavailable),
                _ => None,
            };
        }
        RefusalKind::ALL
            .into_iter()
            .find(|kind| kind.problem_type() == problem_type)
    }

    /// Whether the refusal is over the call's idempotency key.
    #[must_use]
    pub const fn is_key_problem(self) -> bool {
        matches!(
            self,
            RefusalKind::KeyMissing
                | RefusalKind::KeyInvalid
                | RefusalKind::KeyMismatch
                | RefusalKind::KeyInFlight
        )
    }
}

impl fmt::Display for RefusalKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Written as its short name (`key-in-flight`).
impl Serialize for RefusalKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for RefusalKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// The error for a name that is not a [`RefusalKind`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown refusal kind `{0}`: expected key-missing, key-invalid, key-mismatch, \
     key-in-flight, invalid-arguments, unavailable or rate-limited"
)]
pub struct UnknownRefusalKind(String);

/// A guarantee tool's refusal of a call it did not run: the kind, the occurrence's detail and,
/// when known, when to call again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    kind: RefusalKind,
    detail: String,
    retry_at: Option<SystemTime>,
}

impl Refusal {
    /// A refusal of `kind`, with `detail` explaining this occurrence.
    #[must_use]
    pub fn new(kind: RefusalKind, detail: impl Into<String>) -> Self {
        Refusal {
            kind,
            detail: detail.into(),
            retry_at: None,
        }
    }

    /// Arguments that do not fit the tool.
    #[must_use]
    pub fn invalid_arguments(detail: impl Into<String>) -> Self {
        Refusal::new(RefusalKind::InvalidArguments, detail)
    }

    /// The tool cannot answer now; nothing was sent.
    #[must_use]
    pub fn unavailable(detail: impl Into<String>) -> Self {
        Refusal::new(RefusalKind::Unavailable, detail)
    }

    /// Sets when to call again (`retryAt`, and `Retry-After` over REST).
    ///
    /// # Errors
    ///
    /// [`InvariantError`] (rule `guarantee-retry-at-form`) when `retry_at` falls outside the
    /// years 0000 to 9999, which RFC 3339 writes and every reader reads back.
    pub fn with_retry_at(mut self, retry_at: SystemTime) -> Result<Self, InvariantError> {
        if !instant::in_range(retry_at) {
            return Err(InvariantError::of(Breach::RetryAtOutOfRange));
        }
        self.retry_at = Some(retry_at);
        Ok(self)
    }

    /// Sets when to call again to `delay` from now: what a busy or failing tool says most
    /// often, and never out of range (a delay past the year 9999 waits until its end).
    ///
    /// ```
    /// use agent_tool_result::guarantee::Refusal;
    /// use std::time::{Duration, SystemTime};
    ///
    /// let refused = Refusal::unavailable("the store is down").with_retry_after(Duration::from_secs(2));
    /// assert!(refused.retry_at().unwrap() > SystemTime::now());
    /// let patient = Refusal::unavailable("down for good").with_retry_after(Duration::MAX);
    /// assert!(Refusal::from_json(&patient.to_json()).is_ok());
    /// ```
    #[must_use]
    pub fn with_retry_after(self, delay: Duration) -> Self {
        let at = SystemTime::now()
            .checked_add(delay)
            .unwrap_or_else(instant::last);
        self.with_retry_near(at)
    }

    /// Sets when to call again, moved into the years 0000 to 9999 when it falls outside them:
    /// for the times the crate reads or derives itself (a far `Retry-After`, now plus a delay).
    #[must_use]
    pub(crate) fn with_retry_near(mut self, retry_at: SystemTime) -> Self {
        self.retry_at = Some(instant::clamped(retry_at));
        self
    }

    /// The kind.
    #[must_use]
    pub fn kind(&self) -> RefusalKind {
        self.kind
    }

    /// This occurrence's explanation.
    #[must_use]
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// When to call again, if known.
    #[must_use]
    pub fn retry_at(&self) -> Option<SystemTime> {
        self.retry_at
    }

    /// The compact problem JSON, with the default problem type: `type`, `title`, `status`,
    /// `detail`, `retryAt`.
    ///
    /// # Panics
    ///
    /// Never: a refusal is strings and a number.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a refusal serializes")
    }

    /// Reads a refusal from problem JSON: `type`, `title` and `status` name a [`RefusalKind`]
    /// (by its default type); `detail` and `retryAt` are kept, other members ignored, though
    /// read as JSON (a number beyond a double's range in one, which I-JSON and every other
    /// reader of this crate refuse, makes the text no refusal). A document the one rule of
    /// [`document`](crate::document) calls a guarantee result (it has a `schemaVersion`) or an
    /// envelope (it has an `ok`) is not a refusal, whatever else it holds.
    ///
    /// ```
    /// use agent_tool_result::guarantee::Refusal;
    ///
    /// let problem = r#"{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"d""#;
    /// assert!(Refusal::from_json(&format!("{problem},\"x\":1}}")).is_ok());
    /// assert!(Refusal::from_json(&format!("{problem},\"x\":1e400}}")).is_err());
    /// // A member the problem defines, given twice, is refused as before.
    /// assert!(Refusal::from_json(&format!("{problem},\"status\":503}}")).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`NotARefusal`] when the text is not such a problem.
    pub fn from_json(json: &str) -> Result<Self, NotARefusal> {
        routed(crate::document::of(json))?;
        let wire: Wire = serde_json::from_str(json).map_err(|err| NotARefusal(err.to_string()))?;
        wire.refusal()
    }

    /// [`Refusal::from_json`] from a parsed value.
    ///
    /// # Errors
    ///
    /// [`NotARefusal`] when the value is not such a problem.
    pub fn from_value(value: &serde_json::Value) -> Result<Self, NotARefusal> {
        routed(crate::document::of_value(value))?;
        let wire = Wire::deserialize(value).map_err(|err| NotARefusal(err.to_string()))?;
        wire.refusal()
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.kind.title(), self.kind, self.detail)
    }
}

impl Serialize for Refusal {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_map(None)?;
        out.serialize_entry("type", self.kind.problem_type())?;
        out.serialize_entry("title", self.kind.title())?;
        out.serialize_entry("status", &self.kind.status())?;
        out.serialize_entry("detail", &self.detail)?;
        if let Some(retry_at) = self.retry_at {
            out.serialize_entry("retryAt", &Rfc3339(retry_at))?;
        }
        out.end()
    }
}

/// The error for a document that is not a refusal.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a refusal problem: {0}")]
pub struct NotARefusal(String);

/// Whether the one document rule routes a document to the refusal reader.
pub(crate) fn routed(document: crate::document::Document) -> Result<(), NotARefusal> {
    use crate::document::Document;
    match document {
        Document::Refusal => Ok(()),
        Document::Guarantee => Err(NotARefusal(
            "it has a schemaVersion, so it is a guarantee result, not a refusal".to_owned(),
        )),
        Document::Envelope => Err(NotARefusal(
            "it is not a problem without `ok` that has a type and a status, so it is an \
             envelope, not a refusal"
                .to_owned(),
        )),
    }
}

/// A refusal's problem as read: `title` must be there (RFC 9457 and the output schema require
/// it) though the kind's table, not the text, gives a refusal its title.
#[derive(Deserialize)]
struct Wire {
    #[serde(rename = "type")]
    type_uri: String,
    #[serde(rename = "title")]
    _title: String,
    status: u16,
    #[serde(default)]
    detail: Option<String>,
    #[serde(default, rename = "retryAt")]
    retry_at: Option<String>,
    /// The problem's extension members, read as JSON values (their numbers within a
    /// double's range) and passed over.
    #[serde(flatten)]
    _extensions: serde_json::Map<String, serde_json::Value>,
}

impl Wire {
    fn refusal(self) -> Result<Refusal, NotARefusal> {
        let kind = RefusalKind::from_problem(&self.type_uri, self.status).ok_or_else(|| {
            NotARefusal(format!(
                "type `{}` with status {} names no refusal",
                self.type_uri, self.status
            ))
        })?;
        if kind.problem_type() != ABOUT_BLANK && kind.status() != self.status {
            return Err(NotARefusal(format!(
                "type `{}` answers {}, not {}",
                self.type_uri,
                kind.status(),
                self.status
            )));
        }
        let retry_at = match self.retry_at {
            Some(text) => Some(instant::parse(&text).ok_or_else(|| {
                NotARefusal(format!("retryAt `{text}` is not an RFC 3339 UTC instant"))
            })?),
            None => None,
        };
        Ok(Refusal {
            kind,
            detail: self.detail.unwrap_or_default(),
            retry_at,
        })
    }
}

/// Everything a guarantee tool can answer: its result (allow, defer, deny or unknown), or a
/// refusal of the call. Over MCP both are the `structuredContent` its `outputSchema` admits;
/// over REST the result keeps the REST profile and the refusal is its problem.
///
/// ```
/// use agent_tool_result::guarantee::{Answer, GuaranteeResult, PolicyCode, Refusal, RefusalKind};
/// use agent_tool_result::mcp::CallToolResult;
///
/// // One tool function answers results and refusals as one type.
/// fn send(to: Option<&str>) -> Answer {
///     match to {
///         None => Refusal::invalid_arguments("`to` is required").into(),
///         Some("+15550100") => GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT).into(),
///         Some(_) => Answer::Result(GuaranteeResult::committed()),
///     }
/// }
/// assert_eq!(send(None).refusal().map(Refusal::kind), Some(RefusalKind::InvalidArguments));
/// assert!(send(Some("+15550100")).result().is_some_and(GuaranteeResult::is_deny));
/// // Over MCP, every answer is a tool result; a refusal and a deny have isError: true.
/// assert!(CallToolResult::from_answer(&send(None))?.is_error());
/// assert!(!CallToolResult::from_answer(&send(Some("+15550199")))?.is_error());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Answer<T = crate::JsonObject> {
    /// The tool ran (or replayed) and answers its result.
    Result(GuaranteeResult<T>),
    /// The tool refused the call without running it.
    Refused(Refusal),
}

impl<T> From<GuaranteeResult<T>> for Answer<T> {
    fn from(result: GuaranteeResult<T>) -> Self {
        Answer::Result(result)
    }
}

impl<T> From<Refusal> for Answer<T> {
    fn from(refusal: Refusal) -> Self {
        Answer::Refused(refusal)
    }
}

impl<T> Answer<T> {
    /// Whether an MCP client sees `isError: true`: a policy deny, or any refusal.
    #[must_use]
    pub fn is_error(&self) -> bool {
        match self {
            Answer::Result(result) => result.is_deny(),
            Answer::Refused(_) => true,
        }
    }

    /// The result, if the tool ran.
    #[must_use]
    pub fn result(&self) -> Option<&GuaranteeResult<T>> {
        match self {
            Answer::Result(result) => Some(result),
            Answer::Refused(_) => None,
        }
    }

    /// The refusal, if the tool refused.
    #[must_use]
    pub fn refusal(&self) -> Option<&Refusal> {
        match self {
            Answer::Result(_) => None,
            Answer::Refused(refusal) => Some(refusal),
        }
    }
}

impl<T: Serialize> Answer<T> {
    /// The compact JSON of the answer: the guarantee result, or the refusal's problem.
    ///
    /// # Errors
    ///
    /// When the result's own fields do not serialize to an object.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        match self {
            Answer::Result(result) => result.to_json(),
            Answer::Refused(refusal) => Ok(refusal.to_json()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_consistent() {
        for kind in RefusalKind::ALL {
            assert_eq!(kind.as_str().parse::<RefusalKind>(), Ok(kind));
            assert_eq!(
                RefusalKind::from_problem(kind.problem_type(), kind.status()),
                Some(kind)
            );
            assert!((400..600).contains(&kind.status()));
            assert_ne!(kind.problem_type(), POLICY_DENY_TYPE);
            let refusal = Refusal::new(kind, "why")
                .with_retry_at(SystemTime::UNIX_EPOCH)
                .unwrap();
            assert_eq!(Refusal::from_json(&refusal.to_json()), Ok(refusal));
        }
        assert!("deny".parse::<RefusalKind>().is_err());
        assert_eq!(RefusalKind::from_problem(ABOUT_BLANK, 404), None);
    }
}
