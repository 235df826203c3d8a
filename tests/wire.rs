//! The wire format: snapshots of constructed envelopes, key order, compactness, no nulls.

use agent_tool_result::{
    Classified, Envelope, ErrorCategory, ErrorCode, JsonObject, Observation, ToolError, Warning,
    WarningCode, classified,
};
use serde_json::{Value, json};

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// A representative failure for each category; the `match` is exhaustive, so a new category
/// does not compile until it has one.
fn failure_for(category: ErrorCategory) -> ToolError {
    match category {
        ErrorCategory::Timeout => ToolError::new(
            Classified::WAIT_CONDITION_TIMEOUT,
            "Condition 'element exists: name=Save' did not hold within 5000 ms.",
        ),
        ErrorCategory::AmbiguousSelector => ToolError::new(
            Classified::selector_matched(3).expect("3 matches are ambiguous"),
            "Selector title='Save' matched 3 windows; refine with processName or className.",
        ),
        ErrorCategory::StaleElement => {
            ToolError::new(Classified::ELEMENT_STALE, "Element 42.1.7 left the tree.")
        }
        ErrorCategory::NoTarget => ToolError::new(
            Classified::WINDOW_NOT_FOUND,
            "No window matched title='Calculator'.",
        ),
        ErrorCategory::InvalidArgument => ToolError::new(
            Classified::REGION_TOO_LARGE,
            "Region 8000x6000 exceeds the virtual screen.",
        ),
        ErrorCategory::CaptureBlank => ToolError::new(
            classified!(ErrorCode::FRAME_ALL_BLACK, CaptureBlank),
            "Capture is 100% black; the window may be occluded.",
        )
        .with_partial_result(object(
            json!({ "width": 1, "height": 1, "encoding": "png" }),
        )),
        ErrorCategory::OcrBlank => ToolError::new(
            classified!("frame-uniform", OcrBlank),
            "The region handed to OCR was uniformly white.",
        ),
        ErrorCategory::OcrNoText => {
            ToolError::new(Classified::OCR_NO_TEXT, "OCR found no words in the region.")
        }
        ErrorCategory::Focus => ToolError::new(
            Classified::FOCUS_NOT_CONFIRMED,
            "The window is foreground but no control took focus.",
        ),
        ErrorCategory::Elevation => {
            ToolError::new(Classified::TARGET_ELEVATED, "The target runs elevated.")
        }
        ErrorCategory::Foreground => ToolError::new(
            Classified::FOREGROUND_NOT_SET,
            "Another window holds the foreground lock.",
        ),
        ErrorCategory::Internal => ToolError::new(
            Classified::UNHANDLED_EXCEPTION,
            "NullReferenceException in TreeWalker.Next.",
        )
        .with_last_observation(
            Observation::try_from(json!({ "kind": "query", "nodes": 12 })).unwrap(),
        ),
    }
}

#[test]
fn one_failure_snapshot_per_category() {
    for category in ErrorCategory::ALL {
        let error = failure_for(category);
        assert_eq!(error.category(), category);
        let envelope: Envelope = Envelope::failure(error).with_session("s-4f2a");
        insta::assert_json_snapshot!(format!("failure-{category}"), envelope);
    }
}

#[test]
fn success_snapshots() {
    let with_result =
        Envelope::success(json!({ "windows": [{ "handle": 1_312_674, "title": "Notepad" }] }));
    insta::assert_json_snapshot!("success-with-result", with_result);

    let empty: Envelope = Envelope::success_empty();
    insta::assert_json_snapshot!("success-empty", empty);

    let full = Envelope::success(json!({ "nodes": 500, "truncated": true }))
        .with_session("s-4f2a")
        .with_warning(Warning::new(
            WarningCode::TREE_TRUNCATED,
            "Clipped at 500 nodes.",
        ))
        .with_warning(Warning::new(
            WarningCode::MINIMIZED_WINDOW,
            "Restored before the query.",
        ));
    insta::assert_json_snapshot!("success-with-session-and-warnings", full);
}

#[test]
fn keys_come_in_contract_order_and_compact() {
    let envelope: Envelope = Envelope::failure(
        ToolError::new(Classified::ELEMENT_NOT_FOUND, "Nothing matched.")
            .with_partial_result(object(json!({ "b": 1 })))
            .with_last_observation(Observation::try_from(json!({ "a": 1 })).unwrap()),
    )
    .with_warning(Warning::new(WarningCode::REGION_CLAMPED, "Clipped."))
    .with_session("s-1");
    assert_eq!(
        envelope.to_json().unwrap(),
        r#"{"ok":false,"sessionId":"s-1","warnings":[{"code":"region-clamped","detail":"Clipped."}],"error":{"code":"element-not-found","category":"no-target","detail":"Nothing matched.","lastObservation":{"a":1},"partialResult":{"b":1}}}"#
    );
    let success = Envelope::success(json!({ "n": 1 }))
        .with_warning(Warning::new(WarningCode::REGION_CLAMPED, "Clipped."))
        .with_session("s-1");
    assert_eq!(
        success.to_json().unwrap(),
        r#"{"ok":true,"sessionId":"s-1","result":{"n":1},"warnings":[{"code":"region-clamped","detail":"Clipped."}]}"#
    );
}

#[test]
fn a_result_that_is_not_an_object_does_not_serialize() {
    #[derive(serde::Serialize)]
    struct Count(u32);
    #[derive(serde::Serialize)]
    enum Mode {
        Fast,
    }
    for (label, err) in [
        (
            "string",
            Envelope::success(json!("done")).to_json().unwrap_err(),
        ),
        (
            "array",
            Envelope::success(json!([1])).to_json().unwrap_err(),
        ),
        (
            "null",
            Envelope::success(Value::Null).to_json().unwrap_err(),
        ),
        ("number", Envelope::success(Count(3)).to_json().unwrap_err()),
        (
            "unit variant",
            Envelope::success(Mode::Fast).to_json().unwrap_err(),
        ),
        (
            "option none",
            Envelope::success(None::<JsonObject>).to_json().unwrap_err(),
        ),
    ] {
        assert!(
            err.to_string().starts_with("result must be a JSON object"),
            "{label}: {err}"
        );
    }
}

