//! The envelope's wire form: serde implementations that hold the contract's invariants.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{DeserializeOwned, MapAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Envelope, Outcome};
use crate::breach::{self, Breach};
use crate::object::FieldName;
use crate::object::{AsObject, Inside, OptionalObject, fields, read_once, required};
use crate::{ParseError, Rule, ToolError, Warning};

impl<T: Serialize> Serialize for Envelope<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (result, error) = match &self.outcome {
            Outcome::Success(result) => (result.as_ref(), None),
            Outcome::Failure(error) => (None, Some(error)),
        };
        let len = 1
            + usize::from(self.session_id.is_some())
            + usize::from(result.is_some())
            + usize::from(!self.warnings.is_empty())
            + usize::from(error.is_some());
        let mut out = serializer.serialize_struct("Envelope", len)?;
        out.serialize_field("ok", &self.outcome.is_ok())?;
        match &self.session_id {
            Some(id) => out.serialize_field("sessionId", id)?,
            None => out.skip_field("sessionId")?,
        }
        match result {
            Some(value) => out.serialize_field(
                "result",
                &AsObject {
                    field: "result",
                    value,
                },
            )?,
            None => out.skip_field("result")?,
        }
        if self.warnings.is_empty() {
            out.skip_field("warnings")?;
        } else {
            out.serialize_field("warnings", &self.warnings)?;
        }
        match error {
            Some(error) => out.serialize_field("error", error)?,
            None => out.skip_field("error")?,
        }
        out.end()
    }
}

fields! {
    /// The envelope's fields.
    pub(crate) enum Field for "an envelope" requires ["ok"] {
        Ok = "ok",
        SessionId = "sessionId",
        Result = "result",
        Warnings = "warnings",
        Error = "error",
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Envelope<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_map(EnvelopeVisitor(PhantomData))
            .map_err(|err| breach::tag(Rule::EnvelopeIsObject, err))
    }
}

struct EnvelopeVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for EnvelopeVisitor<T> {
    type Value = Envelope<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an envelope object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope<T>, A::Error> {
        let mut ok: Option<bool> = None;
        let mut session_id: Option<Option<String>> = None;
        let mut result: Option<Option<T>> = None;
        let mut warnings: Option<Vec<Warning>> = None;
        let mut error: Option<ToolError> = None;

        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Ok => read_once(&mut map, &mut ok, "ok", PhantomData)?,
                Field::SessionId => read_once(&mut map, &mut session_id, "sessionId", PhantomData)?,
                Field::Result => {
                    let seed = OptionalObject {
                        field: "result",
                        inside: Inside::Tool,
                        marker: PhantomData,
                    };
                    read_once(&mut map, &mut result, "result", seed)?;
                }
                Field::Warnings => read_once(&mut map, &mut warnings, "warnings", PhantomData)?,
                Field::Error => read_once(&mut map, &mut error, "error", PhantomData)?,
            }
        }

        let ok = required(ok, Field::OBJECT, "ok")?;
        let result = result.flatten();
        let outcome = match (ok, error) {
            (true, Some(_)) => return Err(breach::raise(Breach::SuccessWithError)),
            (true, None) => Outcome::Success(result),
            (false, None) => return Err(breach::raise(Breach::FailureWithoutError)),
            (false, Some(_)) if result.is_some() => {
                return Err(breach::raise(Breach::FailureWithResult));
            }
            (false, Some(error)) => Outcome::Failure(error),
        };
        Ok(Envelope {
            session_id: session_id.flatten(),
            outcome,
            warnings: warnings.unwrap_or_default(),
        })
    }
}

impl<T: DeserializeOwned> Envelope<T> {
    /// Reads an envelope from JSON text, enforcing the contract.
    ///
    /// This is `serde_json::from_str` with a better error: on failure the input is read once
    /// more to find where it broke, so the [`ParseError`] names the [`Rule`](crate::Rule), the
    /// JSON Pointer and the line and column. Success costs nothing extra.
    ///
    /// ```
    /// use agent_tool_result::{Envelope, Rule};
    ///
    /// let err = Envelope::<serde_json::Value>::from_json(
    ///     r#"{"ok":false,"error":{"code":"x","category":"Timeout","detail":""}}"#,
    /// )
    /// .unwrap_err();
    /// assert_eq!(err.rule(), Rule::CategoryClosedSet);
    /// assert_eq!(err.pointer(), "/error/category");
    /// ```
    ///
    /// # Errors
    ///
    /// A [`ParseError`] when the text is not JSON, is not an envelope, or breaks a rule.
    pub fn from_json(json: &str) -> Result<Self, ParseError> {
        // `from_str` skips the UTF-8 checks that `from_slice` must make.
        serde_json::from_str(json)
            .map_err(|first| ParseError::locate::<Self>(json.as_bytes(), &first))
    }

    /// Reads an envelope from JSON bytes; like [`Envelope::from_json`], and invalid UTF-8 is
    /// an error.
    ///
    /// # Errors
    ///
    /// A [`ParseError`] when the bytes are not UTF-8 JSON, are not an envelope, or break a rule.
    pub fn from_json_slice(json: &[u8]) -> Result<Self, ParseError> {
        serde_json::from_slice(json).map_err(|first| ParseError::locate::<Self>(json, &first))
    }

    /// Reads an envelope from an already parsed JSON value.
    ///
    /// Duplicate keys cannot be seen here (the value has already merged them); read from text
    /// with [`Envelope::from_json`] to reject them.
    ///
    /// # Errors
    ///
    /// A [`ParseError`] (without a line and column) when the value breaks a rule.
    pub fn from_value(value: &serde_json::Value) -> Result<Self, ParseError> {
        Envelope::deserialize(value).map_err(|_| ParseError::locate_in_value::<Self>(value))
    }
}

impl<T: Serialize> Envelope<T> {
    /// Writes the compact wire form.
    ///
    /// # Errors
    ///
    /// When the result does not serialize to a JSON object, or its own `Serialize` fails.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(self)
    }

    /// Writes the compact wire form as bytes.
    ///
    /// # Errors
    ///
    /// When the result does not serialize to a JSON object, or its own `Serialize` fails.
    pub fn to_json_vec(&self) -> Result<Vec<u8>, serde_json::Error> {
        serde_json::to_vec(self)
    }
}
