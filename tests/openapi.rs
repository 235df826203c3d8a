//! The REST profile's OpenAPI document against the responses the profile builds: every
//! outcome of a guarantee tool (each settlement and decision, each refusal, each fault) keeps
//! the document's status, content type, body schema and headers; a response that breaks the
//! profile does not; and an agent reads a producer's own problem types back from it.
#![cfg(feature = "openapi")]

#[path = "support/openapi.rs"]
mod conformance;

use std::time::{Duration, UNIX_EPOCH};

use agent_tool_result::guarantee::{GuaranteeResult, Impact, PolicyCode, Refusal, RefusalKind};
use agent_tool_result::http::openapi::OpenApi;
use agent_tool_result::http::rest::ProblemTypes;
use agent_tool_result::http::{Fault, RestOutcome, RestProfile};
use serde_json::{Value, json};

#[derive(schemars::JsonSchema)]
#[allow(dead_code, reason = "only its schema is read")]
struct SmsArgs {
    to: String,
    body: String,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct MessageRef {
    message_id: String,
}

const PATH: &str = "/v1/tools/send_sms";

fn document(types: ProblemTypes) -> Value {
    OpenApi::new("sms", "1.0.0")
        .with_problem_types(types)
        .guarantee_tool::<SmsArgs, MessageRef>(PATH, "send_sms", "Sends one SMS.")
        .envelope_lookup::<MessageRef>("/v1/messages/{messageId}", "lookup_sms", "A message.")
        .to_value()
}

fn named(id: &str) -> MessageRef {
    MessageRef {
        message_id: id.to_owned(),
    }
}

/// Every response the profile builds for a guarantee tool.
fn every_response(profile: &RestProfile) -> Vec<(&'static str, http::Response<Vec<u8>>)> {
    let at = UNIX_EPOCH + Duration::from_secs(1_796_115_600);
    let one = Impact::new().with_requested(1).with_committed(1);
    let mut responses = vec![
        (
            "committed",
            GuaranteeResult::committed()
                .with_impact(one)
                .unwrap()
                .with_fields(named("msg_1"))
                .unwrap(),
        ),
        (
            "unknown",
            GuaranteeResult::unknown()
                .with_next_tool("lookup_sms")
                .with_fields(named("msg_2"))
                .unwrap(),
        ),
        (
            "held",
            GuaranteeResult::deferred(PolicyCode::CAMPAIGN_SEND_WINDOW)
                .with_impact(
                    Impact::new()
                        .with_requested(2)
                        .with_committed(1)
                        .with_deferred(1),
                )
                .and_then(|held| held.with_retry_at(at))
                .unwrap()
                .with_fields(named("msg_3"))
                .unwrap(),
        ),
        (
            "denied",
            GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT)
                .with_retry_at(at)
                .unwrap()
                .with_fields(named("msg_4"))
                .unwrap(),
        ),
    ]
    .into_iter()
    .map(|(name, result)| (name, profile.response(&result).unwrap()))
    .collect::<Vec<_>>();
    for kind in RefusalKind::ALL {
        let mut refusal = Refusal::new(kind, "why");
        if matches!(kind, RefusalKind::KeyInFlight | RefusalKind::Unavailable) {
            refusal = refusal.with_retry_at(at).unwrap();
        }
        responses.push((kind.as_str(), profile.refusal_response(&refusal)));
    }
    for (name, fault) in [
        ("malformed", Fault::malformed("not JSON")),
        ("unauthenticated", Fault::unauthenticated("sms")),
        ("invalid-token", Fault::invalid_token("sms", "expired")),
        ("forbidden", Fault::insufficient_scope("sms:send")),
        ("too-large", Fault::too_large(1024)),
        (
            "unsupported",
            Fault::unsupported_media_type(Some("text/plain")),
        ),
        ("uri-too-long", Fault::UriTooLong { limit: 8192 }),
        ("headers-too-large", Fault::HeadersTooLarge { limit: 16384 }),
    ] {
        responses.push((name, fault.into_http_response()));
    }
    responses
}

#[test]
fn every_response_the_profile_builds_keeps_the_document() {
    for profile in [
        RestProfile::default(),
        RestProfile::default().with_problem_types(
            ProblemTypes::default()
                .with_policy_deny("https://api.example/problems/denied")
                .unwrap()
                .with_refusal(
                    RefusalKind::KeyMismatch,
                    "https://api.example/problems/reused",
                )
                .unwrap(),
        ),
    ] {
        let document = document(profile.problem_types().clone());
        let responses = every_response(&profile);
        assert_eq!(responses.len(), 4 + RefusalKind::ALL.len() + 8);
        for (name, response) in &responses {
            assert_eq!(
                conformance::conforms(&document, "POST", PATH, response),
                Ok(true),
                "{name}"
            );
        }
    }
}

