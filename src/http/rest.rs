//! The REST profile of guarantee results: a settled result answers 200, a defer or hold 202
//! (with `Retry-After` when `retryAt` is known, never `Location`), and a policy deny 422
//! `application/problem+json` whose extension members carry the same settlement, policy,
//! impact and recovery an MCP client reads (with `Retry-After` too). A policy deny is never a
//! 403, and a 200 is never labelled `problem+json`.
//!
//! | outcome | status | content type | headers |
//! |---|---|---|---|
//! | allow (settled) | 200 | `application/json` | |
//! | defer / hold | 202 | `application/json` | `Retry-After` when `retryAt` is known |
//! | policy deny | 422 | `application/problem+json` | `Retry-After` when `retryAt` is known |
//!
//! ```
//! use agent_tool_result::guarantee::{GuaranteeResult, Impact, PolicyCode};
//! use agent_tool_result::http::RestProfile;
//! use std::time::{Duration, SystemTime};
//!
//! let held: GuaranteeResult = GuaranteeResult::deferred(PolicyCode::CAMPAIGN_SEND_WINDOW)
//!     .with_impact(Impact::new().with_requested(10).with_deferred(10))?
//!     .with_retry_at(SystemTime::now() + Duration::from_secs(60))?;
//! let response = RestProfile::default().response(&held)?;
//! assert_eq!(response.status(), 202);
//! assert!(response.headers().contains_key("retry-after"));
//! assert!(!response.headers().contains_key("location"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::time::SystemTime;

use ::http::header::{CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use ::http::{Response, StatusCode};
use serde::Serialize;
use serde_json::Value;

use super::media::{APPLICATION_JSON, APPLICATION_PROBLEM_JSON, json_response};
use super::problem::Problem;
use crate::guarantee::{
    Answer, GuaranteeResult, POLICY_DENY_TYPE, PolicyDecision, Refusal, RefusalKind,
};

/// The problem types a producer answers with: the policy deny's and each refusal's, by default
/// the crate's own. One set serves both sides: the producer's [`RestProfile`] writes them and
/// the agent's [`classify_with`](super::classify::classify_with) reads them, so a producer with its own
/// type URIs is classified as it publishes them.
///
/// ```
/// use agent_tool_result::guarantee::RefusalKind;
/// use agent_tool_result::http::rest::ProblemTypes;
///
/// let types = ProblemTypes::default()
///     .with_policy_deny("https://api.example/problems/contact-policy")?
///     .with_refusal(RefusalKind::KeyMismatch, "https://api.example/problems/key-reused")?;
/// assert_eq!(types.refusal_kind("https://api.example/problems/key-reused", 422), Some(RefusalKind::KeyMismatch));
/// assert_eq!(types.refusal_kind(RefusalKind::KeyMismatch.problem_type(), 422), None);
/// // One type for two answers would leave a reader guessing: refused.
/// assert!(types.clone().with_refusal(RefusalKind::KeyInFlight, "https://api.example/problems/key-reused").is_err());
/// assert!(types.with_policy_deny("about:blank").is_err());
/// # Ok::<(), agent_tool_result::http::rest::AmbiguousProblemType>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProblemTypes {
    policy_deny: String,
    refusals: Vec<(RefusalKind, String)>,
}

impl Default for ProblemTypes {
    fn default() -> Self {
        ProblemTypes {
            policy_deny: POLICY_DENY_TYPE.to_owned(),
            refusals: RefusalKind::ALL
                .iter()
                .map(|kind| (*kind, kind.problem_type().to_owned()))
                .collect(),
        }
    }
}

/// Why a problem type cannot join a [`ProblemTypes`]: a reader could not tell from it which
/// answer it names.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("problem type `{uri}` cannot name {named}: {why}")]
pub struct AmbiguousProblemType {
    uri: String,
    named: String,
    why: String,
}

impl AmbiguousProblemType {
    /// The problem type refused.
    #[must_use]
    pub fn problem_type(&self) -> &str {
        &self.uri
    }
}

/// What a problem type in a set names: the policy deny or one kind of refusal.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Named {
    PolicyDeny,
    Refusal(RefusalKind),
}

impl std::fmt::Display for Named {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Named::PolicyDeny => f.write_str("the policy deny"),
            Named::Refusal(kind) => write!(f, "{} refusals", kind.as_str()),
        }
    }
}

