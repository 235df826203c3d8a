//! The envelope as the schema needs to see it, without what the schema does not look into.
//!
//! `result` and `error.partialResult` are checked as JSON (numbers, strings, depth) and kept
//! only as their type, since the schema asks nothing of them but that. An observation
//! (`error.lastObservation`) other than a capture summary is kept only where the schema could
//! object to it: its `kind`, every `base64` key and every string long enough to be image data,
//! with the objects and arrays that lead to them (an array keeps its length, its other items
//! null). A report on a 200 MB result then costs about the text, not a tree ten times its size.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::observation::{CAPTURE_SUMMARY_KIND, MAX_INLINE_BASE64};
use crate::strict::Checked;

/// Parses `text` into the envelope's skeleton: the same verdict and findings from the schema
/// as the whole value would give. The flag tells whether a key repeats in the envelope, its
/// error or one of its warnings (the parsed value keeps only the last of them).
pub(crate) fn parse(text: &str) -> Result<(Value, bool), serde_json::Error> {
    let (value, notes) = read(text, true)?;
    if notes.capture_summary.get() {
        // A capture summary is a closed object the schema checks whole: read it all.
        let (value, notes) = read(text, false)?;
        return Ok((value, notes.repeated.get()));
    }
    Ok((value, notes.repeated.get()))
}

/// What a read noticed on the way.
#[derive(Default)]
struct Notes {
    /// A key repeats in the envelope, its error or one of its warnings.
    repeated: Cell<bool>,
    /// An observation read pruned says it is a capture summary.
    capture_summary: Cell<bool>,
}

fn read(text: &str, prune: bool) -> Result<(Value, Notes), serde_json::Error> {
    let notes = Notes::default();
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = Seed {
        level: Level::Envelope,
        notes: &notes,
        prune,
    }
    .deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok((value, notes))
}

/// Where in the envelope a value sits.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    /// The document root.
    Envelope,
    /// `error`: its `partialResult` is a payload, its `lastObservation` an observation.
    Error,
    /// `warnings`: each item is a warning.
    Warnings,
    /// One item of `warnings`.
    Warning,
    /// `error.lastObservation`, read pruned.
    Observation,
    /// A payload: kept as its type only.
    Payload,
}

/// A value at a level.
#[derive(Clone, Copy)]
struct Seed<'a> {
    level: Level,
    notes: &'a Notes,
    /// Whether an observation is pruned.
    prune: bool,
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

/// Reads a value whole, except the payloads and observation of the envelope or its error.
struct LevelVisitor<'a>(Seed<'a>);

impl<'de> Visitor<'de> for LevelVisitor<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let seed = self.0;
        if seed.level == Level::Observation {
            return observation(map, seed.notes);
        }
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let inner = match (seed.level, key.as_str()) {
                (Level::Envelope, "result") | (Level::Error, "partialResult") => Level::Payload,
                (Level::Envelope, "error") => Level::Error,
                (Level::Envelope, "warnings") => Level::Warnings,
                (Level::Error, "lastObservation") if seed.prune => Level::Observation,
                _ => {
                    let value: Value = map.next_value()?;
                    if object.insert(key, value).is_some() && seed.level != Level::Warnings {
                        seed.notes.repeated.set(true);
                    }
                    continue;
                }
            };
            let value = map.next_value_seed(Seed {
                level: inner,
                ..seed
            })?;
            if object.insert(key, value).is_some() {
                seed.notes.repeated.set(true);
            }
        }
        Ok(Value::Object(object))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let seed = self.0;
        if seed.level != Level::Warnings {
            return serde::de::Deserialize::deserialize(de::value::SeqAccessDeserializer::new(seq));
        }
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Seed {
            level: Level::Warning,
            ..seed
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

/// The members of an observation object that the schema could object to: `kind` whole (a
/// capture summary is noted, to be read again whole), the rest pruned.
fn observation<'de, A: MapAccess<'de>>(mut map: A, notes: &Notes) -> Result<Value, A::Error> {
    let mut object = Map::new();
    while let Some(key) = map.next_key::<String>()? {
        if key == "kind" {
            let kind: Value = map.next_value()?;
            if kind == CAPTURE_SUMMARY_KIND {
                notes.capture_summary.set(true);
            }
            object.insert(key, kind);
        } else {
            let value = map.next_value_seed(Pruned)?;
            keep(&mut object, key, value);
        }
    }
    Ok(Value::Object(object))
}

/// Puts a pruned member in its object: a `base64` key always (the schema refuses the key,
/// whatever its value), any other only when something in it is kept. A later member of the
/// same name replaces an earlier one, as in the whole value.
fn keep(object: &mut Map<String, Value>, key: String, value: Option<Value>) {
    match value {
        Some(value) => {
            object.insert(key, value);
        }
        None if key == "base64" => {
            object.insert(key, Value::Null);
        }
        None => {
            object.remove(&key);
        }
    }
}

/// A value inside an observation, checked as JSON and kept (`Some`) only when the schema's
/// no-base64 rule could object to something in it.
struct Pruned;

impl<'de> DeserializeSeed<'de> for Pruned {
    type Value = Option<Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(Pruned)
    }
}

