//! Rules are data: each rejection names the rule of the breach that was found, wherever it
//! was found, and the message of an unknown field names the object it is in.

use agent_tool_result::validate::Validator;
use agent_tool_result::{Envelope, Rule};
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Found {
    automation_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Strict {
    n: u8,
}

#[test]
fn errors_inside_the_tools_own_result_wear_its_own_rule() {
    for (text, pointer) in [
        (r#"{"ok":true,"result":{}}"#, "/result"),
        (
            r#"{"ok":true,"result":{"automation_id":5}}"#,
            "/result/automation_id",
        ),
    ] {
        let err = Envelope::<Found>::from_json(text).unwrap_err();
        assert_eq!(
            (err.rule(), err.pointer()),
            (Rule::ToolResultType, pointer),
            "{err}"
        );
    }
    for text in [
        r#"{"ok":true,"result":{"n":1,"extra":2}}"#,
        r#"{"ok":true,"result":{"n":300}}"#,
        r#"{"ok":true,"result":{"n":1,"n":1}}"#,
    ] {
        let err = Envelope::<Strict>::from_json(text).unwrap_err();
        assert_eq!(err.rule(), Rule::ToolResultType, "{err}");
    }
    // A result that is not an object is still the contract's business.
    let err = Envelope::<Found>::from_json(r#"{"ok":true,"result":[1]}"#).unwrap_err();
    assert_eq!(
        (err.rule(), err.pointer()),
        (Rule::PayloadIsObject, "/result")
    );
    // And so is everything around the result.
    let err = Envelope::<Found>::from_json(r#"{"ok":true,"result":{"automation_id":"a"},"x":1}"#)
        .unwrap_err();
    assert_eq!((err.rule(), err.pointer()), (Rule::NoUnknownFields, "/x"));
}

/// An extra key in each closed object: both readers name that object and its fields.
#[test]
fn unknown_fields_name_the_object_they_are_in() {
    let blank = r#"{"blank":false,"dominantFraction":0.5,"dominantIsDark":false}"#;
    let window = r#"{"handle":1,"title":"t","className":"c","processName":"p","processId":2,"x":0,"y":0,"width":1,"height":1}"#;
    let capture = |window: &str, blank: &str| {
        format!(
            r#"{{"kind":"capture-summary","window":{window},"width":1,"height":1,"encoding":"png","bytes":1,"blankCheck":{blank},"artifact":"a.png"}}"#
        )
    };
    let failure = |observation: &str| {
        format!(
            r#"{{"ok":false,"error":{{"code":"x","category":"internal","detail":"","lastObservation":{observation}}}}}"#
        )
    };
    let extra = |object: &str| object.replacen('{', r#"{"zz":1,"#, 1);
    let cases = [
        (
            extra(r#"{"ok":true}"#),
            "/zz",
            "an envelope has only ok, sessionId, result, warnings and error",
        ),
        (
            extra(r#"{"ok":true}"#).replace(
                r#""zz":1,"ok":true"#,
                r#""ok":true,"warnings":[{"zz":1,"code":"a","detail":""}]"#,
            ),
            "/warnings/0/zz",
            "a warning has only code and detail",
        ),
        (
            failure("{}").replacen(r#""code""#, r#""zz":1,"code""#, 1),
            "/error/zz",
            "an error has only code, category, detail, lastObservation and partialResult",
        ),
        (
            failure(&extra(&capture(window, blank))),
            "/error/lastObservation/zz",
            "a capture summary has only kind, window, handle, width, height, encoding, bytes, blankCheck, file, artifact and artifactError",
        ),
        (
            failure(&capture(&extra(window), blank)),
            "/error/lastObservation/window/zz",
            "a window has only handle, title, className, processName, processId, x, y, width and height",
        ),
        (
            failure(&capture(window, &extra(blank))),
            "/error/lastObservation/blankCheck/zz",
            "a blank check has only blank, dominantFraction and dominantIsDark",
        ),
    ];
    for (text, pointer, names) in cases {
        let err = Envelope::<Value>::from_json(&text).unwrap_err();
        assert_eq!(
            (err.rule(), err.pointer()),
            (Rule::NoUnknownFields, pointer),
            "{text}"
        );
        assert_eq!(err.message(), format!("unknown field `zz`: {names}"));
        let report = Validator::shared().validate_text(&text);
        let finding = &report.violations()[0];
        assert_eq!(
            (finding.rule(), finding.pointer()),
            (Rule::NoUnknownFields, pointer)
        );
        assert_eq!(
            finding.message(),
            err.message(),
            "one message, whichever reader"
        );
    }
}

/// The same invariant breach gets the same message from the typed reader and the validator.
#[test]
fn one_message_per_rule_whichever_reader() {
    for text in [
        r#"{"ok":false}"#,
        r#"{"ok":true,"error":{"code":"x","category":"internal","detail":""}}"#,
        r#"{"ok":false,"result":{"a":1},"error":{"code":"x","category":"internal","detail":""}}"#,
        r#"{"ok":false,"error":{"code":"x","category":"internal"}}"#,
        r#"{"ok":false,"error":{"code":"x","category":"internal","detail":"","lastObservation":{"base64":""}}}"#,
    ] {
        let err = Envelope::<Value>::from_json(text).unwrap_err();
        let report = Validator::shared().validate_text(text);
        let finding = &report.violations()[0];
        assert_eq!(
            (finding.rule(), finding.pointer(), finding.message()),
            (err.rule(), err.pointer(), err.message()),
            "{text}"
        );
    }
}
