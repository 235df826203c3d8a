//! The REST profile for real: an axum server on 127.0.0.1 (an ephemeral port) answering
//! guarantee tools through the profile, the façade's faults and a memory ledger, and a real
//! HTTP client whose responses `classify` reads back. Sends are counted, so a replay that sent
//! again would show.
#![cfg(all(feature = "axum", feature = "replay"))]

use crate::server;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agent_tool_result::guarantee::{Answer, GuaranteeResult, Impact, PolicyCode};
use agent_tool_result::guarantee::{Refusal, RefusalKind};
use agent_tool_result::http::auth::Credentials;
use agent_tool_result::http::classify::profile_breaches;
use agent_tool_result::http::header::IDEMPOTENT_REPLAYED;
use agent_tool_result::http::{Fault, RestOutcome, classify, credentials};
use agent_tool_result::replay::{Call, IdempotencyKey, MemoryLedger, Sequence};
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use server::Server;

struct App {
    sequence: Sequence<MemoryLedger>,
    sends: AtomicUsize,
}

fn retry_at() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_796_115_600)
}

/// One guarantee tool call: auth, key, ledger, then the tool, answered through the profile.
async fn call(
    State(app): State<Arc<App>>,
    Path(tool): Path<String>,
    headers: http::HeaderMap,
    key: Result<IdempotencyKey, Refusal>,
    body: Bytes,
) -> Response {
    let principal = match credentials(&headers) {
        Credentials::Bearer("good") => "acct_1",
        Credentials::Bearer("narrow") => {
            return Fault::insufficient_scope("campaigns:send").into_response();
        }
        Credentials::Bearer(_) => {
            return Fault::invalid_token("campaigns", "expired").into_response();
        }
        _ => return Fault::unauthenticated("campaigns").into_response(),
    };
    // The key's extractor ran already; its refusal is answered after the credentials.
    let key = match key {
        Ok(key) => key,
        Err(refusal) => return refusal.into_response(),
    };
    let Ok(arguments) = serde_json::from_slice::<Value>(&body) else {
        return Fault::malformed("the body is not JSON").into_response();
    };
    // The library's sequence does the rest: begin, replay or refuse, run, complete.
    let call = Call::of(&tool, principal, key, &arguments);
    app.sequence
        .run(call, |_| async {
            let answer: Answer = match tool.as_str() {
                "send_sms" if arguments["contact"] == "opted-out" => {
                    GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT).into()
                }
                "send_sms" => {
                    app.sends.fetch_add(1, Ordering::SeqCst);
                    GuaranteeResult::committed()
                        .with_impact(Impact::new().with_requested(1).with_committed(1))
                        .unwrap()
                        .into()
                }
                _ => {
                    app.sends.fetch_add(40, Ordering::SeqCst);
                    GuaranteeResult::deferred(PolicyCode::CAMPAIGN_SEND_WINDOW)
                        .with_impact(
                            Impact::new()
                                .with_requested(100)
                                .with_committed(40)
                                .with_deferred(60),
                        )
                        .and_then(|held| held.with_retry_at(retry_at()))
                        .unwrap()
                        .with_next_tool("lookup_marketing_campaigns")
                        .into()
                }
            };
            answer
        })
        .await
        .into_response()
}

/// The service on an ephemeral loopback port, with its send counter.
struct Service {
    server: Server,
    app: Arc<App>,
}

impl Service {
    fn start() -> Self {
        let app = Arc::new(App {
            sequence: Sequence::new(MemoryLedger::new()),
            sends: AtomicUsize::new(0),
        });
        let router = axum::Router::new()
            .route("/tools/{name}", axum::routing::post(call))
            .with_state(Arc::clone(&app));
        Service {
            server: Server::start(router),
            app,
        }
    }

