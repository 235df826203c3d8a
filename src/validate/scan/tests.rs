//! The one-pass reader against the typed reader: on the corpus, on every mutation of it, and
//! rule by rule.

use std::path::Path;

use super::Verdict;

/// The typed reader's verdict and lints, which this path must never contradict.
fn skimmed(text: &str) -> Option<Vec<String>> {
    let envelope = super::super::text::skim(text).ok()?;
    let lints = envelope
        .error()
        .map(|error| super::super::lints_for(error.code(), Some(error.category())))
        .unwrap_or_default();
    Some(
        lints
            .iter()
            .map(|f| format!("{}{}", f.pointer(), f.message()))
            .collect(),
    )
}

fn scanned(text: &str) -> Option<Vec<String>> {
    let Verdict::Valid(lints) = super::envelope(text) else {
        return None;
    };
    Some(
        lints
            .iter()
            .map(|f| format!("{}{}", f.pointer(), f.message()))
            .collect(),
    )
}

/// Every document of the corpus and the examples, one per line for NDJSON.
fn corpus() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut documents = Vec::new();
    let mut dirs = vec![
        root.join("tests/fixtures/valid"),
        root.join("tests/fixtures/invalid"),
        root.join("examples/results"),
        root.join("examples/results/broken"),
    ];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            match path.extension().and_then(|e| e.to_str()) {
                Some("json") => documents.push(text),
                Some("ndjson") => documents.extend(text.lines().map(str::to_owned)),
                _ => {}
            }
        }
    }
    documents
}

/// Whatever this path accepts, the typed reader accepts with the same lints; whatever it
/// refutes, the typed reader refuses too.
fn agrees(text: &str) -> bool {
    match super::envelope(text) {
        Verdict::Unsure => true,
        Verdict::Valid(_) => skimmed(text).is_some() && skimmed(text) == scanned(text),
        Verdict::Invalid => skimmed(text).is_none(),
    }
}

#[test]
fn never_contradicts_the_typed_reader() {
    let corpus = corpus();
    let count = |verdict: fn(&Verdict) -> bool| {
        corpus
            .iter()
            .filter(|t| verdict(&super::envelope(t)))
            .count()
    };
    for text in &corpus {
        assert!(agrees(text), "{text}");
    }
    // It takes the common shapes: most of the valid documents, and many invalid ones.
    let accepted = count(|v| matches!(v, Verdict::Valid(_)));
    assert!(accepted >= 40, "{accepted} of {}", corpus.len());
    let refuted = count(|v| *v == Verdict::Invalid);
    assert!(refuted >= 40, "{refuted} of {}", corpus.len());
}

#[test]
fn refutes_each_rule_it_can_see() {
    for text in [
        "[]",
        " 1",
        "",
        r#"{"ok":"true"}"#,
        r#"{"ok":null}"#,
        r#"{"ok":true,"command":"find"}"#,
        r#"{"ok":true,"ok":true}"#,
        r#"{"ok":true,"result":"done"}"#,
        r#"{"ok":true,"result":[]}"#,
        r#"{"sessionId":"s"}"#,
        r#"{"ok":false}"#,
        r#"{"ok":false,"result":{},"error":{"code":"a","category":"timeout","detail":""}}"#,
        r#"{"ok":true,"error":{"code":"a","category":"timeout","detail":""}}"#,
        r#"{"ok":false,"error":null}"#,
        r#"{"ok":false,"error":{"code":"A_B","category":"timeout","detail":""}}"#,
        r#"{"ok":false,"error":{"code":1,"category":"timeout","detail":""}}"#,
        r#"{"ok":false,"error":{"code":"a","category":"No_Target","detail":""}}"#,
        r#"{"ok":false,"error":{"code":"a","category":2,"detail":""}}"#,
        r#"{"ok":false,"error":{"code":"a","category":"timeout"}}"#,
        r#"{"ok":false,"error":{"code":"a","category":"timeout","detail":"","x":1}}"#,
        r#"{"ok":false,"error":{"code":"a","code":"a","category":"timeout","detail":""}}"#,
        r#"{"ok":false,"error":{"code":"a","category":"timeout","detail":"","lastObservation":{"base64":""}}}"#,
        r#"{"ok":false,"error":{"code":"a","category":"timeout","detail":"","lastObservation":{"a":[{"base64":""}]}}}"#,
        r#"{"ok":true,"warnings":{}}"#,
        r#"{"ok":true,"warnings":[1]}"#,
        r#"{"ok":true,"warnings":[{"code":"a"}]}"#,
        r#"{"ok":true,"warnings":[{"code":"a","detail":"","x":1}]}"#,
        r#"{"ok":true,"warnings":[{"code":"a","detail":"","detail":""}]}"#,
        r#"{"ok":true,"warnings":[{"code":"Bad","detail":""}]}"#,
    ] {
        assert_eq!(super::envelope(text), Verdict::Invalid, "{text}");
        assert!(skimmed(text).is_none(), "{text}");
    }
    // What it cannot be sure of is left to the typed reader.
    for text in [
        r#"{"ok":true,"result":null}"#,
        r#"{"ok":true,"sessionId":null}"#,
        r#"{"ok":true,"o\u006b":true}"#,
        r#"{"ok":false,"error":{"code":"a","category":"time\u006fut","detail":""}}"#,
        r#"{"ok":true,"result":{"n":1e400}}"#,
    ] {
        assert_eq!(super::envelope(text), Verdict::Unsure, "{text}");
    }
}

/// Mutations of every document at every position: a byte dropped, or one of the bytes
/// and snippets that change a verdict put in. Whatever this path accepts, the typed reader
/// accepts with the same lints.
#[test]
fn mutations_never_split_the_verdicts() {
    const SNIPPETS: [&str; 24] = [
        "\"",
        "\\",
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "0",
        "-",
        "e",
        "E",
        ".",
        " ",
        "\u{1}",
        "\\ud800",
        "\\u0041",
        "null",
        "true",
        "\"base64\":1,",
        "1e400",
        "\"ok\":true,",
        "\"kind\":\"capture-summary\",",
        "\u{feff}",
    ];
    let mut checked = 0;
    for text in corpus().iter().filter(|t| t.len() < 4000) {
        for at in (0..text.len()).filter(|i| text.is_char_boundary(*i)) {
            let next = text[at..].chars().next().map_or(0, char::len_utf8);
            let dropped = format!("{}{}", &text[..at], &text[at + next..]);
            assert!(agrees(&dropped), "{dropped}");
            for snippet in SNIPPETS {
                let mutated = format!("{}{snippet}{}", &text[..at], &text[at..]);
                assert!(agrees(&mutated), "{mutated}");
                checked += 1;
            }
        }
    }
    assert!(checked > 100_000, "{checked}");
}