impl ProblemTypes {
    /// The set with another policy-deny problem type.
    ///
    /// # Errors
    ///
    /// [`AmbiguousProblemType`] when the type is empty, `about:blank`, or already names a
    /// refusal in this set.
    pub fn with_policy_deny(
        mut self,
        problem_type: impl Into<String>,
    ) -> Result<Self, AmbiguousProblemType> {
        let problem_type = problem_type.into();
        self.check(Named::PolicyDeny, &problem_type)?;
        self.policy_deny = problem_type;
        Ok(self)
    }

    /// The set with another problem type for refusals of `kind`.
    ///
    /// # Errors
    ///
    /// [`AmbiguousProblemType`] when the type is empty, already names the policy deny or
    /// another kind of refusal in this set, or is `about:blank` for a kind its status alone
    /// does not tell (only invalid arguments, 400, and unavailable, 5xx, may be `about:blank`).
    pub fn with_refusal(
        mut self,
        kind: RefusalKind,
        problem_type: impl Into<String>,
    ) -> Result<Self, AmbiguousProblemType> {
        let problem_type = problem_type.into();
        self.check(Named::Refusal(kind), &problem_type)?;
        for (each, uri) in &mut self.refusals {
            if *each == kind {
                uri.clone_from(&problem_type);
            }
        }
        Ok(self)
    }

    /// Whether `uri` may name `named` in this set, each answer telling itself apart.
    fn check(&self, named: Named, uri: &str) -> Result<(), AmbiguousProblemType> {
        let refuse = |why: String| AmbiguousProblemType {
            uri: uri.chars().take(256).collect(),
            named: named.to_string(),
            why,
        };
        if uri.trim().is_empty() {
            return Err(refuse("a problem type is a non-empty URI".to_owned()));
        }
        if uri == crate::guarantee::ABOUT_BLANK {
            // The kinds the table itself names by status alone.
            let by_status = matches!(
                named,
                Named::Refusal(kind) if kind.problem_type() == crate::guarantee::ABOUT_BLANK
            );
            if by_status {
                return Ok(());
            }
            return Err(refuse(
                "about:blank means the status alone (RFC 9457), which tells only invalid \
                 arguments (400), rate limited (429) and unavailable (5xx) apart"
                    .to_owned(),
            ));
        }
        let others = std::iter::once((Named::PolicyDeny, self.policy_deny.as_str())).chain(
            self.refusals
                .iter()
                .map(|(kind, each)| (Named::Refusal(*kind), each.as_str())),
        );
        for (other, each) in others {
            if other != named && each == uri {
                return Err(refuse(format!(
                    "it names {other} already, and a reader could not tell the two apart"
                )));
            }
        }
        Ok(())
    }

    /// The policy deny's problem type.
    #[must_use]
    pub fn policy_deny(&self) -> &str {
        &self.policy_deny
    }

    /// The problem type of refusals of `kind`.
    #[must_use]
    pub fn refusal(&self, kind: RefusalKind) -> &str {
        self.refusals
            .iter()
            .find(|(each, _)| *each == kind)
            .map_or(kind.problem_type(), |(_, uri)| uri.as_str())
    }

    /// The refusal a problem of this type and status names: its type exactly, or for
    /// `about:blank` its status (400 invalid arguments, any 5xx unavailable).
    #[must_use]
    pub fn refusal_kind(&self, problem_type: &str, status: u16) -> Option<RefusalKind> {
        if problem_type == crate::guarantee::ABOUT_BLANK {
            return RefusalKind::from_problem(problem_type, status);
        }
        self.refusals
            .iter()
            .find(|(_, uri)| uri == problem_type)
            .map(|(kind, _)| *kind)
    }

    /// The problem of `refusal`, with this set's type for its kind.
    #[must_use]
    pub fn problem(&self, refusal: &Refusal) -> Problem {
        Problem::from(refusal).with_type(self.refusal(refusal.kind()))
    }
}

