//! The differential harness: every reader of the crate given the same text must give the same
//! verdict, and an invalid document the same rule at the same place.
//!
//! Readers compared: the typed reader (`Envelope::<Value>::from_json`), the validator's fast
//! path (`is_valid_text`), its full report (`validate_text`, which `atr validate` prints), the
//! schema run on the parsed value, and the MCP reader (the text as a `tools/call` text block).
//! Where the schema finds violations in the parsed value, the full report (which reads a
//! skeleton of the text) must find the same ones, rule and pointer.
//!
//! Documents come from the conformance fixtures, mutated by a seeded generator that aims at the
//! classes where readers used to part ways: numbers out of a double's range, integral floats in
//! integer fields, lone surrogate escapes, nesting around the parser's limit, repeated keys,
//! wrong types, unknown keys, and plain byte damage.
#![allow(dead_code)]

use std::path::Path;

use agent_tool_result::mcp::{CallToolResult, McpErrorKind};
use agent_tool_result::rule::MAX_DEPTH;
use agent_tool_result::validate::Validator;
use agent_tool_result::{Envelope, Rule};
use serde_json::Value;

/// The fixture texts, valid and invalid, read from `tests/fixtures`.
pub fn seeds(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for kind in ["valid", "invalid"] {
        let mut paths: Vec<_> = std::fs::read_dir(root.join("tests/fixtures").join(kind))
            .expect("fixtures")
            .map(|entry| entry.expect("entry").path())
            .filter(|path| path.extension().is_some_and(|e| e == "json"))
            .collect();
        paths.sort();
        out.extend(
            paths
                .iter()
                .map(|p| std::fs::read_to_string(p).expect("fixture")),
        );
    }
    out
}

/// A small, seeded, portable generator (xorshift64*).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).expect("fits")
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    pub fn word(&mut self, words: &[&'static str]) -> &'static str {
        words[self.below(words.len())]
    }
}

/// Numbers at the edges: integral floats, out-of-range integers, overflowing doubles.
const NUMBERS: &[&str] = &[
    "800.0",
    "8E2",
    "1e2",
    "-0",
    "-0.0",
    "5.0",
    "0",
    "1",
    "-1",
    "1.5",
    "0.5",
    "0.99",
    "1.0e0",
    "1e400",
    "-1e400",
    "1e-400",
    "4294967295",
    "4294967296",
    "4294967295.0",
    "4.294967296e9",
    "2147483647",
    "2147483648",
    "-2147483648",
    "-2147483649",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "1.8446744073709552e19",
    "1e30",
    "1e19",
];

/// Strings at the edges of UTF-16 escapes and JSON string syntax.
const STRINGS: &[&str] = &[
    r#""\ud800""#,
    r#""\udc00""#,
    r#""a\ud83dz""#,
    r#""\ud83d\ude00""#,
    r#""\u0000""#,
    r#""\uD800\uDBFF""#,
    r#""\x41""#,
    r#""tab	raw""#,
    r#""timeout""#,
    r#""no-target""#,
    r#""Timeout""#,
    r#""capture-summary""#,
    r#""png""#,
    r#""""#,
    r#""base64""#,
];

/// Values of every JSON type.
const VALUES: &[&str] = &[
    "null",
    "true",
    "false",
    "0",
    "\"s\"",
    "[]",
    "{}",
    "[1]",
    "{\"a\":1}",
];

/// Keys the contract's objects do or do not define.
const KEYS: &[&str] = &[
    "ok",
    "result",
    "error",
    "warnings",
    "sessionId",
    "code",
    "category",
    "detail",
    "lastObservation",
    "partialResult",
    "kind",
    "width",
    "height",
    "bytes",
    "handle",
    "base64",
    "artifact",
    "artifactError",
    "blankCheck",
    "window",
    "OK",
    "extra",
    "x",
];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Token {
    Key,
    Str,
    Scalar,
    Open,
}

/// The tokens of `text`: (kind, start, end) byte spans. Tolerates broken text.
fn tokens(text: &[u8]) -> Vec<(Token, usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < text.len() && text[i] != b'"' {
                    i += if text[i] == b'\\' { 2 } else { 1 };
                }
                i = (i + 1).min(text.len());
                let mut j = i;
                while j < text.len() && text[j].is_ascii_whitespace() {
                    j += 1;
                }
                let kind = if text.get(j) == Some(&b':') {
                    Token::Key
                } else {
                    Token::Str
                };
                out.push((kind, start, i));
            }
            b'{' | b'[' => {
                out.push((Token::Open, i, i + 1));
                i += 1;
            }
            b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                let start = i;
                while i < text.len() && !b",]} \n\r\t:".contains(&text[i]) {
                    i += 1;
                }
                out.push((Token::Scalar, start, i));
            }
            _ => i += 1,
        }
    }
    out
}

