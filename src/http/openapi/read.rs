//! The agent's side: a producer's problem types, read back from its published document.

use serde_json::Value;

use super::super::rest::ProblemTypes;
use super::components::{POLICY_DENY_MEMBER, REFUSAL_KIND_MEMBER};
use crate::guarantee::RefusalKind;

/// A document [`ProblemTypes::from_openapi`] cannot read the profile's problem types from.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not an OpenAPI document of the REST profile: {0}")]
pub struct NotAProfileDocument(String);

/// The `const` of a problem schema's `type` member, wherever its `allOf` puts it.
fn type_const(schema: &Value) -> Option<&str> {
    if let Some(uri) = schema
        .pointer("/properties/type/const")
        .and_then(Value::as_str)
    {
        return Some(uri);
    }
    schema.get("allOf")?.as_array()?.iter().find_map(type_const)
}

impl ProblemTypes {
    /// The problem types a producer declares in its OpenAPI document (as [`OpenApi`](super::OpenApi) writes
    /// it): each problem schema carrying [`REFUSAL_KIND_MEMBER`] or [`POLICY_DENY_MEMBER`]
    /// and a `type` const. A kind the document does not declare keeps its default type.
    ///
    /// ```
    /// use agent_tool_result::guarantee::RefusalKind;
    /// use agent_tool_result::http::rest::ProblemTypes;
    /// use agent_tool_result::http::openapi::OpenApi;
    ///
    /// let theirs = ProblemTypes::default()
    ///     .with_policy_deny("https://api.example/problems/denied")?
    ///     .with_refusal(RefusalKind::KeyMismatch, "https://api.example/problems/key-reused")?;
    /// let document = OpenApi::new("theirs", "1").with_problem_types(theirs.clone()).to_value();
    /// assert_eq!(ProblemTypes::from_openapi(&document)?, theirs);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`NotAProfileDocument`] when the document has no `components.schemas`, declares no
    /// problem type of the profile, names a refusal kind there is not, gives one no type,
    /// declares one answer twice, or gives two answers one type (or `about:blank` to an
    /// answer its status alone does not tell): a reader could not tell which answer a problem
    /// is, so the document is refused with the reason rather than read one way.
    pub fn from_openapi(document: &Value) -> Result<ProblemTypes, NotAProfileDocument> {
        let schemas = document
            .pointer("/components/schemas")
            .and_then(Value::as_object)
            .ok_or_else(|| NotAProfileDocument("it has no components.schemas".to_owned()))?;
        let mut types = ProblemTypes::default();
        let (mut declared, mut deny_seen, mut kinds_seen) = (0, false, Vec::new());
        for (name, schema) in schemas {
            let deny = schema.get(POLICY_DENY_MEMBER) == Some(&Value::Bool(true));
            let kind = schema.get(REFUSAL_KIND_MEMBER);
            if !deny && kind.is_none() {
                continue;
            }
            let refuse = |why: &dyn std::fmt::Display| {
                NotAProfileDocument(format!("schema `{name}`: {why}"))
            };
            let uri =
                type_const(schema).ok_or_else(|| refuse(&"it gives its problem no type const"))?;
            if deny {
                if std::mem::replace(&mut deny_seen, true) {
                    return Err(refuse(&"a second schema declares the policy deny"));
                }
                types = types.with_policy_deny(uri).map_err(|err| refuse(&err))?;
            }
            if let Some(kind) = kind {
                let kind: RefusalKind = kind
                    .as_str()
                    .unwrap_or_default()
                    .parse()
                    .map_err(|err: crate::guarantee::UnknownRefusalKind| refuse(&err))?;
                if kinds_seen.contains(&kind) {
                    return Err(refuse(&format_args!(
                        "a second schema declares {} refusals",
                        kind.as_str()
                    )));
                }
                kinds_seen.push(kind);
                types = types.with_refusal(kind, uri).map_err(|err| refuse(&err))?;
            }
            declared += 1;
        }
        if declared == 0 {
            return Err(NotAProfileDocument(format!(
                "no schema carries {REFUSAL_KIND_MEMBER} or {POLICY_DENY_MEMBER}"
            )));
        }
        Ok(types)
    }
}
