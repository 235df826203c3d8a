//! The agent's side of the REST profile: what a response means and what to do next.
//!
//! The problem `type` and the `Content-Type` are authoritative, not the status line alone: a
//! 403 whose body is a policy-deny problem is a policy deny (do not reconnect OAuth), and a
//! pre-GA opaque `{ ok: false, ... }` body is recognized and reported as such.

use std::time::SystemTime;

use ::http::header::{CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use ::http::{HeaderMap, Response, StatusCode};
use serde_json::Value;

use super::{KeyProblem, POLICY_DENY_TYPE};
use crate::JsonObject;
use crate::guarantee::{GuaranteeResult, PolicyDecision};

/// What a REST response from a guarantee tool means to an agent.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum RestOutcome {
    /// A settled result (200): read its settlement and impact.
    Settled(GuaranteeResult),
    /// Deferred or held (202): wait until the retry time, then look the operation up by id.
    Deferred {
        /// The result.
        result: GuaranteeResult,
        /// When to try again (`Retry-After`, else `retryAt`), if known.
        retry_at: Option<SystemTime>,
    },
    /// Denied by policy (422, or any status whose body is a policy-deny problem): do not
    /// re-authenticate; honour the retry time or change the request.
    PolicyDenied {
        /// The guarantee fields the problem carries.
        result: GuaranteeResult,
        /// When to try again, if known.
        retry_at: Option<SystemTime>,
    },
    /// 401: re-authenticate.
    Unauthorized {
        /// The Bearer challenge's `error`, when the server named one (`invalid_token`).
        error: Option<String>,
        /// The protected resource metadata URL (RFC 9728), when given.
        resource_metadata: Option<String>,
    },
    /// 403 `insufficient_scope`: step up with these scopes.
    InsufficientScope {
        /// The scopes the challenge names.
        scopes: Vec<String>,
    },
    /// The producer refused the call over its idempotency key: missing or malformed (400),
    /// used with another payload (422), or its first request still running (409).
    KeyRefused(KeyProblem),
    /// Not a response of the contract, with why.
    NotContract {
        /// What is wrong.
        why: String,
    },
}

/// Classifies a response.
///
/// ```
/// use agent_tool_result::guarantee::{GuaranteeResult, PolicyCode};
/// use agent_tool_result::http::{RestOutcome, RestProfile, classify};
///
/// let denied = GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT);
/// let response = RestProfile::default().response(&denied)?;
/// assert!(matches!(classify(&response), RestOutcome::PolicyDenied { .. }));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[must_use]
pub fn classify<B: AsRef<[u8]>>(response: &Response<B>) -> RestOutcome {
    classify_parts(
        response.status(),
        response.headers(),
        response.body().as_ref(),
    )
}

/// [`classify`] from a response's raw parts.
#[must_use]
pub fn classify_parts(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> RestOutcome {
    let content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default();
    let json: Option<Value> = serde_json::from_slice(body).ok();
    let problem_type = json
        .as_ref()
        .filter(|_| content_type == "application/problem+json")
        .and_then(|body| body.get("type"))
        .and_then(Value::as_str);
    let retry_after = headers
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after);
    // The problem type is authoritative, whatever the status line says.
    if problem_type == Some(POLICY_DENY_TYPE) {
        let members = json.unwrap_or_default();
        return match guarantee_members(&members) {
            Ok(result) if result.is_deny() => RestOutcome::PolicyDenied {
                retry_at: retry_after.or_else(|| result.policy().retry_at()),
                result,
            },
            Ok(_) => not_contract("a policy-deny problem whose decision is not deny"),
            Err(why) => not_contract(&format!(
                "a policy-deny problem without valid guarantee members: {why}"
            )),
        };
    }
    if let Some(refused) = problem_type.and_then(KeyProblem::from_problem_type) {
        return RestOutcome::KeyRefused(refused);
    }
    if let Some(body) = &json
        && body.get("ok") == Some(&Value::Bool(false))
        && body.get("schemaVersion").is_none()
    {
        return not_contract(
            "a pre-GA opaque { ok: false, ... } body: read the problem type and Content-Type \
             of a current producer instead of guessing from the status",
        );
    }
    let challenges = headers
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(parse_challenges)
        .filter(|c| c.scheme.eq_ignore_ascii_case("bearer"))
        .collect::<Vec<_>>();
    match status.as_u16() {
        401 => {
            if challenges.is_empty() {
                return not_contract("a 401 without a Bearer WWW-Authenticate challenge");
            }
            let param = |name: &str| challenges.iter().find_map(|c| c.param(name));
            RestOutcome::Unauthorized {
                error: param("error"),
                resource_metadata: param("resource_metadata"),
            }
        }
        403 => match challenges
            .iter()
            .find(|c| c.param("error").as_deref() == Some("insufficient_scope"))
        {
            Some(challenge) => RestOutcome::InsufficientScope {
                scopes: challenge
                    .param("scope")
                    .map(|s| s.split_whitespace().map(str::to_owned).collect())
                    .unwrap_or_default(),
            },
            None => {
                not_contract("a 403 that is neither insufficient_scope nor a policy-deny problem")
            }
        },
        200 | 202 => classify_success(status, &content_type, headers, json, retry_after),
        other => not_contract(&format!("status {other} is not one of the REST profile's")),
    }
}

