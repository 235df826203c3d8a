//! A message's members, read in one pass over its text by JSON's grammar: each name decoded
//! (escapes included), each value delimited and checked as JSON on the way, but an object
//! `result`.
//!
//! An object `result` is read whole by whoever reads it next (a `tools/call` result's check);
//! reading it here as well would read the bulk of every response twice. It is only delimited
//! (by its brackets and strings), and its reader owns the rest of the proof: the text is JSON
//! when its other members are (checked here) and that reader finds the result to be. Where
//! servers put it, after `jsonrpc` and `id`, it is taken to run to the object's closing brace
//! ([`Results::ToTheEnd`]): when it does not, the text it is given is not JSON, and the text
//! is read again with the result delimited.
//!
//! The grammar is JSON's (RFC 8259), read as `serde_json` reads a value it passes over: an
//! escape is checked for its form, not for the code point it names; a name is decoded, so a
//! lone surrogate in one is refused, as `serde_json` refuses it in a string it keeps.

use std::borrow::Cow;

/// The members of a message that JSON-RPC names, each its value's text; the first name given
/// twice.
#[derive(Debug, Default)]
pub struct Members<'a> {
    /// `jsonrpc`.
    pub jsonrpc: Option<&'a str>,
    /// `id`.
    pub id: Option<&'a str>,
    /// `method`.
    pub method: Option<&'a str>,
    /// `params`.
    pub params: Option<&'a str>,
    /// The `name` the (first) params name at their top, when it is a string named once: the
    /// tool of a `tools/call`.
    pub params_name: Option<Cow<'a, str>>,
    /// The (first) params' `_meta`, when it is an object: where a request of MCP 2026-07-28
    /// names its protocol revision.
    pub params_meta: Option<&'a str>,
    /// `result`: when it is an object, delimited but not yet read as JSON.
    pub result: Option<&'a str>,
    /// `error`.
    pub error: Option<&'a str>,
    /// The first member named twice (the other names included).
    pub repeated: Option<String>,
}

/// How an object `result` is found, unread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Results {
    /// Delimited by its brackets and strings.
    Delimited,
    /// After `jsonrpc` and `id`, taken to run to the object's closing brace: right exactly
    /// when the text it is given is JSON.
    ToTheEnd,
}

/// Reads the members of `text`, one JSON object (with JSON's whitespace around it); `None`
/// when it is not one, as far as this pass reads (an object `result` is not read).
pub fn read(text: &str, results: Results) -> Option<Members<'_>> {
    let bytes = text.as_bytes();
    let mut members = Members::default();
    let mut others: Vec<Cow<'_, str>> = Vec::new();
    // Where the object's closing brace is, and the last value before it ends.
    let closing = || {
        let at = bytes
            .iter()
            .rposition(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))?;
        (bytes[at] == b'}').then(|| {
            let before = bytes[..at]
                .iter()
                .rposition(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
            before.map_or(at, |before| before + 1)
        })
    };
    let end = object(text, skip_space(bytes, 0), |name, at| {
        let end = match (name.as_ref(), bytes[at]) {
            ("result", b'{')
                if results == Results::ToTheEnd
                    && members.jsonrpc.is_some()
                    && members.id.is_some() =>
            {
                closing().filter(|&end| end > at)?
            }
            ("result", b'{') => delimit(bytes, at)?,
            // The params are read once, their `name` kept on the way.
            ("params", b'{') if members.params.is_none() => {
                let (mut tool, mut named, mut meta) = (None, 0, None);
                let end = object(text, at, |member, at| {
                    let end = value_end(bytes, at)?;
                    if member == "name" {
                        named += 1;
                        tool = (bytes[at] == b'"')
                            .then(|| string(&text[at..end]))
                            .flatten();
                    } else if member == "_meta" && bytes[at] == b'{' {
                        meta = meta.or(Some(&text[at..end]));
                    }
                    Some(end)
                })?;
                members.params_name = tool.filter(|_| named == 1);
                members.params_meta = meta;
                end
            }
            _ => value_end(bytes, at)?,
        };
        members.put(name, &text[at..end], &mut others);
        Some(end)
    })?;
    (skip_space(bytes, end) == text.len()).then_some(members)
}

