//! The rule that an observation never holds image data: no `base64` key, and no long string
//! that decodes as base64, at any depth.

use serde_json::Value;

use crate::JsonObject;
use crate::pointer::push_token;

/// Strings longer than this that decode as base64 are taken for inlined binary data.
pub const MAX_INLINE_BASE64: usize = 4096;

/// The JSON Pointer of the first place inside `object` that breaks the no-base64 rule: a
/// `base64` key, or a string longer than [`MAX_INLINE_BASE64`] that decodes as base64.
///
/// ```
/// use agent_tool_result::observation::find_base64;
/// use serde_json::json;
///
/// let object = json!({ "frames": [{ "base64": "iVBORw0KGgo=" }] });
/// assert_eq!(find_base64(object.as_object().unwrap()).as_deref(), Some("/frames/0/base64"));
/// let text = json!({ "note": "AAAAAAAAAAAA" });
/// assert_eq!(find_base64(text.as_object().unwrap()), None);
/// ```
#[must_use]
pub fn find_base64(object: &JsonObject) -> Option<String> {
    // The common case, nothing found, walks without building pointers.
    if !object.iter().any(|(key, value)| breaks_rule(key, value)) {
        return None;
    }
    let mut pointer = String::new();
    let mut value = object;
    loop {
        let (key, child) = value.iter().find(|(key, child)| breaks_rule(key, child))?;
        push_token(&mut pointer, key);
        if key == "base64" {
            return Some(pointer);
        }
        match descend(child, &mut pointer) {
            Some(object) => value = object,
            None => return Some(pointer),
        }
    }
}

/// Whether the member `key: value` is, or holds, a break of the no-base64 rule.
fn breaks_rule(key: &str, value: &Value) -> bool {
    key == "base64" || holds_base64(value)
}

fn holds_base64(value: &Value) -> bool {
    match value {
        Value::String(s) => is_inline_base64(s),
        Value::Array(items) => items.iter().any(holds_base64),
        Value::Object(object) => object.iter().any(|(key, value)| breaks_rule(key, value)),
        _ => false,
    }
}

/// Follows `value` down to the object that holds the break (through arrays), extending the
/// pointer; `None` when `value` itself is the offending string.
fn descend<'a>(mut value: &'a Value, pointer: &mut String) -> Option<&'a JsonObject> {
    loop {
        match value {
            Value::Object(object) => return Some(object),
            Value::Array(items) => {
                let (index, item) = items
                    .iter()
                    .enumerate()
                    .find(|(_, item)| holds_base64(item))?;
                push_token(pointer, &index.to_string());
                value = item;
            }
            _ => return None,
        }
    }
}

/// Whether `s` looks like inlined binary data: longer than [`MAX_INLINE_BASE64`] bytes,
/// decodes as standard base64 (padded or not), and mixes upper case, lower case and digits, as
/// encoded binary of that length always does (a PNG's base64 starts `iVBORw0KGgo`). A long
/// run of one letter, a hex digest or a lowercase identifier is text, not an image. The
/// schema's patterns for the same rule are tested against this function.
///
/// ```
/// use agent_tool_result::observation::is_inline_base64;
///
/// assert!(!is_inline_base64(&"A".repeat(4_100)));
/// assert!(!is_inline_base64(&"0123456789abcdef".repeat(300)));
/// assert!(is_inline_base64(&"iVBORw0KGgoAAAANSUhEUgAA".repeat(200)));
/// ```
#[must_use]
pub fn is_inline_base64(s: &str) -> bool {
    s.len() > MAX_INLINE_BASE64
        && is_base64(s)
        && s.bytes().any(|b| b.is_ascii_uppercase())
        && s.bytes().any(|b| b.is_ascii_lowercase())
        && s.bytes().any(|b| b.is_ascii_digit())
}

fn is_base64(s: &str) -> bool {
    let body = s.trim_end_matches('=');
    let padding = s.len() - body.len();
    let alphabet = |b: u8| b.is_ascii_alphanumeric() || b == b'+' || b == b'/';
    body.bytes().all(alphabet)
        && matches!((padding, body.len() % 4), (0, 0 | 2 | 3) | (1, 3) | (2, 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_shapes() {
        for ok in ["", "QQ", "QQ==", "QUI", "QUI=", "QUJD", "a+/9"] {
            assert!(is_base64(ok), "{ok}");
        }
        for bad in ["Q", "Q===", "QQ=", "QUJD=", "QU JD", "QU-_", "QUI==", "=QQ"] {
            assert!(!is_base64(bad), "{bad}");
        }
    }

    #[test]
    fn pointer_names_the_first_offender() {
        let long = "iVBORw0KGgo".repeat(MAX_INLINE_BASE64 / 8);
        let object = serde_json::json!({ "a": [1, { "b~/": long }] });
        let Value::Object(object) = object else {
            unreachable!()
        };
        assert_eq!(find_base64(&object).as_deref(), Some("/a/1/b~0~1"));
        let short = serde_json::json!({ "a": "QUJD", "text": "lorem ipsum ".repeat(1_000) });
        let Value::Object(short) = short else {
            unreachable!()
        };
        assert_eq!(find_base64(&short), None);
    }
}