/// A 200 or a 202: a settled result, or a defer without a task monitor.
fn classify_success(
    status: StatusCode,
    content_type: &str,
    headers: &HeaderMap,
    json: Option<Value>,
    retry_after: Option<SystemTime>,
) -> RestOutcome {
    if content_type == "application/problem+json" {
        return not_contract("a success labelled application/problem+json");
    }
    let Some(body) = json else {
        return not_contract("a body that is not JSON");
    };
    match guarantee_members(&body) {
        Ok(result) if status == StatusCode::ACCEPTED => {
            if result.policy().decision() != PolicyDecision::Defer {
                return not_contract("a 202 whose decision is not defer");
            }
            if headers.contains_key(::http::header::LOCATION) {
                return not_contract("a 202 with Location: a defer has no task monitor");
            }
            RestOutcome::Deferred {
                retry_at: retry_after.or_else(|| result.policy().retry_at()),
                result,
            }
        }
        Ok(result) if result.policy().decision() == PolicyDecision::Allow => {
            RestOutcome::Settled(result)
        }
        Ok(_) => not_contract("a 200 whose decision is not allow"),
        Err(why) => not_contract(&format!("not a guarantee result: {why}")),
    }
}

/// A way a response breaks the REST profile that [`classify`] reads past, because the
/// problem type is authoritative: the agent still learns the outcome, but the producer is
/// wrong. A producer's CI checks its captured responses with [`profile_breaches`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileBreach {
    /// A problem's `status` member is not the HTTP status (RFC 9457 section 3.1.2).
    #[error("the problem's status member {member} differs from the HTTP status {status}")]
    ProblemStatus {
        /// The `status` member.
        member: i64,
        /// The HTTP status.
        status: u16,
    },
    /// A policy deny answered with another status than 422 (a 403 sends agents to
    /// re-authenticate).
    #[error("a policy deny answered {status}, not 422")]
    DenyStatus {
        /// The HTTP status.
        status: u16,
    },
    /// An idempotency-key problem under another status than its own.
    #[error("the key problem `{problem}` answered {status}, not {}", .problem.status().as_u16())]
    KeyProblemStatus {
        /// The key problem its type names.
        problem: KeyProblem,
        /// The HTTP status.
        status: u16,
    },
    /// The response is not one of the profile's at all.
    #[error("{0}")]
    NotContract(String),
}

/// Every way a response breaks the REST profile: what [`classify_parts`] reports as
/// [`RestOutcome::NotContract`], and what it reads past (a problem whose `status` member
/// differs from the HTTP status, a policy deny or a key problem under the wrong status).
/// Empty when the response keeps the profile.
///
/// ```
/// use agent_tool_result::http::{ProfileBreach, profile_breaches};
/// use http::{HeaderMap, StatusCode, header::CONTENT_TYPE};
///
/// let mut headers = HeaderMap::new();
/// headers.insert(CONTENT_TYPE, "application/problem+json".parse().unwrap());
/// let body = br#"{"type":"https://agentsfirst.ai/problems/idempotency-key-in-flight","title":"t","status":409}"#;
/// assert!(profile_breaches(StatusCode::CONFLICT, &headers, body).is_empty());
/// assert_eq!(
///     profile_breaches(StatusCode::BAD_REQUEST, &headers, body)[0],
///     ProfileBreach::ProblemStatus { member: 409, status: 400 },
/// );
/// ```
#[must_use]
pub fn profile_breaches(
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
) -> Vec<ProfileBreach> {
    let mut breaches = Vec::new();
    let outcome = classify_parts(status, headers, body);
    let code = status.as_u16();
    let is_problem = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/problem+json"));
    if is_problem
        && let Ok(Value::Object(problem)) = serde_json::from_slice::<Value>(body)
        && let Some(member) = problem.get("status")
        && member.as_i64() != Some(i64::from(code))
    {
        breaches.push(ProfileBreach::ProblemStatus {
            member: member.as_i64().unwrap_or(-1),
            status: code,
        });
    }
    match outcome {
        RestOutcome::PolicyDenied { .. } if status != StatusCode::UNPROCESSABLE_ENTITY => {
            breaches.push(ProfileBreach::DenyStatus { status: code });
        }
        RestOutcome::KeyRefused(problem) if problem.status() != status => {
            breaches.push(ProfileBreach::KeyProblemStatus {
                problem,
                status: code,
            });
        }
        RestOutcome::NotContract { why } => breaches.push(ProfileBreach::NotContract(why)),
        _ => {}
    }
    breaches
}

