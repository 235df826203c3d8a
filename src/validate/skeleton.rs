//! The envelope as the schema needs to see it, without the tool's payloads: `result` and
//! `error.partialResult` are checked as JSON (numbers, strings, depth) and kept only as their
//! type, since the schema asks nothing of them but that. A report on a 200 MB result then
//! costs about the text, not a tree of the result ten times its size.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::strict::Checked;

/// Parses `text` into the envelope's skeleton: the same verdict and findings from the schema
/// as the whole value would give.
pub(crate) fn parse(text: &str) -> Result<Value, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = Level::Envelope.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// Where in the envelope a value sits.
#[derive(Clone, Copy)]
enum Level {
    /// The document root.
    Envelope,
    /// `error`: its `partialResult` is a payload.
    Error,
    /// A payload: kept as its type only.
    Payload,
}

impl<'de> DeserializeSeed<'de> for Level {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        match self {
            Level::Payload => deserializer.deserialize_any(PayloadVisitor),
            Level::Envelope | Level::Error => deserializer.deserialize_any(LevelVisitor(self)),
        }
    }
}

/// Reads a value whole, except the payload members of the envelope or its error.
struct LevelVisitor(Level);

impl<'de> Visitor<'de> for LevelVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let level = match (self.0, key.as_str()) {
                (Level::Envelope, "result") | (Level::Error, "partialResult") => Level::Payload,
                (Level::Envelope, "error") => Level::Error,
                _ => {
                    let value: Value = map.next_value()?;
                    object.insert(key, value);
                    continue;
                }
            };
            let value = map.next_value_seed(level)?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        serde::de::Deserialize::deserialize(de::value::SeqAccessDeserializer::new(seq))
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

/// Checks a payload and keeps only its JSON type, as the emptiest value of that type.
struct PayloadVisitor;

impl<'de> Visitor<'de> for PayloadVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        while map.next_entry::<Checked, Checked>()?.is_some() {}
        Ok(Value::Object(Map::new()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(Value::Array(Vec::new()))
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Value, E> {
        Ok(Value::from(0))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Value, E> {
        Ok(Value::from(0))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Value, E> {
        Ok(Value::from(0.5))
    }

    fn visit_str<E>(self, _: &str) -> Result<Value, E> {
        Ok(Value::String(String::new()))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_keep_their_type_and_everything_else_is_whole() {
        let text = r#"{"ok":false,"result":{"a":[1,2,{"b":"c"}]},"error":{"code":"x","category":"t","detail":"d","lastObservation":{"kind":"k","n":[1]},"partialResult":[1]},"extra":{"deep":[true]}}"#;
        let skeleton = parse(text).unwrap();
        assert_eq!(
            skeleton,
            serde_json::json!({"ok":false,"result":{},"error":{"code":"x","category":"t","detail":"d","lastObservation":{"kind":"k","n":[1]},"partialResult":[]},"extra":{"deep":[true]}})
        );
        for broken in [r#"{"result":{"n":1e400}}"#, r#"{"result":{"s":"\ud800"}}"#] {
            assert!(parse(broken).is_err(), "{broken}");
        }
        assert_eq!(
            parse("[1,{\"result\":{\"a\":1}}]").unwrap(),
            serde_json::json!([1, {"result":{"a":1}}])
        );
    }
}
