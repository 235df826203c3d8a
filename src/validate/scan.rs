//! The fastest path: one pass over the bytes of a common envelope, by hand.
//!
//! [`envelope`] answers [`Verdict::Valid`] only when it is certain the text is a valid
//! envelope, [`Verdict::Invalid`] only when it saw a rule broken (a wrong type, an unknown or
//! repeated contract member, a code or category out of form, a missing or forbidden member, a
//! `base64` key in an observation), and [`Verdict::Unsure`] otherwise: any syntax it does not
//! expect, any escape in a key, code or category, a surrogate escape, a number with an
//! exponent or hundreds of digits, deep nesting, a `null` where a contract field may be null, a
//! capture summary, a long string in an observation. Unsure documents go to the typed reader,
//! which decides; invalid ones go straight to the full report. So this path never changes a
//! verdict, it only reaches the common one sooner.

use crate::observation::{CAPTURE_SUMMARY_KIND, MAX_INLINE_BASE64};
use crate::rule::Finding;
use crate::{ErrorCategory, ErrorCode};

/// Containers this path follows before it leaves the document to the typed reader.
const DEPTH: usize = 64;

/// The longest string an observation may hold here; a longer one may be image data.
const LONG_STRING: usize = MAX_INLINE_BASE64;

/// What one pass over a text can say of it.
#[derive(Debug, PartialEq)]
pub(super) enum Verdict {
    /// Certainly a valid envelope, with these lints.
    Valid(Vec<Finding>),
    /// Certainly not a valid envelope: the pass saw a rule broken (a wrong type, an unknown
    /// or repeated member, a bad code or category, a missing or forbidden member, a `base64`
    /// key in an observation, a root that is not an object). Only a hint: the full report
    /// finds the violations, and reads the text with the typed reader if it finds none.
    Invalid,
    /// Not sure either way; the typed reader decides.
    Unsure,
}

/// Reads `text` once: a valid envelope of a common shape, one that certainly breaks a rule
/// it can see, or one to leave to the typed reader.
pub(super) fn envelope(text: &str) -> Verdict {
    let mut scan = Scan {
        bytes: text.as_bytes(),
        at: 0,
        invalid: false,
    };
    match scan.envelope() {
        Some(lints) => Verdict::Valid(lints),
        None if scan.invalid => Verdict::Invalid,
        None => Verdict::Unsure,
    }
}

struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
    /// Set where the pass stops because the text certainly breaks a rule.
    invalid: bool,
}

impl<'a> Scan<'a> {
    /// Stops the pass: the text certainly breaks a rule.
    fn refute<T>(&mut self) -> Option<T> {
        self.invalid = true;
        None
    }

    /// The envelope, from its first byte to its last: its lints when it is certainly valid.
    fn envelope(&mut self) -> Option<Vec<Finding>> {
        self.ws();
        if self.peek() != Some(b'{') {
            return self.refute(); // not an object, or empty
        }
        self.at += 1;
        let (mut seen, mut ok, mut failure) = (0u8, None, None);
        let mut result = false;
        self.members(|scan, key| {
            let bit = match key {
                b"ok" => {
                    ok = Some(scan.boolean()?);
                    1
                }
                b"sessionId" => {
                    scan.string()?;
                    2
                }
                b"result" => {
                    match scan.peek()? {
                        b'{' => scan.object(&mut |_| Some(()))?,
                        // null is allowed, and left to the typed reader.
                        b'"' | b'[' | b't' | b'f' | b'-' | b'0'..=b'9' => return scan.refute(),
                        _ => return None,
                    }
                    result = true;
                    4
                }
                b"warnings" => {
                    scan.warnings()?;
                    8
                }
                b"error" => {
                    failure = Some(scan.error()?);
                    16
                }
                _ => return scan.refute(), // an unknown member
            };
            scan.once(&mut seen, bit)
        })?;
        self.ws();
        if self.at != self.bytes.len() {
            return None;
        }
        match (ok, failure) {
            (Some(true), None) => Some(Vec::new()),
            (Some(false), Some((code, category))) if !result => {
                Some(super::lints_for(&code, Some(category)))
            }
            // No `ok`, a failure without an error or with a result, a success with an error.
            _ => self.refute(),
        }
    }

