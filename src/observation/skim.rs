//! Checking an observation while skimming: every rule `Observation`'s reader enforces, with
//! nothing built unless the observation is a capture summary.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::{CAPTURE_SUMMARY_KIND, CaptureSummary, is_inline_base64};
use crate::strict::MAX_DEPTH;

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
    let capture = Observed {
        depth: DEPTH_OF_OBSERVATION,
        top: true,
    }
    .deserialize(&mut reader)
    .map_err(de::Error::custom)?;
    if capture {
        // As the full reader does: a repeated key inside an observation is merged (the last
        // wins), then the capture summary's rules apply.
        let value: serde_json::Value = serde_json::from_str(text).map_err(de::Error::custom)?;
        CaptureSummary::deserialize(&value).map_err(de::Error::custom)?;
    }
    Ok(())
}

use serde::Deserialize;

/// A value inside an observation at `depth` containers; `top` for the observation itself.
/// Reads to whether the observation's own `kind` is `capture-summary`.
#[derive(Clone, Copy)]
struct Observed {
    depth: usize,
    top: bool,
}

impl<'de> DeserializeSeed<'de> for Observed {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl Observed {
    fn inner(self) -> Self {
        Observed {
            depth: self.depth + 1,
            top: false,
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

impl<'de> Visitor<'de> for Observed {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        self.enter()?;
        let mut capture = false;
        while let Some(key) = map.next_key::<Key>()? {
            if key.0 == Name::Base64 {
                return Err(de::Error::custom("a base64 key"));
            }
            if self.top && key.0 == Name::Kind {
                capture = map.next_value::<Kind>()?.0;
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

    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        if is_inline_base64(v) {
            Err(E::custom("inline base64"))
        } else {
            Ok(false)
        }
    }

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
struct Kind(bool);

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KindVisitor;
        impl<'de> Visitor<'de> for KindVisitor {
            type Value = Kind;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a kind")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Kind, E> {
                Observed {
                    depth: 0,
                    top: false,
                }
                .visit_str(v)?;
                Ok(Kind(v == CAPTURE_SUMMARY_KIND))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Kind, A::Error> {
                let nested = Observed {
                    depth: DEPTH_OF_OBSERVATION + 1,
                    top: false,
                };
                nested.visit_map(map).map(|_| Kind(false))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Kind, A::Error> {
                let nested = Observed {
                    depth: DEPTH_OF_OBSERVATION + 1,
                    top: false,
                };
                nested.visit_seq(seq).map(|_| Kind(false))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Kind, E> {
                Ok(Kind(false))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Kind, E> {
                Ok(Kind(false))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Kind, E> {
                Ok(Kind(false))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Kind, E> {
                Ok(Kind(false))
            }
            fn visit_unit<E>(self) -> Result<Kind, E> {
                Ok(Kind(false))
            }
        }
        deserializer.deserialize_any(KindVisitor)
    }
}
