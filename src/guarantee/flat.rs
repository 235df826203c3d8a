//! Writing the tool's own fields at the top level of a guarantee result, straight into the
//! result's map (as `#[serde(flatten)]` does, with no intermediate value), refusing a field
//! that takes one of the contract's names or a problem member's.

use std::marker::PhantomData;

use serde::ser::{self, Impossible, Serialize, SerializeMap, SerializeStruct, Serializer};

use super::fields::{CONTRACT_FIELDS, is_problem_member};
use crate::breach::Breach;

/// The error for fields that are not an object, or a field with a contract name.
fn refuse<E: ser::Error>(problem: impl std::fmt::Display) -> E {
    E::custom(format_args!("the tool's own fields {problem}"))
}

fn checked<E: ser::Error>(key: &str) -> Result<&str, E> {
    if CONTRACT_FIELDS.contains(&key) {
        Err(refuse(format_args!(
            "use the contract's field name `{key}`"
        )))
    } else if is_problem_member(key) {
        Err(E::custom(Breach::ProblemMemberField { key }))
    } else {
        Ok(key)
    }
}

/// Serializes a value's members as entries of `map`.
pub(super) struct Flat<'a, M> {
    pub(super) map: &'a mut M,
}

impl<M: SerializeMap> Flat<'_, M> {
    #[allow(
        clippy::unused_self,
        reason = "the shared reject_scalars! calls self.reject"
    )]
    fn reject(&self, found: &str) -> M::Error {
        refuse(format_args!(
            "do not serialize to a JSON object, but to {found}"
        ))
    }
}

impl<'a, M: SerializeMap> Serializer for Flat<'a, M> {
    type Ok = ();
    type Error = M::Error;
    type SerializeSeq = Impossible<(), M::Error>;
    type SerializeTuple = Impossible<(), M::Error>;
    type SerializeTupleStruct = Impossible<(), M::Error>;
    type SerializeTupleVariant = Impossible<(), M::Error>;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = TaggedFields<'a, M>;

    crate::object::reject_scalars!((), M::Error);

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), M::Error> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), M::Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), M::Error> {
        self.map.serialize_entry(checked(variant)?, value)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, M::Error> {
        Err(self.reject("an array"))
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, M::Error> {
        Err(self.reject("an array"))
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, M::Error> {
        Err(self.reject("an array"))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, M::Error> {
        Err(refuse("do not serialize to a JSON object of fields"))
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self, M::Error> {
        Ok(self)
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, M::Error> {
        Ok(self)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<TaggedFields<'a, M>, M::Error> {
        Ok(TaggedFields {
            map: self.map,
            tag: checked(variant)?,
            fields: crate::JsonObject::new(),
        })
    }
}

impl<M: SerializeMap> SerializeStruct for Flat<'_, M> {
    type Ok = ();
    type Error = M::Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), M::Error> {
        self.map.serialize_entry(checked(key)?, value)
    }

    fn end(self) -> Result<(), M::Error> {
        Ok(())
    }
}

impl<M: SerializeMap> SerializeMap for Flat<'_, M> {
    type Ok = ();
    type Error = M::Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), M::Error> {
        let key = key.serialize(KeyName::<M::Error>(PhantomData))?;
        self.map.serialize_key(checked(&key)?)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), M::Error> {
        self.map.serialize_value(value)
    }

    fn end(self) -> Result<(), M::Error> {
        Ok(())
    }
}

/// A struct variant's fields (`{ "Variant": { ... } }`), gathered and then written as one
/// entry.
pub(super) struct TaggedFields<'a, M> {
    map: &'a mut M,
    tag: &'static str,
    fields: crate::JsonObject,
}

impl<M: SerializeMap> ser::SerializeStructVariant for TaggedFields<'_, M> {
    type Ok = ();
    type Error = M::Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), M::Error> {
        let value = serde_json::to_value(value).map_err(refuse)?;
        self.fields.insert(key.to_owned(), value);
        Ok(())
    }

    fn end(self) -> Result<(), M::Error> {
        self.map.serialize_entry(self.tag, &self.fields)
    }
}

/// A map key as the text JSON writes it: a string, or a number or boolean written as one.
struct KeyName<E>(PhantomData<E>);

/// Implements the key serializer methods for keys JSON writes as their text.
macro_rules! key_as_text {
    ($($method:ident($ty:ty);)+) => {
        $(fn $method(self, value: $ty) -> Result<String, E> {
            Ok(value.to_string())
        })+
    };
}

/// Implements the key serializer methods for keys JSON cannot write.
macro_rules! key_refused {
    ($($method:ident($($ty:ty),*);)+) => {
        $(fn $method(self, $(_: $ty),*) -> Result<String, E> {
            Err(refuse("have a key that is not a string"))
        })+
    };
}

impl<E: ser::Error> Serializer for KeyName<E> {
    type Ok = String;
    type Error = E;
    type SerializeSeq = Impossible<String, E>;
    type SerializeTuple = Impossible<String, E>;
    type SerializeTupleStruct = Impossible<String, E>;
    type SerializeTupleVariant = Impossible<String, E>;
    type SerializeMap = Impossible<String, E>;
    type SerializeStruct = Impossible<String, E>;
    type SerializeStructVariant = Impossible<String, E>;

    key_as_text! {
        serialize_bool(bool);
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_i128(i128);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_u32(u32);
        serialize_u64(u64);
        serialize_u128(u128);
        serialize_char(char);
        serialize_str(&str);
    }

    key_refused! {
        serialize_f32(f32);
        serialize_f64(f64);
        serialize_bytes(&[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(&'static str);
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<String, E> {
        Ok(variant.to_owned())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<String, E> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<String, E> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<String, E> {
        Err(refuse("have a key that is not a string"))
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, E> {
        Err(refuse("have a key that is not a string"))
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, E> {
        Err(refuse("have a key that is not a string"))
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, E> {
        Err(refuse("have a key that is not a string"))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, E> {
        Err(refuse("have a key that is not a string"))
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, E> {
        Err(refuse("have a key that is not a string"))
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, E> {
        Err(refuse("have a key that is not a string"))
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, E> {
        Err(refuse("have a key that is not a string"))
    }
}
