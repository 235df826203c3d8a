//! Where a JSON Pointer's value starts in JSON text, for reporting findings by line and column.
//!
//! A small scanner follows the pointer through the text without building values; it is
//! iterative, so deep nesting cannot overflow the stack. Where the pointer names something
//! that is not there (a missing member), the deepest value found on the way is reported.

/// Gives every finding without a position the position of its pointer in `text`.
pub(crate) fn locate_all(
    text: &str,
    findings: Vec<crate::rule::Finding>,
) -> Vec<crate::rule::Finding> {
    findings
        .into_iter()
        .map(|finding| {
            if finding.line() > 0 {
                return finding;
            }
            let (line, column) = locate(text, finding.pointer());
            finding.at(line, column)
        })
        .collect()
}

/// The 1-based line and byte column where the value at `pointer` starts in `text`.
pub(crate) fn locate(text: &str, pointer: &str) -> (usize, usize) {
    let offset = offset_of(text.as_bytes(), pointer);
    let before = &text.as_bytes()[..offset];
    let line = memchr::memchr_iter(b'\n', before).count() + 1;
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
    (line, offset - line_start + 1)
}

fn offset_of(bytes: &[u8], pointer: &str) -> usize {
    let mut scanner = Scanner { bytes, pos: 0 };
    scanner.whitespace();
    let mut found = scanner.pos;
    if pointer.is_empty() {
        return found;
    }
    'tokens: for token in pointer.split('/').skip(1) {
        let token = crate::pointer::unescape_token(token);
        match scanner.peek() {
            Some(b'{') => {
                scanner.pos += 1;
                loop {
                    scanner.whitespace();
                    if scanner.peek() != Some(b'"') {
                        return found;
                    }
                    let Some(is_token) = scanner.key_is(&token) else {
                        return found;
                    };
                    scanner.whitespace();
                    if scanner.peek() != Some(b':') {
                        return found;
                    }
                    scanner.pos += 1;
                    scanner.whitespace();
                    if is_token {
                        found = scanner.pos;
                        continue 'tokens;
                    }
                    if scanner.skip_member().is_none() {
                        return found;
                    }
                }
            }
            Some(b'[') => {
                let Ok(index) = token.parse::<usize>() else {
                    return found;
                };
                scanner.pos += 1;
                for i in 0.. {
                    scanner.whitespace();
                    if matches!(scanner.peek(), Some(b']') | None) {
                        return found;
                    }
                    if i == index {
                        found = scanner.pos;
                        continue 'tokens;
                    }
                    if scanner.skip_member().is_none() {
                        return found;
                    }
                }
            }
            _ => return found,
        }
    }
    found
}

