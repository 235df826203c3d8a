//! [`IdempotencyKey`]: the key a guarantee call carries, from a header or an MCP argument.

use std::fmt;

use serde_json::Value;

/// The name of the MCP argument that carries the key.
pub const MCP_ARGUMENT: &str = "idempotencyKey";

/// The longest key accepted, in characters.
pub const MAX_KEY_LEN: usize = 255;

/// An idempotency key: 1 to 255 printable ASCII characters.
///
/// ```
/// use agent_tool_result::replay::IdempotencyKey;
///
/// let key = IdempotencyKey::from_header(r#""8e03978e-40d5-43e8""#)?;
/// assert_eq!(key.as_str(), "8e03978e-40d5-43e8");
/// assert_eq!(key.to_header(), r#""8e03978e-40d5-43e8""#);
/// assert!(IdempotencyKey::from_header("no-quotes").is_err());
/// # Ok::<(), agent_tool_result::replay::InvalidKey>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(String);

/// The error for a value that is not an idempotency key: missing or malformed
/// ([`InvalidKey::kind`]), and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid idempotency key: {why}")]
pub struct InvalidKey {
    kind: InvalidKeyKind,
    why: std::borrow::Cow<'static, str>,
}

/// Whether a call carried no key, or one that is not valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InvalidKeyKind {
    /// The call carries no key (`KeyMissing`, 400).
    Missing,
    /// The key is not a valid one (`KeyInvalid`, 400).
    Malformed,
}

impl InvalidKey {
    /// A key that is not there at all.
    pub(crate) fn missing() -> Self {
        InvalidKey {
            kind: InvalidKeyKind::Missing,
            why: "the call carries none".into(),
        }
    }

    /// A key that is malformed, and why.
    pub(crate) fn malformed(why: impl Into<std::borrow::Cow<'static, str>>) -> Self {
        InvalidKey {
            kind: InvalidKeyKind::Malformed,
            why: why.into(),
        }
    }

    /// Missing or malformed.
    #[must_use]
    pub fn kind(&self) -> InvalidKeyKind {
        self.kind
    }

    /// Whether there was no key at all, rather than a malformed one.
    #[must_use]
    pub fn is_missing(&self) -> bool {
        self.kind == InvalidKeyKind::Missing
    }

    /// The refusal a producer answers with (400 over REST, the same problem over MCP):
    /// missing or malformed, with this error's message as its detail.
    #[must_use]
    pub fn refusal(&self) -> crate::guarantee::Refusal {
        use crate::guarantee::{Refusal, RefusalKind};
        let kind = match self.kind {
            InvalidKeyKind::Missing => RefusalKind::KeyMissing,
            InvalidKeyKind::Malformed => RefusalKind::KeyInvalid,
        };
        Refusal::new(kind, self.to_string())
    }
}

impl IdempotencyKey {
    /// A key from its text (an MCP argument's value, say).
    ///
    /// # Errors
    ///
    /// [`InvalidKey`] when it is empty, longer than [`MAX_KEY_LEN`], or not printable ASCII.
    pub fn new(key: impl Into<String>) -> Result<Self, InvalidKey> {
        let key = key.into();
        let why = if key.is_empty() {
            "it is empty"
        } else if key.len() > MAX_KEY_LEN {
            "it is longer than 255 characters"
        } else if !key.bytes().all(|b| (b' '..=b'~').contains(&b)) {
            "it holds a character that is not printable ASCII"
        } else {
            return Ok(IdempotencyKey(key));
        };
        Err(InvalidKey::malformed(why))
    }

    /// A key from an `Idempotency-Key` header: a structured-field string (RFC 9651), in
    /// double quotes, with `\"` and `\\` escapes. Only what RFC 9651 and RFC 9110 strip around
    /// a field value is stripped, spaces and tabs; any other character outside the quotes
    /// (Unicode white space included) is refused. The key takes no parameters: a value with
    /// some (`"a";p=1`) is refused, naming them, rather than keyed on a part of what was sent.
    ///
    /// ```
    /// use agent_tool_result::replay::IdempotencyKey;
    ///
    /// assert_eq!(IdempotencyKey::from_header(" \t\"a\\\"b\" ")?.as_str(), "a\"b");
    /// let err = IdempotencyKey::from_header(r#""a";p=1"#).unwrap_err();
    /// assert_eq!(err.to_string(), "invalid idempotency key: the key takes no parameters (`;p=1`)");
    /// assert!(IdempotencyKey::from_header("\u{a0}\"a\"").is_err(), "no-break space is not stripped");
    /// # Ok::<(), agent_tool_result::replay::InvalidKey>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidKey`] when the value is not one quoted string or its key is not valid.
    pub fn from_header(value: &str) -> Result<Self, InvalidKey> {
        let value = value.trim_matches([' ', '\t']);
        let Some(rest) = value.strip_prefix('"') else {
            return Err(InvalidKey::malformed(
                "the header is not a quoted string (an sf-string)",
            ));
        };
        let mut key = String::with_capacity(rest.len());
        let mut chars = rest.char_indices();
        let end = loop {
            match chars.next() {
                None => return Err(InvalidKey::malformed("the quoted string is not closed")),
                Some((at, '"')) => break at,
                Some((_, '\\')) => match chars.next() {
                    Some((_, escaped @ ('"' | '\\'))) => key.push(escaped),
                    _ => {
                        return Err(InvalidKey::malformed(
                            "a backslash escapes only a quote or a backslash",
                        ));
                    }
                },
                Some((_, c)) => key.push(c),
            }
        };
        match &rest[end + 1..] {
            "" => IdempotencyKey::new(key),
            after if after.starts_with(';') => {
                let shown: String = after.chars().take(64).collect();
                Err(InvalidKey::malformed(format!(
                    "the key takes no parameters (`{shown}`)"
                )))
            }
            _ => Err(InvalidKey::malformed(
                "something follows the quoted string: the header is one sf-string",
            )),
        }
    }

