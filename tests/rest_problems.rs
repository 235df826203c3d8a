//! REST handlers behind `ProblemLayer`, over HTTP on 127.0.0.1: every error the router or an
//! extractor answers (bad JSON, no content type, an unknown route, a wrong method, a key
//! missing) is an RFC 9457 problem with its status, and keeps what the original response said
//! (axum's "EOF while parsing ...", the path, the method), never a bare status; and a
//! `GuaranteeTool` served through `KeyedJson` refuses with the profile's own problems, naming
//! the argument that does not fit.
#![cfg(all(feature = "axum", feature = "replay"))]

use crate::server;

use std::sync::Arc;

use agent_tool_result::guarantee::{Answer, GuaranteeResult, PolicyCode};
use agent_tool_result::http::layers::ProblemLayer;
use agent_tool_result::http::problem::Problem;
use agent_tool_result::http::{KeyedJson, RestOutcome, classify};
use agent_tool_result::replay::{Call, IdempotencyKey, MemoryLedger, Reply, Sequence};
use agent_tool_result::replay::{Done, GuaranteeTool, Operation, OperationFields};
use axum::{Json, extract::State};
use serde_json::Value;
use server::Server;

/// A handler on `Sequence::run`, the lower layer the guide names.
async fn send_sms(
    State(sequence): State<Arc<Sequence<MemoryLedger>>>,
    key: IdempotencyKey,
    Json(args): Json<Value>,
) -> Reply {
    let call = Call::of("send_sms", "acct_1", key, &args);
    let id = call.operation_id("msg");
    sequence
        .run(call.with_context(&id), |_| async {
            if args["to"] == "+15550100" {
                return Answer::from(GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT));
            }
            Answer::Result(GuaranteeResult::<agent_tool_result::JsonObject>::committed())
        })
        .await
}

/// A guarantee tool written once.
struct SendNote;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct NoteArgs {
    to: String,
    #[allow(dead_code, reason = "read to be checked")]
    body: String,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Noted {
    note_id: String,
}

impl OperationFields for Noted {
    fn of_operation(id: &str) -> Self {
        Noted {
            note_id: id.to_owned(),
        }
    }
}

impl GuaranteeTool for SendNote {
    const NAME: &'static str = "send_note";
    const DESCRIPTION: &'static str = "Sends a note.";
    const OPERATION: &'static str = "note";
    const LOOKUP: &'static str = "lookup_note";
    type Arguments = NoteArgs;
    type Fields = Noted;

    async fn run(&self, args: NoteArgs, operation: Operation) -> Done<Noted> {
        if args.to == "+15550100" {
            return Done::Answer(GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT).into());
        }
        Done::Answer(
            GuaranteeResult::committed()
                .with_fields(Noted::of_operation(operation.id()))
                .expect("no contract field")
                .into(),
        )
    }
}

fn app() -> axum::Router {
    let sequence = Arc::new(Sequence::new(MemoryLedger::new()));
    let note = Arc::new(SendNote);
    axum::Router::new()
        .route("/tools/send_sms", axum::routing::post(send_sms))
        .route(
            &format!("/tools/{}", SendNote::NAME),
            axum::routing::post(
                move |State(sequence): State<Arc<Sequence<MemoryLedger>>>, call: KeyedJson| async move {
                    call.serve(&sequence, &note, "acct_1").await
                },
            ),
        )
        .with_state(sequence)
        .layer(ProblemLayer)
}

/// A request to the server: method, path, headers, body; the response's status, headers and
/// its problem (or `None` when the body is not one).
fn send(
    server: &Server,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, http::HeaderMap, Option<Problem>) {
    let response = server.request(method, path, headers, body.as_bytes());
    let (parts, bytes) = response.into_parts();
    let problem = (parts
        .headers
        .get("content-type")
        .map(|v| v.to_str().unwrap())
        == Some("application/problem+json"))
    .then(|| Problem::from_body(parts.status, &bytes).unwrap());
    (parts.status.as_u16(), parts.headers, problem)
}

/// A request (method, path, headers, body) and what its answer is: the status, and words its
/// problem's detail says.
type Case<'a> = (
    &'a str,
    &'a str,
    Vec<(&'a str, &'a str)>,
    &'a str,
    u16,
    &'a str,
);

