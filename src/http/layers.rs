//! `IntoResponse` for envelopes, faults, problems and guarantee answers, and the two functions
//! that make every error of an axum service an RFC 9457 problem (feature `axum`).
//!
//! ```
//! use agent_tool_result::http::layers::{ProblemLayer, refuse_oversized_head};
//!
//! // The outermost layers of a service: every error a problem, and oversized heads refused.
//! let app: axum::Router = axum::Router::new()
//!     .route("/tools/find", axum::routing::post(|| async { "found" }))
//!     .layer(axum::middleware::map_request(refuse_oversized_head))
//!     .layer(ProblemLayer);
//! ```

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum_core::body::Body;
use axum_core::response::{IntoResponse, Response};
use http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use http_body_util::BodyExt;
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

/// The most bytes of an error response's own body [`problem_responses`] reads for the
/// problem's `detail`; a longer body is not a detail, and the problem says only its status.
const MAX_DETAIL_BYTES: usize = 1024;

/// The most bytes of a JSON-RPC error response [`problem_responses`] passes as it is; a
/// longer JSON body becomes its status's problem.
const MAX_JSONRPC_ERROR_BYTES: usize = 64 * 1024;

/// Makes every error response of a service an RFC 9457 problem: a response of an error status
/// (400 to 599) that is not `application/problem+json` already (a router's 404 or 405, a body-limit
/// 413, an extractor's plain-text 400 or 415, a handler's bare status) gets the problem of its
/// status, keeps its other headers (`Allow`, `WWW-Authenticate`, `Retry-After`), and keeps what
/// it said: a short plain-text body (axum's "Failed to parse the request body as JSON: EOF
/// while parsing ...") becomes the problem's `detail`. Success responses and problems pass as
/// they are, and so does a JSON-RPC error response (an MCP transport's refusal, which its client
/// reads for what to fix). Use it as the outermost layer, after every route and fallback; [`ProblemLayer`]
/// does the same and also names the path of a 404 and the method of a 405.
///
/// ```
/// use agent_tool_result::http::layers::problem_responses;
///
/// let app: axum::Router = axum::Router::new()
///     .layer(axum::middleware::map_response(problem_responses));
/// ```
pub async fn problem_responses(response: Response) -> Response {
    as_problem(response, None).await
}

/// Every non-2xx response of the service it wraps as an RFC 9457 problem that keeps what the
/// response said, in one layer: what [`problem_responses`] does, and for a router's own 404
/// and 405 (which say nothing) the path that nothing is served at and the method the route
/// does not answer. Add it last, so it wraps every route and fallback:
///
/// ```
/// use agent_tool_result::http::layers::ProblemLayer;
///
/// let app: axum::Router = axum::Router::new()
///     .route("/tools/send_sms", axum::routing::post(|| async { "sent" }))
///     .layer(ProblemLayer);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ProblemLayer;

impl<S> tower_layer::Layer<S> for ProblemLayer {
    type Service = Problems<S>;

    fn layer(&self, inner: S) -> Problems<S> {
        Problems { inner }
    }
}

/// The service [`ProblemLayer`] wraps around another.
///
/// ```
/// use agent_tool_result::http::layers::ProblemLayer;
/// use tower_service::Service as _;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut app = axum::Router::new()
///     .route("/tools/find", axum::routing::post(|| async { "found" }))
///     .layer(ProblemLayer);
/// // The router's silent 404 comes back a problem that names the path.
/// let request = http::Request::get("/nowhere").body(axum::body::Body::empty())?;
/// let response = app.call(request).await?;
/// assert_eq!(response.status(), 404);
/// assert_eq!(response.headers()["content-type"], "application/problem+json");
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Problems<S> {
    inner: S,
}

impl<S, B> tower_service::Service<http::Request<B>> for Problems<S>
where
    S: tower_service::Service<http::Request<B>, Response = Response>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let asked = Asked {
            method: request.method().as_str().to_owned(),
            path: request.uri().path().to_owned(),
        };
        let response = self.inner.call(request);
        Box::pin(async move {
            let response = response.await?;
            Ok(as_problem(response, Some(asked)).await)
        })
    }
}

