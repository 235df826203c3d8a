//! [`Fault`]: the transport and auth faults of the façade, each with its status, challenge
//! and problem body.
//!
//! ```
//! use agent_tool_result::http::Fault;
//!
//! let fault = Fault::unauthenticated("api").with_resource_metadata(
//!     "https://api.example/.well-known/oauth-protected-resource",
//! );
//! assert_eq!(fault.status(), 401);
//! assert!(fault.www_authenticate().unwrap().starts_with("Bearer realm=\"api\""));
//! let response = fault.into_http_response();
//! assert_eq!(response.headers()["content-type"], "application/problem+json");
//! ```

use std::fmt;

use ::http::header::{ACCEPT, HeaderName, HeaderValue, WWW_AUTHENTICATE};
use ::http::{Response, StatusCode};
use serde_json::Value;

use super::header::quoted;
use super::media::APPLICATION_JSON;
use super::problem::Problem;

/// A fault of the transport or of authentication: the call never reached a tool, so it
/// answers with a non-200 status and a problem, never an envelope.
///
/// Bad *arguments* are not a fault: they reach the tool's side of the contract as an
/// `invalid-argument` envelope (200).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// 400: the request is not well-formed (its body is not JSON, say).
    Malformed {
        /// What is wrong.
        detail: String,
    },
    /// 401: no credentials, or credentials of another scheme. The challenge names the realm
    /// and carries no error code (RFC 6750 section 3.1).
    Unauthenticated {
        /// The protection space.
        realm: String,
        /// The protected resource metadata URL (RFC 9728), which MCP clients follow.
        resource_metadata: Option<String>,
    },
    /// 401: a bearer token was sent and refused (`error="invalid_token"`).
    InvalidToken {
        /// The protection space.
        realm: String,
        /// Why the token was refused.
        detail: String,
        /// The protected resource metadata URL (RFC 9728).
        resource_metadata: Option<String>,
    },
    /// 403: the caller is known but may not do this; with a scope, the challenge says
    /// `insufficient_scope`.
    Forbidden {
        /// The scope the call needs, if that is what is missing.
        scope: Option<String>,
        /// What is refused.
        detail: String,
        /// The protected resource metadata URL (RFC 9728).
        resource_metadata: Option<String>,
    },
    /// 404: no tool of that name.
    UnknownTool {
        /// The name asked for.
        name: String,
    },
    /// 404: no route at that path.
    NoRoute {
        /// The path asked for.
        path: String,
    },
    /// 405: the route exists, the method does not (the router sets `Allow`).
    MethodNotAllowed {
        /// The method used.
        method: String,
    },
    /// 413: the body is larger than the façade accepts.
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// 408: the body did not arrive in full within the time the service waits for it (a
    /// client trickling it, or stalled).
    SlowBody {
        /// How long the service waits for a body, from the end of the head.
        within: std::time::Duration,
    },
    /// 415: the body is not `application/json`.
    UnsupportedMediaType {
        /// The `Content-Type` sent, if any.
        content_type: Option<String>,
    },
    /// 414: the request target is longer than the service reads.
    UriTooLong {
        /// The limit, in bytes.
        limit: usize,
    },
    /// 431: the request's header fields are larger than the service reads.
    HeadersTooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// Any other error status a layer below the service answered (a router's own rejection,
    /// say), made a problem with no more meaning than its status.
    Status {
        /// The status, 400 to 599 (any other is answered as 500).
        status: StatusCode,
    },
}

impl Fault {
    /// 400 for a request that is not well-formed.
    #[must_use]
    pub fn malformed(detail: impl fmt::Display) -> Self {
        Fault::Malformed {
            detail: detail.to_string(),
        }
    }

    /// 401 for a request without credentials, or with another scheme's.
    #[must_use]
    pub fn unauthenticated(realm: impl Into<String>) -> Self {
        Fault::Unauthenticated {
            realm: realm.into(),
            resource_metadata: None,
        }
    }

    /// 401 for a bearer token that was refused (expired, revoked, unknown).
    #[must_use]
    pub fn invalid_token(realm: impl Into<String>, detail: impl Into<String>) -> Self {
        Fault::InvalidToken {
            realm: realm.into(),
            detail: detail.into(),
            resource_metadata: None,
        }
    }

