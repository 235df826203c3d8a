//! What an answer calls for, read from every kind of answer: each error category, each
//! refusal kind, each settlement and policy decision, REST's statuses and challenges, and
//! answers that are no result of the contracts; the same reading from a bare document and from
//! a `tools/call` result that kept either channel.

use agent_tool_result::ErrorCategory;
use agent_tool_result::decision::{Decision, Kind, Reading, Why};
use agent_tool_result::guarantee::{Refusal, RefusalKind};
use agent_tool_result::mcp::CallToolResult;
use serde_json::json;

/// The decision for an envelope failure of `category`.
fn failure(category: ErrorCategory) -> Reading {
    let text = json!({ "ok": false, "error": {
        "code": "some-code", "category": category.as_str(), "detail": "d" } })
    .to_string();
    Reading::of_document(&text)
}

#[test]
fn an_envelope_failure_is_recovered_as_its_category_says() {
    for (category, decision) in [
        (ErrorCategory::Timeout, Decision::Retry),
        (ErrorCategory::StaleElement, Decision::ObserveThenRetry),
        (ErrorCategory::CaptureBlank, Decision::ObserveThenRetry),
        (ErrorCategory::InvalidArgument, Decision::FixArguments),
        (ErrorCategory::Elevation, Decision::AskPerson),
    ] {
        assert_eq!(failure(category).decision(), decision, "{category}");
    }
    for category in ErrorCategory::ALL {
        let reading = failure(category);
        assert_eq!(reading.kind(), Kind::Envelope);
        assert_eq!(reading.ok(), Some(false));
        assert_eq!(reading.category(), Some(category));
        assert_eq!(reading.code(), Some("some-code"));
        // A failure is never read as done, nor as no result.
        assert!(
            ![Decision::Continue, Decision::Stop].contains(&reading.decision()),
            "{category}"
        );
    }
    let success = Reading::of_document(r#"{"ok":true,"result":{"n":1}}"#);
    assert_eq!(success.decision(), Decision::Continue);
    assert_eq!(
        success.to_json(),
        r#"{"decision":"continue","kind":"envelope","ok":true}"#
    );
}

#[test]
fn a_refusal_is_retried_with_the_same_key_only_when_waiting_helps() {
    for kind in RefusalKind::ALL {
        let text = json!({ "type": kind.problem_type(), "title": kind.title(),
                           "status": kind.status(), "detail": "d" })
        .to_string();
        let reading = Reading::of_document(&text);
        assert_eq!(reading.kind(), Kind::Refusal, "{kind}");
        assert_eq!(reading.refusal(), Some(kind));
        assert_eq!(reading.status(), Some(kind.status()));
        let waits = matches!(
            kind,
            RefusalKind::KeyInFlight | RefusalKind::Unavailable | RefusalKind::RateLimited
        );
        let decision = if waits {
            Decision::Retry
        } else {
            Decision::FixArguments
        };
        assert_eq!(reading.decision(), decision, "{kind}");
    }
    let later = Refusal::unavailable("the store is down");
    assert_eq!(Reading::of_refusal(&later).decision(), Decision::Retry);
}

#[test]
fn a_guarantee_result_is_read_by_its_settlement_then_its_policy() {
    let result = |settlement: &str, policy: serde_json::Value| {
        let mut value = json!({ "schemaVersion": 1, "settlement": { "state": settlement },
                                "policy": policy });
        if settlement == "committed" {
            value["impact"] = json!({ "requested": 1, "committed": 1 });
        }
        Reading::of_document(&value.to_string())
    };
    let allowed = result("committed", json!({ "decision": "allow" }));
    assert_eq!(allowed.decision(), Decision::Continue);
    assert_eq!(allowed.kind(), Kind::Guarantee);

    let denied = result(
        "not_started",
        json!({ "decision": "deny", "code": "contact_opted_out" }),
    );
    assert_eq!(denied.decision(), Decision::AskPerson);
    assert_eq!(denied.policy_code(), Some("contact_opted_out"));

    let unknown = Reading::of_document(
        r#"{"schemaVersion":1,"settlement":{"state":"unknown"},"policy":{"decision":"allow"},"recovery":{"suggestedNextTool":"lookup_sms"}}"#,
    );
    assert_eq!(unknown.decision(), Decision::LookUp);
    assert_eq!(unknown.next_tool(), Some("lookup_sms"));

    let deferred = Reading::of_document(
        r#"{"schemaVersion":1,"settlement":{"state":"committed"},"policy":{"decision":"defer","code":"window","retryAt":"2026-12-06T08:00:00.000Z"},"impact":{"requested":2,"committed":1,"deferred":1},"recovery":{"suggestedNextTool":"lookup_marketing_campaigns"}}"#,
    );
    assert_eq!(deferred.decision(), Decision::LookUp);
    assert_eq!(deferred.retry_at(), Some("2026-12-06T08:00:00Z"));
    assert_eq!(
        deferred.to_json(),
        r#"{"decision":"look-up","kind":"guarantee","settlement":"committed","policy":"defer","policyCode":"window","retryAt":"2026-12-06T08:00:00Z","nextTool":"lookup_marketing_campaigns"}"#
    );
}

/// A host may keep one channel of a `tools/call` result: the reading is the bare document's
/// from `structuredContent` alone, from the text block alone, and from both.
#[test]
fn a_tools_call_result_reads_as_its_document_from_either_channel() {
    let documents = [
        r#"{"ok":false,"error":{"code":"element-stale","category":"stale-element","detail":"d"}}"#,
        r#"{"schemaVersion":1,"settlement":{"state":"not_started"},"policy":{"decision":"deny","code":"quiet_hours"}}"#,
        r#"{"type":"https://agentsfirst.ai/problems/idempotency-key-in-flight","title":"t","status":409,"retryAt":"2026-12-05T21:40:07.636Z"}"#,
        r#"{"ok":true}"#,
    ];
    for document in documents {
        let bare = Reading::of_document(document);
        let is_error = bare.decision() != Decision::Continue;
        let value: serde_json::Value = serde_json::from_str(document).unwrap();
        for carried in [
            json!({ "content": [{ "type": "text", "text": document }], "isError": is_error }),
            json!({ "content": [], "structuredContent": value, "isError": is_error }),
            json!({ "content": [{ "type": "text", "text": document }],
                    "structuredContent": value, "isError": is_error }),
        ] {
            let text = carried.to_string();
            assert_eq!(Reading::of_call_tool_result(&text), bare, "{text}");
            assert_eq!(Reading::of_any(&text), bare, "{text}");
            assert!(
                CallToolResult::from_json(&text)
                    .unwrap()
                    .carried_document()
                    .is_some()
            );
        }
    }
    // isError that does not mirror the document: not a result of the contracts.
    let lying = json!({ "content": [{ "type": "text", "text": documents[0] }], "isError": false });
    assert_eq!(
        Reading::of_any(&lying.to_string()),
        Reading::not_contract(Why::NotAToolResult)
    );
}

#[test]
fn an_answer_that_is_no_result_says_why_and_stops() {
    for (text, why) in [
        ("not json", Why::NotJson),
        (r#"{"ok":true,"result":{"n":1e400}}"#, Why::NotJson),
        (r#"{"ok":true,"\ud800":1}"#, Why::NotJson),
        (r#"{"ok":true,"result":"#, Why::NotJson),
        (r#"{"ok":true,"error":{}}"#, Why::BreaksContract),
        (r#"{"ok":"yes"}"#, Why::BreaksContract),
        ("[1,2]", Why::BreaksContract),
        (r#"{"schemaVersion":2}"#, Why::BreaksContract),
        (
            r#"{"type":"about:blank","status":418}"#,
            Why::BreaksContract,
        ),
        (r#"{"content":"x"}"#, Why::NotAToolResult),
    ] {
        let reading = Reading::of_any(text);
        assert_eq!(reading, Reading::not_contract(why), "{text}");
        assert_eq!(reading.decision(), Decision::Stop);
    }
}

#[test]
#[cfg(feature = "http")]
fn a_rest_response_is_read_by_its_status_and_challenge() {
    use agent_tool_result::http::rest::ProblemTypes;
    use http::{HeaderMap, HeaderValue, StatusCode};

    let read = |status: u16, headers: &[(&'static str, &str)], body: &str| {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        Reading::of_rest_parts(
            &ProblemTypes::default(),
            StatusCode::from_u16(status).unwrap(),
            &map,
            body.as_bytes(),
        )
    };
    let unauthorized = read(
        401,
        &[("www-authenticate", r#"Bearer error="invalid_token""#)],
        "",
    );
    assert_eq!(unauthorized.decision(), Decision::Reauthenticate);
    let scope = read(
        403,
        &[(
            "www-authenticate",
            r#"Bearer error="insufficient_scope", scope="sms:send campaigns""#,
        )],
        "",
    );
    assert_eq!(scope.decision(), Decision::StepUp);
    assert_eq!(
        scope.scopes(),
        Some(&["sms:send".to_owned(), "campaigns".to_owned()][..])
    );
    let problem = "application/problem+json";
    let limited = read(
        429,
        &[("content-type", problem), ("retry-after", "30")],
        r#"{"type":"about:blank","title":"Too Many Requests","status":429}"#,
    );
    assert_eq!(limited.decision(), Decision::Retry);
    assert_eq!(limited.refusal(), Some(RefusalKind::RateLimited));
    // Seconds are kept as said: the instant they name depends on when they were read.
    assert_eq!(
        (limited.retry_after(), limited.retry_at()),
        (Some(30), None)
    );
    let dated = read(
        503,
        &[
            ("content-type", problem),
            ("retry-after", "Sun, 06 Dec 2026 08:00:00 GMT"),
        ],
        r#"{"type":"about:blank","title":"Service Unavailable","status":503}"#,
    );
    assert_eq!(dated.retry_at(), Some("2026-12-06T08:00:00Z"));
    let fault = read(
        404,
        &[("content-type", problem)],
        r#"{"type":"about:blank","title":"Not Found","status":404,"detail":"no tool send_fax"}"#,
    );
    assert_eq!(
        (fault.decision(), fault.kind()),
        (Decision::FixArguments, Kind::Fault)
    );
    let teapot = read(418, &[], "");
    assert_eq!(teapot, Reading::not_contract(Why::NotAProfileResponse));
}

#[test]
fn a_reading_is_one_json_object_that_reads_back() {
    let reading = failure(ErrorCategory::Timeout);
    let text = reading.to_json();
    assert_eq!(
        text,
        r#"{"decision":"retry","kind":"envelope","ok":false,"category":"timeout","code":"some-code"}"#
    );
    assert_eq!(serde_json::from_str::<Reading>(&text).unwrap(), reading);
    assert!(
        serde_json::from_str::<Reading>(r#"{"decision":"retry","kind":"envelope","x":1}"#).is_err()
    );
    assert!(serde_json::from_str::<Reading>(r#"{"decision":"Retry","kind":"envelope"}"#).is_err());
}