/// How `Retry-After` is written.
///
/// ```
/// use agent_tool_result::guarantee::{GuaranteeResult, PolicyCode};
/// use agent_tool_result::http::RestProfile;
/// use agent_tool_result::http::rest::RetryAfter;
/// use std::time::{Duration, SystemTime};
///
/// let denied: GuaranteeResult = GuaranteeResult::denied(PolicyCode::CONTACT_POLICY)
///     .with_retry_at(SystemTime::now() + Duration::from_secs(120))?;
/// let profile = RestProfile::default().with_retry_after(RetryAfter::DelaySeconds);
/// let response = profile.response(&denied)?;
/// let seconds: u64 = response.headers()["retry-after"].to_str()?.parse()?;
/// assert!((100..=120).contains(&seconds));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum RetryAfter {
    /// An HTTP-date (IMF-fixdate) of `retryAt`: the same bytes on every replay.
    #[default]
    HttpDate,
    /// Seconds from now until `retryAt` (0 once it has passed).
    DelaySeconds,
}

/// The REST profile's settings: the problem type of a policy deny and the `Retry-After` form.
///
/// ```
/// use agent_tool_result::guarantee::{GuaranteeResult, PolicyCode};
/// use agent_tool_result::http::RestProfile;
///
/// let denied: GuaranteeResult = GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT);
/// let response = RestProfile::default().response(&denied)?;
/// assert_eq!(response.status(), 422);
/// assert_eq!(response.headers()["content-type"], "application/problem+json");
/// let body: serde_json::Value = serde_json::from_slice(response.body())?;
/// assert_eq!(body["type"], "https://agentsfirst.ai/problems/policy-deny");
/// assert_eq!(body["policy"]["code"], "contact_opted_out");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RestProfile {
    types: ProblemTypes,
    retry_after: RetryAfter,
}

impl RestProfile {
    /// The profile with another producer's problem types.
    #[must_use]
    pub fn with_problem_types(mut self, types: ProblemTypes) -> Self {
        self.types = types;
        self
    }

    /// The problem types the profile answers with, for an agent's
    /// [`classify_with`](super::classify::classify_with).
    #[must_use]
    pub fn problem_types(&self) -> &ProblemTypes {
        &self.types
    }

    /// The profile with another `Retry-After` form.
    #[must_use]
    pub fn with_retry_after(mut self, form: RetryAfter) -> Self {
        self.retry_after = form;
        self
    }

    /// The status a result answers with: 422 for a deny, 202 for a defer, 200 otherwise. A
    /// method like [`response`](Self::response), so that a profile that answers otherwise
    /// can grow without changing its callers.
    #[must_use]
    pub fn status<T>(&self, result: &GuaranteeResult<T>) -> StatusCode {
        match result.policy().decision() {
            PolicyDecision::Deny => StatusCode::UNPROCESSABLE_ENTITY,
            PolicyDecision::Defer => StatusCode::ACCEPTED,
            PolicyDecision::Allow => StatusCode::OK,
        }
    }

    /// The response for `result`, as the table above says.
    ///
    /// # Errors
    ///
    /// When the tool's own fields do not serialize to an object, or use a contract name.
    ///
    /// # Panics
    ///
    /// Never: 422 is an error status, and a date or a number is a valid header value.
    pub fn response<T: Serialize>(
        &self,
        result: &GuaranteeResult<T>,
    ) -> Result<Response<Vec<u8>>, serde_json::Error> {
        let status = self.status(result);
        let mut response = if status == StatusCode::UNPROCESSABLE_ENTITY {
            self.deny_problem(result)?.into_http_response()
        } else {
            json_response(status, APPLICATION_JSON, result.to_json()?.into_bytes())
        };
        self.retry_after(&mut response, result.policy().retry_at());
        debug_assert!(
            (status == StatusCode::UNPROCESSABLE_ENTITY)
                == (response.headers()[CONTENT_TYPE] == APPLICATION_PROBLEM_JSON)
        );
        Ok(response)
    }

    /// The response of a result that is not a deny, whose compact JSON is `json` (as a ledger
    /// stored it): 200 or 202 with that body, as it is, and `Retry-After` when known; `None`
    /// for a deny, whose body is a problem.
    #[cfg(feature = "replay")]
    pub(crate) fn stored_response<T>(
        &self,
        result: &GuaranteeResult<T>,
        json: &str,
    ) -> Option<Response<Vec<u8>>> {
        let status = self.status(result);
        if status == StatusCode::UNPROCESSABLE_ENTITY {
            return None;
        }
        let mut response = json_response(status, APPLICATION_JSON, json.as_bytes().to_vec());
        self.retry_after(&mut response, result.policy().retry_at());
        Some(response)
    }

