//! An HTTP façade for agent tools on axum: `POST /tools/{name}` with the tool's JSON
//! arguments and a bearer token.
//!
//! Every call that reaches a tool answers 200 with the bare envelope, whatever its `ok`;
//! transport and auth faults answer 400, 401, 403, 404, 405, 413 or 415 with an RFC 9457
//! problem, never an empty body.
//!
//! Run with `cargo run --example http_facade --features axum`, then:
//!
//! ```text
//! curl -s localhost:5151/tools/find -H 'authorization: Bearer demo-token' \
//!     -H 'content-type: application/json' -d '{"name":"OK"}'
//! ```
#![allow(dead_code)] // the tests reuse `router` without `main`

use agent_tool_result::http::auth::require_json;
use agent_tool_result::http::layers::{problem_responses, refuse_oversized_head};
use agent_tool_result::http::{BearerGate, Fault};
use agent_tool_result::{Classified, Envelope, ToolError};
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, FailedToBufferBody};
use axum::extract::{DefaultBodyLimit, Path};
use axum::http::{HeaderMap, Method, Uri};
use axum::routing::post;
use serde_json::{Value, json};

/// The largest request body accepted, in bytes.
pub const BODY_LIMIT: usize = 16 * 1024;

/// The token that may call tools, and one that may only read.
pub const TOKEN: &str = "demo-token";
/// A token without the `tools:call` scope.
pub const READ_ONLY_TOKEN: &str = "read-only-token";

/// The façade's routes; anything else is a 404 or 405 problem.
pub fn router() -> Router {
    Router::new()
        .route("/tools/{name}", post(call))
        .fallback(|uri: Uri| async move { Fault::no_route(uri.path()) })
        .method_not_allowed_fallback(|method: Method| async move {
            Fault::method_not_allowed(method.as_str())
        })
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(axum::middleware::map_request(refuse_oversized_head))
        .layer(axum::middleware::map_response(problem_responses))
}

async fn call(
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Envelope<Value>, Fault> {
    authorize(&headers)?;
    require_json(&headers)?;
    let body = body.map_err(|rejection| match rejection {
        BytesRejection::FailedToBufferBody(FailedToBufferBody::LengthLimitError(_)) => {
            Fault::too_large(BODY_LIMIT)
        }
        other => Fault::malformed(other.body_text()),
    })?;
    let arguments: Value = serde_json::from_slice(&body)
        .map_err(|err| Fault::malformed(format!("the body is not JSON: {err}")))?;
    match name.as_str() {
        "find" => Ok(find(&arguments)),
        other => Err(Fault::unknown_tool(other)),
    }
}

/// The bearer check: a missing, repeated or refused token never reaches a tool.
fn authorize(headers: &HeaderMap) -> Result<(), Fault> {
    BearerGate::new("tools").authorize(headers, |token| match token {
        TOKEN => Ok(()),
        READ_ONLY_TOKEN => Err(Fault::insufficient_scope("tools:call")),
        _ => Err(Fault::invalid_token("tools", "the token is not valid")),
    })
}

/// A demo tool: finds a button by name.
fn find(arguments: &Value) -> Envelope<Value> {
    match arguments.get("name").and_then(Value::as_str) {
        Some("OK") => {
            Envelope::success(json!({ "automationId": "btnOk", "bounds": [412, 310, 80, 24] }))
        }
        Some(name) => Envelope::failure(ToolError::new(
            Classified::ELEMENT_NOT_FOUND,
            format!("No button named '{name}'."),
        )),
        None => Envelope::failure(ToolError::new(
            Classified::BAD_ARGUMENTS,
            "`name` (a string) is required.",
        )),
    }
    .with_session("s-demo")
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:5151").await?;
    println!("HTTP façade on http://{}", listener.local_addr()?);
    axum::serve(listener, router()).await
}