#[test]
fn every_error_is_a_problem_that_keeps_the_original_detail() {
    let server = Server::start(app());
    let json = ("content-type", "application/json");
    let keyed = ("idempotency-key", "\"sms-1\"");
    let cases: [Case; 5] = [
        // Bad JSON: axum's own words, line and column included.
        (
            "POST",
            "/tools/send_sms",
            vec![json, keyed],
            "{\"to\":",
            400,
            "EOF while parsing",
        ),
        // No content type: axum's 415, with what it expected.
        (
            "POST",
            "/tools/send_sms",
            vec![keyed],
            "{}",
            415,
            "Content-Type: application/json",
        ),
        // No route: the path nothing is served at.
        (
            "POST",
            "/tools/send_mms",
            vec![json, keyed],
            "{}",
            404,
            "/tools/send_mms",
        ),
        // A wrong method: the method the route does not answer.
        ("GET", "/tools/send_sms", vec![], "", 405, "GET"),
        // The key's own refusal passes as it is.
        (
            "POST",
            "/tools/send_sms",
            vec![json],
            "{}",
            400,
            "idempotency key",
        ),
    ];
    for (method, path, headers, body, status, said) in cases {
        let (got, response_headers, problem) = send(&server, method, path, &headers, body);
        assert_eq!(got, status, "{method} {path}");
        let problem = problem.unwrap_or_else(|| panic!("{method} {path}: not a problem"));
        assert_eq!(problem.status().as_u16(), status);
        let detail = problem.detail().unwrap_or_default();
        assert!(detail.contains(said), "{method} {path}: {detail:?}");
        if status == 405 {
            assert!(response_headers.contains_key("allow"), "405 keeps Allow");
        }
    }
    // A call that fits answers as the profile says.
    let (status, _, problem) = send(
        &server,
        "POST",
        "/tools/send_sms",
        &[json, keyed],
        r#"{"to":"+15550199"}"#,
    );
    assert_eq!((status, problem.is_none()), (200, true));
}

#[test]
fn a_tool_served_through_keyed_json_refuses_with_the_profile() {
    let server = Server::start(app());
    let json = ("content-type", "application/json");
    let keyed = ("idempotency-key", "\"note-1\"");
    let path = "/tools/send_note";
    let body = r#"{"to":"+1","body":"hi"}"#;
    let cases: [Case; 5] = [
        ("POST", path, vec![json], body, 400, "carries none"),
        ("POST", path, vec![keyed], body, 415, "application/json"),
        (
            "POST",
            path,
            vec![json, keyed],
            r#"{"to":"+1","#,
            400,
            "not JSON",
        ),
        (
            "POST",
            path,
            vec![json, keyed],
            r#"{"to":5,"body":"hi"}"#,
            400,
            "`to`: invalid",
        ),
        (
            "POST",
            path,
            vec![json, keyed],
            r#"{"to":"+1"}"#,
            400,
            "missing field `body`",
        ),
    ];
    for (method, path, headers, body, status, said) in cases {
        let (got, _, problem) = send(&server, method, path, &headers, body);
        assert_eq!(got, status, "{body}");
        let detail = problem
            .expect("a problem")
            .detail()
            .unwrap_or_default()
            .to_owned();
        assert!(detail.contains(said), "{body}: {detail}");
    }
    // A refused call begun nothing: the same key then runs, and replays the first answer.
    let call = || {
        let body = br#"{"to":"+15550199","body":"hi"}"#;
        server.request("POST", path, &[json, keyed], body)
    };
    let (first, again) = (call(), call());
    assert_eq!(first.body(), again.body());
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    match classify(&first) {
        RestOutcome::Settled(result) => {
            let id = result.field("noteId").and_then(serde_json::Value::as_str);
            assert!(id.is_some_and(|id| id.starts_with("note_")), "{result:?}");
        }
        other => panic!("{other:?}"),
    }
    // A deny is the profile's 422, with no fields.
    let (status, _, problem) = send(
        &server,
        "POST",
        path,
        &[json, ("idempotency-key", "\"note-2\"")],
        r#"{"to":"+15550100","body":"hi"}"#,
    );
    assert_eq!(status, 422);
    assert!(problem.is_some());
}