    /// Marks a member seen; a member seen before is a repeated key.
    fn once(&mut self, seen: &mut u8, bit: u8) -> Option<()> {
        if *seen & bit == 0 {
            *seen |= bit;
            Some(())
        } else {
            self.refute()
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    fn byte(&mut self, expected: u8) -> Option<()> {
        (self.peek()? == expected).then(|| self.at += 1)
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at + word.len();
        (self.bytes.get(self.at..end)? == word).then(|| self.at = end)
    }

    /// A boolean; any other value is a wrong type.
    fn boolean(&mut self) -> Option<bool> {
        match self.peek()? {
            b't' => self.literal(b"true").map(|()| true),
            b'f' => self.literal(b"false").map(|()| false),
            _ => self.refute(),
        }
    }

    /// A string with no surrogate escape; returns its raw content and whether it has escapes.
    fn string(&mut self) -> Option<(&'a [u8], bool)> {
        self.byte(b'"')?;
        let start = self.at;
        let mut escaped = false;
        loop {
            self.skip_plain();
            match self.peek()? {
                b'"' => {
                    let content = &self.bytes[start..self.at];
                    self.at += 1;
                    return Some((content, escaped));
                }
                b'\\' => {
                    escaped = true;
                    self.escape()?;
                }
                _ => return None, // a control character
            }
        }
    }

    /// Skips the bytes of a string that need no attention, eight at a time where it can.
    fn skip_plain(&mut self) {
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGHS: u64 = 0x8080_8080_8080_8080;
        let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
        while let Some(chunk) = self.bytes.get(self.at..self.at + 8) {
            let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
            let special = has_zero(word ^ (ONES * u64::from(b'"')))
                | has_zero(word ^ (ONES * u64::from(b'\\')))
                | (word.wrapping_sub(ONES * 0x20) & !word & HIGHS);
            if special != 0 {
                self.at += (special.trailing_zeros() / 8) as usize;
                return;
            }
            self.at += 8;
        }
        while let Some(b) = self.peek() {
            if b == b'"' || b == b'\\' || b < 0x20 {
                return;
            }
            self.at += 1;
        }
    }

    fn escape(&mut self) -> Option<()> {
        self.at += 1;
        let kind = self.peek()?;
        self.at += 1;
        match kind {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(()),
            b'u' => {
                let hex = std::str::from_utf8(self.bytes.get(self.at..self.at + 4)?).ok()?;
                let unit = u16::from_str_radix(hex, 16).ok()?;
                self.at += 4;
                // A surrogate, paired or not, is left to the typed reader.
                (!(0xD800..=0xDFFF).contains(&unit) && hex.bytes().all(|b| b.is_ascii_hexdigit()))
                    .then_some(())
            }
            _ => None,
        }
    }

    /// A key with no escapes.
    fn key(&mut self) -> Option<&'a [u8]> {
        match self.string()? {
            (key, false) => Some(key),
            (_, true) => None,
        }
    }

    /// The members of an object whose `{` is read, each handed to `member` after its colon.
    fn members(&mut self, mut member: impl FnMut(&mut Self, &'a [u8]) -> Option<()>) -> Option<()> {
        self.ws();
        if self.peek()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            self.ws();
            let key = self.key()?;
            self.ws();
            self.byte(b':')?;
            self.ws();
            member(self, key)?;
            if self.closes(b'}')? {
                return Some(());
            }
        }
    }

    /// The elements of an array whose `[` is next, each read by `element`.
    fn elements(&mut self, mut element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.byte(b'[')?;
        self.ws();
        if self.peek()? == b']' {
            self.at += 1;
            return Some(());
        }
        loop {
            self.ws();
            element(self)?;
            if self.closes(b']')? {
                return Some(());
            }
        }
    }

    /// After a member or an element: `false` past a comma, `true` past the container's
    /// `close`; `None` at anything else.
    fn closes(&mut self, close: u8) -> Option<bool> {
        self.ws();
        let byte = self.peek()?;
        if byte != b',' && byte != close {
            return None;
        }
        self.at += 1;
        Some(byte == close)
    }

    /// An object of any members; `key` sees each key first (and may refuse it).
    fn object(&mut self, key: &mut dyn FnMut(&[u8]) -> Option<()>) -> Option<()> {
        self.byte(b'{')?;
        self.members(|scan, name| {
            key(name)?;
            scan.value(1, None)
        })
    }

    /// Any value, `depth` containers in; inside an observation (`Some`), no `base64` key and no
    /// long string.
    fn value(&mut self, depth: usize, observation: Option<()>) -> Option<()> {
        match self.peek()? {
            b'"' => {
                let (content, _) = self.string()?;
                (observation.is_none() || content.len() <= LONG_STRING).then_some(())
            }
            b'{' if depth < DEPTH => {
                self.at += 1;
                self.members(|scan, key| {
                    if observation.is_some() && key == b"base64" {
                        return scan.refute();
                    }
                    scan.value(depth + 1, observation)
                })
            }
            b'[' if depth < DEPTH => self.elements(|scan| scan.value(depth + 1, observation)),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    /// A number in JSON's grammar, short and without an exponent, so that a double holds it.
    fn number(&mut self) -> Option<()> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            let fraction = self.at;
            self.digits();
            if self.at == fraction {
                return None;
            }
        }
        let exponent = matches!(self.peek(), Some(b'e' | b'E'));
        (!exponent && self.at - start <= 300).then_some(())
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
    }

    /// A code: non-empty kebab-case, no escapes; checked without building it.
    fn code(&mut self) -> Option<&'a str> {
        if self.peek()? != b'"' {
            return self.refute(); // not a string
        }
        match self.string()? {
            (code, false) => match std::str::from_utf8(code) {
                Ok(code) if crate::code::is_kebab_case(code) => Some(code),
                _ => self.refute(),
            },
            (_, true) => None,
        }
    }