    /// Posts a call and returns the response as it came over the wire.
    fn post(
        &self,
        tool: &str,
        token: Option<&str>,
        key: Option<&str>,
        body: &Value,
    ) -> http::Response<Vec<u8>> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let mut request = http::Request::post(format!("{}/tools/{tool}", self.server.base))
            .header("content-type", "application/json");
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        if let Some(key) = key {
            request = request.header("idempotency-key", key);
        }
        let request = request.body(serde_json::to_vec(body).unwrap()).unwrap();
        let response = agent.run(request).unwrap();
        let (parts, mut body) = response.into_parts();
        let bytes = body.read_to_vec().unwrap();
        http::Response::from_parts(parts, bytes)
    }
}

/// Tool, token, `Idempotency-Key` header, arguments, expected status.
type Case = (
    &'static str,
    Option<&'static str>,
    Option<&'static str>,
    Value,
    u16,
);

#[test]
fn each_outcome_over_the_wire_is_classified_and_keeps_the_profile() {
    let server = Service::start();
    let batch = json!({ "campaignId": "cmp_7f3a", "recipients": 100 });
    let cases: [Case; 8] = [
        (
            "send_sms",
            Some("good"),
            Some("\"sms-1\""),
            json!({ "contact": "c1" }),
            200,
        ),
        (
            "send_campaign_batch",
            Some("good"),
            Some("\"batch-1\""),
            batch.clone(),
            202,
        ),
        (
            "send_sms",
            Some("good"),
            Some("\"sms-2\""),
            json!({ "contact": "opted-out" }),
            422,
        ),
        ("send_sms", None, Some("\"sms-3\""), json!({}), 401),
        ("send_sms", Some("stale"), Some("\"sms-3\""), json!({}), 401),
        (
            "send_sms",
            Some("narrow"),
            Some("\"sms-3\""),
            json!({}),
            403,
        ),
        ("send_sms", Some("good"), None, json!({}), 400),
        ("send_sms", Some("good"), Some("unquoted"), json!({}), 400),
    ];
    for (tool, token, key, body, status) in cases {
        let response = server.post(tool, token, key, &body);
        assert_eq!(response.status(), status, "{tool} {token:?} {key:?}");
        let breaches = profile_breaches(response.status(), response.headers(), response.body());
        assert!(breaches.is_empty(), "{status}: {breaches:?}");
        let outcome = classify(&response);
        let headers = response.headers();
        match status {
            200 => assert!(matches!(outcome, RestOutcome::Settled(_)), "{outcome:?}"),
            202 => {
                assert!(headers.get("location").is_none());
                assert_eq!(headers["retry-after"], "Tue, 01 Dec 2026 09:00:00 GMT");
                assert!(
                    matches!(outcome, RestOutcome::Deferred { retry_at: Some(at), .. } if at == retry_at()),
                    "{outcome:?}"
                );
            }
            422 => {
                assert_eq!(headers["content-type"], "application/problem+json");
                assert!(
                    headers.get("retry-after").is_none(),
                    "no retryAt, no Retry-After"
                );
                assert!(
                    matches!(outcome, RestOutcome::PolicyDenied { .. }),
                    "{outcome:?}"
                );
            }
            401 => {
                assert!(headers.get("www-authenticate").is_some());
                assert!(
                    matches!(outcome, RestOutcome::Unauthorized { .. }),
                    "{outcome:?}"
                );
            }
            403 => assert_eq!(
                outcome,
                RestOutcome::InsufficientScope {
                    scopes: vec!["campaigns:send".to_owned()]
                }
            ),
            400 => assert!(
                matches!(&outcome, RestOutcome::Refused { refusal, .. } if refusal.kind().is_key_problem()),
                "{outcome:?}"
            ),
            _ => unreachable!(),
        }
    }
    assert_eq!(server.app.sends.load(Ordering::SeqCst), 41);
}

