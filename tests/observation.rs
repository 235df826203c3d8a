//! Observations: capture summaries, windows, other objects, and the no-base64 rule.

use agent_tool_result::observation::{ArtifactOutcome, BlankCheck, CaptureSummary, WindowInfo};
use agent_tool_result::validate::Validator;
use agent_tool_result::{Classified, Envelope, Observation, Rule, ToolError};
use serde_json::{Value, json};

fn window() -> WindowInfo {
    WindowInfo::new(1_312_674, "Untitled - Notepad", "Notepad", "notepad", 8124)
        .at(-8, 80, 1024, 768)
}

fn summary() -> CaptureSummary {
    CaptureSummary::new(
        1024,
        768,
        48_213,
        BlankCheck::from_fraction(0.1043, false).unwrap(),
        ArtifactOutcome::written(
            "sessions/20261130-101500-s-4f2a/capture-20261130-101502123-1.png",
        )
        .unwrap(),
    )
    .with_window(window())
}

#[test]
fn a_capture_summary_writes_the_contract_key_order() {
    let text = serde_json::to_string(&summary()).unwrap();
    let keys: Vec<&str> = [
        "\"kind\"",
        "\"window\"",
        "\"width\"",
        "\"height\"",
        "\"encoding\"",
        "\"bytes\"",
        "\"blankCheck\"",
        "\"artifact\"",
    ]
    .into_iter()
    .collect();
    let positions: Vec<usize> = keys.iter().map(|k| text.find(k).unwrap()).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
    let with_handle = CaptureSummary::new(
        1,
        1,
        67,
        BlankCheck::from_fraction(1.0, true).unwrap(),
        ArtifactOutcome::failed("disk full").unwrap(),
    )
    .with_handle(42);
    assert_eq!(
        serde_json::to_string(&with_handle).unwrap(),
        r#"{"kind":"capture-summary","handle":42,"width":1,"height":1,"encoding":"png","bytes":67,"blankCheck":{"blank":true,"dominantFraction":1.0,"dominantIsDark":true},"artifactError":"disk full"}"#
    );
}

#[test]
fn observations_read_back_as_the_variant_they_were() {
    let cases = [
        Observation::from(summary()),
        Observation::from(window()),
        Observation::try_from(json!({ "kind": "query", "nodes": [1, 2, 3] })).unwrap(),
    ];
    for observation in cases {
        let text = serde_json::to_string(&observation).unwrap();
        let back: Observation = serde_json::from_str(&text).unwrap();
        assert_eq!(back, observation, "{text}");
    }
    let window_like = Observation::try_from(serde_json::to_value(window()).unwrap()).unwrap();
    assert!(matches!(window_like, Observation::Window(_)));
    let window_plus = json!({ "handle": 1, "title": "", "className": "", "processName": "",
        "processId": 1, "x": 0, "y": 0, "width": 1, "height": 1, "extra": true });
    assert!(matches!(
        Observation::try_from(window_plus).unwrap(),
        Observation::Other(_)
    ));
}

#[test]
fn the_no_base64_rule_holds_when_building_and_reading() {
    let long = "iVBORw0KGgo0".repeat(400); // a PNG header's base64, over 4 KiB
    for (value, pointer) in [
        (json!({ "base64": "QUJD" }), "/base64"),
        (
            json!({ "capture": { "meta": { "base64": "" } } }),
            "/capture/meta/base64",
        ),
        (
            json!({ "frames": [{}, { "base64": "QUJD" }] }),
            "/frames/1/base64",
        ),
        (json!({ "png": long }), "/png"),
        (json!({ "pngs": [long] }), "/pngs/0"),
    ] {
        let err = Observation::try_from(value.clone()).unwrap_err();
        assert_eq!(err.pointer(), pointer, "{value}");

        let envelope = json!({ "ok": false, "error": {
            "code": "element-not-found", "category": "no-target", "detail": "",
            "lastObservation": value,
        }});
        let err = Envelope::<Value>::from_value(&envelope).unwrap_err();
        assert_eq!(err.rule(), Rule::NoBase64InObservation);
        // The typed reader points where the validator does: at the offending key or string.
        assert_eq!(err.pointer(), format!("/error/lastObservation{pointer}"));

        let report = Validator::shared().validate(&envelope);
        let found: Vec<(Rule, &str)> = report
            .violations()
            .iter()
            .map(|v| (v.rule(), v.pointer()))
            .collect();
        assert_eq!(
            found,
            [(
                Rule::NoBase64InObservation,
                &*format!("/error/lastObservation{pointer}")
            )]
        );
    }
}

#[test]
fn base64_in_partial_result_is_allowed() {
    let envelope = json!({ "ok": false, "error": {
        "code": "frame-all-black", "category": "capture-blank", "detail": "",
        "partialResult": { "encoding": "png", "base64": "QUJD".repeat(5_000) },
    }});
    assert!(Validator::shared().validate(&envelope).is_valid());
    assert!(Envelope::<Value>::from_value(&envelope).is_ok());
}