    /// The response for a refusal: its problem (status, this profile's type, title, detail,
    /// `retryAt`), and `Retry-After` when it says when to call again.
    ///
    /// ```
    /// use agent_tool_result::guarantee::{Refusal, RefusalKind};
    /// use agent_tool_result::http::RestProfile;
    /// use std::time::{Duration, UNIX_EPOCH};
    ///
    /// let busy = Refusal::new(RefusalKind::KeyInFlight, "the first call is still sending")
    ///     .with_retry_at(UNIX_EPOCH + Duration::from_secs(1_796_115_600))?;
    /// let response = RestProfile::default().refusal_response(&busy);
    /// assert_eq!(response.status(), 409);
    /// assert_eq!(response.headers()["retry-after"], "Tue, 01 Dec 2026 09:00:00 GMT");
    /// # Ok::<(), agent_tool_result::guarantee::InvariantError>(())
    /// ```
    #[must_use]
    pub fn refusal_response(&self, refusal: &Refusal) -> Response<Vec<u8>> {
        let mut response = self.types.problem(refusal).into_http_response();
        self.retry_after(&mut response, refusal.retry_at());
        response
    }

    /// The response for anything a guarantee tool answers: [`RestProfile::response`] for a
    /// result, [`RestProfile::refusal_response`] for a refusal.
    ///
    /// # Errors
    ///
    /// As for [`RestProfile::response`].
    pub fn answer_response<T: Serialize>(
        &self,
        answer: &Answer<T>,
    ) -> Result<Response<Vec<u8>>, serde_json::Error> {
        match answer {
            Answer::Result(result) => self.response(result),
            Answer::Refused(refusal) => Ok(self.refusal_response(refusal)),
        }
    }

    /// Sets `Retry-After` in this profile's form when `retry_at` is known.
    /// Sets `Retry-After` for `retry_at`, rounded up to the whole second the header can say,
    /// never down: an agent that waits as it says never calls before `retry_at`.
    fn retry_after(&self, response: &mut Response<Vec<u8>>, retry_at: Option<SystemTime>) {
        if let Some(retry_at) = retry_at {
            let value = match self.retry_after {
                RetryAfter::HttpDate => {
                    crate::guarantee::instant::imf_fixdate(whole_second_after(retry_at))
                }
                RetryAfter::DelaySeconds => {
                    let wait = retry_at
                        .duration_since(SystemTime::now())
                        .unwrap_or_default();
                    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).to_string()
                }
            };
            let value = HeaderValue::from_str(&value).expect("a date or a number is a header");
            response.headers_mut().insert(RETRY_AFTER, value);
        }
    }

    /// The 422 problem of a policy deny: its type, a title, `status`, a `detail` naming the
    /// code, and every field of the result as an extension member.
    fn deny_problem<T: Serialize>(
        &self,
        result: &GuaranteeResult<T>,
    ) -> Result<Problem, serde_json::Error> {
        let code = result
            .policy()
            .code()
            .map_or("unspecified", |code| code.as_str());
        let mut problem = Problem::typed(
            StatusCode::UNPROCESSABLE_ENTITY,
            self.types.policy_deny(),
            "Policy denied the command",
        )
        .expect("422 is an error status")
        .with_detail(format!(
            "policy denied the command before any provider call ({code}); do not \
             re-authenticate: honour retryAt or change the request"
        ));
        if let Value::Object(members) = serde_json::to_value(result)? {
            for (name, value) in members {
                // Building refuses a tool field of a standard member's name; one that reached
                // here anyway (read from elsewhere) fails loudly rather than be dropped.
                problem = problem
                    .with_extension(name, value)
                    .map_err(serde::ser::Error::custom)?;
            }
        }
        Ok(problem)
    }
}

/// `at`, or the first whole second after it when it falls within one.
fn whole_second_after(at: SystemTime) -> SystemTime {
    let fraction = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| since.subsec_nanos());
    if fraction == 0 {
        at
    } else {
        at + std::time::Duration::from_nanos(u64::from(1_000_000_000 - fraction))
    }
}