    /// 403 for a token that lacks `scope`.
    #[must_use]
    pub fn insufficient_scope(scope: impl Into<String>) -> Self {
        let scope = scope.into();
        Fault::Forbidden {
            detail: format!("the token lacks the scope `{scope}`"),
            scope: Some(scope),
            resource_metadata: None,
        }
    }

    /// 403 for anything else the caller may not do.
    #[must_use]
    pub fn forbidden(detail: impl Into<String>) -> Self {
        Fault::Forbidden {
            scope: None,
            detail: detail.into(),
            resource_metadata: None,
        }
    }

    /// 404 for a tool that does not exist.
    #[must_use]
    pub fn unknown_tool(name: impl Into<String>) -> Self {
        Fault::UnknownTool { name: name.into() }
    }

    /// 404 for a path no route serves: a router's fallback.
    #[must_use]
    pub fn no_route(path: impl Into<String>) -> Self {
        Fault::NoRoute { path: path.into() }
    }

    /// 405 for a method the route does not serve: a router's method fallback.
    #[must_use]
    pub fn method_not_allowed(method: impl Into<String>) -> Self {
        Fault::MethodNotAllowed {
            method: method.into(),
        }
    }

    /// 413 for a body over `limit` bytes.
    #[must_use]
    pub fn too_large(limit: usize) -> Self {
        Fault::TooLarge { limit }
    }

    /// 408 for a body not in full `within` the time the service waits for it.
    ///
    /// ```
    /// use agent_tool_result::http::Fault;
    ///
    /// let fault = Fault::slow_body(std::time::Duration::from_secs(10));
    /// assert_eq!(fault.status(), 408);
    /// assert_eq!(fault.problem().detail(), Some("the request body did not arrive within 10 s: send it at once"));
    /// ```
    #[must_use]
    pub fn slow_body(within: std::time::Duration) -> Self {
        Fault::SlowBody { within }
    }

    /// 415 for a body that is not JSON by its `Content-Type`.
    #[must_use]
    pub fn unsupported_media_type(content_type: Option<&str>) -> Self {
        Fault::UnsupportedMediaType {
            content_type: content_type.map(str::to_owned),
        }
    }

    /// 414 for a request target over `limit` bytes.
    #[must_use]
    pub fn uri_too_long(limit: usize) -> Self {
        Fault::UriTooLong { limit }
    }

    /// 431 for header fields over `limit` bytes in all.
    #[must_use]
    pub fn headers_too_large(limit: usize) -> Self {
        Fault::HeadersTooLarge { limit }
    }

