//! The REST side: guarantee tools at `POST /v1/tools/{tool}` with an `Idempotency-Key`,
//! answered through the crate's REST profile (200, 202 + `Retry-After`, 422 problem, and the
//! refusals' problems); lookups at `GET /v1/campaigns/{id}` and `GET /v1/messages/{id}`,
//! answered with the tool's envelope (200, whatever `ok`, as the HTTP façade answers tool
//! calls). The bearer token is checked by [`authorize`] on every route, MCP's included.

use std::sync::Arc;

use agent_tool_result::Envelope;
use agent_tool_result::guarantee::Refusal;
use agent_tool_result::http::auth::require_json;
use agent_tool_result::http::{BearerGate, Fault};
use agent_tool_result::replay::IdempotencyKey;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::HeaderMap;
use serde::Serialize;
use serde_json::Value;

use crate::service::{Service, ServiceError};
use crate::tools::Command;

/// The principal a request runs as, once its token is checked: in the request's extensions.
#[derive(Clone, Debug)]
pub struct Principal(pub String);

/// Who may call: the bearer gate and the tokens the service accepts, each its own principal.
pub struct Access {
    /// The gate: challenges and resource metadata.
    pub gate: BearerGate,
    /// Each accepted bearer token, and the principal (account) it stands for.
    pub tokens: Vec<(String, String)>,
}

/// Whether two tokens are equal, in time that depends on their lengths only.
fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0, |diff, (x, y)| diff | (x ^ y))
            == 0
}

/// Checks the bearer token of every request (REST and MCP alike) and hands the principal on;
/// a missing, repeated, refused token answers the gate's fault, never reaching a route.
pub async fn authorize(
    State(access): State<Arc<Access>>,
    mut request: Request,
    next: Next,
) -> Response {
    let verify = |token: &str| {
        // Every token is compared, so the time taken does not say which one matched.
        let found = access.tokens.iter().fold(None, |found, entry| {
            if same_token(&entry.0, token) {
                Some(entry)
            } else {
                found
            }
        });
        match found {
            Some((_, principal)) => Ok(Principal(principal.clone())),
            None => Err(Fault::invalid_token(
                access.gate.realm(),
                "the token is not one this service issued",
            )),
        }
    };
    match access.gate.authorize(request.headers(), verify) {
        Ok(principal) => {
            request.extensions_mut().insert(principal);
            next.run(request).await
        }
        Err(fault) => fault.into_response(),
    }
}

/// The REST routes.
pub fn router(service: Arc<Service>) -> Router {
    Router::new()
        .route("/v1/tools/{tool}", post(call))
        .route("/v1/campaigns/{id}", get(campaign))
        .route("/v1/messages/{id}", get(message))
        .with_state(service)
}

fn failed(err: &ServiceError) -> Response {
    Refusal::unavailable(err.to_string()).into_response()
}

async fn call(
    State(service): State<Arc<Service>>,
    Path(tool): Path<String>,
    axum::Extension(Principal(principal)): axum::Extension<Principal>,
    headers: HeaderMap,
    key: Result<IdempotencyKey, Refusal>,
    body: Bytes,
) -> Response {
    if let Err(unsupported) = require_json(&headers) {
        return unsupported.into_response();
    }
    let arguments: Value = match serde_json::from_slice(&body) {
        Ok(arguments) => arguments,
        Err(err) => {
            return Fault::malformed(format!("the body is not JSON: {err}")).into_response();
        }
    };
    // The key first, then the arguments: the same order as over MCP.
    let key = match key {
        Ok(key) => key,
        Err(refusal) => return refusal.into_response(),
    };
    let command = match Command::parse(&tool, &arguments) {
        None => return Fault::unknown_tool(tool).into_response(),
        Some(Err(refusal)) => return refusal.into_response(),
        Some(Ok(command)) => command,
    };
    service
        .call(&command, &arguments, &principal, key)
        .await
        .into_response()
}

/// A lookup: the tool's envelope, 200 whatever `ok`.
fn lookup<T: Serialize>(found: Result<Envelope<T>, ServiceError>) -> Response {
    match found {
        Ok(found) => found.into_response(),
        Err(err) => failed(&err),
    }
}

async fn campaign(
    State(service): State<Arc<Service>>,
    axum::Extension(Principal(principal)): axum::Extension<Principal>,
    Path(id): Path<String>,
) -> Response {
    lookup(service.lookup_campaign(&id, &principal).await)
}

async fn message(
    State(service): State<Arc<Service>>,
    axum::Extension(Principal(principal)): axum::Extension<Principal>,
    Path(id): Path<String>,
) -> Response {
    lookup(service.lookup_message(&id, &principal).await)
}