impl<'de> Visitor<'de> for Pruned {
    type Value = Option<Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Pruned)?;
            keep(&mut object, key, value);
        }
        Ok((!object.is_empty()).then_some(Value::Object(object)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let (mut len, mut kept) = (0, Vec::new());
        while let Some(item) = seq.next_element_seed(Pruned)? {
            if let Some(item) = item {
                kept.push((len, item));
            }
            len += 1;
        }
        if kept.is_empty() {
            return Ok(None);
        }
        let mut items = vec![Value::Null; len];
        for (at, item) in kept {
            items[at] = item;
        }
        Ok(Some(Value::Array(items)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        // The schema lets a string this short pass without a look.
        let long = v.len() > MAX_INLINE_BASE64 && v.chars().count() > MAX_INLINE_BASE64;
        Ok(long.then(|| Value::from(v)))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
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
            serde_json::json!({"ok":false,"result":{},"error":{"code":"x","category":"t","detail":"d","lastObservation":{"kind":"k"},"partialResult":[]},"extra":{"deep":[true]}})
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

    #[test]
    fn observations_keep_only_what_the_schema_could_refuse() {
        let long = "A1b".repeat(1400);
        let observation = |members: &str| {
            let text = format!(r#"{{"ok":false,"error":{{"lastObservation":{{{members}}}}}}}"#);
            let (skeleton, _) = parse(&text).unwrap();
            skeleton["error"]["lastObservation"].clone()
        };
        assert_eq!(
            observation(r#""kind":"query","n":1,"a":{"b":[1,"x",{"c":true}]},"s":"short""#),
            serde_json::json!({"kind":"query"})
        );
        assert_eq!(
            observation(&format!(
                r#""a":[1,{{"base64":[2]}},"{long}",3],"b":{{"c":{{"base64":{{"d":"{long}"}}}}}},"e":"{long}""#
            )),
            serde_json::json!({
                "a": [null, {"base64": null}, long, null],
                "b": {"c": {"base64": {"d": long}}},
                "e": long,
            })
        );
        // The last of repeated members counts, as in the whole value.
        assert_eq!(
            observation(&format!(r#""a":"{long}","a":1,"b":1,"b":"{long}""#)),
            serde_json::json!({"b": long})
        );
        // A capture summary is kept whole.
        assert_eq!(
            observation(r#""n":[1],"kind":"capture-summary","width":1"#),
            serde_json::json!({"n":[1],"kind":"capture-summary","width":1})
        );
        // Still checked as JSON.
        assert!(parse(r#"{"error":{"lastObservation":{"a":[1e400]}}}"#).is_err());
    }
}