/// The end of the value starting at `start` (a string, scalar or container), if it ends.
fn value_end(text: &[u8], start: usize) -> Option<usize> {
    let (mut depth, mut i) = (0usize, start);
    loop {
        match *text.get(i)? {
            b'"' => {
                i += 1;
                while *text.get(i)? != b'"' {
                    i += if text[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                i += 1;
            }
            _ if depth == 0 => {
                while i < text.len() && !b",]}".contains(&text[i]) {
                    i += 1;
                }
                return Some(i);
            }
            _ => i += 1,
        }
        if depth == 0 {
            return Some(i);
        }
    }
}

fn splice(text: &str, start: usize, end: usize, with: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(text.len() + with.len());
    out.extend_from_slice(&bytes[..start]);
    out.extend_from_slice(with.as_bytes());
    out.extend_from_slice(&bytes[end..]);
    String::from_utf8_lossy(&out).into_owned()
}

fn nested(depth: usize, object: bool) -> String {
    if object {
        format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth))
    } else {
        format!("{}{}", "[".repeat(depth), "]".repeat(depth))
    }
}

/// One mutation of `text`, aimed at one class.
pub fn mutate(text: &str, rng: &mut Rng) -> String {
    let spans = tokens(text.as_bytes());
    if spans.is_empty() {
        return text.to_owned();
    }
    let class: fn(&str, &[Span], &mut Rng) -> Option<String> = match rng.below(9) {
        0 | 1 => replace_number,
        2 => replace_string,
        3 => deepen,
        4 => repeat_member,
        5 => replace_value,
        6 => rename_key,
        7 => add_member,
        _ => damage_bytes,
    };
    class(text, &spans, rng).unwrap_or_else(|| text.to_owned())
}

type Span = (Token, usize, usize);

fn of(spans: &[Span], kinds: &[Token]) -> Vec<Span> {
    spans
        .iter()
        .copied()
        .filter(|t| kinds.contains(&t.0))
        .collect()
}

fn pick_span(spans: &[Span], kinds: &[Token], rng: &mut Rng) -> Option<Span> {
    let candidates = of(spans, kinds);
    (!candidates.is_empty()).then(|| *rng.pick(&candidates))
}

/// A number (or, where there is none, any scalar) becomes an edge number.
fn replace_number(text: &str, spans: &[Span], rng: &mut Rng) -> Option<String> {
    let bytes = text.as_bytes();
    let mut numbers: Vec<Span> = of(spans, &[Token::Scalar])
        .into_iter()
        .filter(|t| bytes[t.1] == b'-' || bytes[t.1].is_ascii_digit())
        .collect();
    if numbers.is_empty() {
        numbers = of(spans, &[Token::Scalar, Token::Str]);
    }
    if numbers.is_empty() {
        return None;
    }
    let (_, s, e) = *rng.pick(&numbers);
    Some(splice(text, s, e, rng.word(NUMBERS)))
}

/// A string or key becomes an edge string (lone surrogates, escapes, contract words).
fn replace_string(text: &str, spans: &[Span], rng: &mut Rng) -> Option<String> {
    let (_, s, e) = pick_span(spans, &[Token::Str, Token::Key], rng)?;
    Some(splice(text, s, e, rng.word(STRINGS)))
}

/// A value becomes a nest of arrays or objects around the parser's depth limit.
fn deepen(text: &str, spans: &[Span], rng: &mut Rng) -> Option<String> {
    let (_, s, _) = pick_span(spans, &[Token::Str, Token::Scalar, Token::Open], rng)?;
    let e = value_end(text.as_bytes(), s)?;
    let depth = *rng.pick(&[MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 300]);
    Some(splice(text, s, e, &nested(depth, rng.below(2) == 0)))
}

/// A member is repeated right after itself.
fn repeat_member(text: &str, spans: &[Span], rng: &mut Rng) -> Option<String> {
    let bytes = text.as_bytes();
    let (_, s, e) = pick_span(spans, &[Token::Key], rng)?;
    let colon = e + bytes[e..].iter().position(|&b| b == b':')?;
    let mut v = colon + 1;
    while v < bytes.len() && bytes[v].is_ascii_whitespace() {
        v += 1;
    }
    let end = value_end(bytes, v)?;
    let member = String::from_utf8_lossy(&bytes[s..end]).into_owned();
    Some(splice(text, end, end, &format!(",{member}")))
}

/// A value becomes one of another JSON type.
fn replace_value(text: &str, spans: &[Span], rng: &mut Rng) -> Option<String> {
    let (_, s, _) = pick_span(spans, &[Token::Str, Token::Scalar, Token::Open], rng)?;
    let e = value_end(text.as_bytes(), s)?;
    Some(splice(text, s, e, rng.word(VALUES)))
}

/// A key becomes another (known elsewhere, unknown, or of the wrong case).
fn rename_key(text: &str, spans: &[Span], rng: &mut Rng) -> Option<String> {
    let (_, s, e) = pick_span(spans, &[Token::Key], rng)?;
    Some(splice(text, s, e, &format!("\"{}\"", rng.word(KEYS))))
}

