//! The agent's side of the REST profile: what a response means and what to do next.
//!
//! The problem `type` and the `Content-Type` are authoritative, not the status line alone: a
//! 403 whose body is a policy-deny problem is a policy deny (do not reconnect OAuth). An
//! envelope tool's answer over the HTTP façade (200, whatever its `ok`) is read as the
//! envelope it is, and a pre-GA opaque `{ ok: false, ... }` body that is no envelope is
//! recognized and reported as such.
//!
//! ```
//! use agent_tool_result::guarantee::RefusalKind;
//! use agent_tool_result::http::{RestOutcome, classify};
//!
//! let response = http::Response::builder()
//!     .status(409)
//!     .header("content-type", "application/problem+json")
//!     .header("retry-after", "3")
//!     .body(r#"{"type":"https://agentsfirst.ai/problems/idempotency-key-in-flight","title":"A request with this Idempotency-Key is in progress","status":409}"#)?;
//! let RestOutcome::Refused { refusal, .. } = classify(&response) else {
//!     unreachable!("a key in flight is a refusal")
//! };
//! assert_eq!(refusal.kind(), RefusalKind::KeyInFlight);
//! assert!(refusal.retry_at().is_some());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::time::SystemTime;

use ::http::header::{CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use ::http::{HeaderMap, Response, StatusCode};
use serde_json::Value;

use super::header::{parse_challenges, parse_retry_after};
use super::problem::Problem;
use super::rest::ProblemTypes;
use crate::guarantee::{GuaranteeResult, PolicyDecision, Refusal};

/// What a REST response from a guarantee tool means to an agent.
///
/// ```
/// use agent_tool_result::http::{RestOutcome, classify};
///
/// let response = http::Response::builder()
///     .status(422)
///     .header("content-type", "application/problem+json")
///     .body(r#"{"type":"https://agentsfirst.ai/problems/policy-deny","title":"Denied by policy","status":422,"schemaVersion":1,"settlement":{"state":"not_started"},"policy":{"decision":"deny","code":"contact_opted_out"}}"#)?;
/// let next = match classify(&response) {
///     RestOutcome::PolicyDenied { .. } => "do not re-authenticate: change the request",
///     RestOutcome::Unauthorized { .. } => "re-authenticate",
///     RestOutcome::Refused { refusal, .. } => refusal.kind().next_step(),
///     _ => "read the result",
/// };
/// assert_eq!(next, "do not re-authenticate: change the request");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum RestOutcome {
    /// A settled result (200): read its settlement and impact.
    Settled(GuaranteeResult),
    /// An envelope tool's answer over the HTTP façade (a lookup, say): 200 with its
    /// envelope, whatever its `ok`. Read `ok`; on a failure, the error's category says what
    /// to do next.
    Envelope(crate::Envelope),
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
    /// The producer refused the call without running it: over its idempotency key (missing
    /// or malformed 400, used with another payload 422, its first request still running 409),
    /// over its arguments (400), or because it cannot answer now (any 5xx, whatever its body:
    /// send the same request with the **same key** once `retry_at` has passed, which is what a
    /// timeout or a server error asks of an agent). [`Refusal::kind`] says which, with its
    /// `next_step`; the detail and the retry time are kept.
    Refused {
        /// The HTTP status.
        status: StatusCode,
        /// The refusal: kind, detail, and when to call again (`Retry-After`, else `retryAt`).
        refusal: Refusal,
    },
    /// A transport fault that keeps RFC 9457 (unknown tool or route, method, body too large,
    /// not JSON, URI or headers too long): the call never reached a tool. Not a breach of the
    /// profile; fix the request.
    Fault {
        /// The HTTP status.
        status: StatusCode,
        /// The problem's type.
        problem_type: String,
        /// The problem's detail, if any.
        detail: Option<String>,
    },
    /// Not a response of the contract, with why.
    NotContract {
        /// What is wrong.
        why: String,
    },
}

impl RestOutcome {
    /// What the guarantee tool answered, in the transport-neutral form another transport
    /// projects (MCP, say): a settled, deferred or denied result, or a refusal; `None` for an
    /// auth outcome, a transport fault or a response outside the contract.
    #[must_use]
    pub fn into_answer(self) -> Option<crate::guarantee::Answer> {
        use crate::guarantee::Answer;
        match self {
            RestOutcome::Settled(result)
            | RestOutcome::Deferred { result, .. }
            | RestOutcome::PolicyDenied { result, .. } => Some(Answer::Result(result)),
            RestOutcome::Refused { refusal, .. } => Some(Answer::Refused(refusal)),
            _ => None,
        }
    }
}

