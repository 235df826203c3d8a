//! The session's unit tests: results read ahead and at pairing, under the schemas of the time.

use agent_tool_result::validate::Validator;

use std::sync::Arc;

use super::{Chunk, Read, Resolved, Session, read};
use crate::jsonrpc::{self, Line};

/// The reads of one line, read under `session`'s schemas as of now.
fn reads(session: &Session, text: &str) -> Vec<Read> {
    let schemas = session.schemas().clone();
    reads_in(&mut Chunk::new(&schemas, Arc::default()), text)
}

/// The reads of one line, in `chunk`.
fn reads_in(chunk: &mut Chunk<'_>, text: &str) -> Vec<Read> {
    let Line::Messages(messages) = jsonrpc::read(text) else {
        panic!("a message: {text}")
    };
    messages
        .into_iter()
        .map(|message| read(Validator::shared(), chunk, text, message).unwrap())
        .collect()
}

fn listing(id: u32, maximum: u32) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"t","inputSchema":{{}},"outputSchema":{{"type":"object","properties":{{"n":{{"maximum":{maximum}}}}}}}}}]}}}}"#
    )
}

/// `session` after a `tools/list` (id `id`) and its [`listing`].
fn list(session: &mut Session, id: u32, maximum: u32) {
    for line in [
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#),
        listing(id, maximum),
    ] {
        for message in reads(session, &line) {
            session.resolve(message);
        }
    }
}

/// A result read ahead under one listing's schema, paired after a later listing replaced
/// it: the pairing checks it under the later one.
#[test]
fn a_check_made_ahead_under_replaced_schemas_is_made_again() {
    let mut session = Session::default();
    list(&mut session, 1, 1000);
    // Read ahead, under the first listing, in one chunk with its request.
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}}"#;
    let answer = r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"ok\":true}"}],"structuredContent":{"ok":true,"n":500}}}"#;
    let schemas = session.schemas().clone();
    let mut chunk = Chunk::new(&schemas, Arc::default());
    let mut ahead = reads_in(&mut chunk, call);
    let answered = reads_in(&mut chunk, answer);
    // The pairing meets a second listing first.
    list(&mut session, 3, 100);
    session.resolve(ahead.remove(0));
    let Resolved::Checked { report, call } = session.resolve(answered.into_iter().next().unwrap())
    else {
        panic!("a tool result")
    };
    assert_eq!(&*call.unwrap().tool, "t");
    let advertised: Vec<&str> = report
        .violations()
        .iter()
        .filter(|f| f.rule() == agent_tool_result::Rule::OutputSchema)
        .map(agent_tool_result::rule::Finding::pointer)
        .collect();
    assert_eq!(advertised, ["/result/structuredContent/n"], "{report:?}");
}

/// The findings of `answer` (a result for tool `t` under [`listing`]) when its call is read
/// in the same chunk (checked ahead, on the reading thread) and when it is not (checked at
/// pairing).
fn ahead_and_paired(answer: &str) -> [Vec<String>; 2] {
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}}"#;
    [true, false].map(|together| {
        let mut session = Session::default();
        list(&mut session, 1, 1000);
        let schemas = session.schemas().clone();
        let mut chunk = Chunk::new(&schemas, Arc::default());
        let asked = reads_in(&mut chunk, call);
        let answered = if together {
            reads_in(&mut chunk, answer)
        } else {
            reads(&session, answer)
        };
        for read in asked {
            session.resolve(read);
        }
        let Resolved::Checked { report, .. } =
            session.resolve(answered.into_iter().next().unwrap())
        else {
            panic!("a tool result: {answer}")
        };
        report
            .violations()
            .iter()
            .map(|f| format!("{} {} {}:{}", f.rule(), f.pointer(), f.line(), f.column()))
            .collect()
    })
}

/// A result whose contract check stops at a member it refuses (a string `isError`, a
/// `content` that is not an array, ...) gets the same findings whether its call was in
/// its chunk or not: the schema's check then reads the result whole, never what the
/// stopped check left unread (which read as "no structuredContent").
#[test]
fn a_result_checked_ahead_and_at_pairing_gets_the_same_findings() {
    let structured = r#""structuredContent":{"ok":true,"n":5}"#;
    let text = r#""content":[{"type":"text","text":"{\"ok\":true,\"n\":5}"}]"#;
    let stops = [
        r#""isError":"true""#,
        r#""isError":1"#,
        r#""isError":null"#,
        r#""content":"text""#,
        r#""content":[{"type":5}]"#,
        r#""_meta":[]"#,
        r#""resultType":7"#,
    ];
    for stop in stops {
        for members in [
            format!("{stop},{text},{structured}"),
            format!("{text},{structured},{stop}"),
            format!("{structured},{stop}"),
        ] {
            let answer = format!(r#"{{"jsonrpc":"2.0","id":2,"result":{{{members}}}}}"#);
            let [ahead, paired] = ahead_and_paired(&answer);
            assert_eq!(ahead, paired, "{answer}");
            assert!(
                !ahead.iter().any(|f| f.starts_with("output-schema")),
                "{answer}: its structuredContent keeps the schema: {ahead:?}"
            );
        }
    }
}
