//! The document-wide reading rules every reader of this crate shares, so that the typed reader,
//! the validator's fast path, its full report, `atr` and the MCP reader give one verdict:
//!
//! - **Integers** are what JSON Schema draft 2020-12 calls integers: any number with a zero
//!   fraction (`800`, `800.0`, `8E2`, `-0`), within the field's range.
//! - **Numbers** that overflow a double (`1e400`) are not well-formed JSON.
//! - **Strings** with a lone UTF-16 surrogate escape (`"\ud800"`) are not well-formed JSON.
//! - **Nesting** deeper than [`MAX_DEPTH`] levels is refused (`nesting-limit`).
//!
//! [`Checked`] skips a value while checking all of the above, for readers that build nothing.

use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::breach::{self, Breach};
use crate::rule::MAX_DEPTH;

/// An integer type a contract field holds.
pub(crate) trait Integer: Sized {
    /// The smallest value.
    const MIN: i128;
    /// The largest value.
    const MAX: i128;
    /// The value, known to be within range.
    fn from_i128(value: i128) -> Self;
}

macro_rules! integers {
    ($($ty:ty),+) => {$(
        impl Integer for $ty {
            const MIN: i128 = <$ty>::MIN as i128;
            const MAX: i128 = <$ty>::MAX as i128;
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            fn from_i128(value: i128) -> Self {
                value as $ty
            }
        }
    )+};
}

integers!(i32, i64, u32, u64);

/// Reads an integer field: any JSON number with a zero fraction within `T`'s range.
pub(crate) fn integer<'de, D: Deserializer<'de>, T: Integer>(
    deserializer: D,
) -> Result<T, D::Error> {
    deserializer.deserialize_any(IntegerVisitor(std::marker::PhantomData))
}

/// The seed form of [`integer`], for readers that read fields with seeds.
pub(crate) struct Integral<T>(std::marker::PhantomData<T>);

impl<T> Integral<T> {
    pub(crate) fn new() -> Self {
        Integral(std::marker::PhantomData)
    }
}

impl<'de, T: Integer> DeserializeSeed<'de> for Integral<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        integer(deserializer)
    }
}

struct IntegerVisitor<T>(std::marker::PhantomData<T>);

impl<T: Integer> IntegerVisitor<T> {
    fn check<E: de::Error>(value: i128, found: &dyn fmt::Display) -> Result<T, E> {
        if (T::MIN..=T::MAX).contains(&value) {
            Ok(T::from_i128(value))
        } else {
            Err(out_of_range::<T, E>(found))
        }
    }
}

fn out_of_range<T: Integer, E: de::Error>(found: &dyn fmt::Display) -> E {
    let expected = format!("an integer from {} to {}", T::MIN, T::MAX);
    let found = format!("{found}");
    breach::raise(Breach::WrongType {
        expected: &expected,
        found: &found,
    })
}

impl<T: Integer> Visitor<'_> for IntegerVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an integer from {} to {}", T::MIN, T::MAX)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        Self::check(i128::from(v), &v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        Self::check(i128::from(v), &v)
    }

    #[allow(clippy::cast_possible_truncation, clippy::float_cmp)]
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        // Every contract range lies well inside ±2^100, where an integral double is exact.
        const LIMIT: f64 = 1e30;
        if v.is_finite() && v.trunc() == v && v.abs() < LIMIT {
            Self::check(v as i128, &v)
        } else {
            Err(out_of_range::<T, E>(&v))
        }
    }
}

/// Any JSON value, skipped but checked: its numbers fit a double, its strings are well-formed,
/// and it nests no deeper than the parser's limit. Nothing is built.
#[derive(Debug)]
pub(crate) struct Checked;

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(CheckedVisitor)
    }
}

struct CheckedVisitor;

impl<'de> Visitor<'de> for CheckedVisitor {
    type Value = Checked;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_str<E>(self, _: &str) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_unit<E>(self) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_none<E>(self) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Checked, D::Error> {
        Checked::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(Checked)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
        while map.next_entry::<Checked, Checked>()?.is_some() {}
        Ok(Checked)
    }
}

/// Whether a syntax error at byte `offset` of `text` is the parser refusing to nest deeper:
/// an opening bracket met with [`MAX_DEPTH`] containers already open.
pub(crate) fn is_too_deep(text: &[u8], offset: usize) -> bool {
    if !matches!(text.get(offset), Some(b'[' | b'{')) {
        return false;
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in &text[..offset] {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    depth >= MAX_DEPTH
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_numbers_are_integers_in_range() {
        let read = |text: &str| {
            let mut de = serde_json::Deserializer::from_str(text);
            integer::<_, u32>(&mut de).ok()
        };
        for (text, expected) in [
            ("800", Some(800)),
            ("800.0", Some(800)),
            ("8E2", Some(800)),
            ("-0", Some(0)),
            ("4294967295", Some(u32::MAX)),
            ("4294967296", None),
            ("-1", None),
            ("1.5", None),
            ("1e300", None),
            ("\"8\"", None),
        ] {
            assert_eq!(read(text), expected, "{text}");
        }
    }

    #[test]
    fn checked_skips_refuse_what_values_refuse() {
        for text in ["1e400", r#""\ud800""#, r#"{"a":[1,"\udc00x"]}"#] {
            assert!(serde_json::from_str::<Checked>(text).is_err(), "{text}");
            assert!(serde_json::from_str::<serde_json::Value>(text).is_err());
        }
        let deep = |n| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(serde_json::from_str::<Checked>(&deep(MAX_DEPTH)).is_ok());
        let err = serde_json::from_str::<Checked>(&deep(MAX_DEPTH + 1)).unwrap_err();
        assert!(is_too_deep(
            deep(MAX_DEPTH + 1).as_bytes(),
            err.column() - 1
        ));
        assert!(!is_too_deep(b"[[\"[[[\"", 3));
    }
}

/// Skimming: a verdict-only read that builds none of the payloads. While a [`Skimming`]
/// guard lives on this thread, readers of `lastObservation` and `partialResult` check their
/// values as they stream past instead of building them; the envelope read then holds
/// placeholders there, so only the verdict and the error's code and category may be used.
/// Only a read from JSON text (`serde_json::from_str`) may skim.
pub(crate) struct Skimming(());

thread_local! {
    static SKIMMING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl Skimming {
    /// Starts skimming on this thread until the guard drops.
    #[cfg(feature = "validate")]
    pub(crate) fn start() -> Self {
        SKIMMING.with(|s| s.set(true));
        Skimming(())
    }

    /// Whether a read on this thread is skimming.
    pub(crate) fn active() -> bool {
        SKIMMING.with(std::cell::Cell::get)
    }
}

impl Drop for Skimming {
    fn drop(&mut self) {
        SKIMMING.with(|s| s.set(false));
    }
}
