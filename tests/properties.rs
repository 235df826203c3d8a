//! Property: any constructed envelope serializes to JSON that the schema accepts, that reads
//! back equal, and that holds no null at envelope, error or warning level.

use agent_tool_result::validate::Validator;
use agent_tool_result::{
    Classified, Envelope, ErrorCategory, ErrorCode, JsonObject, Observation, ToolError, Warning,
    WarningCode,
};
use proptest::prelude::*;
use serde_json::Value;

fn code() -> impl Strategy<Value = String> {
    "[a-z0-9]{1,6}(-[a-z0-9]{1,6}){0,3}"
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        // Dyadic fractions print and parse back exactly, whatever the float parser.
        any::<i32>().prop_map(|n| Value::from(f64::from(n) / 1024.0)),
        ".{0,12}".prop_map(Value::from),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(".{0,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = JsonObject> {
    prop::collection::btree_map(".{0,8}", json_value(), 0..5).prop_map(|m| m.into_iter().collect())
}

fn warning() -> impl Strategy<Value = Warning> {
    (code(), ".{0,40}").prop_map(|(c, d)| Warning::new(WarningCode::new(c).unwrap(), d))
}

fn tool_error() -> impl Strategy<Value = ToolError> {
    let known = (0..ErrorCode::WELL_KNOWN.len()).prop_map(|i| ErrorCode::WELL_KNOWN[i].clone());
    let by_code = prop_oneof![
        known.prop_map(|code| {
            let category = code.categories()[0];
            (code, category)
        }),
        (2u32..5000).prop_map(|n| {
            let code = ErrorCode::selector_matched(n).unwrap();
            (code, ErrorCategory::AmbiguousSelector)
        }),
        (code(), 0..ErrorCategory::ALL.len()).prop_map(|(c, i)| {
            let code = ErrorCode::new(c).unwrap();
            // A random code may spell a well-known one: keep it under one of its own then.
            let category = if code.rides_under(ErrorCategory::ALL[i]) {
                ErrorCategory::ALL[i]
            } else {
                code.categories()[0]
            };
            (code, category)
        }),
    ];
    (
        by_code,
        ".{0,60}",
        prop::option::of(json_object()),
        prop::option::of(json_object()),
    )
        .prop_map(|((code, category), detail, last, partial)| {
            let mut error = ToolError::new(Classified::new(code, category).unwrap(), detail);
            // Random objects rarely break the no-base64 rule; those that do are left out here
            // (the rule has its own tests).
            if let Some(last) = last.and_then(|o| Observation::try_from(o).ok()) {
                error = error.with_last_observation(last);
            }
            if let Some(partial) = partial {
                error = error.with_partial_result(partial);
            }
            error
        })
}

fn envelope() -> impl Strategy<Value = Envelope<agent_tool_result::JsonObject>> {
    let outcome = prop_oneof![
        prop::option::of(json_object()).prop_map(|r| match r {
            Some(r) => Envelope::success(r),
            None => Envelope::success_empty(),
        }),
        tool_error().prop_map(Envelope::failure),
    ];
    (
        outcome,
        prop::option::of(".{0,20}"),
        prop::collection::vec(warning(), 0..4),
    )
        .prop_map(|(envelope, session, warnings)| {
            let envelope = envelope.with_warnings(warnings);
            match session {
                Some(id) => envelope.with_session(id),
                None => envelope,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn constructed_envelopes_validate_and_round_trip(envelope in envelope()) {
        let text = envelope.to_json().unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();

        let report = Validator::shared().validate(&value);
        prop_assert!(report.is_valid(), "{:?}", report.violations());

        let back = Envelope::from_json(&text).unwrap();
        prop_assert_eq!(&back, &envelope);

        let object = value.as_object().unwrap();
        prop_assert!(object.values().all(|v| !v.is_null()));
        if let Some(error) = object.get("error") {
            prop_assert!(error.as_object().unwrap().values().all(|v| !v.is_null()));
        }
        for warning in object.get("warnings").and_then(Value::as_array).into_iter().flatten() {
            prop_assert!(warning.as_object().unwrap().values().all(|v| !v.is_null()));
        }
    }

    #[test]
    fn any_string_is_a_code_exactly_when_kebab_case(s in ".{0,12}|[a-z0-9-]{0,12}") {
        let expected = agent_tool_result::code::is_kebab_case(&s);
        prop_assert_eq!(ErrorCode::new(s.clone()).is_ok(), expected);
        prop_assert_eq!(s.parse::<WarningCode>().is_ok(), expected);
        let json = serde_json::to_string(&s).unwrap();
        prop_assert_eq!(serde_json::from_str::<ErrorCode>(&json).is_ok(), expected);
    }

    #[test]
    fn selector_matched_reads_back_its_count(n in any::<u32>()) {
        let code = ErrorCode::selector_matched(n);
        prop_assert_eq!(code.is_some(), n >= 2);
        let text = format!("selector-matched-{n}");
        let parsed: ErrorCode = text.parse().unwrap();
        prop_assert_eq!(parsed.selector_match_count(), Some(n));
        let category = (n >= 2).then_some(ErrorCategory::AmbiguousSelector);
        prop_assert_eq!(parsed.category(), category);
        if let Some(code) = code {
            prop_assert_eq!(code, parsed);
        }
    }
}
