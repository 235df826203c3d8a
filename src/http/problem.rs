//! [`Problem`]: RFC 9457 problem details.

use ::http::{Response, StatusCode};
use serde::Serialize;
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

/// The error for a problem built with a status that is not an error (below 400).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a problem describes an error, and {0} is not an error status")]
pub struct NotAnErrorStatus(StatusCode);

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
    /// [`NotAnErrorStatus`] for a status below 400: a problem describes an error.
    pub fn new(status: StatusCode) -> Result<Self, NotAnErrorStatus> {
        if status.as_u16() < 400 {
            return Err(NotAnErrorStatus(status));
        }
        Ok(Problem::of_error(status))
    }

    /// [`Problem::new`] for a status known to be an error.
    pub(crate) fn of_error(status: StatusCode) -> Self {
        debug_assert!(status.as_u16() >= 400);
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
