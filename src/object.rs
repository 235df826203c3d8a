//! JSON objects: [`JsonObject`], the type of the contract's payloads, and serde adapters that
//! let only a JSON object through, without building an intermediate value.
//!
//! The contract types `result`, `lastObservation` and `partialResult` as JSON objects. A tool's
//! result type `T` is generic, so the check happens in the serializer and deserializer: writing
//! a `T` that serializes to anything but an object is an error, and reading a non-object
//! `result` is an error that names the field.
//!
//! One gap is inherent to serde: an externally tagged enum's unit variant reads from a string
//! through `visit_enum`, like its object variants, so it is let through on reading (writing it
//! is still rejected).

use std::cell::Cell;
use std::fmt;

/// A JSON object: what `result`, `lastObservation` and `partialResult` hold on the wire.
///
/// ```
/// use agent_tool_result::{Envelope, JsonObject};
///
/// let mut result = JsonObject::new();
/// result.insert("automationId".into(), "btnOk".into());
/// let envelope: Envelope<JsonObject> = Envelope::success(result);
/// assert_eq!(envelope.to_json()?, r#"{"ok":true,"result":{"automationId":"btnOk"}}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

use serde::de::{self, DeserializeSeed, Deserializer, Visitor};
use serde::ser::{self, Impossible, Serialize, Serializer};

use crate::Rule;
use crate::breach::{self, Breach, Object};

/// The JSON type of a value, with its article, for messages.
pub(crate) fn json_type(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Serializes `value` but fails unless it is written as a JSON object.
pub(crate) struct AsObject<'a, T: ?Sized> {
    pub(crate) field: &'static str,
    pub(crate) value: &'a T,
}

impl<T: Serialize + ?Sized> Serialize for AsObject<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(ObjectSerializer {
            field: self.field,
            inner: serializer,
        })
    }
}

struct ObjectSerializer<S> {
    field: &'static str,
    inner: S,
}

impl<S: Serializer> ObjectSerializer<S> {
    fn reject(&self, found: &str) -> S::Error {
        ser::Error::custom(format_args!(
            "{} must be a JSON object, but the value serializes to {found}",
            self.field
        ))
    }
}

/// Implements every serializer method that writes a scalar (which can never be an object) as
/// `Err(self.reject(found))`, `found` naming what the value serializes to; for the serializers
/// that let only an object through.
macro_rules! reject_scalars {
    ($ok:ty, $error:ty) => {
        $crate::object::reject_scalars! { @rows $ok, $error;
            serialize_bool(bool) => "a boolean";
            serialize_i8(i8) => "a number";
            serialize_i16(i16) => "a number";
            serialize_i32(i32) => "a number";
            serialize_i64(i64) => "a number";
            serialize_i128(i128) => "a number";
            serialize_u8(u8) => "a number";
            serialize_u16(u16) => "a number";
            serialize_u32(u32) => "a number";
            serialize_u64(u64) => "a number";
            serialize_u128(u128) => "a number";
            serialize_f32(f32) => "a number";
            serialize_f64(f64) => "a number";
            serialize_char(char) => "a string";
            serialize_str(&str) => "a string";
            serialize_bytes(&[u8]) => "an array";
            serialize_unit_struct(&'static str) => "null";
        }

        fn serialize_none(self) -> Result<$ok, $error> {
            Err(self.reject("null"))
        }

        fn serialize_unit(self) -> Result<$ok, $error> {
            Err(self.reject("null"))
        }

        fn serialize_unit_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
        ) -> Result<$ok, $error> {
            Err(self.reject("a string"))
        }
    };
    (@rows $ok:ty, $error:ty; $($method:ident($ty:ty) => $found:literal;)+) => {
        $(fn $method(self, _: $ty) -> Result<$ok, $error> { Err(self.reject($found)) })+
    };
}
pub(crate) use reject_scalars;

