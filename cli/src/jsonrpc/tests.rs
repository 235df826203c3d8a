//! The JSON-RPC framing's unit tests: messages, batches and ids read by their members.

use std::borrow::Cow;

use super::{Id, Line, Message, read, reread};

/// The one message of `text`, read as a session reads it: again, with its result
/// delimited, when the result first read is not JSON.
fn one(text: &str) -> Message<'_> {
    let is_json = |text: &str| serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
    let message = match read(text) {
        Line::Messages(mut messages) if messages.len() == 1 => messages.remove(0),
        other => panic!("{text}: {other:?}"),
    };
    match message {
        Message::Result { text: result, .. } if !is_json(result) => match reread(text) {
            Line::Messages(mut messages) if messages.len() == 1 => messages.remove(0),
            other => panic!("{text}: {other:?}"),
        },
        message => message,
    }
}

/// Ids are the same when written the same, and are shown as written.
#[test]
fn ids_are_the_same_when_written_the_same() {
    let written = ["0", "-0", "7", "-7", "1.0", "1e2", "99999999999999999999"];
    for text in written {
        assert_eq!(Id::number(text).to_string(), text);
        for other in written {
            assert_eq!(Id::number(text) == Id::number(other), text == other);
        }
    }
}

/// The text of the result of `line`'s first message, as the first reading delimits it.
fn first_result(line: &str) -> &str {
    match read(line) {
        Line::Messages(messages) => match messages[0] {
            Message::Result { text, .. } => text,
            ref other => panic!("{line}: {other:?}"),
        },
        Line::NotJsonRpc => panic!("{line}: not JSON-RPC"),
    }
}

/// A result that is not the last member is not taken to run to the end.
#[test]
fn a_result_is_read_to_the_end_only_when_it_is_last() {
    let last = r#"{"jsonrpc":"2.0","id":1,"result":{"a":[1]}} "#;
    assert_eq!(first_result(last), r#"{"a":[1]}"#);
    let not_last = r#"{"jsonrpc":"2.0","id":1,"result":{"a":[1]},"x":{}}"#;
    assert_eq!(first_result(not_last), r#"{"a":[1]},"x":{}"#);
    assert!(matches!(
        one(not_last),
        Message::Result {
            text: r#"{"a":[1]}"#,
            ..
        }
    ));
    // Before `jsonrpc` and `id`, a result is delimited at once.
    let first = r#"{"result":{"a":[1]},"jsonrpc":"2.0","id":1}"#;
    assert_eq!(first_result(first), r#"{"a":[1]}"#);
}

fn is_broken(message: &Message<'_>) -> bool {
    matches!(message, Message::Broken { .. })
}

#[test]
fn every_kind_of_message_is_read_by_its_members() {
    assert_eq!(
        one(r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#),
        Message::Result {
            id: Id::Integer(7),
            text: r#"{"content":[]}"#,
            offset: 33
        }
    );
    assert_eq!(
        one(r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}"#),
        Message::Request(super::Request {
            id: Id::Text("a".into()),
            method: Cow::Borrowed("tools/call"),
            tool: Some(Cow::Borrowed("x")),
            revision: None,
        })
    );
    assert_eq!(
        one(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
        Message::Notification
    );
    assert_eq!(
        one(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no"}}"#),
        Message::Error { id: Id::Integer(7) }
    );
    // A valid response whose result is null is a response like any other.
    assert!(matches!(
        one(r#"{"jsonrpc":"2.0","id":2,"result":null}"#),
        Message::Result { text: "null", .. }
    ));
    // Escaped names are the names they spell.
    assert!(matches!(
        one(r#"{"\u006asonrpc":"2.0","id":2,"\u0072esult":{}}"#),
        Message::Result { text: "{}", .. }
    ));
}

#[test]
fn what_json_rpc_forbids_is_broken() {
    for text in [
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":5},"error":{"code":1,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":7}"#,
        r#"{"jsonrpc":"2.0","result":{}}"#,
        r#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
        r#"{"jsonrpc":2.0,"id":1,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":{},"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#,
        r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{},"\u0072esult":{}}"#,
    ] {
        assert!(is_broken(&one(text)), "{text}");
    }
}

#[test]
fn a_batch_is_read_element_by_element() {
    let text = r#"[{"jsonrpc":"2.0","id":1,"result":{}}, 5, {"jsonrpc":"2.0","method":"x"}]"#;
    let Line::Messages(messages) = read(text) else {
        panic!("a batch")
    };
    assert_eq!(messages.len(), 3);
    assert!(matches!(messages[0], Message::Result { .. }));
    assert!(matches!(messages[1], Message::Broken { offset: 39, .. }));
    assert_eq!(messages[2], Message::Notification);
    for not in [
        r#"{"ok":true,"result":{"jsonrpc":"2.0"}}"#,
        r#"["jsonrpc"]"#,
        r#"[{"ok":true}]"#,
        "not json",
    ] {
        assert_eq!(read(not), Line::NotJsonRpc, "{not}");
    }
    // An empty batch is an invalid request (JSON-RPC 2.0, section 6).
    for empty in ["[]", " [ \n] "] {
        let Line::Messages(messages) = read(empty) else {
            panic!("an invalid request: {empty:?}")
        };
        assert!(
            matches!(&messages[..], [Message::Broken { .. }]),
            "{empty:?}"
        );
    }
}
