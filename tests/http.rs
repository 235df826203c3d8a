//! The HTTP façade for real: an axum server on 127.0.0.1 (an ephemeral port) and a real HTTP
//! client, checking status, headers, content type and body for a success, a failure and each
//! fault.
#![cfg(feature = "axum")]

#[path = "../examples/http_facade.rs"]
mod facade;
use crate::server;

use agent_tool_result::Envelope;
use agent_tool_result::validate::Validator;
use serde_json::{Value, json};
use server::Server;

struct Reply {
    status: u16,
    content_type: String,
    www_authenticate: Option<String>,
    allow: Option<String>,
    body: Value,
}

fn post(server: &Server, tool: &str, token: Option<&str>, body: &[u8]) -> Reply {
    let authorization = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![("content-type", "application/json")];
    if let Some(authorization) = &authorization {
        headers.push(("authorization", authorization));
    }
    send(server, "POST", &format!("/tools/{tool}"), &headers, body)
}

/// Sends any request and reads the reply, whatever its status.
fn send(server: &Server, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    let response = server.request(method, path, headers, body);
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    let content_type = header("content-type").unwrap_or_default();
    let www_authenticate = header("www-authenticate");
    let allow = header("allow");
    let status = response.status().as_u16();
    let text = String::from_utf8(response.body().clone()).unwrap();
    Reply {
        status,
        content_type,
        www_authenticate,
        allow,
        body: serde_json::from_str(&text)
            .unwrap_or_else(|_| panic!("{status} is not JSON: {text:?}")),
    }
}

#[test]
fn every_well_formed_call_answers_200_with_the_bare_envelope() {
    let server = Server::start(facade::router());
    for (arguments, ok) in [
        (json!({ "name": "OK" }), true),
        (json!({ "name": "Cancel" }), false),
        (json!({}), false),
    ] {
        let reply = post(
            &server,
            "find",
            Some(facade::TOKEN),
            arguments.to_string().as_bytes(),
        );
        assert_eq!(reply.status, 200, "{arguments}");
        assert_eq!(reply.content_type, "application/json");
        assert_eq!(reply.body["ok"], ok, "{}", reply.body);
        assert!(
            Validator::shared().validate(&reply.body).is_valid(),
            "{}",
            reply.body
        );
        let envelope = Envelope::<Value>::from_value(&reply.body).unwrap();
        assert_eq!(envelope.session_id(), Some("s-demo"));
    }
}

/// Tool, token, body, expected status, expected start of `WWW-Authenticate`.
type Case<'a> = (&'a str, Option<&'a str>, &'a [u8], u16, Option<&'a str>);

#[test]
fn transport_and_auth_faults_answer_problem_details() {
    let server = Server::start(facade::router());
    let args = br#"{"name":"OK"}"#;
    let too_large = vec![b' '; facade::BODY_LIMIT + 1];
    let cases: [Case<'_>; 6] = [
        ("find", Some(facade::TOKEN), b"{not json", 400, None),
        ("find", None, args, 401, Some("Bearer realm=\"tools\"")),
        (
            "find",
            Some("stolen"),
            args,
            401,
            Some("Bearer realm=\"tools\", error=\"invalid_token\""),
        ),
        (
            "find",
            Some(facade::READ_ONLY_TOKEN),
            args,
            403,
            Some("Bearer error=\"insufficient_scope\", scope=\"tools:call\""),
        ),
        ("destroy", Some(facade::TOKEN), args, 404, None),
        ("find", Some(facade::TOKEN), &too_large, 413, None),
    ];
    for (tool, token, body, status, challenge) in cases {
        let reply = post(&server, tool, token, body);
        assert_eq!(reply.status, status, "{tool} {token:?}: {}", reply.body);
        assert_eq!(reply.content_type, "application/problem+json", "{status}");
        assert_eq!(reply.body["status"], status);
        assert_eq!(reply.body["type"], "about:blank");
        assert!(reply.body["title"].as_str().is_some_and(|t| !t.is_empty()));
        assert!(reply.body["detail"].as_str().is_some_and(|d| !d.is_empty()));
        match challenge {
            Some(prefix) => assert!(
                reply
                    .www_authenticate
                    .as_deref()
                    .is_some_and(|h| h.starts_with(prefix)),
                "{status}: {:?}",
                reply.www_authenticate
            ),
            None => assert_eq!(reply.www_authenticate, None, "{status}"),
        }
        assert!(
            reply.body.get("ok").is_none(),
            "a fault is never dressed as an envelope"
        );
    }
}

