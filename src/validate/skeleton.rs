//! The envelope as the schema needs to see it, without the tool's payloads: `result` and
//! `error.partialResult` are checked as JSON (numbers, strings, depth) and kept only as their
//! type, since the schema asks nothing of them but that. A report on a 200 MB result then
//! costs about the text, not a tree of the result ten times its size.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::strict::Checked;

/// Parses `text` into the envelope's skeleton: the same verdict and findings from the schema
/// as the whole value would give. The flag tells whether a key repeats in the envelope, its
/// error or one of its warnings (the parsed value keeps only the last of them).
pub(crate) fn parse(text: &str) -> Result<(Value, bool), serde_json::Error> {
    let repeated = Cell::new(false);
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = Seed {
        level: Level::Envelope,
        repeated: &repeated,
    }
    .deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok((value, repeated.get()))
}

/// Where in the envelope a value sits.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    /// The document root.
    Envelope,
    /// `error`: its `partialResult` is a payload.
    Error,
    /// `warnings`: each item is a warning.
    Warnings,
    /// One item of `warnings`.
    Warning,
    /// A payload: kept as its type only.
    Payload,
}

/// A value at a level, noting a repeated key in the contract's objects.
#[derive(Clone, Copy)]
struct Seed<'a> {
    level: Level,
    repeated: &'a Cell<bool>,
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        match self.level {
            Level::Payload => deserializer.deserialize_any(PayloadVisitor),
            _ => deserializer.deserialize_any(LevelVisitor(self)),
        }
    }
}

/// Reads a value whole, except the payload members of the envelope or its error.
struct LevelVisitor<'a>(Seed<'a>);

impl<'de> Visitor<'de> for LevelVisitor<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let Seed { level, repeated } = self.0;
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let inner = match (level, key.as_str()) {
                (Level::Envelope, "result") | (Level::Error, "partialResult") => Level::Payload,
                (Level::Envelope, "error") => Level::Error,
                (Level::Envelope, "warnings") => Level::Warnings,
                _ => {
                    let value: Value = map.next_value()?;
                    if object.insert(key, value).is_some() && level != Level::Warnings {
                        repeated.set(true);
                    }
                    continue;
                }
            };
            let value = map.next_value_seed(Seed {
                level: inner,
                repeated,
            })?;
            if object.insert(key, value).is_some() {
                repeated.set(true);
            }
        }
        Ok(Value::Object(object))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let Seed { level, repeated } = self.0;
        if level != Level::Warnings {
            return serde::de::Deserialize::deserialize(de::value::SeqAccessDeserializer::new(seq));
        }
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Seed {
            level: Level::Warning,
            repeated,
        })? {
            items.push(item);
        }
        Ok(Value::Array(items))
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
        let (skeleton, repeated) = parse(text).unwrap();
        assert!(!repeated);
        assert_eq!(
            skeleton,
            serde_json::json!({"ok":false,"result":{},"error":{"code":"x","category":"t","detail":"d","lastObservation":{"kind":"k","n":[1]},"partialResult":[]},"extra":{"deep":[true]}})
        );
        for broken in [r#"{"result":{"n":1e400}}"#, r#"{"result":{"s":"\ud800"}}"#] {
            assert!(parse(broken).is_err(), "{broken}");
        }
        for (text, repeated) in [
            (r#"{"ok":true,"ok":false}"#, true),
            (r#"{"error":{"code":"a","c\u006fde":"b"}}"#, true),
            (r#"{"warnings":[{},{"code":"a","code":"b"}]}"#, true),
            (r#"{"error":{},"error":{}}"#, true),
            (
                r#"{"result":{"a":1,"a":2},"error":{"partialResult":{"b":1,"b":1}}}"#,
                false,
            ),
            (
                r#"{"error":{"lastObservation":{"a":1,"a":1}},"extra":{"a":1,"a":1}}"#,
                false,
            ),
            (r#"{"warnings":{"a":1,"a":1}}"#, false),
            (r#"{"warnings":[[{"a":1,"a":1}]]}"#, false),
        ] {
            assert_eq!(parse(text).unwrap().1, repeated, "{text}");
        }
        assert_eq!(
            parse("[1,{\"result\":{\"a\":1}}]").unwrap(),
            (serde_json::json!([1, {"result":{"a":1}}]), false)
        );
    }
}
