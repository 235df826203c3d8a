//! The registry over REST: an `axum` router of its tools (feature `axum`).

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{FromRequest, FromRequestParts, Path, RawPathParams, Request};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use serde_json::Value;

use super::{Admission, Method, Principal, Registry, Serve, ServeEnvelope, ServeKeyed, Shared};
use crate::guarantee::Refusal;
use crate::http::{Fault, KeyedJson, RestProfile};
use crate::replay::IdempotencyKey;

/// The largest body an envelope tool's `POST` reads, in bytes (a server bounds its bodies
/// before, with its own limit).
const BODY_LIMIT: usize = 1024 * 1024;

/// The principal `request` runs as: the one its authentication put on it, or the default.
fn principal_of(shared: &Shared, request: &Request) -> Option<Principal> {
    shared.principal(request.extensions().get::<Principal>())
}

/// The fault of a call no authentication put a principal on.
fn unauthenticated() -> Response {
    Fault::unauthenticated("tools").into_response()
}

/// A reply as the profile answers it, with the `RateLimit` fields of the admission, when
/// the call was counted (a replay is not).
fn keyed_response(
    profile: &RestProfile,
    reply: &crate::replay::Reply,
    admission: Option<&Admission>,
) -> Response {
    let mut response = profile.reply_response(reply).map(Body::from);
    if let Some((quota, remaining, reset)) = admission.and_then(|a| a.rate_limit.as_ref()) {
        quota.write(response.headers_mut(), *remaining, *reset);
    }
    response
}

/// The route of a guarantee tool: its key from `Idempotency-Key`, its arguments the JSON body.
fn keyed<S: Clone + Send + Sync + 'static>(
    name: &'static str,
    serve: Arc<ServeKeyed>,
    shared: Arc<Shared>,
    profile: Arc<RestProfile>,
) -> MethodRouter<S> {
    post(move |request: Request| async move {
        let Some(principal) = principal_of(&shared, &request) else {
            return unauthenticated();
        };
        // The key first, as over MCP: a missing or malformed one is refused (and counted)
        // before the body is read.
        let (key, arguments) = match IdempotencyKey::from_headers(request.headers()) {
            Err(err) => (Err(err), Value::Null),
            Ok(_) => match KeyedJson::from_request(request, &()).await {
                Ok(call) => {
                    let (key, arguments) = call.into_parts();
                    (Ok(key), arguments)
                }
                Err(rejection) => return rejection.into_response(),
            },
        };
        let (reply, admission) =
            super::keyed::serve_keyed(&shared, name, serve.as_ref(), principal, key, arguments)
                .await;
        keyed_response(&profile, &reply, admission.as_ref())
    })
}

/// An envelope tool's answer: 200 with its envelope whatever `ok`, or 503 when the service
/// could not answer.
async fn envelope(serve: &ServeEnvelope, principal: Principal, arguments: Value) -> Response {
    match serve(principal, arguments).await {
        Ok(envelope) => envelope.into_response(),
        Err(err) => Refusal::unavailable(err).into_response(),
    }
}

/// The route of a lookup: its arguments the path's parameters.
fn lookup<S: Clone + Send + Sync + 'static>(
    serve: Arc<ServeEnvelope>,
    shared: Arc<Shared>,
) -> MethodRouter<S> {
    get(move |request: Request| async move {
        let Some(principal) = principal_of(&shared, &request) else {
            return unauthenticated();
        };
        let (mut parts, _) = request.into_parts();
        let arguments = match RawPathParams::from_request_parts(&mut parts, &()).await {
            Ok(params) => params
                .iter()
                .map(|(name, value)| (name.to_owned(), Value::String(value.to_owned())))
                .collect(),
            Err(rejection) => return rejection.into_response(),
        };
        envelope(serve.as_ref(), principal, Value::Object(arguments)).await
    })
}

/// The route of an envelope tool served by `POST`: its arguments the JSON body.
fn posted<S: Clone + Send + Sync + 'static>(
    serve: Arc<ServeEnvelope>,
    shared: Arc<Shared>,
) -> MethodRouter<S> {
    post(move |request: Request| async move {
        let Some(principal) = principal_of(&shared, &request) else {
            return unauthenticated();
        };
        let Ok(body) = axum::body::to_bytes(request.into_body(), BODY_LIMIT).await else {
            return Fault::too_large(BODY_LIMIT).into_response();
        };
        match serde_json::from_slice(&body) {
            Ok(arguments) => envelope(serve.as_ref(), principal, arguments).await,
            Err(err) => Fault::malformed(format!("the body is not JSON: {err}")).into_response(),
        }
    })
}

impl<L, P> Registry<L, P> {
    /// The registry's tools as `axum` routes, answered by `profile` (the REST profile: 200,
    /// 202 with `Retry-After`, the 422 problem of a deny, the refusals' problems): each
    /// guarantee tool at `POST {tools path}/{name}` with its `Idempotency-Key` and JSON body,
    /// each lookup at `GET` its path, each other envelope tool at `POST` its path; any other
    /// name under the tools path answers the `unknown-tool` fault (404). The principal is the
    /// [`Principal`] the server's authentication put in the request's extensions, or the
    /// registry's default.
    ///
    /// ```
    /// # use agent_tool_result::registry::Registry;
    /// # use agent_tool_result::replay::{MemoryLedger, Sequence};
    /// use agent_tool_result::http::RestProfile;
    ///
    /// let tools = Registry::new(Sequence::new(MemoryLedger::new())).with_tools_path("/v1/tools");
    /// let app: axum::Router = tools.rest_routes(RestProfile::default());
    /// # let _ = app;
    /// ```
    pub fn rest_routes<S: Clone + Send + Sync + 'static>(&self, profile: RestProfile) -> Router<S> {
        let shared = Arc::new(self.shared.clone());
        let profile = Arc::new(profile);
        let mut router = Router::new();
        for entry in &self.entries {
            router = match (&entry.serve, &entry.rest) {
                (Serve::Keyed(serve), _) => router.route(
                    &self.keyed_path(entry.name),
                    keyed(
                        entry.name,
                        Arc::clone(serve),
                        Arc::clone(&shared),
                        Arc::clone(&profile),
                    ),
                ),
                (Serve::Envelope(serve), Some((Method::Get, path))) => {
                    router.route(path, lookup(Arc::clone(serve), Arc::clone(&shared)))
                }
                (Serve::Envelope(serve), Some((Method::Post, path))) => {
                    router.route(path, posted(Arc::clone(serve), Arc::clone(&shared)))
                }
                (Serve::Envelope(_), None) => router,
            };
        }
        router.route(
            &self.keyed_path("{tool}"),
            post(
                |Path(tool): Path<String>| async move { Fault::unknown_tool(tool).into_response() },
            ),
        )
    }
}
