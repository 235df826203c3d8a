//! The closed objects of each contract, found by the JSON Pointer of where they sit: which
//! object a finding at a pointer belongs to, and where keys may not repeat.

use crate::breach::Object;
use crate::object::FieldName;

/// The closed object a JSON Pointer into an envelope names, if any.
pub(super) fn in_envelope(pointer: &str) -> Option<Object> {
    let mut tokens = pointer.split('/').skip(1);
    let object = match (tokens.next(), tokens.next(), tokens.next(), tokens.next()) {
        (None, ..) => crate::envelope::wire::Field::OBJECT,
        (Some("error"), None, ..) => crate::error::Field::OBJECT,
        (Some("warnings"), Some(_), None, _) => crate::warning::Field::OBJECT,
        (Some("error"), Some("lastObservation"), None, _) => {
            crate::observation::CaptureField::OBJECT
        }
        (Some("error"), Some("lastObservation"), Some("window"), None) => {
            crate::observation::WindowField::OBJECT
        }
        (Some("error"), Some("lastObservation"), Some("blankCheck"), None) => {
            crate::observation::BlankCheckField::OBJECT
        }
        _ => return None,
    };
    Some(object)
}

/// Whether a JSON Pointer into an envelope names one of the envelope's own objects (itself,
/// its error, a warning), where keys may not repeat; inside a payload, the last one wins.
pub(super) fn is_envelope_own(pointer: &str) -> bool {
    let own = [
        crate::envelope::wire::Field::OBJECT,
        crate::error::Field::OBJECT,
        crate::warning::Field::OBJECT,
    ];
    in_envelope(pointer).is_some_and(|object| own.contains(&object))
}

/// The closed object a JSON Pointer into a guarantee result names, if any.
pub(super) fn in_guarantee(pointer: &str) -> Option<Object> {
    use crate::guarantee::wire::{
        GUARANTEE, ImpactField, PolicyField, RecoveryField, SettlementField,
    };
    match pointer {
        "" => Some(GUARANTEE),
        "/settlement" => Some(SettlementField::OBJECT),
        "/policy" => Some(PolicyField::OBJECT),
        "/impact" => Some(ImpactField::OBJECT),
        "/recovery" => Some(RecoveryField::OBJECT),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_found_by_pointer() {
        assert_eq!(in_envelope("").map(Object::noun), Some("an envelope"));
        assert_eq!(
            in_envelope("/warnings/3").map(Object::noun),
            Some("a warning")
        );
        assert_eq!(
            in_envelope("/error/lastObservation/window").map(Object::noun),
            Some("a window")
        );
        assert_eq!(in_envelope("/result"), None);
        assert_eq!(in_envelope("/error/partialResult"), None);
        assert!(is_envelope_own("/error") && !is_envelope_own("/error/lastObservation"));
        assert_eq!(in_guarantee("/impact").map(Object::noun), Some("impact"));
        assert_eq!(in_guarantee("/impact/committed"), None);
    }
}