#[test]
fn the_same_key_replays_the_first_bytes_and_sends_nothing_again() {
    let server = Service::start();
    let batch = json!({ "campaignId": "cmp_7f3a", "recipients": 100 });
    let first = server.post("send_campaign_batch", Some("good"), Some("\"b-7\""), &batch);
    assert_eq!(first.status(), 202);
    let sent = server.app.sends.load(Ordering::SeqCst);
    // Key order does not make another request.
    let reordered = json!({ "recipients": 100, "campaignId": "cmp_7f3a" });
    let again = server.post(
        "send_campaign_batch",
        Some("good"),
        Some("\"b-7\""),
        &reordered,
    );
    assert_eq!(again.status(), first.status());
    assert_eq!(again.body(), first.body());
    assert_eq!(
        again.headers()["retry-after"],
        first.headers()["retry-after"]
    );
    assert_eq!(again.headers()[IDEMPOTENT_REPLAYED], "true");
    assert_eq!(
        server.app.sends.load(Ordering::SeqCst),
        sent,
        "a replay sends nothing"
    );

    let other = json!({ "campaignId": "cmp_7f3a", "recipients": 99 });
    let mismatch = server.post("send_campaign_batch", Some("good"), Some("\"b-7\""), &other);
    assert_eq!(mismatch.status(), 422);
    assert!(matches!(
        classify(&mismatch),
        RestOutcome::Refused { refusal, .. } if refusal.kind() == RefusalKind::KeyMismatch
    ));
    assert_eq!(server.app.sends.load(Ordering::SeqCst), sent);
}

/// Two clients race with one key: the tool runs once; the other gets the replay or a 409.
#[test]
fn concurrent_requests_with_one_key_execute_once() {
    let server = Arc::new(Service::start());
    for round in 0..20 {
        let key = format!("\"race-{round}\"");
        let replies: Vec<http::Response<Vec<u8>>> = thread::scope(|scope| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    let (server, key) = (&server, &key);
                    scope.spawn(move || {
                        server.post(
                            "send_sms",
                            Some("good"),
                            Some(key),
                            &json!({ "contact": "c" }),
                        )
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for reply in &replies {
            let replayed = reply.headers().contains_key(IDEMPOTENT_REPLAYED);
            match reply.status().as_u16() {
                200 => {}
                409 => assert!(matches!(
                    classify(reply),
                    RestOutcome::Refused { refusal, .. } if refusal.kind() == RefusalKind::KeyInFlight
                )),
                other => panic!("{other} {replayed}"),
            }
        }
        let fresh = replies
            .iter()
            .filter(|r| r.status() == 200 && !r.headers().contains_key(IDEMPOTENT_REPLAYED))
            .count();
        assert_eq!(fresh, 1, "round {round}: exactly one execution");
    }
    assert_eq!(server.app.sends.load(Ordering::SeqCst), 20);
}

/// The key as an axum extractor: a handler that takes it runs only with one valid
/// `Idempotency-Key`; without one, or with a malformed or repeated one, the request is refused
/// with the key's problem, which the classifier reads back.
#[test]
fn the_key_extractor_refuses_before_the_handler_runs() {
    let ran = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&ran);
    let router = axum::Router::new().route(
        "/tools/send_sms",
        axum::routing::post(move |key: IdempotencyKey| async move {
            counted.fetch_add(1, Ordering::SeqCst);
            key.as_str().to_owned()
        }),
    );
    let server = Server::start(router);
    let send = |keys: &[&str]| {
        let headers: Vec<_> = keys.iter().map(|key| ("idempotency-key", *key)).collect();
        server.request("POST", "/tools/send_sms", &headers, &[])
    };
    let cases: [(&[&str], RefusalKind); 4] = [
        (&[], RefusalKind::KeyMissing),
        (&["no-quotes"], RefusalKind::KeyInvalid),
        (&["\"\""], RefusalKind::KeyInvalid),
        (&["\"a\"", "\"b\""], RefusalKind::KeyInvalid),
    ];
    for (keys, kind) in cases {
        let response = send(keys);
        assert_eq!(response.status(), 400, "{keys:?}");
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json"
        );
        match classify(&response) {
            RestOutcome::Refused { refusal, .. } => assert_eq!(refusal.kind(), kind, "{keys:?}"),
            other => panic!("{keys:?}: {other:?}"),
        }
    }
    assert_eq!(
        ran.load(Ordering::SeqCst),
        0,
        "no refused request reached the handler"
    );
    let accepted = send(&["\"batch-7\""]);
    assert_eq!(
        (accepted.status().as_u16(), accepted.body().as_slice()),
        (200, &b"batch-7"[..])
    );
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}
