//! The REST profile of guarantee results: each outcome's status, content type, headers and
//! body, read back as a guarantee result.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agent_tool_result::guarantee::{GuaranteeResult, Impact, PolicyCode};
use agent_tool_result::http::RestProfile;
use agent_tool_result::http::rest::{ProblemTypes, RetryAfter};
use serde_json::{Value, json};

fn retry_at() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_796_115_600)
}

/// A batch: 40 sent now, 60 held until the send window reopens.
fn held<T>() -> GuaranteeResult<T> {
    let impact = Impact::new()
        .with_requested(100)
        .with_committed(40)
        .with_deferred(60);
    GuaranteeResult::deferred(PolicyCode::CAMPAIGN_SEND_WINDOW)
        .with_impact(impact)
        .and_then(|held| held.with_retry_at(retry_at()))
        .expect("40 + 60 of 100, and a defer takes a retry time")
}

#[test]
fn each_outcome_has_its_status_content_type_and_headers() {
    let settled = GuaranteeResult::committed()
        .with_impact(Impact::new().with_requested(1).with_committed(1))
        .unwrap();
    let held = held()
        .with_fields(json!({ "campaignId": "cmp_7f3a" }))
        .unwrap();
    let waiting = GuaranteeResult::deferred(PolicyCode::CAMPAIGN_HOLD);
    let denied: GuaranteeResult<Value> = GuaranteeResult::denied(PolicyCode::CONTACT_POLICY)
        .with_retry_at(retry_at())
        .expect("a deny takes a retry time");
    let profile = RestProfile::default();
    let cases: Vec<(GuaranteeResult<Value>, u16, &str, Option<&str>)> = vec![
        (settled, 200, "application/json", None),
        (
            held,
            202,
            "application/json",
            Some("Tue, 01 Dec 2026 09:00:00 GMT"),
        ),
        (waiting, 202, "application/json", None),
        (
            denied,
            422,
            "application/problem+json",
            Some("Tue, 01 Dec 2026 09:00:00 GMT"),
        ),
    ];
    for (result, status, content_type, retry) in cases {
        let response = profile.response(&result).unwrap();
        assert_eq!(response.status(), status);
        assert_eq!(response.headers()["content-type"], content_type);
        assert_eq!(
            response
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap()),
            retry,
            "{status}"
        );
        assert!(
            response.headers().get("location").is_none(),
            "never a task monitor"
        );
        let body: Value = serde_json::from_slice(response.body()).unwrap();
        // The client reads the same guarantee fields, problem or not.
        let read = GuaranteeResult::<Value>::from_value(&strip_problem(body.clone())).unwrap();
        assert_eq!(read.policy(), result.policy());
        assert_eq!(read.settlement(), result.settlement());
        if status == 422 {
            assert_eq!(body["type"], "https://agentsfirst.ai/problems/policy-deny");
            assert_eq!(body["status"], 422, "status repeats the HTTP status");
            assert!(body["title"].as_str().is_some_and(|t| !t.is_empty()));
            assert!(
                body["detail"]
                    .as_str()
                    .is_some_and(|d| d.contains("contact_policy"))
            );
        }
    }
}

/// The guarantee members of a body, problem members left out.
fn strip_problem(mut body: Value) -> Value {
    if let Some(object) = body.as_object_mut() {
        for member in ["type", "title", "status", "detail", "instance"] {
            object.remove(member);
        }
    }
    body
}

#[test]
fn retry_after_as_seconds_and_another_problem_type() {
    let soon = SystemTime::now() + Duration::from_secs(3_600);
    let denied: GuaranteeResult = GuaranteeResult::denied(PolicyCode::CONTACT_POLICY)
        .with_retry_at(soon)
        .expect("a deny takes a retry time");
    let profile = RestProfile::default()
        .with_retry_after(RetryAfter::DelaySeconds)
        .with_problem_types(
            ProblemTypes::default()
                .with_policy_deny("https://example.com/problems/deny")
                .unwrap(),
        );
    let response = profile.response(&denied).unwrap();
    let seconds: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((3_590..=3_600).contains(&seconds), "{seconds}");
    let body: Value = serde_json::from_slice(response.body()).unwrap();
    assert_eq!(body["type"], "https://example.com/problems/deny");
    assert_eq!(
        RestProfile::default().status(&denied),
        422,
        "a policy deny is never a 403"
    );
}

