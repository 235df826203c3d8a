//! Text echoed from a document, made safe to print.

use std::fmt::Write as _;

/// `text` with every control character (C0, DEL, C1) and every bidirectional override shown
/// as an escape (`\u{1b}`), so that nothing echoed from a document can forge an output line
/// or reach the terminal as a control sequence.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let hidden =
        |c: char| c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !text.chars().any(hidden) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hidden(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}