#[test]
fn problems_keep_their_standard_members_and_challenges_are_quoted() {
    use agent_tool_result::http::{Fault, Problem};
    use http::StatusCode;

    for status in [StatusCode::OK, StatusCode::ACCEPTED, StatusCode::FOUND] {
        assert!(Problem::new(status).is_err(), "{status}");
    }
    let problem = Problem::typed(
        StatusCode::UNPROCESSABLE_ENTITY,
        "https://example.com/problems/x",
        "X",
    )
    .unwrap()
    .with_detail("why")
    .with_instance("/calls/7")
    .with_extension("retryAt", json!("2026-12-01T00:00:00Z"))
    .unwrap();
    for name in ["type", "title", "status", "detail", "instance"] {
        let refused = problem
            .clone()
            .with_extension(name, json!(200))
            .unwrap_err();
        assert_eq!(refused.name(), name);
    }
    let body: Value = serde_json::to_value(&problem).unwrap();
    assert_eq!(body["status"], 422, "an extension cannot replace status");
    assert_eq!(body["retryAt"], "2026-12-01T00:00:00Z");
    assert_eq!(body["instance"], "/calls/7");

    let fault = Fault::invalid_token("tools \"main\"", "expired\r\nX-Injected: 1");
    let challenge = fault.www_authenticate().unwrap();
    assert!(
        challenge.contains(r#"realm="tools \"main\"""#),
        "{challenge}"
    );
    assert!(
        !challenge.contains('\n') && !challenge.contains('\r'),
        "{challenge}"
    );
    let response = fault.into_http_response();
    assert_eq!(response.status(), 401);

    for (fault, status) in [
        (Fault::malformed("x"), 400),
        (Fault::forbidden("no"), 403),
        (Fault::unknown_tool("x"), 404),
        (Fault::too_large(10), 413),
        (Fault::no_route("/x"), 404),
        (Fault::method_not_allowed("GET"), 405),
        (Fault::unsupported_media_type(Some("text/plain")), 415),
        (Fault::unauthenticated("tools"), 401),
    ] {
        assert_eq!(fault.status().as_u16(), status);
        let body: Value =
            serde_json::from_slice(fault.clone().into_http_response().body()).unwrap();
        assert_eq!(body["status"], status);
        assert!(fault.to_string().starts_with(&status.to_string()));
    }
    assert_eq!(Fault::forbidden("no").www_authenticate(), None);
}

/// Method, path, headers, body and the status expected.
type Request<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>, Vec<u8>, u16);

/// Every non-200 the façade can answer is a problem with `status` equal to the HTTP status:
/// wrong routes and methods, media types, sizes and every form of credentials.
#[test]
fn every_non_200_is_a_problem() {
    let server = Server::start(facade::router());
    let args: &[u8] = br#"{"name":"OK"}"#;
    let auth = format!("Bearer {}", facade::TOKEN);
    let json = ("content-type", "application/json");
    let bearer = ("authorization", auth.as_str());
    let long_path = format!("/tools/{}", "f".repeat(10_000));
    let padding = "p".repeat(20_000);
    let cases: Vec<Request<'_>> = vec![
        (
            "POST",
            "/tools/find",
            vec![bearer, ("authorization", "Bearer other"), json],
            args.to_vec(),
            400,
        ),
        ("POST", &long_path, vec![bearer, json], args.to_vec(), 414),
        (
            "POST",
            "/tools/find",
            vec![bearer, json, ("x-padding", &padding)],
            args.to_vec(),
            431,
        ),
        ("GET", "/tools/find", vec![bearer], vec![], 405),
        (
            "DELETE",
            "/tools/find",
            vec![bearer, json],
            args.to_vec(),
            405,
        ),
        (
            "POST",
            "/nothing/here",
            vec![bearer, json],
            args.to_vec(),
            404,
        ),
        ("GET", "/", vec![], vec![], 404),
        ("POST", "/tools/find", vec![bearer], args.to_vec(), 415),
        (
            "POST",
            "/tools/find",
            vec![bearer, ("content-type", "text/plain")],
            args.to_vec(),
            415,
        ),
        (
            "POST",
            "/tools/find",
            vec![
                bearer,
                ("content-type", "application/x-www-form-urlencoded"),
            ],
            args.to_vec(),
            415,
        ),
        (
            "POST",
            "/tools/find",
            vec![bearer, ("content-type", "application/json; charset=utf-8")],
            args.to_vec(),
            200,
        ),
        (
            "POST",
            "/tools/find",
            vec![bearer, json],
            vec![b' '; facade::BODY_LIMIT],
            400,
        ),
        (
            "POST",
            "/tools/find",
            vec![bearer, json],
            vec![b' '; facade::BODY_LIMIT + 1],
            413,
        ),
    ];
    for (method, path, headers, body, status) in cases {
        let reply = send(&server, method, path, &headers, &body);
        assert_eq!(
            reply.status, status,
            "{method} {path} {headers:?}: {}",
            reply.body
        );
        if status == 200 {
            assert_eq!(reply.content_type, "application/json");
            continue;
        }
        assert_eq!(
            reply.content_type, "application/problem+json",
            "{method} {path}"
        );
        assert_eq!(reply.body["status"], status);
        assert!(reply.body["detail"].as_str().is_some_and(|d| !d.is_empty()));
        if status == 405 {
            assert_eq!(reply.allow.as_deref(), Some("POST"), "{method} {path}");
        }
    }
}