/// `Retry-After` says a whole second, never one before the retry time: both of its forms,
/// for a deny's retry time and a refusal's, are rounded up, so an agent that waits as the
/// header says (which a reader takes over the body's `retryAt`) never calls early.
#[test]
fn retry_after_is_rounded_up_never_down() {
    use agent_tool_result::guarantee::Refusal;
    use agent_tool_result::http::{RestOutcome, classify};

    let whole = UNIX_EPOCH + Duration::from_secs(1_796_115_600);
    let cases = [
        (whole, "Tue, 01 Dec 2026 09:00:00 GMT"),
        (
            whole + Duration::from_millis(1),
            "Tue, 01 Dec 2026 09:00:01 GMT",
        ),
        (
            whole + Duration::from_millis(999),
            "Tue, 01 Dec 2026 09:00:01 GMT",
        ),
        (
            whole - Duration::from_nanos(1),
            "Tue, 01 Dec 2026 09:00:00 GMT",
        ),
    ];
    let profile = RestProfile::default();
    for (at, date) in cases {
        let denied: GuaranteeResult = GuaranteeResult::denied(PolicyCode::CONTACT_POLICY)
            .with_retry_at(at)
            .unwrap();
        let refused = Refusal::unavailable("down").with_retry_at(at).unwrap();
        for response in [
            profile.response(&denied).unwrap(),
            profile.refusal_response(&refused),
        ] {
            assert_eq!(response.headers()["retry-after"], date, "{at:?}");
            let read = match classify(&response) {
                RestOutcome::PolicyDenied { retry_at, .. } => retry_at,
                RestOutcome::Refused { refusal, .. } => refusal.retry_at(),
                other => panic!("{other:?}"),
            };
            assert!(
                read.is_some_and(|read| read >= at),
                "{read:?} before {at:?}"
            );
        }
    }
    // As a delay: 10.5 seconds from now is 11, not 10.
    let seconds = RestProfile::default().with_retry_after(RetryAfter::DelaySeconds);
    let soon = Refusal::unavailable("down")
        .with_retry_at(SystemTime::now() + Duration::from_millis(10_500))
        .unwrap();
    assert_eq!(
        seconds.refusal_response(&soon).headers()["retry-after"],
        "11"
    );
}