/// What the request asked, for the detail of a router's silent 404 and 405.
struct Asked {
    method: String,
    path: String,
}

/// `response` as a problem, when it is an error response that is not one already.
async fn as_problem(response: Response, asked: Option<Asked>) -> Response {
    let is_problem = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case(APPLICATION_PROBLEM_JSON))
        });
    if !(400..=599).contains(&response.status().as_u16()) || is_problem {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let said = if has_media_type(parts.headers.get(CONTENT_TYPE), "application/json") {
        // A JSON-RPC error (an MCP transport's refusal, say) is what its client reads: it
        // passes as it is. Any other JSON body is not a detail.
        match jsonrpc_error(body).await {
            Some(bytes) => {
                parts.headers.remove(CONTENT_LENGTH);
                return Response::from_parts(parts, Body::from(bytes));
            }
            None => None,
        }
    } else {
        said(parts.headers.get(CONTENT_TYPE), body).await
    };
    let problem = match (said, asked) {
        (Some(detail), _) => Fault::Status {
            status: parts.status,
        }
        .problem()
        .with_detail(detail),
        (None, Some(asked)) if parts.status == http::StatusCode::NOT_FOUND => {
            Fault::no_route(asked.path).problem()
        }
        (None, Some(asked)) if parts.status == http::StatusCode::METHOD_NOT_ALLOWED => {
            Fault::method_not_allowed(asked.method).problem()
        }
        (None, _) => Fault::Status {
            status: parts.status,
        }
        .problem(),
    };
    let body = serde_json::to_vec(&problem).expect("a problem always serializes");
    parts.headers.remove(CONTENT_LENGTH);
    parts.headers.insert(
        CONTENT_TYPE,
        http::HeaderValue::from_static(APPLICATION_PROBLEM_JSON),
    );
    Response::from_parts(parts, Body::from(body))
}

/// Whether `content_type` names `media` (parameters aside, case aside).
fn has_media_type(content_type: Option<&http::HeaderValue>, media: &str) -> bool {
    content_type
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|value| value.trim().eq_ignore_ascii_case(media))
}

/// The body, when it is a JSON-RPC error response (an object naming `jsonrpc` and `error`)
/// of at most [`MAX_JSONRPC_ERROR_BYTES`].
async fn jsonrpc_error(body: Body) -> Option<bytes::Bytes> {
    #[derive(serde::Deserialize)]
    struct Response {
        jsonrpc: serde::de::IgnoredAny,
        error: serde::de::IgnoredAny,
    }
    let bytes = http_body_util::Limited::new(body, MAX_JSONRPC_ERROR_BYTES)
        .collect()
        .await
        .ok()?
        .to_bytes();
    let Response { jsonrpc, error } = serde_json::from_slice(&bytes).ok()?;
    let _ = (jsonrpc, error);
    Some(bytes)
}

/// What an error response's own body said, when it is short plain text (or untyped) and not
/// blank: the detail its producer wrote.
async fn said(content_type: Option<&http::HeaderValue>, body: Body) -> Option<String> {
    let textual = content_type.is_none_or(|value| {
        value.to_str().is_ok_and(|value| {
            value
                .trim_start()
                .to_ascii_lowercase()
                .starts_with("text/plain")
        })
    });
    if !textual {
        return None;
    }
    let bytes = http_body_util::Limited::new(body, MAX_DETAIL_BYTES)
        .collect()
        .await
        .ok()?
        .to_bytes();
    let text = std::str::from_utf8(&bytes).ok()?.trim();
    (!text.is_empty()).then(|| text.to_owned())
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

/// 200 with the metadata document (RFC 9728).
impl IntoResponse for super::resource_metadata::ProtectedResourceMetadata {
    fn into_response(self) -> Response {
        self.response().map(Body::from)
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