    /// The HTTP status.
    #[must_use]
    pub fn status(&self) -> StatusCode {
        match self {
            Fault::Malformed { .. } => StatusCode::BAD_REQUEST,
            Fault::Unauthenticated { .. } | Fault::InvalidToken { .. } => StatusCode::UNAUTHORIZED,
            Fault::Forbidden { .. } => StatusCode::FORBIDDEN,
            Fault::UnknownTool { .. } | Fault::NoRoute { .. } => StatusCode::NOT_FOUND,
            Fault::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            Fault::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Fault::SlowBody { .. } => StatusCode::REQUEST_TIMEOUT,
            Fault::UnsupportedMediaType { .. } => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Fault::UriTooLong { .. } => StatusCode::URI_TOO_LONG,
            Fault::HeadersTooLarge { .. } => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            Fault::Status { status } if (400..=599).contains(&status.as_u16()) => *status,
            Fault::Status { .. } => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The `WWW-Authenticate` challenge (RFC 6750), for 401 always and for a 403 that names
    /// a scope.
    #[must_use]
    pub fn www_authenticate(&self) -> Option<String> {
        let (challenge, metadata) = match self {
            Fault::Unauthenticated {
                realm,
                resource_metadata,
            } => (
                format!("Bearer realm=\"{}\"", quoted(realm)),
                resource_metadata,
            ),
            Fault::InvalidToken {
                realm,
                detail,
                resource_metadata,
            } => (
                format!(
                    "Bearer realm=\"{}\", error=\"invalid_token\", error_description=\"{}\"",
                    quoted(realm),
                    quoted(detail)
                ),
                resource_metadata,
            ),
            Fault::Forbidden {
                scope: Some(scope),
                resource_metadata,
                ..
            } => (
                format!(
                    "Bearer error=\"insufficient_scope\", scope=\"{}\"",
                    quoted(scope)
                ),
                resource_metadata,
            ),
            _ => return None,
        };
        Some(match metadata {
            Some(url) => format!("{challenge}, resource_metadata=\"{}\"", quoted(url)),
            None => challenge,
        })
    }

    /// Names the protected resource metadata (RFC 9728) in the challenge of a 401 or of a
    /// 403 for scope, as the MCP authorization spec asks; other faults are left as they are.
    ///
    /// ```
    /// use agent_tool_result::http::Fault;
    ///
    /// let fault = Fault::unauthenticated("tools")
    ///     .with_resource_metadata("https://api.example/.well-known/oauth-protected-resource");
    /// assert_eq!(
    ///     fault.www_authenticate().unwrap(),
    ///     r#"Bearer realm="tools", resource_metadata="https://api.example/.well-known/oauth-protected-resource""#
    /// );
    /// ```
    #[must_use]
    pub fn with_resource_metadata(mut self, url: impl Into<String>) -> Self {
        if let Fault::Unauthenticated {
            resource_metadata, ..
        }
        | Fault::InvalidToken {
            resource_metadata, ..
        }
        | Fault::Forbidden {
            resource_metadata, ..
        } = &mut self
        {
            *resource_metadata = Some(url.into());
        }
        self
    }

    /// The problem details body.
    ///
    /// # Panics
    ///
    /// Never: its only extension member, `limit`, is no standard member.
    #[must_use]
    pub fn problem(&self) -> Problem {
        let problem = Problem::of_error(self.status());
        match self {
            Fault::Malformed { detail }
            | Fault::InvalidToken { detail, .. }
            | Fault::Forbidden { detail, .. } => problem.with_detail(detail.clone()),
            Fault::Unauthenticated { .. } => {
                problem.with_detail("a bearer token is required (Authorization: Bearer <token>)")
            }
            Fault::UnknownTool { name } => problem.with_detail(format!("no tool named `{name}`")),
            Fault::NoRoute { path } => {
                problem.with_detail(format!("nothing is served at `{path}`"))
            }
            Fault::MethodNotAllowed { method } => problem.with_detail(format!(
                "this route does not answer {method}; the Allow header lists the methods it does"
            )),
            Fault::TooLarge { limit } => problem
                .with_detail(format!(
                    "the body is larger than the {limit} bytes accepted"
                ))
                .with_extension("limit", Value::from(*limit))
                .expect("`limit` is no standard member"),
            Fault::SlowBody { within } => problem.with_detail(format!(
                "the request body did not arrive within {} s: send it at once",
                within.as_secs_f64()
            )),
            Fault::UriTooLong { limit } => problem.with_detail(format!(
                "the request target is longer than the {limit} bytes accepted"
            )),
            Fault::HeadersTooLarge { limit } => problem.with_detail(format!(
                "the header fields are larger than the {limit} bytes accepted"
            )),
            Fault::Status { .. } => {
                problem.with_detail(format!("the request was refused: {}", self.status()))
            }
            Fault::UnsupportedMediaType { content_type } => {
                problem.with_detail(match content_type {
                    Some(found) => format!("the body must be application/json, not `{found}`"),
                    None => {
                        "the body must be application/json; no Content-Type was sent".to_owned()
                    }
                })
            }
        }
    }

    /// The response: status, `WWW-Authenticate` where it applies, and the problem body.
    ///
    /// # Panics
    ///
    /// Never: the challenge is built from quoted printable text.
    #[must_use]
    pub fn into_http_response(self) -> Response<Vec<u8>> {
        let challenge = self.www_authenticate();
        let accepts_json = matches!(self, Fault::UnsupportedMediaType { .. });
        let mut response = self.problem().into_http_response();
        if let Some(challenge) = challenge {
            let value =
                HeaderValue::from_str(&challenge).expect("a quoted challenge is a valid header");
            response.headers_mut().insert(WWW_AUTHENTICATE, value);
        }
        if accepts_json {
            // RFC 9110 section 15.5.16: say which media types are accepted.
            let accept_post = HeaderName::from_static("accept-post");
            let json = HeaderValue::from_static(APPLICATION_JSON);
            response.headers_mut().insert(accept_post, json.clone());
            response.headers_mut().insert(ACCEPT, json);
        }
        response
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.status())?;
        match self.problem().detail() {
            Some(detail) => f.write_str(detail),
            None => Ok(()),
        }
    }
}

impl std::error::Error for Fault {}