/// Every row of the document's REST table, its pre-GA shapes and its traps, classified.
#[test]
#[allow(clippy::too_many_lines)] // one table of cases
fn responses_are_classified_by_problem_type_and_content_type() {
    use agent_tool_result::guarantee::{Refusal, RefusalKind};
    use agent_tool_result::http::classify::classify_parts;
    use agent_tool_result::http::{RestOutcome, classify};
    use http::{HeaderMap, StatusCode};

    let profile = RestProfile::default();
    let denied: GuaranteeResult = GuaranteeResult::denied(PolicyCode::CONTACT_POLICY)
        .with_retry_at(retry_at())
        .expect("a deny takes a retry time");
    let held: GuaranteeResult = GuaranteeResult::deferred(PolicyCode::CAMPAIGN_SEND_WINDOW)
        .with_impact(
            Impact::new()
                .with_requested(10)
                .with_committed(4)
                .with_deferred(6),
        )
        .and_then(|held| held.with_retry_at(retry_at()))
        .unwrap();
    let settled: GuaranteeResult = GuaranteeResult::committed()
        .with_impact(Impact::new().with_committed(1))
        .unwrap();

    // The profile's own responses read back to their outcomes.
    match classify(&profile.response(&denied).unwrap()) {
        RestOutcome::PolicyDenied {
            retry_at: at,
            result,
        } => {
            assert_eq!(at, Some(retry_at()));
            assert!(result.is_deny());
        }
        other => panic!("{other:?}"),
    }
    match classify(&profile.response(&held).unwrap()) {
        RestOutcome::Deferred { retry_at: at, .. } => assert_eq!(at, Some(retry_at())),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        classify(&profile.response(&settled).unwrap()),
        RestOutcome::Settled(_)
    ));

    let headers = |pairs: &[(&str, &str)]| {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        map
    };
    let problem_body = String::from_utf8(profile.response(&denied).unwrap().into_body()).unwrap();
    let problem = [("content-type", "application/problem+json")];
    // A 403 whose body is a policy-deny problem is a policy deny, not "reconnect OAuth".
    let outcome = classify_parts(
        StatusCode::FORBIDDEN,
        &headers(&problem),
        problem_body.as_bytes(),
    );
    assert!(
        matches!(outcome, RestOutcome::PolicyDenied { .. }),
        "{outcome:?}"
    );

    let json = [("content-type", "application/json")];
    let cases: Vec<(u16, HeaderMap, String, &str)> = vec![
        (401, headers(&[("www-authenticate", r#"Bearer realm="api", error="invalid_token""#)]), String::new(), "unauthorized"),
        (401, headers(&[("www-authenticate", r#"Bearer realm="api""#)]), String::new(), "unauthorized"),
        (401, HeaderMap::new(), String::new(), "not a contract"),
        (403, headers(&[("www-authenticate", r#"Bearer error="insufficient_scope", scope="campaigns:send sms:send""#)]), String::new(), "scope"),
        (403, HeaderMap::new(), r#"{"ok":false,"error":"denied"}"#.into(), "not a contract"),
        (422, headers(&json), r#"{"ok":false,"error":{"code":"policy"}}"#.into(), "not a contract"),
        (200, headers(&problem), settled.to_json().unwrap(), "not a contract"),
        (202, headers(&[("content-type", "application/json"), ("location", "/tasks/1")]), held.to_json().unwrap(), "not a contract"),
        (202, headers(&json), settled.to_json().unwrap(), "not a contract"),
        (409, headers(&problem), r#"{"type":"https://agentsfirst.ai/problems/idempotency-key-in-flight","title":"x","status":409}"#.into(), "in flight"),
        (422, headers(&problem), r#"{"type":"https://agentsfirst.ai/problems/idempotency-key-mismatch","title":"x","status":422}"#.into(), "mismatch"),
        (400, headers(&problem), String::from_utf8(profile.refusal_response(&Refusal::new(RefusalKind::KeyMissing, "send one")).into_body()).unwrap(), "missing key"),
        (500, HeaderMap::new(), String::new(), "retry with the same key"),
        (503, headers(&[("content-type", "text/html")]), "<h1>down</h1>".into(), "retry with the same key"),
        (502, headers(&problem), r#"{"type":"about:blank","title":"Bad Gateway","status":502}"#.into(), "retry with the same key"),
        (404, headers(&problem), r#"{"type":"about:blank","title":"Not Found","status":404}"#.into(), "fault"),
        (415, headers(&problem), r#"{"type":"about:blank","title":"Unsupported Media Type","status":415}"#.into(), "fault"),
        (404, headers(&[("content-type", "text/plain")]), "not found".into(), "not a contract"),
        (422, headers(&json), problem_body.clone(), "not a contract"),
    ];
    for (status, headers, body, expected) in cases {
        let outcome = classify_parts(
            StatusCode::from_u16(status).unwrap(),
            &headers,
            body.as_bytes(),
        );
        let found = match &outcome {
            RestOutcome::Unauthorized { .. } => "unauthorized",
            RestOutcome::InsufficientScope { scopes } => {
                assert_eq!(scopes, &["campaigns:send", "sms:send"]);
                "scope"
            }
            RestOutcome::Refused { refusal, .. } => match refusal.kind() {
                RefusalKind::KeyInFlight => "in flight",
                RefusalKind::KeyMismatch => "mismatch",
                RefusalKind::KeyMissing => {
                    assert_eq!(refusal.detail(), "send one", "the detail is kept");
                    "missing key"
                }
                RefusalKind::Unavailable => "retry with the same key",
                _ => "other refusal",
            },
            RestOutcome::Fault { .. } => "fault",
            RestOutcome::NotContract { why } => {
                if status == 422 && body == problem_body {
                    assert!(why.contains("application/json"), "{why}");
                }
                "not a contract"
            }
            _ => "other",
        };
        assert_eq!(found, expected, "{status} {body}: {outcome:?}");
    }
}

/// The producer side of replay: a 202 stored after the first call comes back byte for byte,
/// `Retry-After` included, marked as a replay; a reused key with another payload and a key in
/// flight are refused with their own problems, which the classifier reads back.
#[cfg(feature = "replay")]
#[tokio::test]
async fn a_stored_answer_replays_as_it_was_and_refusals_are_key_problems() {
    use agent_tool_result::guarantee::Answer;
    use agent_tool_result::guarantee::{Refusal, RefusalKind};
    use agent_tool_result::http::{RestOutcome, classify};
    use agent_tool_result::replay::{
        Begin, Completion, Fingerprint, IdempotencyKey, Ledger, MemoryLedger, Scope, StoredAnswer,
    };

    let ledger = MemoryLedger::new();
    let scope = Scope::principal("acct_1");
    let key = IdempotencyKey::from_header("\"batch-9\"").unwrap();
    let print = Fingerprint::of("send_campaign_batch", "acct_1", &json!({ "batch": 9 }));
    let Begin::Fresh(lease) = ledger.begin(&scope, &key, print, "").await.unwrap() else {
        panic!("fresh");
    };
    let in_flight = ledger.begin(&scope, &key, print, "").await.unwrap();
    assert_eq!(
        in_flight.refusal().map(|r| r.kind()),
        Some(RefusalKind::KeyInFlight)
    );

    let held = held();
    let stored = StoredAnswer::of(&Answer::from(held.clone())).unwrap();
    let recorded = ledger.complete(&lease, &stored).await.unwrap();
    assert_eq!(recorded, Completion::Recorded);
    let Begin::Replay(again) = ledger.begin(&scope, &key, print, "").await.unwrap() else {
        panic!("the same request replays");
    };
    assert_eq!(again, stored);
    assert_eq!(again.answer().unwrap(), Answer::from(held));

    let other = Fingerprint::of("send_campaign_batch", "acct_1", &json!({ "batch": 10 }));
    let mismatch = ledger.begin(&scope, &key, other, "").await.unwrap();
    assert_eq!(
        mismatch.refusal().map(|r| r.kind()),
        Some(RefusalKind::KeyMismatch)
    );
    // Every refusal reads back whole: kind, detail and retry time (409 Retry-After included).
    for kind in RefusalKind::ALL {
        let refusal = Refusal::new(kind, "detail")
            .with_retry_at(retry_at())
            .unwrap();
        let response = RestProfile::default().refusal_response(&refusal);
        assert_eq!(response.status(), kind.status());
        assert_eq!(
            response.headers()["retry-after"],
            "Tue, 01 Dec 2026 09:00:00 GMT"
        );
        assert_eq!(
            classify(&response),
            RestOutcome::Refused {
                status: response.status(),
                refusal
            }
        );
    }
    // The header: absent, repeated, unquoted, or a valid sf-string.
    let mut headers = http::HeaderMap::new();
    let missing = IdempotencyKey::from_headers(&headers).unwrap_err();
    assert_eq!(missing.refusal().kind(), RefusalKind::KeyMissing);
    headers.append("idempotency-key", "batch-9".parse().unwrap());
    assert_eq!(
        IdempotencyKey::from_headers(&headers)
            .unwrap_err()
            .refusal()
            .kind(),
        RefusalKind::KeyInvalid
    );
    headers.insert("idempotency-key", "\"batch-9\"".parse().unwrap());
    assert_eq!(IdempotencyKey::from_headers(&headers).unwrap(), key);
    headers.append("idempotency-key", "\"batch-10\"".parse().unwrap());
    assert_eq!(
        IdempotencyKey::from_headers(&headers)
            .unwrap_err()
            .refusal()
            .kind(),
        RefusalKind::KeyInvalid
    );
    // A mismatch is a 422 like a policy deny, but never read as one.
    let response =
        RestProfile::default().refusal_response(&Refusal::new(RefusalKind::KeyMismatch, "detail"));
    assert!(!matches!(
        classify(&response),
        RestOutcome::PolicyDenied { .. }
    ));
}

/// What the profile produces keeps it; the traps `classify` reads past are still breaches.
#[test]
fn profile_breaches_are_empty_for_the_profile_and_name_each_trap() {
    use agent_tool_result::guarantee::{Refusal, RefusalKind};
    use agent_tool_result::http::classify::{ProfileBreach, profile_breaches};
    use http::StatusCode;

    let profile = RestProfile::default();
    let results: [GuaranteeResult; 4] = [
        GuaranteeResult::committed()
            .with_impact(Impact::new().with_requested(1).with_committed(1))
            .unwrap(),
        GuaranteeResult::deferred(PolicyCode::CAMPAIGN_SEND_WINDOW)
            .with_impact(Impact::new())
            .and_then(|held| held.with_retry_at(retry_at()))
            .unwrap(),
        GuaranteeResult::denied(PolicyCode::CONTACT_POLICY)
            .with_retry_at(retry_at())
            .expect("a deny takes a retry time"),
        GuaranteeResult::unknown().with_next_tool("lookup_marketing_campaigns"),
    ];
    for result in &results {
        let response = profile.response(result).unwrap();
        let breaches = profile_breaches(response.status(), response.headers(), response.body());
        assert!(breaches.is_empty(), "{result:?}: {breaches:?}");
    }
    for kind in RefusalKind::ALL {
        let response = profile.refusal_response(&Refusal::new(kind, "detail"));
        let breaches = profile_breaches(response.status(), response.headers(), response.body());
        assert!(breaches.is_empty(), "{kind}: {breaches:?}");
    }

    // A deny sent as a 403: classify reads a deny, the profile says it is wrong twice.
    let deny = profile.response(&results[2]).unwrap();
    let breaches = profile_breaches(StatusCode::FORBIDDEN, deny.headers(), deny.body());
    assert_eq!(
        breaches,
        [
            ProfileBreach::ProblemStatus {
                member: 422,
                status: 403
            },
            ProfileBreach::DenyStatus { status: 403 },
        ]
    );
    // A key problem under another status.
    let in_flight = profile.refusal_response(&Refusal::new(RefusalKind::KeyInFlight, "detail"));
    let breaches = profile_breaches(
        StatusCode::BAD_REQUEST,
        in_flight.headers(),
        in_flight.body(),
    );
    assert!(breaches.contains(&ProfileBreach::RefusalStatus {
        kind: RefusalKind::KeyInFlight,
        status: 400
    }));
    // A 202 with Location is not the profile's.
    let mut held = profile.response(&results[1]).unwrap();
    held.headers_mut()
        .insert("location", "/tasks/1".parse().unwrap());
    assert!(matches!(
        profile_breaches(held.status(), held.headers(), held.body()).as_slice(),
        [ProfileBreach::NotContract(_)]
    ));
}

/// Nothing a tool puts in its result is lost on the way: a field named like a problem member
/// cannot be built (it could not ride in a 422), and every member of a 2xx body reaches the
/// classified result, whatever its name.
#[test]
fn no_member_is_lost_between_the_result_and_its_rest_read_back() {
    use agent_tool_result::http::classify::classify_parts;
    use agent_tool_result::http::{RestOutcome, classify};
    use http::{HeaderMap, StatusCode};

    for name in ["type", "title", "status", "detail", "instance"] {
        let refused = GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT)
            .with_fields(json!({ name: "x" }))
            .unwrap_err();
        assert!(refused.to_string().contains(name), "{refused}");
        assert!(
            GuaranteeResult::committed()
                .with_impact(Impact::new())
                .unwrap()
                .with_fields(json!({ name: "x" }))
                .is_err(),
            "{name}"
        );
    }
    // Each answer, its tool fields read back whole over REST.
    let fields = json!({ "campaignId": "cmp_1", "ok": false, "note": { "type": "nested" } });
    let results = [
        GuaranteeResult::committed()
            .with_impact(Impact::new().with_requested(1).with_committed(1))
            .unwrap(),
        GuaranteeResult::deferred(PolicyCode::CAMPAIGN_HOLD)
            .with_impact(Impact::new())
            .and_then(|held| held.with_retry_at(retry_at()))
            .unwrap(),
        GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT),
        GuaranteeResult::unknown(),
    ];
    for result in results {
        let result = result.with_fields(fields.clone()).unwrap();
        let response = RestProfile::default().response(&result).unwrap();
        let read = match classify(&response) {
            RestOutcome::Settled(read)
            | RestOutcome::Deferred { result: read, .. }
            | RestOutcome::PolicyDenied { result: read, .. } => read,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            read.fields().cloned().map(Value::Object),
            Some(fields.clone())
        );
    }
    // Another producer's 200 with a member named `status` is no guarantee result: the same
    // answer as a deny could not be sent, so the reader refuses it as the builder does.
    let mut headers = HeaderMap::new();
    headers.insert("content-type", "application/json".parse().unwrap());
    let body = br#"{"schemaVersion":1,"settlement":{"state":"committed"},"policy":{"decision":"allow"},"status":"queued"}"#;
    let RestOutcome::NotContract { why } = classify_parts(StatusCode::OK, &headers, body) else {
        panic!("not a guarantee result")
    };
    assert!(why.contains("`status`"), "{why}");
}

/// A producer's own problem types, refusals included, classify as it publishes them; the
/// crate's defaults then do not.
#[test]
fn a_producers_own_problem_types_classify() {
    use agent_tool_result::guarantee::{Refusal, RefusalKind};
    use agent_tool_result::http::RestOutcome;
    use agent_tool_result::http::classify::classify_with;

    let types = ProblemTypes::default()
        .with_policy_deny("https://api.example/problems/denied")
        .unwrap()
        .with_refusal(
            RefusalKind::KeyInFlight,
            "https://api.example/problems/busy",
        )
        .unwrap();
    let profile = RestProfile::default().with_problem_types(types.clone());
    let busy = profile.refusal_response(&Refusal::new(RefusalKind::KeyInFlight, "wait"));
    let body: Value = serde_json::from_slice(busy.body()).unwrap();
    assert_eq!(body["type"], "https://api.example/problems/busy");
    let (parts, bytes) = busy.into_parts();
    assert!(matches!(
        classify_with(&types, parts.status, &parts.headers, &bytes),
        RestOutcome::Refused { refusal, .. } if refusal.kind() == RefusalKind::KeyInFlight
    ));
    // Without the producer's types it is only a problem of some type: a fault, no refusal.
    assert!(matches!(
        agent_tool_result::http::classify::classify_parts(parts.status, &parts.headers, &bytes),
        RestOutcome::Fault { .. }
    ));
    let denied = profile
        .response(&GuaranteeResult::<Value>::denied(
            PolicyCode::CONTACT_OPTED_OUT,
        ))
        .unwrap();
    let (parts, bytes) = denied.into_parts();
    assert!(matches!(
        classify_with(&types, parts.status, &parts.headers, &bytes),
        RestOutcome::PolicyDenied { .. }
    ));
}

/// A `Retry-After` too far for RFC 3339 is read as the last instant it writes, so the
/// refusal an agent holds is one every reader takes back.
#[test]
fn a_far_retry_after_is_read_in_range() {
    use agent_tool_result::guarantee::Refusal;
    use agent_tool_result::http::RestOutcome;
    use agent_tool_result::http::classify::classify_parts;
    use http::{HeaderMap, StatusCode};

    let body = Refusal::unavailable("down").to_json();
    for far in [
        "99999999999999",
        "18446744073709551615",
        "1000000000000000000000000",
    ] {
        let mut headers = HeaderMap::new();
        headers.insert("content-type", "application/problem+json".parse().unwrap());
        headers.insert("retry-after", far.parse().unwrap());
        let RestOutcome::Refused { refusal, .. } =
            classify_parts(StatusCode::SERVICE_UNAVAILABLE, &headers, body.as_bytes())
        else {
            panic!("a refusal")
        };
        let wire = refusal.to_json();
        assert!(
            wire.contains("\"retryAt\":\"9999-12-31T23:59:59Z\""),
            "{wire}"
        );
        assert_eq!(Refusal::from_json(&wire).unwrap(), refusal);
    }
}

/// An envelope tool's answer over the HTTP façade (200, whatever `ok`) classifies as the
/// envelope it is; a 200 the one rule calls an envelope but that breaks the first contract is
/// outside the contract, with the envelope's own breach.
#[test]
fn an_envelope_over_the_facade_classifies_as_an_envelope() {
    use agent_tool_result::http::classify::classify_parts;
    use agent_tool_result::http::{RestOutcome, classify, envelope_response};
    use agent_tool_result::{Classified, Envelope, ToolError};

    let found: Envelope = Envelope::success(json!({ "messageId": "msg_1", "sent": true }));
    let missing: Envelope = Envelope::failure(ToolError::new(
        Classified::WINDOW_NOT_FOUND,
        "no window w_2",
    ));
    for envelope in [found, missing] {
        let response = envelope_response(&envelope).unwrap();
        let RestOutcome::Envelope(read) = classify(&response) else {
            panic!("{:?}", classify(&response))
        };
        assert_eq!(read, envelope);
    }
    let mut headers = http::HeaderMap::new();
    headers.insert("content-type", "application/json".parse().unwrap());
    for body in [
        &br#"{"ok":false}"#[..],
        br#"{"ok":false,"error":{"code":"Not Kebab","category":"timeout","detail":"d"}}"#,
        br#"{"ok":true,"result":[1]}"#,
    ] {
        let RestOutcome::NotContract { why } = classify_parts(http::StatusCode::OK, &headers, body)
        else {
            panic!("{}", String::from_utf8_lossy(body))
        };
        assert!(
            why.starts_with("an envelope that breaks the contract"),
            "{why}"
        );
    }
    // A guarantee result whose own field is `ok` is still a guarantee result.
    let body = br#"{"schemaVersion":1,"settlement":{"state":"committed"},"policy":{"decision":"allow"},"ok":true}"#;
    assert!(matches!(
        classify_parts(http::StatusCode::OK, &headers, body),
        RestOutcome::Settled(_)
    ));
}
