//! The REST profile as an OpenAPI 3.1 document (feature `openapi`): what a producer that
//! adopts the profile publishes, so that agents and SDK generators learn from its contract
//! that a deny is a 422 problem, a hold a 202 with `Retry-After` and no `Location`, and that a
//! guarantee call needs an `Idempotency-Key`.
//!
//! Every response is written from the tables the responses themselves are built from: the
//! statuses of [`RestProfile::status`](super::RestProfile::status), every
//! [`RefusalKind`] (its status, its problem type in the producer's [`ProblemTypes`], whether
//! it says when to call again), the policy deny's problem type, the closed sets of the
//! guarantee result, the key's syntax ([`IdempotencyKey`](crate::replay::IdempotencyKey)),
//! and the façade's [`Fault`](super::Fault)s. So the document cannot drift from what the
//! server sends.
//!
//! The document is plain OpenAPI 3.1 JSON rather than `utoipa` types: its schemas are the
//! crate's JSON Schema 2020-12 (which OpenAPI 3.1 takes as it is), it needs no dependency
//! beyond `schemars`, and a service that builds its own document with `utoipa` merges this
//! one's `components` (every response, parameter, header and schema is a named component,
//! referenced by `$ref`).
//!
//! The agent side reads the document back: [`ProblemTypes::from_openapi`] finds the
//! producer's own problem types by the `x-refusal-kind` and `x-policy-deny` members every
//! problem schema here carries, so a producer with other type URIs is classified from its
//! published contract.
//!
//! ```
//! use agent_tool_result::http::openapi::OpenApi;
//!
//! #[derive(schemars::JsonSchema)]
//! struct SmsArgs { to: String, body: String }
//! #[derive(schemars::JsonSchema)]
//! #[serde(rename_all = "camelCase")]
//! struct MessageRef { message_id: String }
//!
//! let document = OpenApi::new("campaigns", "1.0.0")
//!     .guarantee_tool::<SmsArgs, MessageRef>("/v1/tools/send_sms", "send_sms", "Sends one SMS.")
//!     .to_value();
//! let responses = &document["paths"]["/v1/tools/send_sms"]["post"]["responses"];
//! assert_eq!(responses["422"]["$ref"], "#/components/responses/Unprocessable");
//! assert!(responses["202"]["headers"]["Retry-After"].is_object());
//! assert!(responses["202"]["headers"].get("Location").is_none());
//! ```

use serde_json::{Value, json};

use super::header::{IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED};
use super::media::{APPLICATION_JSON, APPLICATION_PROBLEM_JSON};
use super::rest::ProblemTypes;
use crate::JsonObject;
use crate::guarantee::{ABOUT_BLANK, PolicyDecision, RefusalKind, SettlementState};

/// The OpenAPI version the document declares.
pub const OPENAPI_VERSION: &str = "3.1.0";

/// The member that names, on a problem schema, the refusal kind its type stands for.
pub const REFUSAL_KIND_MEMBER: &str = "x-refusal-kind";

/// The member that marks, on a problem schema, the policy deny's.
pub const POLICY_DENY_MEMBER: &str = "x-policy-deny";

/// The name of the bearer security scheme.
const BEARER: &str = "bearer";

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

/// An OpenAPI 3.1 document of a producer's guarantee tools (and façade tools): see the
/// [module](self).
#[derive(Clone, Debug)]
pub struct OpenApi {
    info: JsonObject,
    paths: JsonObject,
    schemas: JsonObject,
    types: ProblemTypes,
}

impl OpenApi {
    /// A document titled `title` at `version`, answering with the default problem types.
    #[must_use]
    pub fn new(title: &str, version: &str) -> Self {
        let mut info = JsonObject::new();
        info.insert("title".to_owned(), Value::from(title));
        info.insert("version".to_owned(), Value::from(version));
        OpenApi {
            info,
            paths: JsonObject::new(),
            schemas: JsonObject::new(),
            types: ProblemTypes::default(),
        }
    }

    /// The same document, describing the producer's own problem types (as its
    /// [`RestProfile`](super::RestProfile) answers with them).
    #[must_use]
    pub fn with_problem_types(mut self, types: ProblemTypes) -> Self {
        self.types = types;
        self
    }

    /// The same document, with a description of the API.
    #[must_use]
    pub fn with_description(mut self, description: &str) -> Self {
        self.info
            .insert("description".to_owned(), Value::from(description));
        self
    }