/// A JSON string's text (quotes included, read by JSON's grammar already), decoded: borrowed
/// when it holds no escape; `None` when it is not a string `serde_json` would keep (a lone
/// surrogate).
pub fn string(quoted: &str) -> Option<Cow<'_, str>> {
    let inner = quoted.get(1..quoted.len().checked_sub(1)?)?;
    if !inner.bytes().any(|b| b == b'\\') {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(quoted).ok().map(Cow::Owned)
}

/// Reads the object at `at` in `text`: each member's name decoded, and given with where its
/// value starts to `value`, which reads the value and says where it ends; the object's end,
/// or `None` when it is not an object (or `value` finds no value).
fn object<'a>(
    text: &'a str,
    at: usize,
    mut value: impl FnMut(Cow<'a, str>, usize) -> Option<usize>,
) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    let mut at = skip_space(bytes, at + 1);
    if bytes.get(at) == Some(&b'}') {
        return Some(at + 1);
    }
    loop {
        let (name_end, escaped) = string_read(bytes, at)?;
        let name = if escaped {
            Cow::Owned(serde_json::from_str::<String>(&text[at..name_end]).ok()?)
        } else {
            Cow::Borrowed(&text[at + 1..name_end - 1])
        };
        at = skip_space(bytes, name_end);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        at = skip_space(bytes, at + 1);
        if at >= bytes.len() {
            return None;
        }
        at = skip_space(bytes, value(name, at)?);
        match bytes.get(at) {
            Some(b',') => at = skip_space(bytes, at + 1),
            Some(b'}') => return Some(at + 1),
            _ => return None,
        }
    }
}

impl<'a> Members<'a> {
    /// Keeps `value` as the member `name`; the first of a name given twice counts, and the
    /// name is noted.
    fn put(&mut self, name: Cow<'a, str>, value: &'a str, others: &mut Vec<Cow<'a, str>>) {
        let slot = match name.as_ref() {
            "jsonrpc" => &mut self.jsonrpc,
            "id" => &mut self.id,
            "method" => &mut self.method,
            "params" => &mut self.params,
            "result" => &mut self.result,
            "error" => &mut self.error,
            _ => {
                if others.contains(&name) {
                    self.repeated.get_or_insert_with(|| name.into_owned());
                } else {
                    others.push(name);
                }
                return;
            }
        };
        if slot.is_some() {
            self.repeated.get_or_insert_with(|| name.into_owned());
        } else {
            *slot = Some(value);
        }
    }
}

/// JSON's whitespace from `at` on: where the next token starts.
fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// The end of the JSON value that starts at `at`, read by JSON's grammar; `None` when no
/// value starts there. Nesting is kept on a stack of its own, so depth costs no recursion.
fn value_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    // The open containers, innermost last: `true` for an object.
    let mut open: Vec<bool> = Vec::new();
    loop {
        // A value starts at `at`.
        match *bytes.get(at)? {
            b'{' => {
                at = skip_space(bytes, at + 1);
                if bytes.get(at) == Some(&b'}') {
                    at += 1;
                } else {
                    open.push(true);
                    at = member_value(bytes, at)?;
                    continue;
                }
            }
            b'[' => {
                at = skip_space(bytes, at + 1);
                if bytes.get(at) == Some(&b']') {
                    at += 1;
                } else {
                    open.push(false);
                    continue;
                }
            }
            b'"' => at = string_end(bytes, at)?,
            b't' => at = literal(bytes, at, b"true")?,
            b'f' => at = literal(bytes, at, b"false")?,
            b'n' => at = literal(bytes, at, b"null")?,
            b'-' | b'0'..=b'9' => at = number_end(bytes, at)?,
            _ => return None,
        }
        // A value ended at `at`: the containers it closes, then the next value's start.
        loop {
            let Some(&in_object) = open.last() else {
                return Some(at);
            };
            at = skip_space(bytes, at);
            match *bytes.get(at)? {
                b',' => {
                    at = skip_space(bytes, at + 1);
                    if in_object {
                        at = member_value(bytes, at)?;
                    }
                    break;
                }
                b'}' if in_object => {}
                b']' if !in_object => {}
                _ => return None,
            }
            open.pop();
            at += 1;
        }
    }
}