/// RFC 6750 section 3.1: no credentials (or another scheme) get a bare challenge; only a
/// refused bearer token gets `invalid_token`. The scheme name is case-insensitive.
#[test]
fn challenges_follow_rfc_6750() {
    let server = Server::start(facade::router());
    let args: &[u8] = br#"{"name":"OK"}"#;
    let json = ("content-type", "application/json");
    let scheme_cases = [
        (None, 401, Some(r#"Bearer realm="tools""#)),
        (
            Some("Basic dXNlcjpwYXNz"),
            401,
            Some(r#"Bearer realm="tools""#),
        ),
        (Some("Bearer"), 401, Some(r#"Bearer realm="tools""#)),
        (
            Some("Bearer stolen"),
            401,
            Some(
                r#"Bearer realm="tools", error="invalid_token", error_description="the token is not valid""#,
            ),
        ),
        (Some("bearer demo-token"), 200, None),
        (Some("BEARER demo-token"), 200, None),
        (Some("Bearer   demo-token"), 200, None),
        (
            Some("bearer read-only-token"),
            403,
            Some(r#"Bearer error="insufficient_scope", scope="tools:call""#),
        ),
    ];
    for (authorization, status, challenge) in scheme_cases {
        let mut headers = vec![json];
        if let Some(authorization) = authorization {
            headers.push(("authorization", authorization));
        }
        let reply = send(&server, "POST", "/tools/find", &headers, args);
        assert_eq!(reply.status, status, "{authorization:?}: {}", reply.body);
        assert_eq!(
            reply.www_authenticate.as_deref(),
            challenge,
            "{authorization:?}"
        );
    }
}

#[test]
fn a_problem_reads_back_as_rfc_9457_reads_one() {
    use agent_tool_result::http::Problem;
    use http::StatusCode;

    let written = Problem::typed(StatusCode::CONFLICT, "https://api.example/busy", "Busy")
        .unwrap()
        .with_detail("try later")
        .with_instance("/calls/7")
        .with_extension("retryAt", json!("2026-12-01T09:00:00Z"))
        .unwrap();
    let wire = serde_json::to_vec(&written).unwrap();
    let read: Problem = serde_json::from_slice(&wire).unwrap();
    assert_eq!(read, written);
    assert_eq!(
        Problem::from_body(StatusCode::CONFLICT, &wire).unwrap(),
        written
    );

    // A standard member of the wrong type is ignored; `type` is then about:blank and the
    // title the status's reason phrase; the HTTP status stands in for a missing member.
    let odd = br#"{"type":7,"title":["x"],"detail":false,"instance":null,"limit":3}"#;
    let read = Problem::from_body(StatusCode::TOO_MANY_REQUESTS, odd).unwrap();
    assert_eq!(read.problem_type(), "about:blank");
    assert_eq!(read.title(), "Too Many Requests");
    assert_eq!((read.detail(), read.instance()), (None, None));
    assert_eq!(read.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(read.extensions().len(), 1, "{:?}", read.extensions());
    // Read on its own, a problem needs its status member, and an error one.
    for alone in [&br#"{"title":"x"}"#[..], br#"{"status":200}"#, b"[1]"] {
        assert!(serde_json::from_slice::<Problem>(alone).is_err());
    }
    assert!(Problem::from_body(StatusCode::OK, br#"{"title":"x"}"#).is_err());

    // An error status is 400 to 599 (RFC 9110), wherever it comes from: a `status` member
    // outside it is not taken (the response's status stands), a response status outside it
    // makes no problem, and none can be built with one.
    let six_hundred = StatusCode::from_u16(600).unwrap();
    let nines = StatusCode::from_u16(999).unwrap();
    for member in [0, 99, 200, 399, 600, 999, 1_000, 65_536] {
        let body = format!(r#"{{"title":"x","status":{member}}}"#);
        let read = Problem::from_body(StatusCode::BAD_GATEWAY, body.as_bytes()).unwrap();
        assert_eq!(
            read.status(),
            StatusCode::BAD_GATEWAY,
            "status member {member}"
        );
        assert!(
            serde_json::from_str::<Problem>(&body).is_err(),
            "{member} alone"
        );
        assert!(Problem::from_body(six_hundred, body.as_bytes()).is_err());
    }
    for status in [six_hundred, nines] {
        assert!(
            Problem::from_body(status, br#"{"title":"x"}"#).is_err(),
            "{status}"
        );
        assert!(Problem::new(status).is_err(), "{status}");
    }
    for edge in [400, 499, 500, 599] {
        let status = StatusCode::from_u16(edge).unwrap();
        assert_eq!(Problem::new(status).unwrap().status(), status);
    }
}

#[test]
fn a_problem_without_a_type_is_about_blank_to_the_classifier() {
    use agent_tool_result::guarantee::RefusalKind;
    use agent_tool_result::http::RestOutcome;
    use agent_tool_result::http::classify::classify_parts;
    use http::{HeaderMap, StatusCode, header::CONTENT_TYPE};

    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, "application/problem+json".parse().unwrap());
    let body = br#"{"title":"Bad Request","detail":"to is not E.164"}"#;
    match classify_parts(StatusCode::BAD_REQUEST, &headers, body) {
        RestOutcome::Refused { refusal, .. } => {
            assert_eq!(refusal.kind(), RefusalKind::InvalidArguments);
            assert_eq!(refusal.detail(), "to is not E.164");
        }
        other => panic!("{other:?}"),
    }
}
