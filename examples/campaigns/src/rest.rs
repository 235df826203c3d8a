//! The REST side: guarantee tools at `POST /v1/tools/{tool}` with a bearer token and an
//! `Idempotency-Key`, answered through the crate's REST profile (200, 202 + `Retry-After`,
//! 422 problem); lookups at `GET /v1/campaigns/{id}` and `GET /v1/messages/{id}`, answered
//! with the tool's envelope (200, whatever `ok`, as the HTTP façade answers tool calls).

use std::sync::Arc;

use agent_tool_result::Envelope;
use agent_tool_result::http::{Credentials, Fault, credentials, require_json};
use agent_tool_result::replay::IdempotencyKey;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use http::HeaderMap;
use serde::Serialize;
use serde_json::Value;

use crate::service::{Answer, Command, Service, ServiceError};

/// What a REST call needs: the service, its bearer token and the principal it stands for.
pub struct Rest {
    /// The service.
    pub service: Arc<Service>,
    /// The one bearer token the service accepts.
    pub token: String,
    /// The principal every call runs as.
    pub principal: String,
}

/// The REST routes.
pub fn router(rest: Arc<Rest>) -> Router {
    Router::new()
        .route("/v1/tools/{tool}", post(call))
        .route("/v1/campaigns/{id}", get(campaign))
        .route("/v1/messages/{id}", get(message))
        .with_state(rest)
}

fn respond(response: http::Response<Vec<u8>>) -> Response {
    response.map(Body::from)
}

fn fault(fault: Fault) -> Response {
    respond(fault.into_response())
}

fn failed(err: &ServiceError) -> Response {
    let problem = agent_tool_result::http::Problem::new(http::StatusCode::INTERNAL_SERVER_ERROR)
        .expect("500 is an error status")
        .with_detail(err.to_string());
    respond(problem.into_response())
}

/// Whether the call carries the service's token, or the 401 that says why not.
fn authorize(rest: &Rest, headers: &HeaderMap) -> Result<(), Box<Fault>> {
    match credentials(headers) {
        Credentials::Bearer(token) if token == rest.token => Ok(()),
        Credentials::Bearer(_) => Err(Box::new(Fault::invalid_token(
            "campaigns",
            "the token is not one this service issued",
        ))),
        _ => Err(Box::new(Fault::unauthenticated("campaigns"))),
    }
}

async fn call(
    State(rest): State<Arc<Rest>>,
    Path(tool): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Err(denied) = authorize(&rest, &headers) {
        return fault(*denied);
    }
    if let Err(unsupported) = require_json(&headers) {
        return fault(unsupported);
    }
    let arguments: Value = match serde_json::from_slice(&body) {
        Ok(arguments) => arguments,
        Err(err) => return fault(Fault::malformed(format!("the body is not JSON: {err}"))),
    };
    let command = match Command::parse(&tool, &arguments) {
        None => return fault(Fault::unknown_tool(tool)),
        Some(Err(err)) => {
            return fault(Fault::malformed(format!(
                "the arguments do not fit {tool}: {err}"
            )));
        }
        Some(Ok(command)) => command,
    };
    let key = match IdempotencyKey::from_headers(&headers) {
        Ok(key) => key,
        Err(err) => return respond(err.refusal().problem(err.to_string()).into_response()),
    };
    let service = Arc::clone(&rest.service);
    let answer = tokio::task::spawn_blocking(move || {
        service.call(&command, &arguments, &rest.principal, &key)
    })
    .await
    .expect("the call does not panic");
    match answer {
        Ok(Answer::Response(response)) => respond(response),
        Ok(Answer::Refused(problem)) => respond(problem.problem(problem.title()).into_response()),
        Err(err) => failed(&err),
    }
}

/// A lookup: the token checked, then the tool's envelope, 200 whatever `ok`.
fn lookup<T: Serialize>(
    rest: &Rest,
    headers: &HeaderMap,
    look: impl FnOnce(&Service) -> Result<Envelope<T>, ServiceError>,
) -> Response {
    if let Err(denied) = authorize(rest, headers) {
        return fault(*denied);
    }
    match look(&rest.service) {
        Ok(found) => Response::builder()
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Body::from(found.to_json().expect("a lookup serializes")))
            .expect("a JSON response"),
        Err(err) => failed(&err),
    }
}

async fn campaign(
    State(rest): State<Arc<Rest>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    lookup(&rest, &headers, |service| service.lookup_campaign(&id))
}

async fn message(
    State(rest): State<Arc<Rest>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    lookup(&rest, &headers, |service| service.lookup_message(&id))
}