/// An object gains a member.
fn add_member(text: &str, spans: &[Span], rng: &mut Rng) -> Option<String> {
    let bytes = text.as_bytes();
    let opens: Vec<Span> = of(spans, &[Token::Open])
        .into_iter()
        .filter(|t| bytes[t.1] == b'{')
        .collect();
    let (_, s, _) = *rng.pick(opens.get(..).filter(|o| !o.is_empty())?);
    let member = format!("\"{}\":{}", rng.word(KEYS), rng.word(VALUES));
    let empty = bytes[s + 1..].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'}');
    let member = if empty { member } else { member + "," };
    Some(splice(text, s + 1, s + 1, &member))
}

/// A byte is deleted, doubled, or a structural character (or a BOM) inserted.
#[allow(clippy::unnecessary_wraps)] // one signature for every class
fn damage_bytes(text: &str, _: &[Span], rng: &mut Rng) -> Option<String> {
    let bytes = text.as_bytes();
    let at = rng.below(bytes.len());
    Some(match rng.below(3) {
        0 => splice(text, at, at + 1, ""),
        1 => splice(
            text,
            at,
            at,
            rng.word(&["{", "}", "[", "]", ",", ":", "\"", "\\", "\u{feff}"]),
        ),
        _ => {
            let mut out = bytes.to_vec();
            out.insert(at, bytes[at]);
            String::from_utf8_lossy(&out).into_owned()
        }
    })
}

/// What every reader said of one text.
#[derive(Debug)]
pub struct Verdicts {
    pub typed: Result<(), (Rule, String)>,
    pub fast: bool,
    pub report: Vec<(Rule, String)>,
    pub schema: Option<bool>,
    /// What the schema finds in the whole parsed value, when the text parses.
    pub whole: Option<Vec<(Rule, String)>>,
    pub mcp: bool,
}

/// Runs every reader on `text`.
pub fn verdicts(validator: &Validator, text: &str) -> Verdicts {
    let typed = Envelope::<Value>::from_json(text)
        .map(|_| ())
        .map_err(|err| (err.rule(), err.pointer().to_owned()));
    let fast = validator.is_valid_text(text);
    let report = validator
        .validate_text(text)
        .violations()
        .iter()
        .map(|f| (f.rule(), f.pointer().to_owned()))
        .collect();
    let value = serde_json::from_str::<Value>(text).ok();
    let schema = value.as_ref().map(|value| validator.is_valid(value));
    let whole = value.as_ref().map(|value| {
        validator
            .validate(value)
            .violations()
            .iter()
            .map(|f| (f.rule(), f.pointer().to_owned()))
            .collect()
    });
    let call = serde_json::json!({ "content": [{ "type": "text", "text": text }] }).to_string();
    let mcp = match CallToolResult::from_json(&call).and_then(|c| c.envelope::<Value>()) {
        Ok(_) => true,
        Err(err) => err.kind() == McpErrorKind::IsErrorMismatch,
    };
    Verdicts {
        typed,
        fast,
        report,
        schema,
        whole,
        mcp,
    }
}

/// Why the readers disagree on `text`, if they do.
pub fn disagreement(validator: &Validator, text: &str) -> Option<String> {
    let v = verdicts(validator, text);
    let valid = v.typed.is_ok();
    if v.fast != valid || v.report.is_empty() != valid || v.mcp != valid {
        return Some(format!("verdicts differ: {v:?}"));
    }
    // With a repeated key the schema saw only the last value, so the typed reader's first
    // breach may lie in a value the schema cannot see; the repeat itself is reported.
    let merged = v
        .report
        .iter()
        .any(|(rule, _)| *rule == Rule::NoDuplicateKeys);
    match (&v.typed, v.schema) {
        // Text that does not parse as a value is invalid to the typed reader too: for that
        // reason, or for a breach of the contract it met first in document order.
        (Err(_), None) => {}
        (_, None) => return Some(format!("the value does not parse but: {v:?}")),
        // The schema sees a parsed value, where a repeated key has already been merged.
        (Err(_), Some(_)) if merged => {}
        (typed, Some(schema)) if typed.is_ok() != schema => {
            return Some(format!("the schema says {schema}: {v:?}"));
        }
        _ => {}
    }
    // The report holds the typed reader's finding, a repeated key or not.
    if let Err(found) = &v.typed
        && !v.report.contains(found)
    {
        return Some(format!(
            "the report lacks the typed reader's {found:?}: {v:?}"
        ));
    }
    // The report reads a skeleton of the text (payloads as their type, observations pruned);
    // it must find what the schema finds in the whole value, repeated keys (and the typed
    // reader's finding, reported beside them) apart.
    if let Some(whole) = &v.whole
        && !whole.is_empty()
    {
        let typed = v.typed.as_ref().err().filter(|_| merged);
        let reported: Vec<&(Rule, String)> = v
            .report
            .iter()
            .filter(|finding| finding.0 != Rule::NoDuplicateKeys)
            .filter(|finding| Some(*finding) != typed || whole.contains(finding))
            .collect();
        if reported != whole.iter().collect::<Vec<_>>() {
            return Some(format!(
                "the report is not the schema's findings in the whole value: {v:?}"
            ));
        }
    }
    None
}