/// Classifies a response, with the crate's default problem types; a producer that publishes
/// its own is read with [`classify_with`].
///
/// ```
/// use agent_tool_result::guarantee::{GuaranteeResult, PolicyCode};
/// use agent_tool_result::http::{RestOutcome, RestProfile, classify};
///
/// let denied: GuaranteeResult = GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT);
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
///
/// ```
/// use agent_tool_result::http::RestOutcome;
/// use agent_tool_result::http::classify::classify_parts;
/// use http::{HeaderMap, StatusCode};
///
/// let body = br#"{"schemaVersion":1,"settlement":{"state":"committed"},"policy":{"decision":"allow"}}"#;
/// let mut headers = HeaderMap::new();
/// headers.insert("content-type", "application/json".parse()?);
/// assert!(matches!(classify_parts(StatusCode::OK, &headers, body), RestOutcome::Settled(_)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use]
pub fn classify_parts(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> RestOutcome {
    classify_with(&ProblemTypes::default(), status, headers, body)
}

/// [`classify_parts`] for a producer whose problem types are `types` (as its
/// [`RestProfile::problem_types`](super::rest::RestProfile::problem_types) or its published
/// contract declares them).
///
/// ```
/// use agent_tool_result::guarantee::{GuaranteeResult, PolicyCode};
/// use agent_tool_result::http::{RestOutcome, RestProfile, classify};
/// use agent_tool_result::http::classify::classify_with;
/// use agent_tool_result::http::rest::ProblemTypes;
///
/// let types = ProblemTypes::default().with_policy_deny("https://api.example/problems/denied")?;
/// let profile = RestProfile::default().with_problem_types(types.clone());
/// let denied = profile.response(&GuaranteeResult::<agent_tool_result::JsonObject>::denied(PolicyCode::CONTACT_OPTED_OUT))?;
/// let (parts, body) = denied.into_parts();
/// assert!(matches!(
///     classify_with(&types, parts.status, &parts.headers, &body),
///     RestOutcome::PolicyDenied { .. }
/// ));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use]
pub fn classify_with(
    types: &ProblemTypes,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
) -> RestOutcome {
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
    let is_problem = content_type == "application/problem+json";
    // RFC 9457: a problem without a `type` is `about:blank`, and the status line stands in
    // for a missing `status` member.
    let problem = if is_problem {
        Problem::from_body(status, body).ok()
    } else {
        None
    };
    let retry_after = headers
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after);
    if !is_problem
        && let Some(uri) = json
            .as_ref()
            .and_then(|body| body.get("type"))
            .and_then(Value::as_str)
        && (uri == types.policy_deny() || types.refusal_kind(uri, status.as_u16()).is_some())
    {
        let served = if content_type.is_empty() {
            "no Content-Type"
        } else {
            content_type.as_str()
        };
        return not_contract(&format!(
            "a problem of type {uri} served as {served}, not application/problem+json: the \
             Content-Type is authoritative with the type"
        ));
    }
    // The problem type is authoritative, whatever the status line says.
    if let Some(problem) = &problem
        && problem.problem_type() == types.policy_deny()
    {
        // The guarantee members are the problem's extensions: the standard members are the
        // problem's own, and no tool field may take their names.
        return match GuaranteeResult::from_value(&Value::Object(problem.extensions().clone())) {
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
    if let Some(problem) = &problem
        && let Some(kind) = types.refusal_kind(problem.problem_type(), status.as_u16())
    {
        if let Some(body) = &json
            && let Err(why) = crate::guarantee::refusal::routed(crate::document::of_problem(body))
        {
            return not_contract(&format!("a refusal's problem type on a body that {why}"));
        }
        let mut refusal = Refusal::new(kind, problem.detail().unwrap_or_default());
        let retry_at = retry_after.or_else(|| {
            problem
                .extensions()
                .get("retryAt")
                .and_then(Value::as_str)
                .and_then(crate::guarantee::instant::parse)
        });
        if let Some(at) = retry_at {
            refusal = refusal.with_retry_near(at);
        }
        return RestOutcome::Refused { status, refusal };
    }
    if let Some(outcome) = envelope_or_opaque(status, is_problem, json.as_ref(), body) {
        return outcome;
    }
    by_status(
        status,
        &content_type,
        headers,
        json,
        problem.as_ref(),
        retry_after,
    )
}

/// An envelope tool's answer over the HTTP façade, or a pre-GA opaque `{ ok: false }` body;
/// `None` for anything else.
fn envelope_or_opaque(
    status: StatusCode,
    is_problem: bool,
    json: Option<&Value>,
    body: &[u8],
) -> Option<RestOutcome> {
    // The HTTP façade: an envelope tool answers 200 with its envelope, whatever its `ok`.
    // The one document rule says which contract the body is; a body the rule calls an
    // envelope is read as one (and refused with the envelope's own breach).
    let value = json?;
    if status == StatusCode::OK
        && !is_problem
        && value.get("ok").is_some()
        && crate::document::of_value(value) == crate::document::Document::Envelope
    {
        return Some(match crate::Envelope::from_json_slice(body) {
            Ok(envelope) => RestOutcome::Envelope(envelope),
            Err(err) => not_contract(&format!("an envelope that breaks the contract: {err}")),
        });
    }
    if value.get("ok") == Some(&Value::Bool(false)) && value.get("schemaVersion").is_none() {
        return Some(not_contract(
            "a pre-GA opaque { ok: false, ... } body: read the problem type and Content-Type \
             of a current producer instead of guessing from the status",
        ));
    }
    None
}

/// What the status line says, once no problem type has decided.
fn by_status(
    status: StatusCode,
    content_type: &str,
    headers: &HeaderMap,
    json: Option<Value>,
    problem: Option<&Problem>,
    retry_after: Option<SystemTime>,
) -> RestOutcome {
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
        200 | 202 => classify_success(status, content_type, headers, json, retry_after),
        500..=599 => {
            // Whatever the body (a proxy's page, say): the call may not have run; the same key
            // makes a second attempt safe.
            let detail = problem
                .and_then(Problem::detail)
                .map_or_else(|| format!("the server answered {status}"), str::to_owned);
            let mut refusal = Refusal::unavailable(detail);
            if let Some(at) = retry_after {
                refusal = refusal.with_retry_near(at);
            }
            RestOutcome::Refused { status, refusal }
        }
        other => match (problem, status.is_client_error()) {
            (Some(problem), true) => RestOutcome::Fault {
                status,
                problem_type: problem.problem_type().to_owned(),
                detail: problem.detail().map(str::to_owned),
            },
            (None, true) => not_contract(&format!(
                "status {other} without an application/problem+json body: every refusal and \
                 fault is an RFC 9457 problem"
            )),
            _ => not_contract(&format!("status {other} is not one of the REST profile's")),
        },
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
    // Every member of a 2xx body is the result's: none is dropped.
    match GuaranteeResult::from_value(&body).map_err(|err| err.to_string()) {
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
///
/// ```
/// use agent_tool_result::http::classify::{ProfileBreach, profile_breaches};
/// use http::{HeaderMap, StatusCode};
///
/// // A hold answered 202 with a Location header: the profile's holds are never tasks.
/// let mut headers = HeaderMap::new();
/// headers.insert("content-type", "application/json".parse()?);
/// headers.insert("location", "/tasks/7".parse()?);
/// let body = br#"{"schemaVersion":1,"settlement":{"state":"committed"},"policy":{"decision":"defer","code":"campaign_send_window"}}"#;
/// let breaches = profile_breaches(StatusCode::ACCEPTED, &headers, body);
/// assert!(!breaches.is_empty(), "{breaches:?}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
    /// A refusal under another status than its own.
    #[error("the refusal `{kind}` answered {status}, not {}", .kind.status())]
    RefusalStatus {
        /// The refusal its type names.
        kind: crate::guarantee::RefusalKind,
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
/// use agent_tool_result::http::classify::{ProfileBreach, profile_breaches};
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
    profile_breaches_with(&ProblemTypes::default(), status, headers, body)
}

/// [`profile_breaches`] for a producer whose problem types are `types` (as its published
/// contract declares them: see `ProblemTypes::from_openapi`, feature `openapi`).
#[must_use]
pub fn profile_breaches_with(
    types: &ProblemTypes,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
) -> Vec<ProfileBreach> {
    let mut breaches = Vec::new();
    let outcome = classify_with(types, status, headers, body);
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
        RestOutcome::Refused { refusal, .. }
            if refusal.kind().problem_type() != crate::guarantee::ABOUT_BLANK
                && refusal.kind().status() != code =>
        {
            breaches.push(ProfileBreach::RefusalStatus {
                kind: refusal.kind(),
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
