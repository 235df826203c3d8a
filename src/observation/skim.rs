//! Checking an observation while skimming: every rule `Observation`'s reader enforces, with
//! nothing built unless the observation is a capture summary or seems to hold image data.

use std::cell::Cell;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::base64::is_inline_base64;
use super::capture::CAPTURE_SUMMARY_KIND;
use super::last::{Observation, ObservationError};
use crate::JsonObject;
use crate::rule::MAX_DEPTH;

/// The visitor methods of the scalars that need no check: none is image data or a capture's
/// kind.
macro_rules! scalars_are_not_captures {
    () => {
        fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
            Ok(false)
        }

        fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
            Ok(false)
        }

        fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
            Ok(false)
        }

        fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
            Ok(false)
        }

        fn visit_unit<E>(self) -> Result<bool, E> {
            Ok(false)
        }
    };
}

/// The containers open around `lastObservation`'s own object: the envelope and the error.
const DEPTH_OF_OBSERVATION: usize = 3;

/// Checks the observation `deserializer` holds, from JSON text, without building it.
pub(crate) fn check<'de, D: Deserializer<'de>>(deserializer: D) -> Result<(), D::Error> {
    let raw = <&'de RawValue>::deserialize(deserializer)?;
    let text = raw.get();
    if !text.starts_with('{') {
        return Err(de::Error::custom("an observation is a JSON object"));
    }
    let mut reader = serde_json::Deserializer::from_str(text);
    let base64 = Cell::new(false);
    let capture = Observed {
        depth: DEPTH_OF_OBSERVATION,
        top: true,
        base64: &base64,
    }
    .deserialize(&mut reader)
    .map_err(de::Error::custom)?;
    if capture || base64.get() {
        // The full reader's view, for the rare observation that needs it: a repeated key
        // inside an observation is merged (the last one wins) before its rules apply, so image
        // data under a key that repeats, or a capture summary, is judged on the merged object.
        let object: JsonObject = serde_json::from_str(text).map_err(de::Error::custom)?;
        Observation::from_object(object).map_err(de::Error::custom)?;
    }
    Ok(())
}

/// A value inside an observation at `depth` containers; `top` for the observation itself.
/// Reads to whether the observation's own `kind` is `capture-summary`, and notes in `base64`
/// any image data it meets (which a repeated key may yet overwrite).
#[derive(Clone, Copy)]
struct Observed<'c> {
    depth: usize,
    top: bool,
    base64: &'c Cell<bool>,
}

impl<'de> DeserializeSeed<'de> for Observed<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl Observed<'_> {
    fn inner(self) -> Self {
        Observed {
            depth: self.depth + 1,
            top: false,
            base64: self.base64,
        }
    }

    fn enter<E: de::Error>(self) -> Result<(), E> {
        if self.depth > MAX_DEPTH {
            Err(E::custom("the document nests too deep"))
        } else {
            Ok(())
        }
    }
}

impl<'de> Visitor<'de> for Observed<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        self.enter()?;
        let mut capture = false;
        while let Some(key) = map.next_key::<Key>()? {
            if key.0 == Name::Base64 {
                self.base64.set(true);
            }
            if self.top && key.0 == Name::Kind {
                capture = map.next_value_seed(Kind(self.inner()))?;
            } else {
                map.next_value_seed(self.inner())?;
            }
        }
        Ok(capture)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        self.enter()?;
        while seq.next_element_seed(self.inner())?.is_some() {}
        Ok(false)
    }

    fn visit_str<E>(self, v: &str) -> Result<bool, E> {
        if is_inline_base64(v) {
            self.base64.set(true);
        }
        Ok(false)
    }

    scalars_are_not_captures!();
}

/// The keys the check looks for.
#[derive(PartialEq, Eq)]
enum Name {
    Base64,
    Kind,
    Other,
}

/// A key, escapes and all, known only by whether it is one of those looked for.
struct Key(Name);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, v: &str) -> Result<Key, E> {
                Ok(Key(match v {
                    "base64" => Name::Base64,
                    "kind" => Name::Kind,
                    _ => Name::Other,
                }))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// The observation's own `kind`: whether it is `capture-summary` (any other value is checked
/// as any other member is).
struct Kind<'c>(Observed<'c>);

impl<'de> DeserializeSeed<'de> for Kind<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Kind<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a kind")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        self.0.visit_str(v)?;
        Ok(v == CAPTURE_SUMMARY_KIND)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<bool, A::Error> {
        self.0.visit_map(map).map(|_| false)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<bool, A::Error> {
        self.0.visit_seq(seq).map(|_| false)
    }

    scalars_are_not_captures!();
}

impl<'de> Deserialize<'de> for Observation {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if crate::strict::Skimming::active() {
            // A verdict-only read: checked, not built.
            check(deserializer)?;
            return Ok(Observation::Other(JsonObject::new()));
        }
        let object = JsonObject::deserialize(deserializer)?;
        Observation::from_object(object).map_err(ObservationError::raise)
    }
}
