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

use std::time::SystemTime;

use ::http::header::{CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use ::http::{Response, StatusCode};
use serde::Serialize;
use serde_json::Value;

use super::{APPLICATION_JSON, APPLICATION_PROBLEM_JSON, Problem};
use crate::guarantee::{GuaranteeResult, PolicyDecision};

/// The problem type of a policy deny, by default.
pub const POLICY_DENY_TYPE: &str = "https://agentsfirst.ai/problems/policy-deny";

/// How `Retry-After` is written.
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
/// let denied = GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT);
/// let response = RestProfile::default().response(&denied)?;
/// assert_eq!(response.status(), 422);
/// assert_eq!(response.headers()["content-type"], "application/problem+json");
/// let body: serde_json::Value = serde_json::from_slice(response.body())?;
/// assert_eq!(body["type"], "https://agentsfirst.ai/problems/policy-deny");
/// assert_eq!(body["policy"]["code"], "contact_opted_out");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestProfile {
    problem_type: String,
    retry_after: RetryAfter,
}

impl Default for RestProfile {
    fn default() -> Self {
        RestProfile {
            problem_type: POLICY_DENY_TYPE.to_owned(),
            retry_after: RetryAfter::HttpDate,
        }
    }
}

impl RestProfile {
    /// The profile with another producer's policy-deny problem type.
    #[must_use]
    pub fn with_problem_type(mut self, problem_type: impl Into<String>) -> Self {
        self.problem_type = problem_type.into();
        self
    }

    /// The profile with another `Retry-After` form.
    #[must_use]
    pub fn with_retry_after(mut self, form: RetryAfter) -> Self {
        self.retry_after = form;
        self
    }

    /// The status a result answers with: 422 for a deny, 202 for a defer, 200 otherwise.
    #[must_use]
    pub fn status<T>(result: &GuaranteeResult<T>) -> StatusCode {
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
        let status = RestProfile::status(result);
        let mut response = if status == StatusCode::UNPROCESSABLE_ENTITY {
            self.deny_problem(result)?.into_response()
        } else {
            super::json_response(status, APPLICATION_JSON, result.to_json()?.into_bytes())
        };
        if let Some(retry_at) = result.policy().retry_at() {
            let value = match self.retry_after {
                RetryAfter::HttpDate => crate::guarantee::instant::imf_fixdate(retry_at),
                RetryAfter::DelaySeconds => retry_at
                    .duration_since(SystemTime::now())
                    .unwrap_or_default()
                    .as_secs()
                    .to_string(),
            };
            let value = HeaderValue::from_str(&value).expect("a date or a number is a header");
            response.headers_mut().insert(RETRY_AFTER, value);
        }
        debug_assert!(
            (status == StatusCode::UNPROCESSABLE_ENTITY)
                == (response.headers()[CONTENT_TYPE] == APPLICATION_PROBLEM_JSON)
        );
        Ok(response)
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
            self.problem_type.clone(),
            "Policy denied the command",
        )
        .expect("422 is an error status")
        .with_detail(format!(
            "policy denied the command before any provider call ({code}); do not \
             re-authenticate: honour retryAt or change the request"
        ));
        if let Value::Object(members) = serde_json::to_value(result)? {
            for (name, value) in members {
                problem = problem.with_extension(name, value);
            }
        }
        Ok(problem)
    }
}