#[test]
fn long_text_that_is_not_base64_is_allowed() {
    for text in [
        "a sentence with spaces. ".repeat(500),
        "é".repeat(5_000),
        "QUJD=".repeat(1_000),
    ] {
        let observation = json!({ "text": text });
        assert!(Observation::try_from(observation.clone()).is_ok());
        let envelope = json!({ "ok": false, "error": {
            "code": "x", "category": "internal", "detail": "", "lastObservation": observation }});
        assert!(Validator::shared().validate(&envelope).is_valid());
    }
}

#[test]
fn malformed_capture_summaries_are_rejected_with_their_rule() {
    let good = serde_json::to_value(summary()).unwrap();
    let mut both = good.clone();
    both["artifactError"] = json!("disk full");
    let mut neither = good.clone();
    neither.as_object_mut().unwrap().remove("artifact");
    let mut empty = good.clone();
    empty["artifact"] = json!("");
    let mut jpeg = good.clone();
    jpeg["encoding"] = json!("jpeg");
    let mut window_array = good.clone();
    window_array["window"] = json!([1, "t", "c", "p", 1, 0, 0, 1, 1]);
    let mut fraction = good;
    fraction["blankCheck"]["dominantFraction"] = json!(-0.5);
    for (value, rule) in [
        (both, Rule::CaptureArtifactExclusive),
        (neither, Rule::CaptureArtifactExclusive),
        (empty, Rule::FieldType),
        (jpeg, Rule::FieldType),
        (window_array, Rule::FieldType),
        (fraction, Rule::FieldType),
    ] {
        assert!(Observation::try_from(value.clone()).is_err(), "{value}");
        let envelope = json!({ "ok": false, "error": {
            "code": "x", "category": "internal", "detail": "", "lastObservation": value }});
        let err = Envelope::<Value>::from_value(&envelope).unwrap_err();
        assert_eq!(err.rule(), rule, "{err}");
        let report = Validator::shared().validate(&envelope);
        assert!(
            report.violations().iter().any(|v| v.rule() == rule),
            "{:?}",
            report.violations()
        );
    }
}

#[test]
fn a_failure_carries_a_typed_observation() {
    let envelope: Envelope = Envelope::failure(
        ToolError::new(Classified::ELEMENT_NOT_FOUND, "No 'OK' button.")
            .with_last_observation(summary()),
    );
    let text = envelope.to_json().unwrap();
    let back = Envelope::<Value>::from_json(&text).unwrap();
    let Some(Observation::Capture(read)) = back.error().unwrap().last_observation() else {
        panic!("not a capture: {text}")
    };
    assert_eq!(read, &summary());
    assert_eq!(read.window().unwrap().process_name(), "notepad");
}

#[test]
fn blank_check_constructors_guard_the_fraction() {
    assert!(BlankCheck::from_fraction(0.99, false).unwrap().blank());
    assert!(!BlankCheck::from_fraction(0.989, false).unwrap().blank());
    assert!(BlankCheck::new(false, 1.0, true).is_ok());
    for bad in [-0.01, 1.01, f64::NAN, f64::INFINITY] {
        assert!(BlankCheck::from_fraction(bad, false).is_err(), "{bad}");
    }
}

/// The no-base64 heuristic both ways, in the typed reader and the schema alike: real image
/// bytes of every kind are caught; long text that only looks like base64's alphabet is not.
#[test]
fn inline_base64_means_encoded_binary_not_any_long_word() {
    use agent_tool_result::observation::is_inline_base64;
    use base64::Engine;

    let encode = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let noise: Vec<u8> = (0u32..40_000)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13).to_le_bytes()[0])
        .collect();
    let mut png = vec![0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1A, b'\n'];
    png.extend_from_slice(&noise[..4_000]);
    let mut blank_bmp = b"BM".to_vec();
    blank_bmp.extend(std::iter::repeat_n(0u8, 8_000)); // an all-black raw bitmap
    let mut jpeg = vec![0xFF, 0xD8, 0xFF, 0xE0];
    jpeg.extend_from_slice(&noise[..6_000]);
    let images = [
        encode(&png),
        encode(&blank_bmp),
        encode(&jpeg),
        encode(&noise),
    ];
    let texts = [
        "A".repeat(4_100),
        "z".repeat(8_000),
        "0".repeat(5_000),
        "0123456789abcdef".repeat(300),
        "ABCDEF0123456789".repeat(300),
        "thequickbrownfoxjumpsoverthelazydog".repeat(150),
        "THEQUICKBROWNFOX".repeat(300),
        "lorem ipsum dolor sit amet, ".repeat(200),
    ];
    let verdict = |s: &str| {
        let envelope = json!({ "ok": false, "error": {
            "code": "x", "category": "internal", "detail": "",
            "lastObservation": { "kind": "query", "text": s },
        }});
        let typed = Envelope::<Value>::from_value(&envelope).is_err();
        let schema = !Validator::shared().validate(&envelope).is_valid();
        assert_eq!(
            typed,
            schema,
            "the typed reader and the schema part ways on {}…",
            &s[..20]
        );
        assert_eq!(typed, is_inline_base64(s));
        typed
    };
    for image in &images {
        assert!(image.len() > 4_096);
        assert!(verdict(image), "missed image bytes: {}…", &image[..20]);
    }
    for text in &texts {
        assert!(!verdict(text), "took text for an image: {}…", &text[..20]);
    }
}