#[test]
fn typed_results_that_are_objects_serialize() {
    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct Found {
        element_id: String,
        bounds: [i32; 4],
    }
    #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    struct Wrapper(Found);

    let envelope = Envelope::success(Wrapper(Found {
        element_id: "btnOk".into(),
        bounds: [0, 0, 80, 24],
    }));
    let text = envelope.to_json().unwrap();
    assert_eq!(
        text,
        r#"{"ok":true,"result":{"elementId":"btnOk","bounds":[0,0,80,24]}}"#
    );
    assert_eq!(Envelope::<Wrapper>::from_json(&text).unwrap(), envelope);

    let some = Envelope::success(Some(object(json!({ "a": 1 }))));
    assert_eq!(some.to_json().unwrap(), r#"{"ok":true,"result":{"a":1}}"#);
}

#[test]
fn a_typed_result_read_as_an_array_is_rejected() {
    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Point {
        x: i32,
        y: i32,
    }
    // serde_json would read a struct from an array; the contract says result is an object.
    let err = Envelope::<Point>::from_json(r#"{"ok":true,"result":[1,2]}"#).unwrap_err();
    assert_eq!(err.rule(), agent_tool_result::Rule::PayloadIsObject);
    assert_eq!(err.pointer(), "/result");
    let ok = Envelope::<Point>::from_json(r#"{"ok":true,"result":{"x":1,"y":2}}"#).unwrap();
    assert_eq!(ok.result().unwrap().x, 1);
}

/// Every object at envelope, error and warning level, in serialized output.
fn contract_levels(value: &Value) -> Vec<&serde_json::Map<String, Value>> {
    let envelope = value.as_object().unwrap();
    let mut levels = vec![envelope];
    if let Some(error) = envelope.get("error") {
        levels.push(error.as_object().unwrap());
    }
    if let Some(warnings) = envelope.get("warnings") {
        levels.extend(
            warnings
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_object().unwrap()),
        );
    }
    levels
}

#[test]
fn serialized_output_holds_no_null_at_contract_level() {
    let mut envelopes: Vec<Envelope> = ErrorCategory::ALL
        .into_iter()
        .map(|c| Envelope::failure(failure_for(c)))
        .collect();
    envelopes.push(Envelope::success_empty());
    let mut result = agent_tool_result::JsonObject::new();
    result.insert("value".into(), Value::Null);
    envelopes.push(Envelope::success(Value::Object(result)));
    for envelope in envelopes {
        let value: Value = serde_json::from_str(&envelope.to_json().unwrap()).unwrap();
        for level in contract_levels(&value) {
            assert!(level.values().all(|v| !v.is_null()), "{value}");
        }
    }
}

#[test]
fn accessors_expose_what_was_built() {
    let envelope: Envelope = Envelope::failure(ToolError::new(Classified::FOCUS_NOT_SET, "x"))
        .with_session("s-9")
        .with_warnings([Warning::new(WarningCode::CAPTURE_FALLBACK, "y")]);
    assert!(!envelope.is_ok());
    assert_eq!(envelope.session_id(), Some("s-9"));
    assert_eq!(envelope.result(), None);
    assert_eq!(envelope.error().unwrap().category(), ErrorCategory::Focus);
    assert_eq!(
        envelope.warnings()[0].code(),
        &WarningCode::CAPTURE_FALLBACK
    );
    assert_eq!(
        envelope.clone().into_result().unwrap_err().code().as_str(),
        "focus-not-set"
    );

    let mapped = Envelope::success(2).map(|n| json!({ "n": n }));
    assert_eq!(mapped.to_json().unwrap(), r#"{"ok":true,"result":{"n":2}}"#);
    let from_result: Envelope<Value> = Err(ToolError::new(
        Classified::NO_RECORDING,
        "Nothing is recording.",
    ))
    .into();
    assert_eq!(
        from_result.error().unwrap().category(),
        ErrorCategory::InvalidArgument
    );
}

/// The untyped envelope takes what `json!` builds, so a tool's common case needs no type; a
/// result that is not an object is refused when written, naming the rule, and an envelope of
/// `JsonObject` cannot hold one at all.
#[test]
fn the_untyped_default_takes_json_and_refuses_a_non_object_when_written() {
    fn tool() -> Envelope {
        Envelope::success(json!({ "n": 1 }))
    }
    assert_eq!(tool().to_json().unwrap(), r#"{"ok":true,"result":{"n":1}}"#);
    for not_object in [json!([1]), json!(5), json!("s"), json!(true)] {
        let err = Envelope::success(not_object.clone()).to_json().unwrap_err();
        assert!(err.to_string().contains("object"), "{not_object}: {err}");
    }
    let mut result = agent_tool_result::JsonObject::new();
    result.insert("n".into(), json!(1));
    let typed: Envelope<agent_tool_result::JsonObject> = Envelope::success(result);
    assert_eq!(typed.to_json().unwrap(), tool().to_json().unwrap());
    // Reading still guarantees an object.
    let read: Envelope = Envelope::from_json(r#"{"ok":true,"result":{"a":[1]}}"#).unwrap();
    assert_eq!(read.result().unwrap()["a"], json!([1]));
    assert!(Envelope::<Value>::from_json(r#"{"ok":true,"result":[1]}"#).is_err());
}
