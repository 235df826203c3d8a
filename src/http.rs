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
//! | [`Fault::Unauthenticated`] | 401 | `WWW-Authenticate: Bearer ..., error="invalid_token"` |
//! | [`Fault::Forbidden`] | 403 | `WWW-Authenticate: Bearer error="insufficient_scope"` when a scope is named |
//! | [`Fault::UnknownTool`] | 404 | |
//! | [`Fault::TooLarge`] | 413 | |
//!
//! ```
//! use agent_tool_result::http::{Fault, envelope_response};
//! use agent_tool_result::{Envelope, ErrorCode, ToolError};
//!
//! let failure: Envelope = Envelope::failure(ToolError::new(ErrorCode::WINDOW_NOT_FOUND, "No window."));
//! let response = envelope_response(&failure)?;
//! assert_eq!(response.status(), 200);
//! assert_eq!(response.headers()["content-type"], "application/json");
//!
//! let fault = Fault::unknown_tool("delete_everything").into_response();
//! assert_eq!(fault.status(), 404);
//! assert_eq!(fault.headers()["content-type"], "application/problem+json");
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::fmt;

use ::http::header::{CONTENT_TYPE, HeaderValue, WWW_AUTHENTICATE};
use ::http::{Response, StatusCode};
use serde::Serialize;
use serde_json::Value;

use crate::{Envelope, JsonObject};

/// `application/json`: the content type of an envelope.
pub const APPLICATION_JSON: &str = "application/json";

/// `application/problem+json`: the content type of a problem (RFC 9457).
pub const APPLICATION_PROBLEM_JSON: &str = "application/problem+json";

/// The 200 response for a call that reached the tool: the bare envelope as
/// `application/json`, whatever its `ok`.
///
/// # Errors
///
/// When the envelope does not serialize (its result is not a JSON object).
pub fn envelope_response<T: Serialize>(
    envelope: &Envelope<T>,
) -> Result<Response<Vec<u8>>, serde_json::Error> {
    let body = envelope.to_json_vec()?;
    Ok(json_response(StatusCode::OK, APPLICATION_JSON, body))
}

fn json_response(
    status: StatusCode,
    content_type: &'static str,
    body: Vec<u8>,
) -> Response<Vec<u8>> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// A problem details object (RFC 9457): `{ type, title, status, detail?, instance?, ... }`.
///
/// ```
/// use agent_tool_result::http::Problem;
/// use http::StatusCode;
///
/// let problem = Problem::new(StatusCode::BAD_REQUEST).with_detail("body is not JSON");
/// assert_eq!(
///     serde_json::to_string(&problem)?,
///     r#"{"type":"about:blank","title":"Bad Request","status":400,"detail":"body is not JSON"}"#,
/// );
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    type_uri: String,
    title: String,
    status: StatusCode,
    detail: Option<String>,
    instance: Option<String>,
    extensions: JsonObject,
}

impl Problem {
    /// A problem with no more meaning than its status: type `about:blank`, the status's reason
    /// phrase as title.
    #[must_use]
    pub fn new(status: StatusCode) -> Self {
        Problem {
            type_uri: "about:blank".to_owned(),
            title: status.canonical_reason().unwrap_or("Error").to_owned(),
            status,
            detail: None,
            instance: None,
            extensions: JsonObject::new(),
        }
    }

    /// A problem of a specific type (a URI) and title.
    #[must_use]
    pub fn typed(
        status: StatusCode,
        problem_type: impl Into<String>,
        title: impl Into<String>,
    ) -> Self {
        Problem {
            type_uri: problem_type.into(),
            title: title.into(),
            ..Problem::new(status)
        }
    }

    /// Sets the human-readable explanation of this occurrence.
    #[must_use]
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// Sets the URI of this occurrence.
    #[must_use]
    pub fn with_instance(mut self, instance: impl Into<String>) -> Self {
        self.instance = Some(instance.into());
        self
    }

    /// Adds an extension member. The standard members cannot be replaced this way.
    #[must_use]
    pub fn with_extension(mut self, name: impl Into<String>, value: Value) -> Self {
        let name = name.into();
        if !matches!(
            name.as_str(),
            "type" | "title" | "status" | "detail" | "instance"
        ) {
            self.extensions.insert(name, value);
        }
        self
    }

    /// The HTTP status.
    #[must_use]
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The problem type URI.
    #[must_use]
    pub fn problem_type(&self) -> &str {
        &self.type_uri
    }

    /// The response: this status, `application/problem+json`, this body.
    ///
    /// # Panics
    ///
    /// Never: a problem always serializes.
    #[must_use]
    pub fn into_response(self) -> Response<Vec<u8>> {
        let body = serde_json::to_vec(&self).expect("a problem always serializes");
        json_response(self.status, APPLICATION_PROBLEM_JSON, body)
    }
}

impl Serialize for Problem {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut out = serializer.serialize_map(None)?;
        out.serialize_entry("type", &self.type_uri)?;
        out.serialize_entry("title", &self.title)?;
        out.serialize_entry("status", &self.status.as_u16())?;
        if let Some(detail) = &self.detail {
            out.serialize_entry("detail", detail)?;
        }
        if let Some(instance) = &self.instance {
            out.serialize_entry("instance", instance)?;
        }
        for (name, value) in &self.extensions {
            out.serialize_entry(name, value)?;
        }
        out.end()
    }
}