    /// The key of an MCP call, from its [`MCP_ARGUMENT`] argument.
    ///
    /// ```
    /// use agent_tool_result::replay::IdempotencyKey;
    /// use serde_json::json;
    ///
    /// let arguments = json!({ "campaignId": "cmp_7f3a", "idempotencyKey": "batch-7" });
    /// let key = IdempotencyKey::from_arguments(arguments.as_object().unwrap())?;
    /// assert_eq!(key.as_str(), "batch-7");
    /// let none = IdempotencyKey::from_arguments(&serde_json::Map::new()).unwrap_err();
    /// assert!(none.is_missing());
    /// # Ok::<(), agent_tool_result::replay::InvalidKey>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidKey`] when the argument is absent ([`InvalidKey::is_missing`]), not a string,
    /// or not a valid key.
    pub fn from_arguments(arguments: &crate::JsonObject) -> Result<Self, InvalidKey> {
        match arguments.get(MCP_ARGUMENT) {
            None | Some(Value::Null) => Err(InvalidKey::missing()),
            Some(Value::String(key)) => IdempotencyKey::new(key.as_str()),
            Some(_) => Err(InvalidKey::malformed("the argument is not a string")),
        }
    }

    /// Takes the key of an MCP call out of its arguments: [`IdempotencyKey::from_arguments`],
    /// and the [`MCP_ARGUMENT`] removed whatever it held, so the tool reads only its own.
    ///
    /// # Errors
    ///
    /// As for [`IdempotencyKey::from_arguments`].
    pub fn take_from_arguments(arguments: &mut crate::JsonObject) -> Result<Self, InvalidKey> {
        let key = IdempotencyKey::from_arguments(arguments);
        arguments.remove(MCP_ARGUMENT);
        key
    }

    /// The JSON Schema of the [`MCP_ARGUMENT`] property, for a guarantee tool's input schema.
    #[must_use]
    pub fn argument_schema() -> Value {
        serde_json::json!({
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_KEY_LEN,
            "pattern": "^[ -~]+$",
            "description": "Idempotency key: the same key with the same arguments replays the \
                first result and sends nothing again; with other arguments it is refused."
        })
    }

    /// Adds the required [`MCP_ARGUMENT`] property to a tool's input schema (an object schema):
    /// under `properties`, and named in `required`.
    pub fn add_to_input_schema(schema: &mut crate::JsonObject) {
        let properties = schema
            .entry("properties")
            .or_insert_with(|| Value::Object(crate::JsonObject::new()));
        if let Value::Object(properties) = properties {
            properties.insert(MCP_ARGUMENT.to_owned(), IdempotencyKey::argument_schema());
        }
        let required = schema
            .entry("required")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(required) = required
            && !required.iter().any(|name| name == MCP_ARGUMENT)
        {
            required.push(Value::String(MCP_ARGUMENT.to_owned()));
        }
    }

    /// The key.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The key as an `Idempotency-Key` header value.
    #[must_use]
    pub fn to_header(&self) -> String {
        format!("\"{}\"", self.0.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

impl std::str::FromStr for IdempotencyKey {
    type Err = InvalidKey;

    /// [`IdempotencyKey::new`]: the key's own text (not a header's quoted form).
    fn from_str(key: &str) -> Result<Self, InvalidKey> {
        IdempotencyKey::new(key)
    }
}

impl TryFrom<String> for IdempotencyKey {
    type Error = InvalidKey;

    fn try_from(key: String) -> Result<Self, InvalidKey> {
        IdempotencyKey::new(key)
    }
}

/// A key is written as its text, and read back checked.
impl serde::Serialize for IdempotencyKey {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for IdempotencyKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let key = String::deserialize(deserializer)?;
        IdempotencyKey::new(key).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