fn not_contract(why: &str) -> RestOutcome {
    RestOutcome::NotContract {
        why: why.to_owned(),
    }
}

/// The guarantee result in a body, problem members (`type`, `title`, `status`, `detail`,
/// `instance`) left out.
fn guarantee_members(body: &Value) -> Result<GuaranteeResult, String> {
    let mut members: JsonObject = body.as_object().cloned().unwrap_or_default();
    for problem in ["type", "title", "status", "detail", "instance"] {
        members.remove(problem);
    }
    GuaranteeResult::from_value(&Value::Object(members)).map_err(|err| err.to_string())
}

/// `Retry-After`: delay-seconds, or an HTTP-date in any of its three forms (RFC 9110
/// section 10.2.3).
pub(crate) fn parse_retry_after(value: &str) -> Option<SystemTime> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        let seconds: u64 = value.parse().ok()?;
        return SystemTime::now().checked_add(std::time::Duration::from_secs(seconds));
    }
    httpdate::parse_http_date(value).ok()
}

/// One challenge of a `WWW-Authenticate` header: its scheme and its parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Challenge {
    pub(crate) scheme: String,
    params: Vec<(String, String)>,
}

impl Challenge {
    fn param(&self, name: &str) -> Option<String> {
        self.params
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.clone())
    }
}

/// The challenges of one `WWW-Authenticate` value (RFC 9110 section 11.6.1): several may
/// share a line, parameters are tokens or quoted strings with `\` escapes.
pub(crate) fn parse_challenges(value: &str) -> Vec<Challenge> {
    let mut out: Vec<Challenge> = Vec::new();
    let bytes = value.as_bytes();
    let mut i = 0;
    let skip = |i: &mut usize, what: &[u8]| {
        while *i < bytes.len() && what.contains(&bytes[*i]) {
            *i += 1;
        }
    };
    let token = |i: &mut usize| -> String {
        let start = *i;
        while *i < bytes.len() && !b" \t,=\"".contains(&bytes[*i]) {
            *i += 1;
        }
        value[start..*i].to_owned()
    };
    while i < bytes.len() {
        skip(&mut i, b" \t,");
        let word = token(&mut i);
        if word.is_empty() {
            if i < bytes.len() {
                i += 1; // a stray quote or `=`
            }
            continue;
        }
        skip(&mut i, b" \t");
        if i < bytes.len() && bytes[i] == b'=' {
            // A parameter of the current challenge (or token68 padding).
            i += 1;
            skip(&mut i, b" \t=");
            let param_value = if i < bytes.len() && bytes[i] == b'"' {
                i += 1;
                let mut text = String::new();
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' && i + 1 < bytes.len() {
                        i += 1;
                    }
                    let c = value[i..].chars().next().unwrap_or('?');
                    text.push(c);
                    i += c.len_utf8();
                }
                i += 1;
                text
            } else {
                token(&mut i)
            };
            if let Some(challenge) = out.last_mut() {
                challenge.params.push((word, param_value));
            }
        } else {
            out.push(Challenge {
                scheme: word,
                params: Vec::new(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_with_quotes_escapes_and_several_per_line() {
        let parsed = parse_challenges(
            r#"Basic realm="x", Bearer realm="tools \"main\"", error="insufficient_scope", scope="a b", resource_metadata="https://r.example/.well-known/oauth-protected-resource""#,
        );
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed[0].scheme, "Basic");
        assert_eq!(parsed[1].param("realm").as_deref(), Some(r#"tools "main""#));
        assert_eq!(parsed[1].param("scope").as_deref(), Some("a b"));
        assert!(parsed[1].param("resource_metadata").is_some());
        assert_eq!(parse_challenges("Bearer").len(), 1);
        assert_eq!(
            parse_challenges("Bearer error=invalid_token")[0]
                .param("error")
                .as_deref(),
            Some("invalid_token")
        );
    }

    #[test]
    fn retry_after_in_every_form() {
        let imf = parse_retry_after("Tue, 01 Dec 2026 09:00:00 GMT").unwrap();
        let rfc850 = parse_retry_after("Tuesday, 01-Dec-26 09:00:00 GMT").unwrap();
        let asctime = parse_retry_after("Tue Dec  1 09:00:00 2026").unwrap();
        assert_eq!(imf, rfc850);
        assert_eq!(imf, asctime);
        assert!(parse_retry_after("120").is_some());
        assert!(parse_retry_after("soon").is_none());
    }
}