    /// Adds guarantee tool `name` at `POST path`: its body is `A`, its own result fields `F`,
    /// its key the required `Idempotency-Key` header, and its responses every one the profile
    /// defines (200, 202, 400, 401, 403, 409, 413, 414, 415, 422, 431, 503).
    #[must_use]
    pub fn guarantee_tool<A: schemars::JsonSchema, F: schemars::JsonSchema>(
        mut self,
        path: &str,
        name: &str,
        summary: &str,
    ) -> Self {
        let arguments = self.component::<A>(&format!("{name}.arguments"));
        let fields = self.fields::<F>(&format!("{name}.fields"));
        let result = |decisions: &[PolicyDecision]| {
            json!({
                "allOf": [
                    { "$ref": "#/components/schemas/GuaranteeResult" },
                    fields,
                    { "properties": { "policy": { "properties": {
                        "decision": { "enum": decisions.iter().map(|d| d.as_str()).collect::<Vec<_>>() }
                    } } } },
                ]
            })
        };
        let replayed = json!({ "$ref": "#/components/headers/Idempotent-Replayed" });
        let operation = json!({
            "operationId": name,
            "summary": summary,
            "parameters": [{ "$ref": "#/components/parameters/Idempotency-Key" }],
            "requestBody": {
                "required": true,
                "content": { APPLICATION_JSON: { "schema": arguments } },
            },
            "responses": {
                "200": {
                    "description": "Settled: allowed and committed, or unknown (look it up by id)",
                    "headers": { IDEMPOTENT_REPLAYED.as_str(): replayed },
                    "content": { APPLICATION_JSON: { "schema": result(&[PolicyDecision::Allow]) } },
                },
                "202": {
                    "description": "Deferred or held by policy: retry or look up after Retry-After; no Location",
                    "headers": {
                        "Retry-After": { "$ref": "#/components/headers/Retry-After" },
                        IDEMPOTENT_REPLAYED.as_str(): replayed,
                    },
                    "content": { APPLICATION_JSON: { "schema": result(&[PolicyDecision::Defer]) } },
                },
                "400": { "$ref": "#/components/responses/BadRequest" },
                "401": { "$ref": "#/components/responses/Unauthorized" },
                "403": { "$ref": "#/components/responses/Forbidden" },
                "409": { "$ref": "#/components/responses/KeyInFlight" },
                "413": { "$ref": "#/components/responses/PayloadTooLarge" },
                "414": { "$ref": "#/components/responses/UriTooLong" },
                "415": { "$ref": "#/components/responses/UnsupportedMediaType" },
                "422": { "$ref": "#/components/responses/Unprocessable" },
                "431": { "$ref": "#/components/responses/HeadersTooLarge" },
                "503": { "$ref": "#/components/responses/Unavailable" },
            },
        });
        self.insert(path, "post", operation);
        self
    }

    /// Adds envelope tool `name` of the HTTP façade at `POST path` (`/tools/{name}`, say): its
    /// body is `A`, and it answers 200 with the envelope of `T` whatever `ok`, or a fault.
    #[must_use]
    pub fn envelope_tool<A: schemars::JsonSchema, T: schemars::JsonSchema>(
        mut self,
        path: &str,
        name: &str,
        summary: &str,
    ) -> Self {
        let arguments = self.component::<A>(&format!("{name}.arguments"));
        let envelope = self.envelope::<T>(&format!("{name}.envelope"));
        let mut responses = envelope_responses(&envelope);
        responses.insert(
            "413".to_owned(),
            json!({ "$ref": "#/components/responses/PayloadTooLarge" }),
        );
        responses.insert(
            "415".to_owned(),
            json!({ "$ref": "#/components/responses/UnsupportedMediaType" }),
        );
        let operation = json!({
            "operationId": name,
            "summary": summary,
            "requestBody": {
                "required": true,
                "content": { APPLICATION_JSON: { "schema": arguments } },
            },
            "responses": responses,
        });
        self.insert(path, "post", operation);
        self
    }

    /// Adds envelope tool `name` read at `GET path`, whose `{parameters}` are path segments
    /// (`/v1/campaigns/{campaignId}`, say): it answers 200 with the envelope of `T` whatever
    /// `ok`, or a fault.
    #[must_use]
    pub fn envelope_lookup<T: schemars::JsonSchema>(
        mut self,
        path: &str,
        name: &str,
        summary: &str,
    ) -> Self {
        let envelope = self.envelope::<T>(&format!("{name}.envelope"));
        let parameters: Vec<Value> = path
            .split('/')
            .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
            .map(|name| {
                json!({
                    "name": name,
                    "in": "path",
                    "required": true,
                    "schema": { "type": "string", "minLength": 1 },
                })
            })
            .collect();
        let operation = json!({
            "operationId": name,
            "summary": summary,
            "parameters": parameters,
            "responses": envelope_responses(&envelope),
        });
        self.insert(path, "get", operation);
        self
    }

    fn insert(&mut self, path: &str, method: &str, operation: Value) {
        let item = self
            .paths
            .entry(path.to_owned())
            .or_insert_with(|| Value::Object(JsonObject::new()));
        if let Value::Object(item) = item {
            item.insert(method.to_owned(), operation);
        }
    }

