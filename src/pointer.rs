//! JSON Pointers (RFC 6901): building them token by token, and from a serde path.

/// Appends one reference token to a JSON Pointer, escaping `~` and `/`.
pub(crate) fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// One reference token as the key or index it names, `~1` and `~0` undone.
#[cfg(feature = "validate")]
pub(crate) fn unescape_token(token: &str) -> std::borrow::Cow<'_, str> {
    if token.contains('~') {
        token.replace("~1", "/").replace("~0", "~").into()
    } else {
        token.into()
    }
}

/// The JSON Pointer of a path recorded while deserializing.
pub(crate) fn of_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in path {
        match segment {
            Segment::Seq { index } => push_token(&mut pointer, &index.to_string()),
            Segment::Map { key } => push_token(&mut pointer, key),
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    pointer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_escaped() {
        let mut pointer = String::new();
        push_token(&mut pointer, "a/b~c");
        assert_eq!(pointer, "/a~1b~0c");
    }
}