impl<S: Serializer> Serializer for ObjectSerializer<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Impossible<S::Ok, S::Error>;
    type SerializeTuple = Impossible<S::Ok, S::Error>;
    type SerializeTupleStruct = Impossible<S::Ok, S::Error>;
    type SerializeTupleVariant = S::SerializeTupleVariant;
    type SerializeMap = S::SerializeMap;
    type SerializeStruct = S::SerializeStruct;
    type SerializeStructVariant = S::SerializeStructVariant;

    reject_scalars!(S::Ok, S::Error);

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.inner
            .serialize_newtype_variant(name, index, variant, value)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        Err(self.reject("an array"))
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, S::Error> {
        Err(self.reject("an array"))
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, S::Error> {
        Err(self.reject("an array"))
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        self.inner
            .serialize_tuple_variant(name, index, variant, len)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        self.inner.serialize_map(len)
    }

    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        self.inner.serialize_struct(name, len)
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        self.inner
            .serialize_struct_variant(name, index, variant, len)
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// Whose rules apply inside a payload: the contract's (an observation) or the tool's own (a
/// result of the tool's type, whose errors get [`Rule::ToolResultType`]).
#[derive(Clone, Copy)]
pub(crate) enum Inside {
    Contract,
    Tool,
}

/// Deserializes an optional `T` (null is `None`) that must be a JSON object when present.
pub(crate) struct OptionalObject<T> {
    pub(crate) field: &'static str,
    pub(crate) inside: Inside,
    pub(crate) marker: std::marker::PhantomData<T>,
}

impl<'de, T: de::Deserialize<'de>> DeserializeSeed<'de> for OptionalObject<T> {
    type Value = Option<T>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<T>, D::Error> {
        deserializer.deserialize_option(OptionalObjectVisitor {
            field: self.field,
            inside: self.inside,
            marker: self.marker,
        })
    }
}

struct OptionalObjectVisitor<T> {
    field: &'static str,
    inside: Inside,
    marker: std::marker::PhantomData<T>,
}

impl<'de, T: de::Deserialize<'de>> Visitor<'de> for OptionalObjectVisitor<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} to be a JSON object or null", self.field)
    }

    fn visit_none<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<T>, D::Error> {
        read_object(
            deserializer,
            self.field,
            true,
            Rule::PayloadIsObject,
            self.inside,
        )
        .map(Some)
    }
}

/// Deserializes a `T` that must be a JSON object (not null, not an array), a field of the
/// contract's own objects.
pub(crate) struct ObjectOf<T> {
    pub(crate) field: &'static str,
    pub(crate) marker: std::marker::PhantomData<T>,
}

impl<'de, T: de::Deserialize<'de>> DeserializeSeed<'de> for ObjectOf<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        read_object(
            deserializer,
            self.field,
            false,
            Rule::FieldType,
            Inside::Contract,
        )
    }
}

/// Reads `T` (a derived struct, which serde would also read from an array) from a JSON object
/// only; `what` names it in the message for anything else.
pub(crate) fn only_object<'de, T: de::Deserialize<'de>, D: Deserializer<'de>>(
    deserializer: D,
    what: &'static str,
) -> Result<T, D::Error> {
    read_object(deserializer, what, false, Rule::FieldType, Inside::Contract)
}

/// Reads `T` from `deserializer`, letting only an object through: anything else breaks
/// `not_object`; an error once inside is the contract's, or the tool's own.
fn read_object<'de, T: de::Deserialize<'de>, D: Deserializer<'de>>(
    deserializer: D,
    field: &'static str,
    nullable: bool,
    not_object: Rule,
    inside: Inside,
) -> Result<T, D::Error> {
    let entered = Cell::new(false);
    T::deserialize(ObjectDeserializer {
        field,
        inner: deserializer,
        nullable,
        entered: &entered,
    })
    .map_err(|err| match (entered.get(), inside) {
        (false, _) => breach::tag(not_object, err),
        (true, Inside::Tool) => breach::retag(Rule::ToolResultType, err),
        (true, Inside::Contract) => err,
    })
}

/// A deserializer that hands its visitor only JSON objects, and notes when it did.
struct ObjectDeserializer<'c, D> {
    field: &'static str,
    inner: D,
    nullable: bool,
    entered: &'c Cell<bool>,
}

/// The visitor wrapper behind [`ObjectDeserializer`]: every non-object input falls through to
/// the default `visit_*` methods, which reject it with `expecting`.
struct ObjectVisitor<'c, V> {
    field: &'static str,
    inner: V,
    nullable: bool,
    entered: &'c Cell<bool>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for ObjectVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.nullable {
            write!(f, "{} to be a JSON object or null", self.field)
        } else {
            write!(f, "{} to be a JSON object", self.field)
        }
    }

    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.entered.set(true);
        self.inner.visit_map(map)
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.entered.set(true);
        self.inner.visit_enum(data)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        self.inner.visit_some(ObjectDeserializer {
            field: self.field,
            inner: deserializer,
            nullable: self.nullable,
            entered: self.entered,
        })
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<V::Value, D::Error> {
        self.inner.visit_newtype_struct(ObjectDeserializer {
            field: self.field,
            inner: deserializer,
            nullable: self.nullable,
            entered: self.entered,
        })
    }
}

