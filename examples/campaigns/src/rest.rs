//! The REST side: guarantee tools at `POST /v1/tools/{tool}` with an `Idempotency-Key`,
//! answered through the crate's REST profile (200, 202 + `Retry-After`, 422 problem, and the
//! refusals' problems); lookups at `GET /v1/campaigns/{id}` and `GET /v1/messages/{id}`,
//! answered with the tool's envelope (200, whatever `ok`, as the HTTP façade answers tool
//! calls). The bearer token is checked by [`authorize`] on every route, MCP's included.

use std::sync::Arc;

use agent_tool_result::Envelope;
use agent_tool_result::guarantee::Refusal;
use agent_tool_result::http::auth::require_json;
use agent_tool_result::http::{BearerGate, Fault, RestProfile};
use agent_tool_result::replay::IdempotencyKey;
use axum::Router;
use axum::body::{Body, Bytes};
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

/// Who may call: the bearer gate and the one token the service accepts.
pub struct Access {
    /// The gate: challenges and resource metadata.
    pub gate: BearerGate,
    /// The one bearer token the service accepts.
    pub token: String,
    /// The principal that token stands for.
    pub principal: String,
}

/// Checks the bearer token of every request (REST and MCP alike) and hands the principal on;
/// a missing, repeated, refused token answers the gate's fault, never reaching a route.
pub async fn authorize(
    State(access): State<Arc<Access>>,
    mut request: Request,
    next: Next,
) -> Response {
    let verify = |token: &str| {
        if token == access.token {
            Ok(Principal(access.principal.clone()))
        } else {
            Err(Fault::invalid_token(
                access.gate.realm(),
                "the token is not one this service issued",
            ))
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

fn respond(response: http::Response<Vec<u8>>) -> Response {
    response.map(Body::from)
}

fn failed(err: &ServiceError) -> Response {
    Refusal::unavailable(err.to_string()).into_response()
}

async fn call(
    State(service): State<Arc<Service>>,
    Path(tool): Path<String>,
    axum::Extension(Principal(principal)): axum::Extension<Principal>,
    headers: HeaderMap,
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
    let key = match IdempotencyKey::from_headers(&headers) {
        Ok(key) => key,
        Err(err) => return respond(RestProfile::default().refusal_response(&err.refusal())),
    };
    let command = match Command::parse(&tool, &arguments) {
        None => return Fault::unknown_tool(tool).into_response(),
        Some(Err(refusal)) => return refusal.into_response(),
        Some(Ok(command)) => command,
    };
    let response =
        tokio::task::spawn_blocking(move || service.call(&command, &arguments, &principal, &key))
            .await
            .expect("the call does not panic");
    respond(response)
}

/// A lookup: the tool's envelope, 200 whatever `ok`.
fn lookup<T: Serialize>(
    service: &Service,
    look: impl FnOnce(&Service) -> Result<Envelope<T>, ServiceError>,
) -> Response {
    match look(service) {
        Ok(found) => found.into_response(),
        Err(err) => failed(&err),
    }
}

async fn campaign(State(service): State<Arc<Service>>, Path(id): Path<String>) -> Response {
    lookup(&service, |service| service.lookup_campaign(&id))
}

async fn message(State(service): State<Arc<Service>>, Path(id): Path<String>) -> Response {
    lookup(&service, |service| service.lookup_message(&id))
}