    /// `T`'s JSON Schema as component `name`, and a reference to it.
    fn component<T: schemars::JsonSchema>(&mut self, name: &str) -> Value {
        let schema = crate::schema::result_schema::<T>();
        self.add_schema(name, schema)
    }

    /// A tool's own fields `F` as component `name`: none required, since a deny happens
    /// before the tool creates anything and an `unknown` may know no id.
    fn fields<F: schemars::JsonSchema>(&mut self, name: &str) -> Value {
        let mut schema = crate::schema::result_schema::<F>();
        if let Value::Object(object) = &mut schema {
            for key in ["required", "additionalProperties", "unevaluatedProperties"] {
                object.remove(key);
            }
        }
        self.add_schema(name, schema)
    }

    /// The compact envelope schema of `T` as component `name`.
    fn envelope<T: schemars::JsonSchema>(&mut self, name: &str) -> Value {
        let schema = Value::Object(crate::Envelope::<T>::output_schema());
        self.add_schema(name, schema)
    }

    fn add_schema(&mut self, name: &str, mut schema: Value) -> Value {
        let base = format!("#/components/schemas/{name}");
        if let Value::Object(object) = &mut schema {
            object.remove("$schema");
        }
        crate::schema::rebase_refs_to(&mut schema, &base);
        crate::schema::standard_formats_only(&mut schema);
        self.schemas.insert(name.to_owned(), schema);
        json!({ "$ref": base })
    }

    /// The document.
    #[must_use]
    pub fn to_value(&self) -> Value {
        let mut schemas = self.base_schemas();
        schemas.extend(self.schemas.clone());
        json!({
            "openapi": OPENAPI_VERSION,
            "info": self.info,
            "paths": self.paths,
            "components": {
                "securitySchemes": { BEARER: { "type": "http", "scheme": "bearer" } },
                "parameters": { "Idempotency-Key": key_parameter() },
                "headers": headers(),
                "responses": OpenApi::responses(),
                "schemas": schemas,
            },
            "security": [{ BEARER: [] }],
        })
    }

    /// The document as JSON text.
    #[must_use]
    pub fn to_json(&self) -> String {
        self.to_value().to_string()
    }

    /// The schemas every document has: the guarantee result, the problem, the deny, each
    /// refusal.
    fn base_schemas(&self) -> JsonObject {
        let mut schemas = JsonObject::new();
        schemas.insert("GuaranteeResult".to_owned(), guarantee_result());
        schemas.insert(
            "Problem".to_owned(),
            json!({
                "type": "object",
                "required": ["type", "title", "status"],
                "properties": {
                    "type": { "type": "string" },
                    "title": { "type": "string" },
                    "status": { "type": "integer", "minimum": 400, "maximum": 599 },
                    "detail": { "type": "string" },
                    "instance": { "type": "string" },
                },
            }),
        );
        // A fault of the transport or of authentication: a problem with no meaning beyond
        // its status.
        schemas.insert(
            "Fault".to_owned(),
            json!({
                "allOf": [
                    { "$ref": "#/components/schemas/Problem" },
                    { "properties": { "type": { "const": ABOUT_BLANK } } },
                ],
            }),
        );
        schemas.insert(
            "PolicyDeny".to_owned(),
            json!({
                POLICY_DENY_MEMBER: true,
                "allOf": [
                    { "$ref": "#/components/schemas/Problem" },
                    { "$ref": "#/components/schemas/GuaranteeResult" },
                    {
                        "properties": {
                            "type": { "const": self.types.policy_deny() },
                            "status": { "const": 422 },
                            "policy": { "properties": { "decision": { "const": PolicyDecision::Deny.as_str() } } },
                        },
                    },
                ],
            }),
        );
        for kind in RefusalKind::ALL {
            let mut properties = json!({
                "type": { "const": self.types.refusal(kind) },
                "status": { "const": kind.status() },
            });
            if matches!(kind, RefusalKind::KeyInFlight | RefusalKind::Unavailable)
                && let Value::Object(properties) = &mut properties
            {
                properties.insert(
                    "retryAt".to_owned(),
                    json!({ "type": "string", "format": "date-time" }),
                );
            }
            schemas.insert(
                refusal_schema_name(kind),
                json!({
                    REFUSAL_KIND_MEMBER: kind.as_str(),
                    "description": kind.next_step(),
                    "allOf": [{ "$ref": "#/components/schemas/Problem" }, { "properties": properties }],
                }),
            );
        }
        schemas
    }

