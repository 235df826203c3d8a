//! [`OutputSchema`]: the `outputSchema` a tool advertises in `tools/list`, compiled, and the
//! check a strict MCP client (the TypeScript SDK's) makes of each of the tool's results.

use serde_json::Value;

use crate::Rule;
use crate::rule::Finding;

/// A tool's advertised `outputSchema`, compiled once, to check the tool's `tools/call`
/// results as a strict client does: `structuredContent`, wherever a result carries it (an
/// error result too), keeps the schema; a result that is not an error carries it.
///
/// ```
/// use agent_tool_result::Rule;
/// use agent_tool_result::validate::OutputSchema;
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": { "sent": { "type": "integer" } },
///     "required": ["sent"],
/// });
/// let schema = OutputSchema::new("send_sms", &schema).unwrap();
/// let result = r#"{"content":[],"structuredContent":{"sent":"three"}}"#;
/// let findings = schema.check_text(result);
/// assert_eq!(findings[0].rule(), Rule::OutputSchema);
/// assert_eq!(findings[0].pointer(), "/structuredContent/sent");
/// assert_eq!((findings[0].line(), findings[0].column()), (1, 43));
/// assert!(schema.check_text(r#"{"content":[],"structuredContent":{"sent":3}}"#).is_empty());
/// ```
pub struct OutputSchema {
    tool: String,
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputSchema")
            .field("tool", &self.tool)
            .finish_non_exhaustive()
    }
}

/// A tool's `outputSchema` that does not compile as a JSON Schema.
#[derive(Debug, thiserror::Error)]
#[error("the outputSchema of tool `{tool}` is not a JSON Schema: {reason}")]
pub struct InvalidOutputSchema {
    tool: String,
    reason: String,
}

impl OutputSchema {
    /// Compiles `tool`'s `schema` (by its `$schema`, draft 2020-12 when it names none, as
    /// MCP says). MCP's `outputSchema` is an object schema: a JSON object whose `type` is
    /// `"object"`, so `true`, `{}` and `{"type": "array"}`, JSON Schemas all, are refused.
    ///
    /// ```
    /// use agent_tool_result::validate::OutputSchema;
    /// use serde_json::json;
    ///
    /// for schema in [json!(true), json!({}), json!({ "type": "array" })] {
    ///     let err = OutputSchema::new("t", &schema).unwrap_err();
    ///     assert!(err.to_string().contains(r#""type": "object""#), "{err}");
    /// }
    /// assert!(OutputSchema::new("t", &json!({ "type": "object" })).is_ok());
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidOutputSchema`] when the schema is not an object schema or does not compile.
    pub fn new(tool: impl Into<String>, schema: &Value) -> Result<Self, InvalidOutputSchema> {
        let tool = tool.into();
        let object = schema
            .as_object()
            .is_some_and(|schema| schema.get("type") == Some(&Value::from("object")));
        if !object {
            return Err(InvalidOutputSchema {
                tool,
                reason: format!(
                    "MCP's outputSchema is an object schema, with \"type\": \"object\"; this \
                     one is {}",
                    match schema {
                        Value::Object(members) => match members.get("type") {
                            None => "an object without a type".to_owned(),
                            Some(kind) => format!("of type {kind}"),
                        },
                        other => format!("`{other}`"),
                    }
                ),
            });
        }
        match jsonschema::validator_for(schema) {
            Ok(validator) => Ok(OutputSchema { tool, validator }),
            Err(err) => Err(InvalidOutputSchema {
                tool,
                reason: err.to_string(),
            }),
        }
    }

    /// The tool the schema is for.
    #[must_use]
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Checks a `tools/call` result, parsed: the findings, unplaced (line 0), their pointers
    /// from the result's root (`/structuredContent/...`). A result that is not an object has
    /// none here: its shape is another rule's.
    #[must_use]
    pub fn check(&self, result: &Value) -> Vec<Finding> {
        let Value::Object(result) = result else {
            return Vec::new();
        };
        let is_error = result.get("isError") == Some(&Value::Bool(true));
        self.check_structured(result.get("structuredContent"), is_error)
    }

    /// The findings of a result's `structuredContent` (`None`: the result has none), unplaced.
    pub(crate) fn check_structured(
        &self,
        structured: Option<&Value>,
        is_error: bool,
    ) -> Vec<Finding> {
        let Some(structured) = structured else {
            if is_error {
                return Vec::new();
            }
            return vec![Finding::new(
                Rule::OutputSchema,
                "",
                format!(
                    "tool `{}` advertises an outputSchema, and this result, not an error, \
                     carries no structuredContent",
                    self.tool
                ),
            )];
        };
        let mut findings = Vec::new();
        if self.validator.is_valid(structured) {
            return findings;
        }
        for error in self.validator.iter_errors(structured) {
            self.describe(&error, &mut findings);
        }
        findings
    }

    /// The findings of one error: where it broke, and which rule of the schema. An `anyOf`
    /// or `oneOf` that no branch matched is described by its closest branch (the fewest
    /// errors, then the deepest), so that the finding points at the member that breaks it
    /// rather than at the whole value.
    fn describe(&self, error: &jsonschema::ValidationError<'_>, out: &mut Vec<Finding>) {
        use jsonschema::error::ValidationErrorKind;
        if let ValidationErrorKind::AnyOf { context }
        | ValidationErrorKind::OneOfNotValid { context } = error.kind()
        {
            let depth = |branch: &Vec<jsonschema::ValidationError<'static>>| {
                branch
                    .iter()
                    .map(|e| e.instance_path().as_str().matches('/').count())
                    .max()
                    .unwrap_or(0)
            };
            let closest = context
                .iter()
                .filter(|branch| !branch.is_empty())
                .min_by_key(|branch| (branch.len(), std::cmp::Reverse(depth(branch))));
            if let Some(branch) = closest {
                for inner in branch {
                    self.describe(inner, out);
                }
                return;
            }
        }
        out.push(Finding::new(
            Rule::OutputSchema,
            format!("/structuredContent{}", error.instance_path().as_str()),
            format!(
                "structuredContent breaks the outputSchema of tool `{}`: {error} (schema rule \
                 `{}` at {})",
                self.tool,
                error.kind().keyword(),
                match error.schema_path().as_str() {
                    "" => "/",
                    path => path,
                }
            ),
        ));
    }

    /// Checks a `tools/call` result's JSON text: the findings of [`OutputSchema::check`],
    /// each at the line and column its value starts in `text`. A text that is not JSON has
    /// none here (its reader says what is wrong with it).
    #[must_use]
    pub fn check_text(&self, text: &str) -> Vec<Finding> {
        let Ok(result) = serde_json::from_str::<Value>(text) else {
            return Vec::new();
        };
        crate::locate::locate_all(text, self.check(&result))
    }
}