/// Past a member's name and colon, from the name's opening quote at `at`: where its value
/// starts.
fn member_value(bytes: &[u8], at: usize) -> Option<usize> {
    let at = skip_space(bytes, string_end(bytes, at)?);
    (bytes.get(at) == Some(&b':')).then(|| skip_space(bytes, at + 1))
}

/// The end of `word` at `at`.
fn literal(bytes: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    bytes[at..].starts_with(word).then_some(at + word.len())
}

/// The end of the number at `at`: an optional minus, an integer without a leading zero, an
/// optional fraction, an optional exponent.
fn number_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    let digits = |at: usize| {
        at + bytes[at.min(bytes.len())..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    if bytes.get(at) == Some(&b'-') {
        at += 1;
    }
    match bytes.get(at)? {
        b'0' => at += 1,
        b'1'..=b'9' => at = digits(at),
        _ => return None,
    }
    if bytes.get(at) == Some(&b'.') {
        let end = digits(at + 1);
        if end == at + 1 {
            return None;
        }
        at = end;
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(bytes.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        let end = digits(at);
        if end == at {
            return None;
        }
        at = end;
    }
    Some(at)
}

/// The end (one past the closing quote) of the string whose opening quote is at `start`, read
/// by JSON's grammar: no control character, each escape one JSON has.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    string_read(bytes, start).map(|(end, _)| end)
}

/// [`string_end`], and whether the string holds an escape.
fn string_read(bytes: &[u8], start: usize) -> Option<(usize, bool)> {
    if bytes.get(start) != Some(&b'"') {
        return None;
    }
    let (mut at, mut escaped) = (start + 1, false);
    loop {
        at = next_in_string(bytes, at, true);
        match *bytes.get(at)? {
            b'"' => return Some((at + 1, escaped)),
            b'\\' => {
                escaped = true;
                at += match *bytes.get(at + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
                    b'u' if bytes.get(at + 2..at + 6)?.iter().all(u8::is_ascii_hexdigit) => 6,
                    _ => return None,
                };
            }
            _ => return None,
        }
    }
}

/// From `at` inside a string, the first quote or backslash (and, with `controls`, control
/// character): eight bytes a step while none is near, or the text's end.
fn next_in_string(bytes: &[u8], mut at: usize, controls: bool) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    // The high bit of each byte of `word` below `n` (exact for the lowest such byte).
    let below = |word: u64, n: u8| word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let mut found =
            below(word ^ (ONES * u64::from(b'"')), 1) | below(word ^ (ONES * u64::from(b'\\')), 1);
        if controls {
            found |= below(word, 0x20);
        }
        if found != 0 {
            return at + (found.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&byte) = bytes.get(at) {
        if byte == b'"' || byte == b'\\' || (controls && byte < 0x20) {
            break;
        }
        at += 1;
    }
    at
}

/// The end of the value that starts at `at`, only delimited: a string to its closing quote,
/// an object or array to its closing bracket, anything else to the next delimiter. Nothing
/// but the delimiting is checked.
fn delimit(bytes: &[u8], start: usize) -> Option<usize> {
    match bytes.get(start)? {
        b'{' | b'[' => {
            let (mut depth, mut at) = (0usize, start);
            loop {
                match *bytes.get(at)? {
                    b'"' => {
                        at = delimit_string(bytes, at)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(at + 1);
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
        }
        b'"' => delimit_string(bytes, start),
        _ => {
            let rest = &bytes[start..];
            let length = rest
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .unwrap_or(rest.len());
            Some(start + length)
        }
    }
}

/// The end of the string whose opening quote is at `start`, its escapes stepped over.
fn delimit_string(bytes: &[u8], start: usize) -> Option<usize> {
    let mut at = start + 1;
    loop {
        at = next_in_string(bytes, at, false);
        match *bytes.get(at)? {
            b'"' => return Some(at + 1),
            _ => at += 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::{Members, Results, read as read_with, value_end};

    fn read(text: &str) -> Option<Members<'_>> {
        read_with(text, Results::Delimited)
    }

    #[test]
    fn members_are_read_in_any_order_with_their_names_decoded() {
        let members =
            read(" {\"result\" : {\"a\":[1,\"}\\\"\"]} ,\"\\u0069d\":7,\"jsonrpc\":\"2.0\"}\n")
                .unwrap();
        assert_eq!(members.result, Some(r#"{"a":[1,"}\""]}"#));
        assert_eq!(members.id, Some("7"));
        assert_eq!(members.jsonrpc, Some(r#""2.0""#));
        assert!(members.repeated.is_none());
        let twice = read(r#"{"x":1,"id":1,"x":2,"id":2}"#).unwrap();
        assert_eq!(twice.repeated.as_deref(), Some("x"));
        assert_eq!(twice.id, Some("1"));
        assert!(read("{}").is_some_and(|m| m.id.is_none()));
        let name = |text: &str| read(text).unwrap().params_name.map(Cow::into_owned);
        assert_eq!(
            name(r#"{"params":{"arguments":{"name":1},"name":"send"}}"#).as_deref(),
            Some("send")
        );
        assert_eq!(name(r#"{"params":{"name":"a","name":"b"}}"#), None);
        assert_eq!(name(r#"{"params":{"name":7}}"#), None);
        assert_eq!(
            name(r#"{"params":{"name":"\u0061"}}"#).as_deref(),
            Some("a")
        );
    }

    /// What is not one JSON object is refused, but in an object `result`, which this pass
    /// only delimits.
    #[test]
    fn what_is_not_a_json_object_is_refused() {
        for text in [
            "",
            "[]",
            "{",
            r#"{"id":1"#,
            r#"{"id":1,}"#,
            r#"{"id" 1}"#,
            r#"{"id":1} x"#,
            r#"{"id":01}"#,
            r#"{"id":tru}"#,
            r#"{"id":"a	b"}"#,
            "{\"i\u{1}d\":1}",
            r#"{"\ud800":1}"#,
            r#"{"\x":1}"#,
            r#"{"id":1,"params":{"a":}}"#,
            r#"{"params":[1,]}"#,
            r#"{"result":[1,]}"#,
            r#"{"result":{"a":1}"#,
            "{\u{c}\"id\":1}",
        ] {
            assert!(read(text).is_none(), "{text:?}");
        }
        assert_eq!(
            read(r#"{"result":{"a":tru}}"#).unwrap().result,
            Some(r#"{"a":tru}"#)
        );
    }

    /// The grammar agrees with `serde_json` on every value, JSON or not.
    #[test]
    fn the_grammar_is_serde_json_s() {
        for text in [
            "0",
            "-0",
            "-",
            "01",
            "1.",
            "1.5e",
            "1.5e+3",
            "1E-0",
            "-1.25",
            ".5",
            "+1",
            "true",
            "tru",
            "nul",
            "null",
            r#""\u12""#,
            r#""\uD800""#,
            r#""\u00e9\n\/""#,
            r#""\q""#,
            "\"a\u{7f}\"",
            "\"a\u{1f}\"",
            "[]",
            "[1,]",
            "[,1]",
            "[1 2]",
            " [ 1 , [ ] , { } ] ",
            r#"{"a":1,"b":[true,{"c":null}]}"#,
            r#"{"a" 1}"#,
            r#"{"a":1,}"#,
            "{1:1}",
            r#"{"a":[}"#,
            r#"{"a":{]}"#,
            "[[[[[[[[[[]]]]]]]]]]",
            "[[[[[[[[[[]]]]]]]]]",
        ] {
            let start = text.len() - text.trim_start().len();
            let ours = value_end(text.as_bytes(), start)
                .is_some_and(|end| text[end..].trim_start().is_empty());
            let theirs = serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
            assert_eq!(ours, theirs, "{text:?}");
        }
    }
}
