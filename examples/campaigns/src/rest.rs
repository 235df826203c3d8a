//! The REST side: the tools of [`crate::tools`], as the registry routes them (guarantee tools
//! at `POST /v1/tools/{tool}` with an `Idempotency-Key`, answered through the crate's REST
//! profile: 200, 202 + `Retry-After`, 422 problem, and the refusals' problems; lookups at
//! `GET /v1/campaigns/{campaignId}` and `GET /v1/messages/{messageId}`, answered with the
//! tool's envelope, 200 whatever `ok`), and the OpenAPI document made from the same list. The
//! bearer token is checked by [`authorize`] on every route, MCP's included.

use std::sync::Arc;

use agent_tool_result::http::openapi::OpenApi;
use agent_tool_result::http::resource_metadata::{ProtectedResourceMetadata, WELL_KNOWN_PATH};
use agent_tool_result::http::{BearerGate, Fault, RestProfile};
use agent_tool_result::registry::Principal;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::header::HOST;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::Value;

use crate::tools::Tools;

/// Who may call: the bearer gate and the tokens the service accepts, each its own principal.
pub struct Access {
    /// The gate: challenges and resource metadata.
    pub gate: BearerGate,
    /// Each accepted bearer token, and the principal (account) it stands for.
    pub tokens: Vec<(String, String)>,
    /// The authorization servers that issue the service's tokens: when there are any, the
    /// service publishes its protected resource metadata (RFC 9728) at the well-known path,
    /// to anyone, and names it in every challenge the gate does not name another URL in.
    pub authorization_servers: Vec<String>,
    /// The service's resource identifier (`https://api.example`); by default `http://` and
    /// the request's `Host`.
    pub public_url: Option<String>,
}

impl Access {
    /// The service's protected resource metadata, as the request addressed it; `None`
    /// without authorization servers.
    fn metadata(&self, request: &Request) -> Option<Result<ProtectedResourceMetadata, Fault>> {
        if self.authorization_servers.is_empty() {
            return None;
        }
        let resource = match &self.public_url {
            Some(url) => url.clone(),
            None => match request.headers().get(HOST).and_then(|h| h.to_str().ok()) {
                Some(host) => format!("http://{host}"),
                None => return Some(Err(Fault::malformed("the request names no Host"))),
            },
        };
        let built = ProtectedResourceMetadata::new(resource).and_then(|metadata| {
            self.authorization_servers.iter().try_fold(
                metadata.with_resource_name("campaigns"),
                |metadata, issuer| metadata.with_authorization_server(issuer.as_str()),
            )
        });
        Some(built.map_err(|err| Fault::malformed(err.to_string())))
    }
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
    // The OpenAPI document is public discovery, as the profile has it.
    if request.uri().path() == OPENAPI_PATH {
        return next.run(request).await;
    }
    let metadata = access.metadata(&request);
    // So is the protected resource metadata (RFC 9728), which a client reads before it has
    // a token, at the well-known path the challenge names: with the resource's own path
    // after it (`/.well-known/oauth-protected-resource/mcp` for `https://host/mcp`, section
    // 3.1), bare for a resource at the origin.
    let path = request.uri().path();
    let published = match &metadata {
        Some(Ok(metadata)) => path == metadata.well_known_path(),
        Some(Err(_)) => path.starts_with(WELL_KNOWN_PATH),
        None => false,
    };
    if published && let Some(metadata) = &metadata {
        return match metadata {
            Ok(metadata) => metadata.clone().into_response(),
            Err(fault) => fault.clone().into_response(),
        };
    }
    let gate = match &metadata {
        Some(Ok(metadata)) if access.gate.resource_metadata().is_none() => &access
            .gate
            .clone()
            .with_resource_metadata(metadata.well_known_url()),
        _ => &access.gate,
    };
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
            Some((_, principal)) => Ok(Principal::new(principal.as_str())),
            None => Err(Fault::invalid_token(
                gate.realm(),
                "the token is not one this service issued",
            )),
        }
    };
    match gate.authorize(request.headers(), verify) {
        Ok(principal) => {
            request.extensions_mut().insert(principal);
            next.run(request).await
        }
        Err(fault) => fault.into_response(),
    }
}

/// Where the service publishes its OpenAPI document, to anyone (public discovery).
pub const OPENAPI_PATH: &str = "/openapi.json";

/// The service's OpenAPI 3.1 document: the REST profile of its tools, from the registry.
pub fn openapi(tools: &Tools) -> Value {
    tools
        .openapi(
            OpenApi::new("campaigns", env!("CARGO_PKG_VERSION")).with_description(
                "Campaign tools whose guarantee results keep the REST profile: a settled result \
                 200, a hold 202 with Retry-After (never Location), a policy deny a 422 problem; \
                 every guarantee call takes an Idempotency-Key.",
            ),
        )
        .to_value()
}

/// The REST routes of the service's tools, and the OpenAPI document.
pub fn router(tools: &Tools) -> Router {
    let document = Arc::new(openapi(tools));
    tools.rest_routes(RestProfile::default()).route(
        OPENAPI_PATH,
        get(move || {
            let document = Arc::clone(&document);
            async move { axum::Json(document.as_ref().clone()) }
        }),
    )
}
