//! Every reader gives one verdict: the differential harness over the fixtures and seeded
//! mutations aimed at each class where readers used to part ways. `examples/differential.rs`
//! runs the same harness for as many mutations as it is asked.

use crate::mutations as differential;

use std::fmt::Write;
use std::path::Path;

use agent_tool_result::Rule;
use agent_tool_result::validate::Validator;
use differential::{Rng, disagreement, mutate, seeds};

#[test]
fn every_reader_agrees_on_fixtures_and_twenty_thousand_mutations() {
    let validator = Validator::shared();
    let seeds = seeds(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")));
    assert!(seeds.len() > 100);
    let mut rng = Rng::new(0x5eed);
    let mut checked = 0;
    for seed in &seeds {
        assert_eq!(disagreement(validator, seed), None, "{seed}");
    }
    while checked < 20_000 {
        let mut text = rng.pick(&seeds).clone();
        for _ in 0..=rng.below(2) {
            text = mutate(&text, &mut rng);
        }
        if let Some(why) = disagreement(validator, &text) {
            panic!("{why}\n{text}");
        }
        checked += 1;
    }
}

/// Each class, once by hand: the verdict every reader gives.
#[test]
fn each_class_has_one_verdict() {
    let validator = Validator::shared();
    let capture = |width: &str| {
        format!(
            r#"{{"ok":false,"error":{{"code":"x","category":"internal","detail":"","lastObservation":{{"kind":"capture-summary","handle":5.0,"width":{width},"height":1E2,"encoding":"png","bytes":-0,"blankCheck":{{"blank":false,"dominantFraction":0.5,"dominantIsDark":false}},"artifact":"a.png"}}}}}}"#
        )
    };
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let image = "iVBORw0KGgoAAAANSUhEUgAA".repeat(200);
    let observation = |members: &str| {
        format!(
            r#"{{"ok":false,"error":{{"code":"x","category":"internal","detail":"","lastObservation":{{{members}}}}}}}"#
        )
    };
    let cases: Vec<(String, Option<(Rule, &str)>)> = vec![
        (r#"{"ok":true,"result":{"n":1e400}}"#.into(), Some((Rule::WellFormedJson, ""))),
        (r#"{"ok":true,"result":{"n":"\ud800"}}"#.into(), Some((Rule::WellFormedJson, ""))),
        // Not JSON past a field the contract refuses: refused as not JSON, by every reader.
        (r#"{"ok":true,"bogus":1"#.into(), Some((Rule::WellFormedJson, ""))),
        (r#"{"ok":"yes"}}"#.into(), Some((Rule::WellFormedJson, ""))),
        (format!(r#"{{"ok":true,"result":{{"n":{deep}}}}}"#), Some((Rule::NestingLimit, ""))),
        (capture("800.0"), None),
        (capture("8E2"), None),
        (
            capture("4294967296"),
            Some((Rule::FieldType, "/error/lastObservation/width")),
        ),
        (
            capture("1.5"),
            Some((Rule::FieldType, "/error/lastObservation/width")),
        ),
        (
            capture("4294967295").replace("-0", "18446744073709551616"),
            Some((Rule::FieldType, "/error/lastObservation/bytes")),
        ),
        (
            r#"{"ok":false,"result":{"a":1},"error":{"code":"x","category":"internal","detail":""}}"#.into(),
            Some((Rule::FailureForbidsResult, "/result")),
        ),
        (
            r#"{"ok":true,"ok":true}"#.into(),
            Some((Rule::NoDuplicateKeys, "/ok")),
        ),
        // Inside an observation, as in any payload, the last of a repeated key wins.
        (capture("800").replace(r#""width":800"#, r#""width":1,"width":800"#), None),
        (
            r#"{"ok":false,"error":{"code":"x","category":"internal","detail":"","lastObservation":{"a":1,"a":2}}}"#.into(),
            None,
        ),
        // Image data under a key that repeats is judged on the last value, like any other.
        (observation(&format!(r#""png":"{image}","png":"text""#)), None),
        (observation(&format!(r#""png":"text","png":"{image}""#)), Some((Rule::NoBase64InObservation, "/error/lastObservation/png"))),
        (observation(r#""base64":1,"kind":"query""#), Some((Rule::NoBase64InObservation, "/error/lastObservation/base64"))),
    ];
    for (text, expected) in cases {
        assert_eq!(disagreement(validator, &text), None, "{text}");
        let typed = agent_tool_result::Envelope::<serde_json::Value>::from_json(&text);
        match expected {
            None => assert!(typed.is_ok(), "{text}: {typed:?}"),
            Some((rule, pointer)) => {
                let err = typed.unwrap_err();
                assert_eq!(err.rule(), rule, "{text}: {err}");
                if !pointer.is_empty() || rule == Rule::FailureForbidsResult {
                    assert_eq!(err.pointer(), pointer, "{text}: {err}");
                }
            }
        }
    }
}

/// A random observation as JSON text: nested objects and arrays, `base64` keys, long strings
/// that are or are not image data, repeated keys, capture-summary kinds.
fn observation_text(rng: &mut Rng, depth: usize, out: &mut String) {
    let image = "iVBORw0KGgoAAAANSUhEUgAA".repeat(200);
    let prose = "not image data! ".repeat(300);
    match rng.below(if depth > 3 { 4 } else { 6 }) {
        0 => out.push_str(&rng.below(100).to_string()),
        1 => out.push_str(r#""short""#),
        2 => write!(out, "\"{image}\"").unwrap(),
        3 => write!(out, "\"{prose}\"").unwrap(),
        4 => {
            out.push('[');
            for i in 0..rng.below(4) {
                if i > 0 {
                    out.push(',');
                }
                observation_text(rng, depth + 1, out);
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            for i in 0..rng.below(5) {
                if i > 0 {
                    out.push(',');
                }
                let key = rng.word(&["base64", "a", "b", "kind", "png"]);
                write!(out, "\"{key}\":").unwrap();
                if key == "kind" && rng.below(2) == 0 {
                    out.push_str(r#""capture-summary""#);
                } else {
                    observation_text(rng, depth + 1, out);
                }
            }
            out.push('}');
        }
    }
}

/// Random observations: the report, which reads them pruned, finds what the schema finds in
/// the whole value (the harness checks that, with every other agreement).
#[test]
fn random_observations_have_one_verdict_and_the_same_findings() {
    let validator = Validator::shared();
    let mut rng = Rng::new(0x0b5e);
    let mut with_findings = 0;
    for _ in 0..3_000 {
        let mut text = String::from(
            r#"{"ok":false,"error":{"code":"x","category":"internal","detail":"","lastObservation":"#,
        );
        observation_text(&mut rng, 0, &mut text);
        text.push_str("}}");
        assert_eq!(disagreement(validator, &text), None, "{text}");
        with_findings += usize::from(!validator.validate_text(&text).is_valid());
    }
    assert!(with_findings > 500, "{with_findings}");
}
