//! [`Envelope`]: the one result shape every agent tool returns, and its [`Outcome`].

pub(crate) mod wire;

use crate::{ToolError, Warning};

/// A tool call's outcome: a success with an optional result, or a failure with its error.
///
/// The contract's invariant (success has no error, failure has an error and no result) lives
/// in this type, so an envelope that breaks it cannot be built.
///
/// ```
/// use agent_tool_result::{Classified, Envelope, Outcome, ToolError};
///
/// let envelope: Envelope = Envelope::failure(ToolError::new(Classified::WINDOW_CLOSED, "gone"));
/// match envelope.outcome() {
///     Outcome::Success(result) => println!("{result:?}"),
///     Outcome::Failure(error) => assert_eq!(error.code().as_str(), "window-closed"),
/// }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome<T> {
    /// `ok: true`. The result, when the tool has something to report.
    Success(Option<T>),
    /// `ok: false`, with why.
    Failure(ToolError),
}

impl<T> Outcome<T> {
    /// Whether this is a success (the wire's `ok`).
    #[must_use]
    pub const fn is_ok(&self) -> bool {
        matches!(self, Outcome::Success(_))
    }
}

/// The result envelope: `{ ok, sessionId?, result?, warnings?, error? }`.
///
/// `T` is the tool's result type; it must serialize to a JSON object. The default, `Envelope`
/// (that is, `Envelope<serde_json::Value>`), reads any valid envelope and takes what `json!`
/// builds, so the common case needs no type; a result that is not an object is refused when
/// the envelope is written ([`Envelope::to_json`] names the rule). A typed result (a struct, or
/// [`JsonObject`](crate::JsonObject)) cannot be anything else.
///
/// ```
/// use agent_tool_result::{Envelope, JsonObject};
/// use serde_json::json;
///
/// fn find() -> Envelope {
///     Envelope::success(json!({ "automationId": "btnOk" }))
/// }
/// assert_eq!(find().to_json()?, r#"{"ok":true,"result":{"automationId":"btnOk"}}"#);
/// let not_an_object = Envelope::success(json!([1, 2])).to_json().unwrap_err();
/// assert!(not_an_object.to_string().contains("object"), "{not_an_object}");
///
/// let mut result = JsonObject::new();
/// result.insert("automationId".into(), "btnOk".into());
/// let typed: Envelope<JsonObject> = Envelope::success(result);
/// assert_eq!(typed.to_json()?, find().to_json()?);
/// # Ok::<(), serde_json::Error>(())
/// ```
///
/// Serialization writes the contract's compact wire form: keys in the order `ok`, `sessionId`,
/// `result`, `warnings`, `error`, with absent fields (and an empty warning list) omitted, never
/// `null`. Deserialization enforces the contract and names the rule it finds broken; see
/// [`Envelope::from_json`].
///
/// ```
/// use agent_tool_result::{Classified, Envelope, ToolError, Warning, WarningCode};
/// use serde_json::json;
///
/// let success = Envelope::success(json!({ "windows": 2 }))
///     .with_session("s-4f2a")
///     .with_warning(Warning::new(WarningCode::TREE_TRUNCATED, "Clipped at 500 nodes."));
/// assert_eq!(
///     serde_json::to_string(&success)?,
///     r#"{"ok":true,"sessionId":"s-4f2a","result":{"windows":2},"warnings":[{"code":"tree-truncated","detail":"Clipped at 500 nodes."}]}"#,
/// );
///
/// let failure: Envelope = Envelope::failure(ToolError::new(
///     Classified::selector_matched(3).expect("3 matches are ambiguous"),
///     "Selector title='Save' matched 3 windows.",
/// ));
/// assert_eq!(
///     serde_json::to_string(&failure)?,
///     r#"{"ok":false,"error":{"code":"selector-matched-3","category":"ambiguous-selector","detail":"Selector title='Save' matched 3 windows."}}"#,
/// );
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Envelope<T = serde_json::Value> {
    session_id: Option<String>,
    outcome: Outcome<T>,
    warnings: Vec<Warning>,
}

impl<T> Envelope<T> {
    /// A success carrying `result`.
    #[must_use]
    pub fn success(result: T) -> Self {
        Envelope::from_outcome(Outcome::Success(Some(result)))
    }

    /// A success with nothing to report: `{"ok":true}`.
    #[must_use]
    pub fn success_empty() -> Self {
        Envelope::from_outcome(Outcome::Success(None))
    }

    /// A failure carrying `error`.
    #[must_use]
    pub fn failure(error: ToolError) -> Self {
        Envelope::from_outcome(Outcome::Failure(error))
    }

    /// An envelope with the given outcome, no session and no warnings.
    #[must_use]
    pub fn from_outcome(outcome: Outcome<T>) -> Self {
        Envelope {
            session_id: None,
            outcome,
            warnings: Vec::new(),
        }
    }

    /// Sets the owning session's id.
    #[must_use]
    pub fn with_session(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }

    /// Appends a warning.
    #[must_use]
    pub fn with_warning(mut self, warning: Warning) -> Self {
        self.warnings.push(warning);
        self
    }

    /// Appends several warnings.
    #[must_use]
    pub fn with_warnings(mut self, warnings: impl IntoIterator<Item = Warning>) -> Self {
        self.warnings.extend(warnings);
        self
    }

    /// Appends a warning in place, for code that collects warnings as it goes.
    pub fn push_warning(&mut self, warning: Warning) {
        self.warnings.push(warning);
    }

    /// Whether the call succeeded: the wire's `ok`, the field an agent branches on first.
    #[must_use]
    pub const fn is_ok(&self) -> bool {
        self.outcome.is_ok()
    }

    /// The owning session's id, if the call ran inside a session.
    #[must_use]
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The outcome.
    #[must_use]
    pub fn outcome(&self) -> &Outcome<T> {
        &self.outcome
    }

    /// The success result, if this is a success that has one.
    #[must_use]
    pub fn result(&self) -> Option<&T> {
        match &self.outcome {
            Outcome::Success(result) => result.as_ref(),
            Outcome::Failure(_) => None,
        }
    }

    /// The error, if this is a failure.
    #[must_use]
    pub fn error(&self) -> Option<&ToolError> {
        match &self.outcome {
            Outcome::Success(_) => None,
            Outcome::Failure(error) => Some(error),
        }
    }

    /// The warnings, possibly empty.
    #[must_use]
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// Takes the outcome, dropping the session id and warnings.
    #[must_use]
    pub fn into_outcome(self) -> Outcome<T> {
        self.outcome
    }

    /// Converts into `Result`: the success's result or the failure's error.
    ///
    /// # Errors
    ///
    /// The [`ToolError`] of a failure.
    pub fn into_result(self) -> Result<Option<T>, ToolError> {
        match self.outcome {
            Outcome::Success(result) => Ok(result),
            Outcome::Failure(error) => Err(error),
        }
    }

    /// Changes the result type, keeping the session id, warnings and any error.
    #[must_use]
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Envelope<U> {
        Envelope {
            session_id: self.session_id,
            outcome: match self.outcome {
                Outcome::Success(result) => Outcome::Success(result.map(f)),
                Outcome::Failure(error) => Outcome::Failure(error),
            },
            warnings: self.warnings,
        }
    }
}

impl<T> From<ToolError> for Envelope<T> {
    fn from(error: ToolError) -> Self {
        Envelope::failure(error)
    }
}

impl<T> From<Result<T, ToolError>> for Envelope<T> {
    fn from(result: Result<T, ToolError>) -> Self {
        match result {
            Ok(value) => Envelope::success(value),
            Err(error) => Envelope::failure(error),
        }
    }
}
