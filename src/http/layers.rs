//! `IntoResponse` for envelopes, faults, problems and guarantee answers, and the two functions
//! that make every error of an axum service an RFC 9457 problem (feature `axum`).

use axum_core::body::Body;
use axum_core::response::{IntoResponse, Response};
use http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use serde::Serialize;

use super::facade::envelope_response;
use super::fault::Fault;
use super::media::APPLICATION_PROBLEM_JSON;
use super::problem::Problem;
use super::rest::RestProfile;
use crate::Envelope;

/// The longest request target [`refuse_oversized_head`] lets through, in bytes.
pub const MAX_URI_BYTES: usize = 8 * 1024;

/// The most header bytes (names and values, all fields) [`refuse_oversized_head`] lets
/// through.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;

/// Makes every error response of a service an RFC 9457 problem: a response of status 400 or
/// above that is not `application/problem+json` already (a router's 404 or 405, a body-limit
/// 413, an extractor's plain-text 400 for a bad percent-escape, a handler's bare status) gets
/// the problem of its status, and keeps its other headers (`Allow`, `WWW-Authenticate`,
/// `Retry-After`). Success responses and problems pass as they are. Use it as the outermost
/// layer, after every route and fallback:
///
/// ```
/// use agent_tool_result::http::layers::problem_responses;
///
/// let app: axum::Router = axum::Router::new()
///     .layer(axum::middleware::map_response(problem_responses));
/// ```
///
/// # Panics
///
/// Never: a problem always serializes.
#[allow(
    clippy::unused_async,
    reason = "axum's map_response takes an async function"
)]
pub async fn problem_responses(response: Response) -> Response {
    let is_problem = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case(APPLICATION_PROBLEM_JSON))
        });
    if response.status().as_u16() < 400 || is_problem {
        return response;
    }
    let (mut parts, _) = response.into_parts();
    let problem = Fault::Status {
        status: parts.status,
    }
    .problem();
    let body = serde_json::to_vec(&problem).expect("a problem always serializes");
    parts.headers.remove(CONTENT_LENGTH);
    parts.headers.insert(
        CONTENT_TYPE,
        http::HeaderValue::from_static(APPLICATION_PROBLEM_JSON),
    );
    Response::from_parts(parts, Body::from(body))
}

/// Refuses a request whose target is over [`MAX_URI_BYTES`] (414) or whose header fields are
/// over [`MAX_HEADER_BYTES`] (431), each with its problem, before any route reads it. (A head
/// past the HTTP server's own, larger limits is refused by the server itself, without a body.)
///
/// ```
/// use agent_tool_result::http::layers::refuse_oversized_head;
///
/// let app: axum::Router = axum::Router::new()
///     .layer(axum::middleware::map_request(refuse_oversized_head));
/// ```
///
/// # Errors
///
/// The [`Fault`] (414 or 431) for an oversized head.
#[allow(
    clippy::unused_async,
    reason = "axum's map_request takes an async function"
)]
pub async fn refuse_oversized_head<B>(
    request: http::Request<B>,
) -> Result<http::Request<B>, Fault> {
    let target = request
        .uri()
        .path_and_query()
        .map_or(0, |p| p.as_str().len());
    if target > MAX_URI_BYTES {
        return Err(Fault::uri_too_long(MAX_URI_BYTES));
    }
    let headers: usize = request
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len())
        .sum();
    if headers > MAX_HEADER_BYTES {
        return Err(Fault::headers_too_large(MAX_HEADER_BYTES));
    }
    Ok(request)
}

/// The response, or for a value that does not serialize (a server bug) a 500 problem saying
/// what did not.
fn or_server_error(
    response: Result<http::Response<Vec<u8>>, serde_json::Error>,
    what: &str,
) -> Response {
    match response {
        Ok(response) => response.map(Body::from),
        Err(err) => Problem::of_error(http::StatusCode::INTERNAL_SERVER_ERROR)
            .with_detail(format!("{what} does not serialize: {err}"))
            .into_http_response()
            .map(Body::from),
    }
}

/// 200 with the envelope; an envelope whose result does not serialize is a server bug and
/// answers 500 with a problem.
impl<T: Serialize> IntoResponse for Envelope<T> {
    fn into_response(self) -> Response {
        or_server_error(envelope_response(&self), "the tool's envelope")
    }
}

impl IntoResponse for Fault {
    fn into_response(self) -> Response {
        self.into_http_response().map(Body::from)
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        self.into_http_response().map(Body::from)
    }
}

/// The REST profile's response with its default settings for a result or a refusal.
impl<T: Serialize> IntoResponse for crate::guarantee::Answer<T> {
    fn into_response(self) -> Response {
        or_server_error(
            RestProfile::default().answer_response(&self),
            "the guarantee result",
        )
    }
}

/// The refusal's problem, with `Retry-After` when it says when to call again.
impl IntoResponse for crate::guarantee::Refusal {
    fn into_response(self) -> Response {
        RestProfile::default()
            .refusal_response(&self)
            .map(Body::from)
    }
}

/// The REST profile's response with its default settings: 200, 202 with `Retry-After`, or a
/// 422 policy-deny problem; fields that do not serialize are a server bug and answer 500.
impl<T: Serialize> IntoResponse for crate::guarantee::GuaranteeResult<T> {
    fn into_response(self) -> Response {
        or_server_error(
            RestProfile::default().response(&self),
            "the guarantee result",
        )
    }
}
