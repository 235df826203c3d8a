//! The components every document has: the guarantee result, the problem and fault schemas,
//! the deny's and each refusal's problem, the shared responses, the key parameter and the
//! response headers, each from the table the responses are built from.

use serde_json::{Value, json};

use super::super::header::IDEMPOTENCY_KEY;
use super::super::media::APPLICATION_PROBLEM_JSON;
use super::super::rest::ProblemTypes;
use crate::JsonObject;
use crate::category::RetryClass;
use crate::guarantee::{ABOUT_BLANK, PolicyDecision, RefusalKind, SettlementState};

/// The member that names, on a problem schema, the refusal kind its type stands for.
pub const REFUSAL_KIND_MEMBER: &str = "x-refusal-kind";

/// The member that marks, on a problem schema, the policy deny's.
pub const POLICY_DENY_MEMBER: &str = "x-policy-deny";

/// The name of the bearer security scheme.
pub(super) const BEARER: &str = "bearer";

/// The façade faults a call can meet before any tool: status, component name, description.
const FAULTS: &[(u16, &str, &str)] = &[
    (
        401,
        "Unauthorized",
        "No credentials, or a bearer token that was refused",
    ),
    (
        403,
        "Forbidden",
        "The token may not do this (a missing scope is named)",
    ),
    (404, "NotFound", "No tool, or nothing served, at this path"),
    (
        408,
        "RequestTimeout",
        "The body did not arrive in full within the time the service waits for it",
    ),
    (
        413,
        "PayloadTooLarge",
        "The body is larger than the service accepts",
    ),
    (
        414,
        "UriTooLong",
        "The request target is longer than the service reads",
    ),
    (
        415,
        "UnsupportedMediaType",
        "The body is not application/json",
    ),
    (
        431,
        "HeadersTooLarge",
        "The request's header fields are larger than the service reads",
    ),
];

/// An RFC 9457 problem's schema, whole (no `allOf`, so that a client generator models each
/// problem as one type): its type and status fixed when given, `extra` members beside them.
fn problem_schema(problem_type: Option<&str>, status: Option<u16>, extra: &JsonObject) -> Value {
    let mut type_member = json!({ "type": "string" });
    if let (Some(uri), Value::Object(member)) = (problem_type, &mut type_member) {
        member.insert("const".to_owned(), json!(uri));
    }
    let status_member = match status {
        Some(status) => json!({ "type": "integer", "const": status }),
        None => json!({ "type": "integer", "minimum": 400, "maximum": 599 }),
    };
    let mut properties = JsonObject::new();
    properties.insert("type".to_owned(), type_member);
    properties.insert("title".to_owned(), json!({ "type": "string" }));
    properties.insert("status".to_owned(), status_member);
    properties.insert("detail".to_owned(), json!({ "type": "string" }));
    properties.insert("instance".to_owned(), json!({ "type": "string" }));
    properties.extend(extra.clone());
    json!({
        "type": "object",
        "required": ["type", "title", "status"],
        "properties": properties,
    })
}