    /// An array of warnings: each a code and a detail, and nothing else.
    fn warnings(&mut self) -> Option<()> {
        if self.peek()? != b'[' {
            return self.refute(); // not an array
        }
        self.elements(|scan| {
            if scan.peek()? != b'{' {
                return scan.refute(); // not an object
            }
            scan.at += 1;
            let mut seen = 0u8;
            scan.members(|scan, key| {
                let bit = match key {
                    b"code" => scan.code().map(|_| 1)?,
                    b"detail" => scan.string().map(|_| 2)?,
                    _ => return scan.refute(), // an unknown member
                };
                scan.once(&mut seen, bit)
            })?;
            if seen == 3 {
                Some(())
            } else {
                scan.refute() // a missing member
            }
        })
    }

    /// An error object: its code and category.
    fn error(&mut self) -> Option<(ErrorCode, ErrorCategory)> {
        if self.peek()? != b'{' {
            return self.refute(); // not an object (null included)
        }
        self.at += 1;
        let (mut seen, mut code, mut category) = (0u8, None, None);
        self.members(|scan, key| {
            let bit = match key {
                b"code" => {
                    code = Some(ErrorCode::new(scan.code()?.to_owned()).ok()?);
                    1
                }
                b"category" => {
                    if scan.peek()? != b'"' {
                        return scan.refute(); // not a string
                    }
                    category = match scan.string()? {
                        (name, false) => match std::str::from_utf8(name)
                            .ok()
                            .and_then(ErrorCategory::from_wire)
                        {
                            Some(category) => Some(category),
                            None => return scan.refute(), // not in the closed set
                        },
                        (_, true) => return None,
                    };
                    2
                }
                b"detail" => {
                    scan.string()?;
                    4
                }
                b"lastObservation" => {
                    scan.observation()?;
                    8
                }
                b"partialResult" => {
                    scan.object(&mut |_| Some(()))?;
                    16
                }
                _ => return scan.refute(), // an unknown member
            };
            scan.once(&mut seen, bit)
        })?;
        // code, category and detail are required.
        if seen & 7 != 7 {
            return self.refute();
        }
        Some((code?, category?))
    }

    /// An observation that is not a capture summary and holds no sign of image data.
    fn observation(&mut self) -> Option<()> {
        self.byte(b'{')?;
        self.members(|scan, key| match key {
            b"base64" => scan.refute(),
            b"kind" if scan.peek()? == b'"' => {
                let (kind, escaped) = scan.string()?;
                (!escaped && kind != CAPTURE_SUMMARY_KIND.as_bytes() && kind.len() <= LONG_STRING)
                    .then_some(())
            }
            _ => scan.value(3, Some(())),
        })
    }
}

#[cfg(test)]
mod tests;
