//! [`Problem`]: RFC 9457 problem details.
//!
//! ```
//! use agent_tool_result::http::Problem;
//! use http::StatusCode;
//!
//! let problem = Problem::new(StatusCode::NOT_FOUND)?.with_detail("no tool named `fnd`");
//! assert_eq!(problem.title(), "Not Found");
//! assert_eq!(problem.problem_type(), "about:blank");
//! // An error status only: a 200 is never a problem.
//! assert!(Problem::new(StatusCode::OK).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use ::http::{Response, StatusCode};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::media::{APPLICATION_PROBLEM_JSON, json_response};
use crate::JsonObject;

/// The error for an extension member named like one of a problem's standard members (`type`,
/// `title`, `status`, `detail`, `instance`), which it cannot replace.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is a standard member of a problem, not an extension member")]
pub struct ReservedMember(String);

impl ReservedMember {
    /// The member's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.0
    }
}

/// The error for a problem built with a status that is not an error: RFC 9110 defines the
/// client errors (4xx) and server errors (5xx), 400 to 599, and no status above.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a problem describes an error, and {0} is not an error status (400 to 599)")]
pub struct NotAnErrorStatus(StatusCode);

/// Whether `status` is an error status as RFC 9110 defines them: 4xx or 5xx.
fn is_error_status(status: StatusCode) -> bool {
    (400..=599).contains(&status.as_u16())
}