/// The schemas every document has: the guarantee result, the problem, the deny, each
/// refusal, each one whole.
pub(super) fn base_schemas(types: &ProblemTypes) -> JsonObject {
    let mut schemas = JsonObject::new();
    let result = guarantee_result();
    schemas.insert("GuaranteeResult".to_owned(), result.clone());
    schemas.insert(
        "Problem".to_owned(),
        problem_schema(None, None, &JsonObject::new()),
    );
    // A fault of the transport or of authentication: a problem with no meaning beyond
    // its status.
    schemas.insert(
        "Fault".to_owned(),
        problem_schema(Some(ABOUT_BLANK), None, &JsonObject::new()),
    );
    // The deny: the problem's members and the guarantee result's, its decision a deny.
    let mut members = result["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    if let Some(Value::Object(policy)) = members.get_mut("policy")
        && let Some(Value::Object(properties)) = policy.get_mut("properties")
    {
        properties.insert(
            "decision".to_owned(),
            json!({ "type": "string", "const": PolicyDecision::Deny.as_str() }),
        );
    }
    let mut deny = problem_schema(Some(types.policy_deny()), Some(422), &members);
    if let Value::Object(deny) = &mut deny {
        deny.insert(POLICY_DENY_MEMBER.to_owned(), json!(true));
        deny.insert(
            "required".to_owned(),
            json!([
                "type",
                "title",
                "status",
                "schemaVersion",
                "settlement",
                "policy"
            ]),
        );
    }
    schemas.insert("PolicyDeny".to_owned(), deny);
    for kind in RefusalKind::ALL {
        let mut extra = JsonObject::new();
        if kind.retry_class() == RetryClass::AfterWaiting {
            extra.insert(
                "retryAt".to_owned(),
                json!({ "type": "string", "format": "date-time" }),
            );
        }
        let mut schema = problem_schema(Some(types.refusal(kind)), Some(kind.status()), &extra);
        if let Value::Object(schema) = &mut schema {
            schema.insert(REFUSAL_KIND_MEMBER.to_owned(), json!(kind.as_str()));
            schema.insert("description".to_owned(), json!(kind.next_step()));
        }
        schemas.insert(refusal_schema_name(kind), schema);
    }
    schemas
}

/// The responses shared by every operation, by name.
pub(super) fn responses() -> JsonObject {
    let problem = |schemas: &[String]| {
        let any: Vec<Value> = schemas
            .iter()
            .map(|name| json!({ "$ref": format!("#/components/schemas/{name}") }))
            .collect();
        json!({ APPLICATION_PROBLEM_JSON: { "schema": { "anyOf": any } } })
    };
    let retry = json!({ "Retry-After": { "$ref": "#/components/headers/Retry-After" } });
    let mut responses = JsonObject::new();
    responses.insert(
        "BadRequest".to_owned(),
        json!({
            "description": "The key is missing or malformed, or the arguments do not fit: nothing ran",
            "content": problem(&[
                refusal_schema_name(RefusalKind::KeyMissing),
                refusal_schema_name(RefusalKind::KeyInvalid),
                refusal_schema_name(RefusalKind::InvalidArguments),
                "Fault".to_owned(),
            ]),
        }),
    );
    responses.insert(
        "KeyInFlight".to_owned(),
        json!({
            "description": RefusalKind::KeyInFlight.next_step(),
            "headers": retry,
            "content": problem(&[refusal_schema_name(RefusalKind::KeyInFlight)]),
        }),
    );
    responses.insert(
        "Unprocessable".to_owned(),
        json!({
            "description": "Denied by policy before any provider call (do not re-authenticate), or the key was used with another request",
            "content": problem(&["PolicyDeny".to_owned(), refusal_schema_name(RefusalKind::KeyMismatch)]),
        }),
    );
    responses.insert(
        "RateLimited".to_owned(),
        json!({
            "description": RefusalKind::RateLimited.next_step(),
            "headers": {
                "Retry-After": { "$ref": "#/components/headers/Retry-After" },
                "RateLimit": { "$ref": "#/components/headers/RateLimit" },
                "RateLimit-Policy": { "$ref": "#/components/headers/RateLimit-Policy" },
            },
            "content": problem(&[refusal_schema_name(RefusalKind::RateLimited)]),
        }),
    );
    responses.insert(
        "Unavailable".to_owned(),
        json!({
            "description": RefusalKind::Unavailable.next_step(),
            "headers": retry,
            "content": problem(&[refusal_schema_name(RefusalKind::Unavailable)]),
        }),
    );
    for (status, name, description) in FAULTS {
        let mut response = json!({
            "description": description,
            "content": problem(&["Fault".to_owned()]),
        });
        let challenge = match status {
            401 => Some(json!({ "$ref": "#/components/headers/WWW-Authenticate" })),
            // Only a missing scope is challenged.
            403 => Some(json!({
                "description": "Bearer error=\"insufficient_scope\" when a scope is missing",
                "schema": { "type": "string" },
            })),
            _ => None,
        };
        if let (Some(challenge), Value::Object(response)) = (challenge, &mut response) {
            response.insert(
                "headers".to_owned(),
                json!({ "WWW-Authenticate": challenge }),
            );
        }
        responses.insert((*name).to_owned(), response);
    }
    responses
}

fn refusal_schema_name(kind: RefusalKind) -> String {
    format!("Refusal.{}", kind.as_str())
}

/// The `Idempotency-Key` header: an sf-string (RFC 8941) of 1 to 255 printable ASCII
/// characters, a quote or backslash escaped.
pub(super) fn key_parameter() -> Value {
    let max = crate::replay::MAX_KEY_LEN;
    json!({
        "name": IDEMPOTENCY_KEY.as_str(),
        "in": "header",
        "required": true,
        "description": format!(
            "The command's idempotency key: a structured-field string (RFC 8941) of 1 to {max} \
             printable ASCII characters, quoted, as \"batch-7f3a\". A new key for a new command; \
             the same key to retry one (after a timeout or a 5xx)."
        ),
        "schema": {
            "type": "string",
            "pattern": format!(r#"^"(?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\["\\]){{1,{max}}}"$"#),
        },
    })
}

/// The response headers every operation names.
pub(super) fn headers() -> Value {
    json!({
        "Retry-After": {
            "description": "When to retry or look the operation up (an HTTP-date, or seconds): the same instant on every replay",
            "schema": { "type": "string" },
        },
        "RateLimit": {
            "description": "Where the caller stands in its quota (IETF RateLimit fields): \"policy\";r=REMAINING;t=SECONDS",
            "schema": { "type": "string" },
        },
        "RateLimit-Policy": {
            "description": "The caller's quota policy (IETF RateLimit fields): \"policy\";q=QUOTA;w=SECONDS",
            "schema": { "type": "string" },
        },
        "Idempotent-Replayed": {
            "description": "true on a replay of the key's first answer: nothing ran again",
            "schema": { "type": "string", "const": "true" },
        },
        "WWW-Authenticate": {
            "description": "The Bearer challenge (RFC 6750): the realm, and error=\"invalid_token\" for a refused token",
            "required": true,
            "schema": { "type": "string", "pattern": "^[Bb]earer" },
        },
    })
}

/// The guarantee result, its closed sets from the crate's own enums.
fn guarantee_result() -> Value {
    let names = |all: &[&str]| {
        all.iter()
            .map(|name| Value::from(*name))
            .collect::<Vec<_>>()
    };
    let states: Vec<&str> = SettlementState::ALL.iter().map(|s| s.as_str()).collect();
    let decisions: Vec<&str> = PolicyDecision::ALL.iter().map(|d| d.as_str()).collect();
    json!({
        "type": "object",
        "required": ["schemaVersion", "settlement", "policy"],
        "properties": {
            "schemaVersion": { "type": "integer", "const": crate::guarantee::SCHEMA_VERSION },
            "settlement": {
                "type": "object",
                "required": ["state"],
                "properties": { "state": { "type": "string", "enum": names(&states) } },
            },
            "policy": {
                "type": "object",
                "required": ["decision"],
                "properties": {
                    "decision": { "type": "string", "enum": names(&decisions) },
                    "code": { "type": "string" },
                    "retryAt": { "type": "string", "format": "date-time" },
                },
            },
            "impact": { "type": "object", "additionalProperties": { "type": "integer", "minimum": 0 } },
            "recovery": {
                "type": "object",
                "properties": { "suggestedNextTool": { "type": "string" } },
            },
        },
    })
}
