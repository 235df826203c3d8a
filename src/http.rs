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
//! | [`Fault::SlowBody`] | 408 | |
//! | [`Fault::TooLarge`] | 413 | |
//! | [`Fault::UnsupportedMediaType`] | 415 | `Accept-Post: application/json` |
//!
//! [`credentials`] reads the `Authorization` header (the scheme name is case-insensitive) and
//! [`auth::require_json`] the `Content-Type`, so a handler meets each fault with one line. With
//! axum, the router's fallbacks answer the last two kinds:
//!
//! ```text
//! Router::new()
//!     .route("/tools/{name}", post(call))
//!     .fallback(|uri: Uri| async move { Fault::no_route(uri.path()) })
//!     .method_not_allowed_fallback(|method: Method| async move { Fault::method_not_allowed(method.as_str()) })
//! ```
//!
//! Each concept is a module: [`problem`] (RFC 9457 problems, written and read), [`fault`]
//! (the façade's transport and auth faults), [`auth`] (credentials, content type, the bearer
//! gate), [`resource_metadata`] (RFC 9728, which the gate's challenges name), [`rest`] (the
//! REST profile of guarantee results), [`classify`](mod@classify) (the agent's side:
//! what a response means), [`header`] (the profile's header names, and reading `Retry-After` and challenges),
//! [`ratelimit`] (the `RateLimit` and `RateLimit-Policy` fields) and, with `axum`, `layers`
//! (every error a problem). The names a handler reaches for first are here at the root too.
//!
//! ```
//! use agent_tool_result::http::{Fault, envelope_response};
//! use agent_tool_result::{Classified, Envelope, ToolError};
//!
//! let failure: Envelope = Envelope::failure(ToolError::new(Classified::WINDOW_NOT_FOUND, "No window."));
//! let response = envelope_response(&failure)?;
//! assert_eq!(response.status(), 200);
//! assert_eq!(response.headers()["content-type"], "application/json");
//!
//! let fault = Fault::unknown_tool("delete_everything").into_http_response();
//! assert_eq!(fault.status(), 404);
//! assert_eq!(fault.headers()["content-type"], "application/problem+json");
//! # Ok::<(), serde_json::Error>(())
//! ```

pub mod auth;
pub mod classify;
mod facade;
pub mod fault;
pub mod header;
#[cfg(feature = "replay")]
mod idempotency;
#[cfg(feature = "axum")]
#[cfg_attr(docsrs, doc(cfg(feature = "axum")))]
pub mod layers;
mod media;
#[cfg(feature = "openapi")]
#[cfg_attr(docsrs, doc(cfg(feature = "openapi")))]
pub mod openapi;
pub mod problem;
pub mod ratelimit;
pub mod resource_metadata;
pub mod rest;

pub use auth::{BearerGate, credentials};
pub use classify::{RestOutcome, classify};
pub use facade::envelope_response;
pub use fault::Fault;
#[cfg(all(feature = "axum", feature = "replay"))]
pub use idempotency::KeyedJson;
pub use media::{APPLICATION_JSON, APPLICATION_PROBLEM_JSON};
pub use problem::Problem;
pub use rest::RestProfile;