#[test]
fn a_response_that_breaks_the_profile_breaks_the_document() {
    let document = document(ProblemTypes::default());
    let denied = RestProfile::default()
        .response(&GuaranteeResult::<serde_json::Value>::denied(
            PolicyCode::CONTACT_OPTED_OUT,
        ))
        .unwrap();
    // A deny answered 403, or as plain JSON, or a 422 with another producer's problem type.
    let mut forbidden = denied.clone();
    *forbidden.status_mut() = http::StatusCode::FORBIDDEN;
    let mut plain = denied.clone();
    plain
        .headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    let theirs = RestProfile::default()
        .with_problem_types(
            ProblemTypes::default()
                .with_policy_deny("https://api.example/problems/denied")
                .unwrap(),
        )
        .response(&GuaranteeResult::<serde_json::Value>::denied(
            PolicyCode::CONTACT_OPTED_OUT,
        ))
        .unwrap();
    // A 401 without its challenge; a 202 whose result is an allow.
    let mut unchallenged = Fault::unauthenticated("sms").into_http_response();
    unchallenged.headers_mut().remove("www-authenticate");
    let mut allowed_202 = RestProfile::default()
        .response(&GuaranteeResult::<serde_json::Value>::committed())
        .unwrap();
    *allowed_202.status_mut() = http::StatusCode::ACCEPTED;
    for (name, response) in [
        ("403 deny", forbidden),
        ("json deny", plain),
        ("their deny type", theirs),
        ("401 without a challenge", unchallenged),
        ("202 allow", allowed_202),
    ] {
        assert!(
            conformance::conforms(&document, "POST", PATH, &response).is_err(),
            "{name}"
        );
    }
}

#[test]
fn an_agent_classifies_a_producer_from_its_published_types() {
    let theirs = ProblemTypes::default()
        .with_policy_deny("https://api.example/problems/denied")
        .unwrap()
        .with_refusal(
            RefusalKind::KeyMismatch,
            "https://api.example/problems/reused",
        )
        .unwrap()
        .with_refusal(
            RefusalKind::KeyInFlight,
            "https://api.example/problems/busy",
        )
        .unwrap();
    let published = document(theirs.clone());
    let read = ProblemTypes::from_openapi(&published).unwrap();
    assert_eq!(read, theirs);
    let profile = RestProfile::default().with_problem_types(theirs);
    let deny = profile
        .response(&GuaranteeResult::<serde_json::Value>::denied(
            PolicyCode::CONTACT_OPTED_OUT,
        ))
        .unwrap();
    let outcome = |types: &ProblemTypes, response: &http::Response<Vec<u8>>| {
        agent_tool_result::http::classify::classify_with(
            types,
            response.status(),
            response.headers(),
            response.body(),
        )
    };
    assert!(matches!(
        outcome(&read, &deny),
        RestOutcome::PolicyDenied { .. }
    ));
    assert!(!matches!(
        outcome(&ProblemTypes::default(), &deny),
        RestOutcome::PolicyDenied { .. }
    ));
    let reused = profile.refusal_response(&Refusal::new(RefusalKind::KeyMismatch, "reused"));
    let RestOutcome::Refused { refusal, .. } = outcome(&read, &reused) else {
        panic!("a refusal");
    };
    assert_eq!(refusal.kind(), RefusalKind::KeyMismatch);

    // Documents that say nothing of the profile are refused, naming why.
    for (document, why) in [
        (json!({ "openapi": "3.1.0" }), "components.schemas"),
        (
            json!({ "components": { "schemas": { "A": { "type": "object" } } } }),
            "x-refusal-kind",
        ),
        (
            json!({ "components": { "schemas": { "A": { "x-refusal-kind": "key-lost", "properties": { "type": { "const": "u" } } } } } }),
            "key-lost",
        ),
        (
            json!({ "components": { "schemas": { "A": { "x-policy-deny": true } } } }),
            "no type const",
        ),
    ] {
        let err = ProblemTypes::from_openapi(&document).unwrap_err();
        assert!(err.to_string().contains(why), "{err}");
    }
}

