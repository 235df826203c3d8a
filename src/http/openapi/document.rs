//! [`OpenApi`]: the document builder, its operations and the components their types add.

use serde_json::{Value, json};

use super::super::header::IDEMPOTENT_REPLAYED;
use super::super::media::APPLICATION_JSON;
use super::super::rest::ProblemTypes;
use super::components::{self, BEARER};
use crate::JsonObject;
use crate::guarantee::PolicyDecision;

/// The OpenAPI version the document declares.
pub const OPENAPI_VERSION: &str = "3.1.0";

/// An OpenAPI 3.1 document of a producer's guarantee tools (and façade tools): see the
/// [module](super).
///
/// ```
/// use agent_tool_result::http::openapi::OpenApi;
///
/// #[derive(schemars::JsonSchema)]
/// struct SmsArgs {
///     to: String,
/// }
///
/// #[derive(schemars::JsonSchema)]
/// #[serde(rename_all = "camelCase")]
/// struct Sent {
///     message_id: String,
/// }
///
/// let document = OpenApi::new("Messages", "1.0.0")
///     .guarantee_tool::<SmsArgs, Sent>("/tools/send_sms", "send_sms", "Sends one SMS.")
///     .to_value();
/// let responses = &document["paths"]["/tools/send_sms"]["post"]["responses"];
/// assert!(responses["202"].is_object() && responses["422"].is_object());
/// ```
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
    /// [`RestProfile`](crate::http::RestProfile) answers with them).
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

    /// Adds [`GuaranteeTool`](crate::replay::GuaranteeTool) `T` at `POST path`, by its name and
    /// description, with its arguments and fields: see [`OpenApi::guarantee_tool`].
    #[must_use]
    pub fn tool<T>(self, path: &str) -> Self
    where
        T: crate::replay::GuaranteeTool,
        T::Arguments: schemars::JsonSchema,
        T::Fields: schemars::JsonSchema,
    {
        self.guarantee_tool::<T::Arguments, T::Fields>(path, T::NAME, T::DESCRIPTION)
    }

    /// Adds guarantee tool `name` at `POST path`: its body is `A`, its own result fields `F`,
    /// its key the required `Idempotency-Key` header, and its responses every one the profile
    /// defines (200, 202, 400, 401, 403, 408, 409, 413, 414, 415, 422, 429, 431, 503).
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
                "408": { "$ref": "#/components/responses/RequestTimeout" },
                "409": { "$ref": "#/components/responses/KeyInFlight" },
                "413": { "$ref": "#/components/responses/PayloadTooLarge" },
                "414": { "$ref": "#/components/responses/UriTooLong" },
                "415": { "$ref": "#/components/responses/UnsupportedMediaType" },
                "422": { "$ref": "#/components/responses/Unprocessable" },
                "429": { "$ref": "#/components/responses/RateLimited" },
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
            "408".to_owned(),
            json!({ "$ref": "#/components/responses/RequestTimeout" }),
        );
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

    /// Sets member `name` of the operation at `method path`, if there is one (a vendor
    /// extension, `x-...`).
    pub(crate) fn extend_operation(&mut self, path: &str, method: &str, name: &str, value: Value) {
        if let Some(Value::Object(operation)) = self
            .paths
            .get_mut(path)
            .and_then(|item| item.get_mut(method))
        {
            operation.insert(name.to_owned(), value);
        }
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

    /// Adds `schema` as component `name`, and returns a reference to it. Its `$defs` become
    /// components of their own (`{name}.{def}`), so that no reference points into another
    /// component (which client generators do not follow).
    fn add_schema(&mut self, name: &str, mut schema: Value) -> Value {
        let base = format!("#/components/schemas/{name}");
        if let Value::Object(object) = &mut schema {
            object.remove("$schema");
        }
        crate::schema::rebase_refs_to(&mut schema, &base);
        crate::schema::standard_formats_only(&mut schema);
        self.insert_hoisted(name, schema);
        json!({ "$ref": base })
    }

    /// Inserts component `name`, its references absolute, with its `$defs` (and
    /// `definitions`) hoisted beside it as `{name}.{def}`, theirs in turn.
    fn insert_hoisted(&mut self, name: &str, mut schema: Value) {
        let base = format!("#/components/schemas/{name}");
        let mut defs = JsonObject::new();
        if let Value::Object(object) = &mut schema {
            for key in ["$defs", "definitions"] {
                if let Some(Value::Object(found)) = object.remove(key) {
                    defs.extend(found);
                }
            }
        }
        let hoisted: Vec<String> = defs.keys().cloned().collect();
        hoist_refs(&mut schema, &base, &hoisted);
        for def in defs.values_mut() {
            hoist_refs(def, &base, &hoisted);
        }
        self.schemas.insert(name.to_owned(), schema);
        for (def, body) in defs {
            self.insert_hoisted(&format!("{name}.{def}"), body);
        }
    }

    /// The document.
    #[must_use]
    pub fn to_value(&self) -> Value {
        let mut schemas = components::base_schemas(&self.types);
        schemas.extend(self.schemas.clone());
        json!({
            "openapi": OPENAPI_VERSION,
            "info": self.info,
            "paths": self.paths,
            "components": {
                "securitySchemes": { BEARER: { "type": "http", "scheme": "bearer" } },
                "parameters": { "Idempotency-Key": components::key_parameter() },
                "headers": components::headers(),
                "responses": components::responses(),
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
}

/// Points every reference into `base`'s `$defs` (or `definitions`) at the component each
/// one became.
fn hoist_refs(value: &mut Value, base: &str, hoisted: &[String]) {
    match value {
        Value::Object(object) => {
            if let Some(Value::String(reference)) = object.get_mut("$ref")
                && let Some(rest) = reference.strip_prefix(base)
                && let Some(def) = rest
                    .strip_prefix("/$defs/")
                    .or_else(|| rest.strip_prefix("/definitions/"))
            {
                let (def, deeper) = def.split_once('/').unwrap_or((def, ""));
                if hoisted.iter().any(|name| name == def) {
                    let deeper = if deeper.is_empty() {
                        String::new()
                    } else {
                        format!("/{deeper}")
                    };
                    *reference = format!("{base}.{def}{deeper}");
                }
            }
            object
                .values_mut()
                .for_each(|v| hoist_refs(v, base, hoisted));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| hoist_refs(v, base, hoisted)),
        _ => {}
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