/// A transport or auth fault of the HTTP façade: the request never became a tool call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// 400: the request is not a well-formed call (bad JSON, wrong shape).
    Malformed {
        /// What is wrong with it.
        detail: String,
    },
    /// 401: no token, or one that is invalid or expired.
    Unauthenticated {
        /// The protection space named in `WWW-Authenticate`.
        realm: String,
        /// What is wrong with the token.
        detail: String,
    },
    /// 403: the caller is known but may not make this call.
    Forbidden {
        /// The scope the call needs, when a missing scope is the reason.
        scope: Option<String>,
        /// Why not.
        detail: String,
    },
    /// 404: no tool by that name.
    UnknownTool {
        /// The name asked for.
        name: String,
    },
    /// 413: the body is larger than the façade accepts.
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
}

impl Fault {
    /// A 400 for a request that is not a well-formed call.
    #[must_use]
    pub fn malformed(detail: impl fmt::Display) -> Self {
        Fault::Malformed {
            detail: detail.to_string(),
        }
    }

    /// A 401 for a missing or invalid bearer token.
    #[must_use]
    pub fn unauthenticated(realm: impl Into<String>, detail: impl Into<String>) -> Self {
        Fault::Unauthenticated {
            realm: realm.into(),
            detail: detail.into(),
        }
    }

    /// A 403 for a caller whose token lacks `scope`.
    #[must_use]
    pub fn insufficient_scope(scope: impl Into<String>) -> Self {
        let scope = scope.into();
        Fault::Forbidden {
            detail: format!("the token lacks the scope `{scope}`"),
            scope: Some(scope),
        }
    }

    /// A 403 for any other refusal.
    #[must_use]
    pub fn forbidden(detail: impl Into<String>) -> Self {
        Fault::Forbidden {
            scope: None,
            detail: detail.into(),
        }
    }

    /// A 404 for a tool the façade does not have.
    #[must_use]
    pub fn unknown_tool(name: impl Into<String>) -> Self {
        Fault::UnknownTool { name: name.into() }
    }

    /// A 413 for a body over `limit` bytes.
    #[must_use]
    pub fn too_large(limit: usize) -> Self {
        Fault::TooLarge { limit }
    }

    /// The HTTP status.
    #[must_use]
    pub fn status(&self) -> StatusCode {
        match self {
            Fault::Malformed { .. } => StatusCode::BAD_REQUEST,
            Fault::Unauthenticated { .. } => StatusCode::UNAUTHORIZED,
            Fault::Forbidden { .. } => StatusCode::FORBIDDEN,
            Fault::UnknownTool { .. } => StatusCode::NOT_FOUND,
            Fault::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
        }
    }

    /// The `WWW-Authenticate` challenge (RFC 6750), for 401 and for a 403 naming a scope.
    #[must_use]
    pub fn www_authenticate(&self) -> Option<String> {
        match self {
            Fault::Unauthenticated { realm, detail } => Some(format!(
                "Bearer realm=\"{}\", error=\"invalid_token\", error_description=\"{}\"",
                quoted(realm),
                quoted(detail)
            )),
            Fault::Forbidden {
                scope: Some(scope), ..
            } => Some(format!(
                "Bearer error=\"insufficient_scope\", scope=\"{}\"",
                quoted(scope)
            )),
            _ => None,
        }
    }

    /// The problem details body.
    #[must_use]
    pub fn problem(&self) -> Problem {
        let problem = Problem::new(self.status());
        match self {
            Fault::Malformed { detail }
            | Fault::Unauthenticated { detail, .. }
            | Fault::Forbidden { detail, .. } => problem.with_detail(detail.clone()),
            Fault::UnknownTool { name } => problem.with_detail(format!("no tool named `{name}`")),
            Fault::TooLarge { limit } => problem
                .with_detail(format!(
                    "the body is larger than the {limit} bytes accepted"
                ))
                .with_extension("limit", Value::from(*limit)),
        }
    }

    /// The response: status, `WWW-Authenticate` where it applies, and the problem body.
    ///
    /// # Panics
    ///
    /// Never: the challenge is built from quoted printable text.
    #[must_use]
    pub fn into_response(self) -> Response<Vec<u8>> {
        let challenge = self.www_authenticate();
        let mut response = self.problem().into_response();
        if let Some(challenge) = challenge {
            let value =
                HeaderValue::from_str(&challenge).expect("a quoted challenge is a valid header");
            response.headers_mut().insert(WWW_AUTHENTICATE, value);
        }
        response
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.status())?;
        match self.problem().detail {
            Some(detail) => f.write_str(&detail),
            None => Ok(()),
        }
    }
}

impl std::error::Error for Fault {}

/// Text made safe for a quoted-string in a header: quotes and backslashes escaped, anything
/// that is not printable ASCII replaced.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            _ => out.push('?'),
        }
    }
    out
}

#[cfg(feature = "axum")]
mod axum_impls {
    use axum_core::body::Body;
    use axum_core::response::{IntoResponse, Response};
    use serde::Serialize;

    use super::{Fault, Problem, envelope_response};
    use crate::Envelope;

    /// 200 with the envelope; an envelope whose result does not serialize is a server bug and
    /// answers 500 with a problem.
    impl<T: Serialize> IntoResponse for Envelope<T> {
        fn into_response(self) -> Response {
            match envelope_response(&self) {
                Ok(response) => response.map(Body::from),
                Err(err) => Problem::new(http::StatusCode::INTERNAL_SERVER_ERROR)
                    .with_detail(format!("the tool's envelope does not serialize: {err}"))
                    .into_response()
                    .map(Body::from),
            }
        }
    }

    impl IntoResponse for Fault {
        fn into_response(self) -> Response {
            Fault::into_response(self).map(Body::from)
        }
    }

    impl IntoResponse for Problem {
        fn into_response(self) -> Response {
            Problem::into_response(self).map(Body::from)
        }
    }
}