/// The JSON Pointers of every repeated key in the objects for which `closed` holds, and of
/// their parents' arrays, in document order. `text` is known to be well-formed JSON.
pub(crate) fn repeated_keys(text: &str, closed: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut scanner = Scanner {
        bytes: text.as_bytes(),
        pos: 0,
    };
    let mut out = Vec::new();
    scanner.whitespace();
    if scanner.peek() == Some(b'{') && closed("") {
        scanner.repeated_in_object(&mut String::new(), closed, &mut out);
    }
    out
}

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// Reads a string at the cursor, unescaping it; `None` if it is cut off.
    fn string(&mut self) -> Option<String> {
        let raw = self.raw_string()?;
        if raw.contains('\\') {
            serde_json::from_str(&format!("\"{raw}\"")).ok()
        } else {
            Some(raw.to_owned())
        }
    }

    /// Reads a string at the cursor and tells whether it spells `key`; `None` if it is cut off.
    fn key_is(&mut self, key: &str) -> Option<bool> {
        let raw = self.raw_string()?;
        if raw.contains('\\') {
            serde_json::from_str::<String>(&format!("\"{raw}\""))
                .ok()
                .map(|unescaped| unescaped == key)
        } else {
            Some(raw == key)
        }
    }

    /// Skips a string at the cursor; returns what lies between its quotes, as written.
    fn raw_string(&mut self) -> Option<&'a str> {
        let start = self.pos + 1;
        self.skip_string()?;
        let bytes = self.bytes;
        std::str::from_utf8(&bytes[start..self.pos - 1]).ok()
    }

    fn skip_string(&mut self) -> Option<()> {
        self.pos += 1;
        loop {
            let rest = self.bytes.get(self.pos..)?;
            self.pos += memchr::memchr2(b'"', b'\\', rest)?;
            if self.peek()? == b'"' {
                self.pos += 1;
                return Some(());
            }
            self.pos += 2;
        }
    }

    /// Walks the object at the cursor, noting repeated keys and descending into the members
    /// that are closed objects, or arrays of them. Stops quietly on broken text.
    fn repeated_in_object(
        &mut self,
        pointer: &mut String,
        closed: &dyn Fn(&str) -> bool,
        out: &mut Vec<String>,
    ) -> Option<()> {
        self.pos += 1;
        let mut seen: Vec<String> = Vec::new();
        loop {
            self.whitespace();
            match self.peek()? {
                b'}' => {
                    self.pos += 1;
                    return Some(());
                }
                b',' => self.pos += 1,
                b'"' => {
                    let key = self.string()?;
                    self.whitespace();
                    self.pos += 1; // the colon
                    self.whitespace();
                    let len = pointer.len();
                    crate::pointer::push_token(pointer, &key);
                    if seen.contains(&key) {
                        out.push(pointer.clone());
                    } else {
                        seen.push(key);
                    }
                    self.repeated_in_value(pointer, closed, out)?;
                    pointer.truncate(len);
                }
                _ => return None,
            }
        }
    }

    fn repeated_in_value(
        &mut self,
        pointer: &mut String,
        closed: &dyn Fn(&str) -> bool,
        out: &mut Vec<String>,
    ) -> Option<()> {
        match self.peek()? {
            b'{' if closed(pointer) => self.repeated_in_object(pointer, closed, out),
            b'[' if closed(&format!("{pointer}/0")) => {
                self.pos += 1;
                let mut index = 0usize;
                loop {
                    self.whitespace();
                    match self.peek()? {
                        b']' => {
                            self.pos += 1;
                            return Some(());
                        }
                        b',' => self.pos += 1,
                        _ => {
                            let len = pointer.len();
                            crate::pointer::push_token(pointer, &index.to_string());
                            self.repeated_in_value(pointer, closed, out)?;
                            pointer.truncate(len);
                            index += 1;
                        }
                    }
                }
            }
            _ => self.skip_value(),
        }
    }

    /// Skips the value at the cursor and the comma after it; `None` at the container's end or
    /// where the text breaks off.
    fn skip_member(&mut self) -> Option<()> {
        self.skip_value()?;
        self.whitespace();
        if self.peek() != Some(b',') {
            return None;
        }
        self.pos += 1;
        Some(())
    }

    /// Skips one value of any depth, iteratively.
    fn skip_value(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            self.whitespace();
            match self.peek()? {
                b'"' => self.skip_string()?,
                b'{' | b'[' => {
                    depth += 1;
                    self.pos += 1;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    self.pos += 1;
                }
                b',' | b':' => self.pos += 1,
                _ => {
                    while !matches!(
                        self.peek(),
                        None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                    ) {
                        self.pos += 1;
                    }
                }
            }
            if depth == 0 && !matches!(self.bytes.get(self.pos.wrapping_sub(1)), Some(b',' | b':'))
            {
                return Some(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_members_and_items() {
        let text = "{\n  \"ok\": false,\n  \"warnings\": [{\"code\": \"a\"}, {\"code\": \"B\"}],\n  \"error\": {\"a/b\": 1, \"category\": \"Timeout\"}\n}";
        assert_eq!(locate(text, ""), (1, 1));
        assert_eq!(locate(text, "/ok"), (2, 9));
        assert_eq!(locate(text, "/warnings/1/code"), (3, 40));
        assert_eq!(locate(text, "/error/category"), (4, 35));
        assert_eq!(locate(text, "/error/a~1b"), (4, 20));
        // A missing member reports its parent.
        assert_eq!(locate(text, "/error/detail"), (4, 12));
        assert_eq!(locate(text, "/warnings/7"), (3, 15));
    }

    #[test]
    fn finds_repeated_keys_in_closed_objects_only() {
        let text = r#"{"ok":false,"ok":false,"result":{"a":1,"a":2},"warnings":[{"code":"a"},{"code":"b","code":"c"}],"error":{"detail":"","detail":""}}"#;
        let closed = |p: &str| matches!(p, "" | "/error") || p.starts_with("/warnings/");
        assert_eq!(
            repeated_keys(text, &closed),
            ["/ok", "/warnings/1/code", "/error/detail"]
        );
    }

    #[test]
    fn survives_broken_and_deep_text() {
        let deep = format!(
            "{{\"a\":{}1{}, \"b\": 2}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert_eq!(locate(&deep, "/b"), (1, deep.len() - 1));
        for broken in [
            "",
            "{",
            "{\"a\"",
            "{\"a\":",
            "[1,",
            "\"abc",
            "{\"a\": [1, 2",
        ] {
            let _ = locate(broken, "/a/1/b");
        }
    }
}