/// Forwards `deserialize_*` methods to the inner deserializer with a wrapped visitor.
macro_rules! forward_wrapped {
    ($($method:ident($($arg:ident: $ty:ty),*);)+) => {
        $(
            fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
                let visitor = ObjectVisitor { field: self.field, inner: visitor, nullable: self.nullable, entered: self.entered };
                self.inner.$method($($arg,)* visitor)
            }
        )+
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for ObjectDeserializer<'_, D> {
    type Error = D::Error;

    forward_wrapped! {
        deserialize_any();
        deserialize_bool();
        deserialize_i8();
        deserialize_i16();
        deserialize_i32();
        deserialize_i64();
        deserialize_i128();
        deserialize_u8();
        deserialize_u16();
        deserialize_u32();
        deserialize_u64();
        deserialize_u128();
        deserialize_f32();
        deserialize_f64();
        deserialize_char();
        deserialize_str();
        deserialize_string();
        deserialize_bytes();
        deserialize_byte_buf();
        deserialize_option();
        deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_seq();
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier();
        deserialize_ignored_any();
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// Reads the value of `field` into `slot` with `seed`, rejecting a second occurrence of the
/// key; an error below that names no rule of its own is a wrong field type.
pub(crate) fn read_once<'de, A, S>(
    map: &mut A,
    slot: &mut Option<S::Value>,
    field: &'static str,
    seed: S,
) -> Result<(), A::Error>
where
    A: de::MapAccess<'de>,
    S: DeserializeSeed<'de>,
{
    if slot.is_some() {
        return Err(breach::raise(Breach::DuplicateKey { key: field }));
    }
    *slot = Some(
        map.next_value_seed(seed)
            .map_err(|err| breach::tag(Rule::FieldType, err))?,
    );
    Ok(())
}

/// The fields of one closed object of the contract: the key type its reader matches on.
pub(crate) trait FieldName: Sized + Copy + 'static {
    /// The object these are the fields of.
    const OBJECT: Object;
    /// Every field's wire name, in wire order.
    const NAMES: &'static [&'static str];
    /// The field a key names, if any.
    fn from_key(key: &str) -> Option<Self>;
}

/// Reads a key of a closed object as its [`FieldName`]; an unknown key is a breach that names
/// the object and the fields it has.
pub(crate) fn field_key<'de, F: FieldName, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<F, D::Error> {
    struct KeyVisitor<F>(std::marker::PhantomData<F>);

    impl<F: FieldName> Visitor<'_> for KeyVisitor<F> {
        type Value = F;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "a field of {}", F::OBJECT.noun())
        }

        fn visit_str<E: de::Error>(self, key: &str) -> Result<F, E> {
            F::from_key(key).ok_or_else(|| {
                breach::raise(Breach::UnknownField {
                    object: F::OBJECT,
                    key,
                })
            })
        }
    }

    deserializer.deserialize_identifier(KeyVisitor(std::marker::PhantomData))
}

/// Declares the field enum of a closed object: its variants, their wire names, the object
/// they belong to (its noun for messages, and which fields it requires) and its `Deserialize`
/// as a key.
macro_rules! fields {
    ($(#[$doc:meta])* $vis:vis enum $name:ident for $noun:literal requires [$($required:literal),*] {
        $($variant:ident = $wire:literal),+ $(,)?
    }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name {
            $($variant),+
        }

        impl $crate::object::FieldName for $name {
            const OBJECT: $crate::breach::Object =
                $crate::breach::Object::new($noun, &[$($wire),+], &[$($required),*]);
            const NAMES: &'static [&'static str] = &[$($wire),+];
            fn from_key(key: &str) -> Option<Self> {
                match key {
                    $($wire => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $crate::object::field_key(deserializer)
            }
        }
    };
}
pub(crate) use fields;

/// Returns the required field read into `slot`, or the breach of its absence.
pub(crate) fn required<T, E: de::Error>(
    slot: Option<T>,
    object: Object,
    field: &str,
) -> Result<T, E> {
    slot.ok_or_else(|| breach::raise(Breach::MissingField { object, field }))
}