#[test]
fn the_document_is_openapi_3_1_with_every_status_and_the_key() {
    let document = document(ProblemTypes::default());
    assert_eq!(document["openapi"], "3.1.0");
    let operation = &document["paths"][PATH]["post"];
    let statuses: Vec<&String> = operation["responses"].as_object().unwrap().keys().collect();
    assert_eq!(
        statuses,
        [
            "200", "202", "400", "401", "403", "408", "409", "413", "414", "415", "422", "429",
            "431", "503"
        ]
    );
    let key = &document["components"]["parameters"]["Idempotency-Key"];
    assert_eq!(
        (&key["in"], &key["required"]),
        (&json!("header"), &json!(true))
    );
    let pattern = regex_lite(&key["schema"]["pattern"]);
    for (header, valid) in [
        ("\"batch-7\"", true),
        ("\"a \\\" quote\"", true),
        (&format!("\"{}\"", "k".repeat(255)), true),
        (&format!("\"{}\"", "k".repeat(256)), false),
        ("\"\"", false),
        ("batch-7", false),
        ("\"tab\there\"", false),
    ] {
        assert_eq!(
            pattern(header),
            valid,
            "{header}: {}",
            key["schema"]["pattern"]
        );
        let parsed = agent_tool_result::replay::IdempotencyKey::from_header(header).is_ok();
        assert_eq!(
            parsed, valid,
            "the document says what the key parser takes: {header}"
        );
    }
    assert_eq!(document["security"], json!([{ "bearer": [] }]));
    assert!(document["paths"][PATH]["post"]["responses"]["202"]["headers"]["Location"].is_null());
}

/// The header pattern as a matcher, through a JSON Schema validator (ECMA-262 regex).
fn regex_lite(pattern: &Value) -> impl Fn(&str) -> bool {
    let validator =
        jsonschema::draft202012::new(&json!({ "type": "string", "pattern": pattern })).unwrap();
    move |text| validator.is_valid(&json!(text))
}

/// The façade's envelope tool: 200 with the envelope whatever `ok`, and its faults.
#[test]
fn the_facades_envelope_tool_keeps_the_document() {
    use agent_tool_result::http::envelope_response;
    use agent_tool_result::{Classified, Envelope, ToolError};

    let document = OpenApi::new("facade", "1.0.0")
        .envelope_tool::<SmsArgs, MessageRef>("/tools/find", "find", "Finds a message.")
        .to_value();
    let found: Envelope<MessageRef> = Envelope::success(named("msg_9"));
    let missing: Envelope<MessageRef> =
        Envelope::failure(ToolError::new(Classified::ELEMENT_NOT_FOUND, "No message."));
    for (name, response) in [
        ("found", envelope_response(&found).unwrap()),
        ("missing", envelope_response(&missing).unwrap()),
        (
            "unknown tool",
            Fault::unknown_tool("find").into_http_response(),
        ),
        (
            "malformed",
            Fault::malformed("not JSON").into_http_response(),
        ),
        (
            "unauthenticated",
            Fault::unauthenticated("facade").into_http_response(),
        ),
        ("too large", Fault::too_large(1024).into_http_response()),
        (
            "unsupported",
            Fault::unsupported_media_type(None).into_http_response(),
        ),
    ] {
        assert_eq!(
            conformance::conforms(&document, "POST", "/tools/find", &response),
            Ok(true),
            "{name}"
        );
    }
    // A guarantee result is no envelope.
    let result = RestProfile::default()
        .response(&GuaranteeResult::<serde_json::Value>::committed())
        .unwrap();
    assert!(conformance::conforms(&document, "POST", "/tools/find", &result).is_err());
}

/// Every answer a problem type can name: the policy deny and each kind of refusal.
fn answers() -> Vec<Option<RefusalKind>> {
    std::iter::once(None)
        .chain(RefusalKind::ALL.into_iter().map(Some))
        .collect()
}

fn with_type(
    types: ProblemTypes,
    answer: Option<RefusalKind>,
    uri: &str,
) -> Result<ProblemTypes, String> {
    match answer {
        None => types.with_policy_deny(uri),
        Some(kind) => types.with_refusal(kind, uri),
    }
    .map_err(|err| err.to_string())
}

/// The schema of the published document that declares `answer`'s problem type, given `uri`.
fn retype(document: &mut Value, answer: Option<RefusalKind>, uri: &str) {
    let schemas = document["components"]["schemas"].as_object_mut().unwrap();
    let schema = schemas
        .values_mut()
        .find(|schema| match answer {
            None => schema.get("x-policy-deny") == Some(&json!(true)),
            Some(kind) => schema.get("x-refusal-kind") == Some(&json!(kind.as_str())),
        })
        .expect("the document declares every answer");
    assert!(set_type(schema, uri), "{schema}");
}

/// Sets a problem schema's `type` const, wherever the schema puts it.
fn set_type(schema: &mut Value, uri: &str) -> bool {
    if let Some(constant) = schema.pointer_mut("/properties/type/const") {
        *constant = json!(uri);
        return true;
    }
    schema
        .get_mut("allOf")
        .and_then(Value::as_array_mut)
        .is_some_and(|all| all.iter_mut().any(|each| set_type(each, uri)))
}

