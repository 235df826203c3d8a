//! The HTTP façade: the envelope as the body of every well-formed call, and RFC 9457 problem
//! details for transport and auth faults (feature `http`; `axum` adds `IntoResponse`).
//!
//! A call that reached the tool answers **200** with the bare envelope as `application/json`,
//! whatever its `ok`: the outcome is in the body. Only faults of the transport answer non-200,
//! with an `application/problem+json` body whose `status` repeats the HTTP status:
//!
//! | fault | status | extra header |
//! |---|---|---|
//! | [`Fault::Malformed`] | 400 | |
//! | [`Fault::Unauthenticated`]: no credentials, or another scheme | 401 | `WWW-Authenticate: Bearer realm="..."` (no error code, RFC 6750 section 3.1) |
//! | [`Fault::InvalidToken`]: a bearer token was refused | 401 | `WWW-Authenticate: Bearer realm="...", error="invalid_token"` |
//! | [`Fault::Forbidden`] | 403 | `WWW-Authenticate: Bearer error="insufficient_scope"` when a scope is named |
//! | [`Fault::UnknownTool`], [`Fault::NoRoute`] | 404 | |
//! | [`Fault::MethodNotAllowed`] | 405 | `Allow`, set by the router |
//! | [`Fault::TooLarge`] | 413 | |
//! | [`Fault::UnsupportedMediaType`] | 415 | `Accept-Post: application/json` |
//!
//! [`credentials`] reads the `Authorization` header (the scheme name is case-insensitive) and
//! [`require_json`] the `Content-Type`, so a handler meets each fault with one line. With
//! axum, the router's fallbacks answer the last two kinds:
//!
//! ```text
//! Router::new()
//!     .route("/tools/{name}", post(call))
//!     .fallback(|uri: Uri| async move { Fault::no_route(uri.path()) })
//!     .method_not_allowed_fallback(|method: Method| async move { Fault::method_not_allowed(method.as_str()) })
//! ```
//!
//! ```
//! use agent_tool_result::http::{Fault, envelope_response};
//! use agent_tool_result::{Envelope, ErrorCode, ToolError};
//!
//! let failure: Envelope = Envelope::failure(ToolError::new(ErrorCode::WINDOW_NOT_FOUND, "No window."));
//! let response = envelope_response(&failure)?;
//! assert_eq!(response.status(), 200);
//! assert_eq!(response.headers()["content-type"], "application/json");
//!
//! let fault = Fault::unknown_tool("delete_everything").into_response();
//! assert_eq!(fault.status(), 404);
//! assert_eq!(fault.headers()["content-type"], "application/problem+json");
//! # Ok::<(), serde_json::Error>(())
//! ```

mod auth;
#[cfg(feature = "axum")]
mod axum_impls;
mod classify;
mod fault;
mod idempotency;
mod problem;
mod rest;

use ::http::header::{CONTENT_TYPE, HeaderValue};
use ::http::{Response, StatusCode};
use serde::Serialize;

pub use auth::{BearerGate, Credentials, credentials, require_json};
#[cfg(feature = "axum")]
#[cfg_attr(docsrs, doc(cfg(feature = "axum")))]
pub use axum_impls::{MAX_HEADER_BYTES, MAX_URI_BYTES, problem_responses, refuse_oversized_head};
pub use classify::{
    ProfileBreach, RestOutcome, classify, classify_parts, classify_with, profile_breaches,
};
pub use fault::Fault;
pub use idempotency::IDEMPOTENT_REPLAYED;
pub use problem::{NotAnErrorStatus, Problem, ReservedMember};
pub use rest::{POLICY_DENY_TYPE, ProblemTypes, RestProfile, RetryAfter};

use crate::Envelope;

/// `application/json`: the content type of an envelope.
pub const APPLICATION_JSON: &str = "application/json";

/// `application/problem+json`: the content type of a problem (RFC 9457).
pub const APPLICATION_PROBLEM_JSON: &str = "application/problem+json";

/// The 200 response for a call that reached the tool: the bare envelope as
/// `application/json`, whatever its `ok`.
///
/// # Errors
///
/// When the envelope does not serialize (its result is not a JSON object).
pub fn envelope_response<T: Serialize>(
    envelope: &Envelope<T>,
) -> Result<Response<Vec<u8>>, serde_json::Error> {
    let body = envelope.to_json_vec()?;
    Ok(json_response(StatusCode::OK, APPLICATION_JSON, body))
}

/// A response with `body` as `content_type`.
pub(crate) fn json_response(
    status: StatusCode,
    content_type: &'static str,
    body: Vec<u8>,
) -> Response<Vec<u8>> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}
