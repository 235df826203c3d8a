//! The families of input where a reader in another language most easily reads otherwise than
//! `atr`, each in every place a contract reads it: numbers, repeated names, prototype names,
//! surrogates, nesting, `retryAt`'s grammar, machine codes, an impact's sums, base64 at the
//! edge of its length, and bytes that are not UTF-8. Every reader must print `atr`'s lines.

use super::{dev_python, npm, python_dir, typescript_package};
use crate::common::{run, scratch};

use std::process::Command;

/// A guarantee result that allows, with `rest` after its policy.
fn guarantee(rest: &str) -> String {
    format!(
        r#"{{"schemaVersion":1,"settlement":{{"state":"committed"}},"policy":{{"decision":"allow"}}{rest}}}"#
    )
}

/// An envelope failure, with `error` after its detail.
fn failure(error: &str) -> String {
    format!(r#"{{"ok":false,"error":{{"code":"a","category":"timeout","detail":"d"{error}}}}}"#)
}

/// A failure whose last observation is a capture summary of `bytes` bytes, with `field` too.
fn summary(bytes: &str, field: &str) -> String {
    failure(&format!(
        r#","lastObservation":{{"kind":"capture-summary","width":1,"height":1,"encoding":"png","bytes":{bytes},"blankCheck":{{"blank":false,"dominantFraction":0.5,"dominantIsDark":false}},"artifact":"a"{field}}}"#
    ))
}

/// Numbers (integral floats, integers past 2^53 and 2^64, beyond a double) in a status, a
/// count, a version, a capture summary's integers and a payload, directly and carried.
fn numbers() -> Vec<(String, String)> {
    let numbers = [
        "400",
        "400.0",
        "4e2",
        "-0",
        "1e400",
        "-1e400",
        "9007199254740993",
        "18446744073709551615",
        "18446744073709551616",
        "18446744073709551615.0",
        "9223372036854775808",
        "1.5",
        "0.0",
    ];
    let mut out = Vec::new();
    for (i, n) in numbers.iter().enumerate() {
        let unsigned = n.trim_start_matches('-');
        out.extend([
            (
                format!("status-{i}"),
                format!(r#"{{"type":"about:blank","title":"x","status":{n}}}"#),
            ),
            (
                format!("requested-{i}"),
                guarantee(&format!(r#","impact":{{"requested":{n}}}"#)),
            ),
            (
                format!("version-{i}"),
                guarantee("").replacen(
                    r#""schemaVersion":1"#,
                    &format!(r#""schemaVersion":{n}"#),
                    1,
                ),
            ),
            (format!("bytes-{i}"), summary(n, "")),
            (
                format!("handle-{i}"),
                summary("1", &format!(r#","handle":-{unsigned}"#)),
            ),
            (
                format!("payload-{i}"),
                format!(r#"{{"ok":true,"result":{{"n":{n}}}}}"#),
            ),
            (
                format!("carried-{i}"),
                format!(r#"{{"structuredContent":{{"ok":true,"result":{{"n":{n}}}}},"x":{n}}}"#),
            ),
        ]);
    }
    out
}

/// Names an object's prototype holds, as a member, a payload's name, a category and an own
/// field.
fn prototype_names() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for name in [
        "__proto__",
        "constructor",
        "toString",
        "hasOwnProperty",
        "valueOf",
    ] {
        out.extend([
            (
                format!("own-{name}"),
                format!(r#"{{"ok":true,"{name}":1}}"#),
            ),
            (
                format!("payload-{name}"),
                format!(r#"{{"ok":true,"result":{{"{name}":{{"a":1}}}}}}"#),
            ),
            (
                format!("category-{name}"),
                format!(
                    r#"{{"ok":false,"error":{{"code":"a","category":"{name}","detail":"d"}}}}"#
                ),
            ),
            (
                format!("guarantee-{name}"),
                guarantee(&format!(r#","{name}":1"#)),
            ),
        ]);
    }
    out
}

/// A name repeated in each contract object, at the top, in payloads and in a `tools/call`
/// result's parts.
fn repeated_names() -> Vec<(String, String)> {
    let many: Vec<String> = (0..5000).map(|i| format!(r#""k{i}":{i}"#)).collect();
    [
        ("top", r#"{"ok":true,"ok":true}"#.to_owned()),
        (
            "after-null",
            r#"{"ok":true,"sessionId":null,"sessionId":null}"#.to_owned(),
        ),
        ("escaped-name", r#"{"ok":true,"\u006fk":true}"#.to_owned()),
        (
            "error",
            r#"{"ok":false,"error":{"code":"a","code":"a","category":"timeout","detail":"d"}}"#
                .to_owned(),
        ),
        (
            "warning",
            r#"{"ok":true,"warnings":[{"code":"a","detail":"b","detail":"c"}]}"#.to_owned(),
        ),
        ("result", r#"{"ok":true,"result":{"a":1,"a":2}}"#.to_owned()),
        (
            "deep",
            r#"{"ok":true,"result":{"a":{"b":{"c":{"d":{"e":1,"e":2}}}}}}"#.to_owned(),
        ),
        (
            "observation",
            failure(r#","lastObservation":{"kind":"capture-summary","kind":"x"}"#),
        ),
        (
            "settlement",
            guarantee("").replace(
                r#""state":"committed""#,
                r#""state":"committed","state":"committed""#,
            ),
        ),
        ("own-field", guarantee(r#","x":1,"x":2"#)),
        (
            "refusal-type",
            r#"{"type":"about:blank","type":"about:blank","title":"x","status":400}"#.to_owned(),
        ),
        (
            "refusal-extension",
            r#"{"type":"about:blank","title":"x","status":400,"e":1,"e":2}"#.to_owned(),
        ),
        (
            "call-known",
            r#"{"isError":false,"isError":false,"structuredContent":{"ok":true}}"#.to_owned(),
        ),
        (
            "call-unknown",
            r#"{"x":1,"x":2,"structuredContent":{"ok":true}}"#.to_owned(),
        ),
        (
            "carried-warning",
            r#"{"structuredContent":{"ok":true,"warnings":[{"code":"a","detail":"b","code":"a"}]}}"#
                .to_owned(),
        ),
        (
            "block",
            r#"{"content":[{"type":"text","text":"x","text":"{\"ok\":true}"}]}"#.to_owned(),
        ),
        ("spaced", r#"{ "ok" : true , "ok" : true }"#.to_owned()),
        ("many", format!(r#"{{"ok":true,{},"ok":true}}"#, many.join(","))),
        ("alike", r#"{"ok":true,"abXc":1,"abYc":2}"#.to_owned()),
    ]
    .into_iter()
    .map(|(name, text)| (format!("repeated-{name}"), text))
    .collect()
}

/// Lone, paired and reversed surrogate escapes, in a value, a name and an unread member.
fn surrogates() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, escape) in [
        ("lone-high", r"\ud800"),
        ("lone-low", r"\udc00"),
        ("pair", r"\ud83d\ude00"),
        ("reversed", r"\ude00\ud83d"),
        ("upper", r"\uD83D\uDE00"),
    ] {
        out.extend([
            (
                format!("surrogate-{name}"),
                format!(r#"{{"ok":true,"result":{{"a":"{escape}"}}}}"#),
            ),
            (
                format!("surrogate-name-{name}"),
                format!(r#"{{"ok":true,"result":{{"{escape}":1}}}}"#),
            ),
            (
                format!("surrogate-unknown-{name}"),
                format!(r#"{{"x":"{escape}","structuredContent":{{"ok":true}}}}"#),
            ),
        ]);
    }
    out
}

/// Nesting at the limit and past it: in a document, in `structuredContent`, in a content
/// block and in a member no reader reads.
fn depths() -> Vec<(String, String)> {
    let arrays = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let mut out = Vec::new();
    for depth in 125..=129 {
        out.extend([
            (
                format!("depth-{depth}"),
                format!(r#"{{"ok":true,"result":{{"a":{}}}}}"#, arrays(depth - 2)),
            ),
            (
                format!("depth-carried-{depth}"),
                format!(
                    r#"{{"structuredContent":{{"ok":true,"result":{{"a":{}}}}}}}"#,
                    arrays(depth - 3)
                ),
            ),
            (
                format!("depth-block-{depth}"),
                format!(
                    r#"{{"content":[{{"type":"text","text":"{{\"ok\":true}}","n":{}}}]}}"#,
                    arrays(depth - 3)
                ),
            ),
            (
                format!("depth-unknown-{depth}"),
                format!(
                    r#"{{"x":{},"structuredContent":{{"ok":true}}}}"#,
                    arrays(depth)
                ),
            ),
        ]);
    }
    out
}

/// `retryAt` at the edges of its grammar, in a refusal and in a defer.
fn instants() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, at) in [
        ("long-fraction", "2026-12-01T09:00:00.000000000100Z"),
        ("leap-2100", "2100-02-29T00:00:00Z"),
        ("leap-2000", "2000-02-29T00:00:00Z"),
        ("year-0", "0000-01-01T00:00:00Z"),
        ("lower", "2026-01-01t00:00:00z"),
        ("minus-zero", "2026-01-01T00:00:00-00:00"),
        ("offset", "2026-01-01T00:00:00+01:00"),
        ("newline", "2026-01-01T00:00:00Z\n"),
        ("leap-second", "2026-06-30T23:59:60Z"),
        ("fraction-zeros", "2026-01-01T00:00:00.500Z"),
        ("fraction-all-zeros", "2026-01-01T00:00:00.000Z"),
        ("fraction-nine", "2026-01-01T00:00:00.123456789Z"),
        ("fraction-ten-zero", "2026-01-01T00:00:00.1234567890Z"),
        ("fraction-zero-offset", "2026-01-01T00:00:00.10+00:00"),
        ("fraction-empty", "2026-01-01T00:00:00.Z"),
        ("no-seconds", "2026-01-01T00:00Z"),
        ("slashes", "2026/01/01T00:00:00Z"),
        ("space", "2026-01-01 00:00:00Z"),
        ("hour-24", "2026-01-01T24:00:00Z"),
        ("month-13", "2026-13-01T00:00:00Z"),
        ("april-31", "2026-04-31T00:00:00Z"),
        ("feb-29-2026", "2026-02-29T00:00:00Z"),
        ("sign-year", "+2026-01-01T00:00:00Z"),
        ("letter-digit", "2O26-01-01T00:00:00Z"),
        ("after-z", "2026-01-01T00:00:00Zz"),
        ("empty", ""),
    ] {
        let at = serde_json::to_string(at).unwrap();
        let defer = format!(r#""decision":"defer","code":"w","retryAt":{at}"#);
        out.extend([
            (
                format!("retry-{name}"),
                format!(r#"{{"type":"about:blank","title":"x","status":429,"retryAt":{at}}}"#),
            ),
            (
                format!("defer-{name}"),
                guarantee("").replace(r#""decision":"allow""#, &defer),
            ),
        ]);
    }
    out
}

/// Every family's documents, named.
fn edge_documents() -> Vec<(String, Vec<u8>)> {
    let mut out = [
        numbers(),
        prototype_names(),
        repeated_names(),
        surrogates(),
        depths(),
        instants(),
        codes(),
        sums(),
        alike(),
    ]
    .concat();
    for (name, length, unit) in [
        ("4096", 1024, "Ab1+"),
        ("4097", 1025, "Ab1+"),
        ("no-digit", 1100, "Abc+"),
        ("accented", 1100, "Ab1é"),
    ] {
        let observation = format!(r#","lastObservation":{{"s":"{}"}}"#, unit.repeat(length));
        out.push((format!("base64-{name}"), failure(&observation)));
    }
    let mut documents: Vec<(String, Vec<u8>)> = out
        .into_iter()
        .map(|(name, text)| (name, text.into_bytes()))
        .collect();
    for (name, bytes) in [
        ("bom", &b"\xef\xbb\xbf{\"ok\":true}"[..]),
        ("latin1", b"{\"ok\":true,\"result\":{\"a\":\"\xe9\"}}"),
        ("overlong", b"{\"ok\":true,\"result\":{\"a\":\"\xc0\xaf\"}}"),
        ("nul", b"{\"ok\":true}\x00"),
    ] {
        documents.push((format!("bytes-{name}"), bytes.to_vec()));
    }
    documents
}

#[test]
fn every_reader_reads_each_family_of_hard_input_as_atr_does() {
    let dir = scratch("edges");
    let mut files = Vec::new();
    for (name, bytes) in edge_documents() {
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, bytes).unwrap();
        files.push(path.to_str().unwrap().to_owned());
    }
    let mut args = vec!["classify", "--format", "json"];
    args.extend(files.iter().map(String::as_str));
    let expected = run(&args, None).stdout;
    assert_eq!(expected.lines().count(), files.len());
    let (package, _building) = typescript_package();
    npm(
        &["run", "build", "--silent"],
        &package,
        "building the npm package",
    );
    let mut python = Command::new(dev_python());
    python
        .args(["-m", "agent_tool_result"])
        .env("PYTHONPATH", python_dir().join("src"));
    let mut node = Command::new("node");
    node.arg(package.join("dist/cli.js"));
    for (what, mut command) in [("the Python package", python), ("the npm package", node)] {
        let out = command.args(&files).output().unwrap();
        let got = String::from_utf8(out.stdout).unwrap();
        for (want, line) in expected.lines().zip(got.lines()) {
            assert_eq!(line, want, "{what} reads it otherwise than atr");
        }
        assert_eq!(got.lines().count(), files.len(), "{what}");
    }
}

/// Machine codes at the edges of their grammar: an envelope's error code and a warning's
/// (kebab-case) and a policy code (kebab or snake case).
fn codes() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, code) in [
        ("plain", "a"),
        ("digits", "404"),
        ("kebab", "a-b-1"),
        ("snake", "a_b"),
        ("mixed", "a_b-c"),
        ("empty", ""),
        ("leading-dash", "-a"),
        ("trailing-dash", "a-"),
        ("double-dash", "a--b"),
        ("leading-underscore", "_a"),
        ("double-underscore", "a__b"),
        ("upper", "A"),
        ("space", "a b"),
        ("escaped", r"caf\u00e9"),
        ("accented", "café"),
    ] {
        out.extend([
            (
                format!("code-error-{name}"),
                failure("").replace(r#""code":"a""#, &format!(r#""code":"{code}""#)),
            ),
            (
                format!("code-warning-{name}"),
                format!(r#"{{"ok":true,"warnings":[{{"code":"{code}","detail":"d"}}]}}"#),
            ),
            (
                format!("code-policy-{name}"),
                guarantee("").replace(
                    r#""decision":"allow""#,
                    &format!(r#""decision":"deny","code":"{code}""#),
                ),
            ),
        ]);
    }
    out
}

/// An impact whose outcomes sum to its request, or one past it, where the sum leaves a
/// double's exact integers (2^53) or a u64.
fn sums() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, requested, committed, failed) in [
        ("2-53", "9007199254740993", "9007199254740992", "1"),
        ("2-53-over", "9007199254740992", "9007199254740992", "1"),
        (
            "safe-pair",
            "18014398509481982",
            "9007199254740991",
            "9007199254740991",
        ),
        (
            "safe-pair-over",
            "18014398509481981",
            "9007199254740991",
            "9007199254740991",
        ),
        ("u64", "18446744073709551615", "18446744073709551614", "1"),
        (
            "u64-over",
            "18446744073709551615",
            "18446744073709551615",
            "1",
        ),
        ("zeros", "0", "0.0", "0"),
    ] {
        out.push((
            format!("sum-{name}"),
            guarantee(&format!(
                r#","impact":{{"requested":{requested},"committed":{committed},"failed":{failed}}}"#
            )),
        ));
    }
    out
}

/// Results a reader that keeps its readings could confuse: a next tool absent, named as an
/// absent one prints, and named with nothing.
fn alike() -> Vec<(String, String)> {
    let deferred = |recovery: &str| {
        guarantee(&format!(r#","recovery":{recovery}"#)).replace(
            r#""decision":"allow""#,
            r#""decision":"defer","code":"w","retryAt":"2026-01-01T00:00:00Z""#,
        )
    };
    [
        ("absent", "{}"),
        ("undefined", r#"{"suggestedNextTool":"undefined"}"#),
        ("none", r#"{"suggestedNextTool":"None"}"#),
        ("null", r#"{"suggestedNextTool":"null"}"#),
        ("empty", r#"{"suggestedNextTool":""}"#),
        ("absent-again", "{}"),
    ]
    .into_iter()
    .map(|(name, recovery)| (format!("next-tool-{name}"), deferred(recovery)))
    .collect()
}
