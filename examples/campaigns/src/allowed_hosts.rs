//! Why the MCP endpoint refused a request by its `Host` or `Origin` (DNS-rebinding
//! protection): `rmcp` decides, and says only which header; this names the value refused and
//! what the endpoint admits, in the 403 problem, so an operator can fix the deployment.

use std::sync::Arc;

use agent_tool_result::http::Fault;
use axum::extract::{Request, State};
use axum::http::header::{HOST, ORIGIN};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The hosts `rmcp` admits when given none; `--allowed-host` adds to them.
pub const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// How much of a refused value a problem quotes.
const QUOTED: usize = 200;

/// The hosts and origins the MCP endpoint answers.
#[derive(Clone, Debug)]
pub struct AllowedHosts {
    /// `Host` names (ports ignored).
    pub hosts: Arc<[String]>,
    /// Browser origins; empty admits requests with no `Origin` only.
    pub origins: Arc<[String]>,
}

/// A header's value as a problem quotes it: lossy UTF-8, control characters escaped, cut short.
fn quoted(headers: &HeaderMap, name: &axum::http::HeaderName) -> String {
    let Some(value) = headers.get(name) else {
        return "(none)".to_owned();
    };
    String::from_utf8_lossy(value.as_bytes())
        .chars()
        .flat_map(char::escape_debug)
        .take(QUOTED)
        .collect()
}

/// Answers a `Host` or `Origin` refusal of the MCP endpoint with a problem naming the header,
/// the value refused and what is allowed; any other response passes as it is.
pub async fn name_refused(
    State(allowed): State<AllowedHosts>,
    request: Request,
    next: Next,
) -> Response {
    let (host, origin) = (
        quoted(request.headers(), &HOST),
        quoted(request.headers(), &ORIGIN),
    );
    let response = next.run(request).await;
    if response.status() != StatusCode::FORBIDDEN {
        return response;
    }
    let (parts, body) = response.into_parts();
    let said = axum::body::to_bytes(body, 1024).await.unwrap_or_default();
    let said = String::from_utf8_lossy(&said);
    let detail = if said.contains("Host header") {
        format!(
            "the Host header `{host}` names no host this MCP endpoint answers (DNS-rebinding \
             protection); it answers {}: add the service's public host with --allowed-host",
            allowed.hosts.join(", ")
        )
    } else if said.contains("Origin header") {
        let allowed = if allowed.origins.is_empty() {
            "none (requests without an Origin pass)".to_owned()
        } else {
            allowed.origins.join(", ")
        };
        format!(
            "the Origin header `{origin}` is not an origin this MCP endpoint accepts \
             (cross-origin protection); it accepts {allowed}: add one with --allowed-origin"
        )
    } else {
        return Response::from_parts(parts, axum::body::Body::from(said.into_owned()));
    };
    Fault::forbidden(detail).into_response()
}