/// No set of problem types, built or read from a document, lets one type name two answers,
/// nor `about:blank` name an answer its status does not tell: every pair of the seven answers
/// sharing a type, and `about:blank` on each, is refused by the builder and by
/// `from_openapi` alike, with the reason; a document declaring an answer twice is refused too.
#[test]
fn no_problem_type_names_two_answers() {
    let shared = "https://api.example/problems/shared";
    let answers = answers();
    for (i, first) in answers.iter().enumerate() {
        for second in &answers[i + 1..] {
            let once = with_type(ProblemTypes::default(), *first, shared).unwrap();
            let err = with_type(once, *second, shared).unwrap_err();
            assert!(err.contains("could not tell"), "{err}");
            let mut published = document(ProblemTypes::default());
            retype(&mut published, *first, shared);
            retype(&mut published, *second, shared);
            let err = ProblemTypes::from_openapi(&published)
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(shared) && err.contains("could not tell"),
                "{err}"
            );
        }
        // A type another answer has by default is taken as well.
        for other in &answers {
            let taken = match other {
                None => agent_tool_result::guarantee::POLICY_DENY_TYPE,
                Some(kind) => kind.problem_type(),
            };
            if other == first || taken == "about:blank" {
                continue;
            }
            assert!(with_type(ProblemTypes::default(), *first, taken).is_err());
        }
        // about:blank is the status alone: only 400, 429 and 5xx refusals may have it.
        let by_status = matches!(
            first,
            Some(
                RefusalKind::InvalidArguments | RefusalKind::RateLimited | RefusalKind::Unavailable
            )
        );
        assert_eq!(
            with_type(ProblemTypes::default(), *first, "about:blank").is_ok(),
            by_status,
            "{first:?}"
        );
        let mut published = document(ProblemTypes::default());
        retype(&mut published, *first, "about:blank");
        assert_eq!(
            ProblemTypes::from_openapi(&published).is_ok(),
            by_status,
            "{first:?}"
        );
        assert!(with_type(ProblemTypes::default(), *first, "").is_err());
    }
    // One answer declared by two schemas.
    let mut published = document(ProblemTypes::default());
    let schemas = published["components"]["schemas"].as_object_mut().unwrap();
    let (_, mismatch) = schemas
        .iter()
        .find(|(_, s)| s.get("x-refusal-kind") == Some(&json!("key-mismatch")))
        .unwrap();
    let mut twin = mismatch.clone();
    assert!(set_type(&mut twin, "https://api.example/problems/reused"));
    schemas.insert("zz_twin".to_owned(), twin);
    let err = ProblemTypes::from_openapi(&published)
        .unwrap_err()
        .to_string();
    assert!(err.contains("second schema declares key-mismatch"), "{err}");
}

/// Every `$defs` in `value`, and every reference that is not to a whole component.
fn inner_references(value: &Value, at: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            for (key, inner) in object {
                if key == "$defs" || key == "definitions" {
                    out.push(format!("{at}/{key}"));
                }
                if key == "$ref" {
                    let reference = inner.as_str().unwrap_or_default();
                    let target = reference
                        .strip_prefix("#/components/schemas/")
                        .unwrap_or_default();
                    if !reference.starts_with("#/components/") || target.contains('/') {
                        out.push(format!("{at}: $ref {reference}"));
                    }
                }
                inner_references(inner, &format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, inner) in items.iter().enumerate() {
                inner_references(inner, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// What client generators need of the document: no reference into a component's inside (a
/// component's `$defs` are components of their own), and no problem schema that merges an
/// integer `status` with a `const` through `allOf`: each problem is one object schema.
#[test]
fn the_document_is_one_generators_model() {
    let published = document(ProblemTypes::default());
    let schemas = published["components"]["schemas"].as_object().unwrap();
    let mut found = Vec::new();
    inner_references(&published, "", &mut found);
    assert!(found.is_empty(), "{found:#?}");
    // Every reference names a component that is there.
    let text = published.to_string();
    for (at, _) in text.match_indices("\"#/components/schemas/") {
        let name = text[at + 22..].split('"').next().unwrap();
        assert!(schemas.contains_key(name), "no component {name}");
    }
    for (name, schema) in schemas {
        let is_problem = schema.get("x-refusal-kind").is_some()
            || schema.get("x-policy-deny").is_some()
            || ["Problem", "Fault"].contains(&name.as_str());
        if is_problem {
            assert!(schema.get("allOf").is_none(), "{name}: {schema}");
            assert_eq!(schema["type"], "object", "{name}");
            assert_eq!(schema["properties"]["status"]["type"], "integer", "{name}");
        }
    }
    // The lookup's envelope keeps its code and result as components beside it.
    assert!(
        schemas.contains_key("lookup_sms.envelope.code"),
        "{:?}",
        schemas.keys()
    );
}
