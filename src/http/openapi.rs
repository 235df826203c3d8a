//! The REST profile as an OpenAPI 3.1 document (feature `openapi`): what a producer that
//! adopts the profile publishes, so that agents and SDK generators learn from its contract
//! that a deny is a 422 problem, a hold a 202 with `Retry-After` and no `Location`, and that a
//! guarantee call needs an `Idempotency-Key`.
//!
//! Every response is written from the tables the responses themselves are built from: the
//! statuses of [`RestProfile::status`](crate::http::RestProfile::status), every
//! [`RefusalKind`](crate::guarantee::RefusalKind) (its status, its problem type in the producer's
//! [`ProblemTypes`](super::rest::ProblemTypes), whether
//! it says when to call again), the policy deny's problem type, the closed sets of the
//! guarantee result, the key's syntax ([`IdempotencyKey`](crate::replay::IdempotencyKey)),
//! and the façade's [`Fault`](crate::http::Fault)s. So the document cannot drift from what the
//! server sends.
//!
//! The document is plain OpenAPI 3.1 JSON rather than `utoipa` types: its schemas are the
//! crate's JSON Schema 2020-12 (which OpenAPI 3.1 takes as it is), it needs no dependency
//! beyond `schemars`, and a service that builds its own document with `utoipa` merges this
//! one's `components` (every response, parameter, header and schema is a named component,
//! referenced by `$ref`).
//!
//! The agent side reads the document back: [`ProblemTypes::from_openapi`](super::rest::ProblemTypes::from_openapi) finds the
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

mod components;
mod document;
mod read;

pub use components::{POLICY_DENY_MEMBER, REFUSAL_KIND_MEMBER};
pub use document::{OPENAPI_VERSION, OpenApi};
pub use read::NotAProfileDocument;