    /// The responses shared by every operation, by name.
    fn responses() -> JsonObject {
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
}

/// The responses of an envelope tool: 200 with the envelope, whatever `ok`, and the faults.
fn envelope_responses(envelope: &Value) -> JsonObject {
    let mut responses = JsonObject::new();
    responses.insert(
        "200".to_owned(),
        json!({
            "description": "The tool's envelope, whatever its ok: the outcome is in the body",
            "content": { APPLICATION_JSON: { "schema": envelope } },
        }),
    );
    for (status, name) in [
        (400, "BadRequest"),
        (401, "Unauthorized"),
        (403, "Forbidden"),
        (404, "NotFound"),
        (414, "UriTooLong"),
        (431, "HeadersTooLarge"),
    ] {
        responses.insert(
            status.to_string(),
            json!({ "$ref": format!("#/components/responses/{name}") }),
        );
    }
    responses
}

fn refusal_schema_name(kind: RefusalKind) -> String {
    format!("Refusal.{}", kind.as_str())
}

/// The `Idempotency-Key` header: an sf-string (RFC 8941) of 1 to 255 printable ASCII
/// characters, a quote or backslash escaped.
fn key_parameter() -> Value {
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
fn headers() -> Value {
    json!({
        "Retry-After": {
            "description": "When to retry or look the operation up (an HTTP-date, or seconds): the same instant on every replay",
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
            "schemaVersion": { "const": crate::guarantee::SCHEMA_VERSION },
            "settlement": {
                "type": "object",
                "required": ["state"],
                "properties": { "state": { "enum": names(&states) } },
            },
            "policy": {
                "type": "object",
                "required": ["decision"],
                "properties": {
                    "decision": { "enum": names(&decisions) },
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

/// A document [`ProblemTypes::from_openapi`] cannot read the profile's problem types from.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not an OpenAPI document of the REST profile: {0}")]
pub struct NotAProfileDocument(String);

/// The `const` of a problem schema's `type` member, wherever its `allOf` puts it.
fn type_const(schema: &Value) -> Option<&str> {
    if let Some(uri) = schema
        .pointer("/properties/type/const")
        .and_then(Value::as_str)
    {
        return Some(uri);
    }
    schema.get("allOf")?.as_array()?.iter().find_map(type_const)
}

impl ProblemTypes {
    /// The problem types a producer declares in its OpenAPI document (as [`OpenApi`] writes
    /// it): each problem schema carrying [`REFUSAL_KIND_MEMBER`] or [`POLICY_DENY_MEMBER`]
    /// and a `type` const. A kind the document does not declare keeps its default type.
    ///
    /// ```
    /// use agent_tool_result::guarantee::RefusalKind;
    /// use agent_tool_result::http::rest::ProblemTypes;
    /// use agent_tool_result::http::openapi::OpenApi;
    ///
    /// let theirs = ProblemTypes::default()
    ///     .with_policy_deny("https://api.example/problems/denied")
    ///     .with_refusal(RefusalKind::KeyMismatch, "https://api.example/problems/key-reused");
    /// let document = OpenApi::new("theirs", "1").with_problem_types(theirs.clone()).to_value();
    /// assert_eq!(ProblemTypes::from_openapi(&document)?, theirs);
    /// # Ok::<(), agent_tool_result::http::openapi::NotAProfileDocument>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`NotAProfileDocument`] when the document has no `components.schemas`, declares no
    /// problem type of the profile, names a refusal kind there is not, or gives one no type.
    pub fn from_openapi(document: &Value) -> Result<ProblemTypes, NotAProfileDocument> {
        let schemas = document
            .pointer("/components/schemas")
            .and_then(Value::as_object)
            .ok_or_else(|| NotAProfileDocument("it has no components.schemas".to_owned()))?;
        let mut types = ProblemTypes::default();
        let mut declared = 0;
        for (name, schema) in schemas {
            let deny = schema.get(POLICY_DENY_MEMBER) == Some(&Value::Bool(true));
            let kind = schema.get(REFUSAL_KIND_MEMBER);
            if !deny && kind.is_none() {
                continue;
            }
            let uri = type_const(schema).ok_or_else(|| {
                NotAProfileDocument(format!("schema `{name}` gives its problem no type const"))
            })?;
            if deny {
                types = types.with_policy_deny(uri);
            }
            if let Some(kind) = kind {
                let kind: RefusalKind = kind.as_str().unwrap_or_default().parse().map_err(
                    |err: crate::guarantee::UnknownRefusalKind| {
                        NotAProfileDocument(format!("schema `{name}`: {err}"))
                    },
                )?;
                types = types.with_refusal(kind, uri);
            }
            declared += 1;
        }
        if declared == 0 {
            return Err(NotAProfileDocument(format!(
                "no schema carries {REFUSAL_KIND_MEMBER} or {POLICY_DENY_MEMBER}"
            )));
        }
        Ok(types)
    }
}