/// A problem details object (RFC 9457): `{ type, title, status, detail?, instance?, ... }`.
///
/// ```
/// use agent_tool_result::http::Problem;
/// use http::StatusCode;
///
/// let problem = Problem::new(StatusCode::BAD_REQUEST)?.with_detail("body is not JSON");
/// assert_eq!(
///     serde_json::to_string(&problem)?,
///     r#"{"type":"about:blank","title":"Bad Request","status":400,"detail":"body is not JSON"}"#,
/// );
/// // A problem is an error: a 200 labelled problem+json cannot be built.
/// assert!(Problem::new(StatusCode::OK).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
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
    ///
    /// # Errors
    ///
    /// [`NotAnErrorStatus`] for a status that is not 400 to 599: a problem describes an
    /// error.
    pub fn new(status: StatusCode) -> Result<Self, NotAnErrorStatus> {
        if !is_error_status(status) {
            return Err(NotAnErrorStatus(status));
        }
        Ok(Problem::of_error(status))
    }

    /// [`Problem::new`] for a status known to be an error.
    pub(crate) fn of_error(status: StatusCode) -> Self {
        debug_assert!(is_error_status(status));
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
    ///
    /// # Errors
    ///
    /// [`NotAnErrorStatus`] for a status below 400.
    pub fn typed(
        status: StatusCode,
        problem_type: impl Into<String>,
        title: impl Into<String>,
    ) -> Result<Self, NotAnErrorStatus> {
        Ok(Problem {
            type_uri: problem_type.into(),
            title: title.into(),
            ..Problem::new(status)?
        })
    }

    /// Sets the problem type URI.
    #[must_use]
    pub fn with_type(mut self, problem_type: impl Into<String>) -> Self {
        self.type_uri = problem_type.into();
        self
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

    /// Adds an extension member.
    ///
    /// # Errors
    ///
    /// [`ReservedMember`] for a standard member's name (`type`, `title`, `status`, `detail`,
    /// `instance`): they are set with their own methods, and an extension never replaces one.
    pub fn with_extension(
        mut self,
        name: impl Into<String>,
        value: Value,
    ) -> Result<Self, ReservedMember> {
        let name = name.into();
        if crate::guarantee::fields::PROBLEM_MEMBERS.contains(&name.as_str()) {
            return Err(ReservedMember(name));
        }
        self.extensions.insert(name, value);
        Ok(self)
    }

    /// The URI of this occurrence, if any.
    #[must_use]
    pub fn instance(&self) -> Option<&str> {
        self.instance.as_deref()
    }

    /// The extension members, in the order they were added.
    #[must_use]
    pub fn extensions(&self) -> &JsonObject {
        &self.extensions
    }

    /// The HTTP status.
    #[must_use]
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The human-readable explanation of this occurrence, if any.
    #[must_use]
    pub fn detail(&self) -> Option<&str> {
        self.detail.as_deref()
    }

    /// The short summary of the problem type.
    #[must_use]
    pub fn title(&self) -> &str {
        &self.title
    }

    /// The problem type URI.
    #[must_use]
    pub fn problem_type(&self) -> &str {
        &self.type_uri
    }

    /// The response: this status, `application/problem+json`, this body. (With the `axum`
    /// feature, `IntoResponse::into_response` gives the same response with axum's body.)
    ///
    /// # Panics
    ///
    /// Never: a problem always serializes.
    #[must_use]
    pub fn into_http_response(self) -> Response<Vec<u8>> {
        let body = serde_json::to_vec(&self).expect("a problem always serializes");
        json_response(self.status, APPLICATION_PROBLEM_JSON, body)
    }
}

/// Reading a problem back, as RFC 9457 section 3.1 reads one: a standard member whose value
/// has the wrong type is ignored (`type` is then `about:blank`, `title` the status's reason
/// phrase), and every other member is an extension, kept as it is.
impl Problem {
    /// The problem a response's body carries. The HTTP status stands in for a `status`
    /// member that is absent or is not an error status (RFC 9457 calls the member advisory);
    /// a member that differs from the HTTP status is kept as written (see
    /// [`profile_breaches`](super::classify::profile_breaches)).
    ///
    /// ```
    /// use agent_tool_result::http::Problem;
    /// use http::StatusCode;
    ///
    /// let body = br#"{"type":"https://api.example/problems/quota","title":"Over quota","limit":100}"#;
    /// let problem = Problem::from_body(StatusCode::TOO_MANY_REQUESTS, body)?;
    /// assert_eq!(problem.status(), StatusCode::TOO_MANY_REQUESTS);
    /// assert_eq!(problem.problem_type(), "https://api.example/problems/quota");
    /// assert_eq!(problem.extensions()["limit"], 100);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// When the body is not a JSON object, or neither its `status` member nor `status` is an
    /// error status (400 to 599; a member outside it is not taken).
    pub fn from_body(status: StatusCode, body: &[u8]) -> Result<Self, serde_json::Error> {
        let members: JsonObject = serde_json::from_slice(body)?;
        Problem::from_members(members, Some(status)).map_err(serde::de::Error::custom)
    }

    fn from_members(mut members: JsonObject, status: Option<StatusCode>) -> Result<Self, String> {
        let mut text = |name: &str| match members.remove(name) {
            Some(Value::String(value)) => Some(value),
            _ => None,
        };
        let (type_uri, title) = (text("type"), text("title"));
        let (detail, instance) = (text("detail"), text("instance"));
        let member = members
            .remove("status")
            .and_then(|v| v.as_u64())
            .and_then(|n| u16::try_from(n).ok())
            .and_then(|n| StatusCode::from_u16(n).ok())
            .filter(|s| is_error_status(*s));
        let status = member.or(status).ok_or_else(|| {
            "a problem needs an error status: a status member of 400 to 599, or the response's"
                .to_owned()
        })?;
        if !is_error_status(status) {
            return Err(NotAnErrorStatus(status).to_string());
        }
        let problem = Problem::of_error(status);
        Ok(Problem {
            type_uri: type_uri.unwrap_or(problem.type_uri),
            title: title.unwrap_or(problem.title),
            detail,
            instance,
            extensions: members,
            ..problem
        })
    }
}

/// Reads a problem on its own: its `status` member must be an error status.
impl<'de> Deserialize<'de> for Problem {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let members = JsonObject::deserialize(deserializer)?;
        Problem::from_members(members, None).map_err(serde::de::Error::custom)
    }
}

impl From<&crate::guarantee::Refusal> for Problem {
    /// The refusal's problem with its default type: its status, type, title and detail, and
    /// `retryAt` as an extension member when known (REST adds `Retry-After`).
    fn from(refusal: &crate::guarantee::Refusal) -> Self {
        let kind = refusal.kind();
        let status = StatusCode::from_u16(kind.status()).expect("the table's statuses are valid");
        let mut problem = Problem {
            type_uri: kind.problem_type().to_owned(),
            title: kind.title().to_owned(),
            ..Problem::of_error(status)
        }
        .with_detail(refusal.detail());
        if let Some(retry_at) = refusal.retry_at() {
            problem.extensions.insert(
                "retryAt".to_owned(),
                Value::String(crate::guarantee::format_instant(retry_at)),
            );
        }
        problem
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
