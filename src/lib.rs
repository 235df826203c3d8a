//! The result contracts AI-agent tools return: one envelope with one closed error taxonomy,
//! and guarantee results for tools with side effects, projected onto MCP and HTTP exactly as
//! the contracts say.
//!
//! Every tool call answers with an [`Envelope`]: `ok`, then either a `result` or an `error`
//! whose [`ErrorCategory`] comes from a closed set an agent can branch on exhaustively, plus
//! an optional `sessionId` and non-fatal [`Warning`]s. A tool with side effects answers a
//! [`guarantee::GuaranteeResult`] instead: what settled, what policy decided, what it touched.
//! The types make a result that breaks its contract impossible to build and impossible to
//! deserialize; the embedded JSON Schemas ([`schema`]) and the validator (feature
//! `validate`) check JSON from any producer.
//!
//! # Where to start
//!
//! - **A tool author** builds [envelopes](#envelopes) and, for side effects,
//!   [guarantee results](#guarantee-results), refuses calls it will not run
//!   ([refusals](#how-a-guarantee-tool-refuses-a-call)), and serves them over
//!   [REST and MCP under same-key replay](#over-rest-and-same-key-replay) (features `axum`,
//!   `rmcp`, `replay`), with the ledger on [PostgreSQL](#on-postgresql) for many processes.
//!   [On MCP](#on-mcp) and [over HTTP](#over-http) say what each transport carries; an
//!   [OpenAPI 3.1 document](#as-openapi-31) describes the service.
//! - **An agent author** reads results back and branches: [`Envelope::from_json`] and
//!   [`ErrorCategory::recovery`], [`guarantee::GuaranteeResult::from_json`] (settlement
//!   first, then policy), [`mcp::CallToolResult::from_json`] for MCP tool results, and
//!   `http::classify` (feature `http`) for REST responses. Every reader gives one verdict
//!   ([one verdict, whichever reader](#one-verdict-whichever-reader)).
//! - **CI** checks what any producer emits with the `atr` CLI (the `agent-tool-result-cli`
//!   package, prebuilt for Python and Node projects), or in Rust with `validate::Validator`; every
//!   finding names its [`Rule`].
//!
#![doc = include_str!("guide.md")]
//! # Where things are
//!
//! The root holds the envelope and its parts: [`Envelope`], [`Outcome`], [`ToolError`],
//! [`Warning`], [`ErrorCategory`], [`ErrorCode`], [`WarningCode`], [`Observation`], and what
//! reading one can say, [`ParseError`] and its [`Rule`]. Each other concept is a module:
//!
//! - [`code`]: the open codes, the well-known ones and [`code::KnownErrorCode`] to match them.
//! - [`document`]: the one rule that tells an envelope, a guarantee result and a refusal apart.
//! - [`decision`]: what an answer calls for an agent to do, and the one outcome form every
//!   reader gives (`atr classify --format json`, the Python and TypeScript readers).
//! - [`category`]: the category table, with [`category::RetryClass`].
//! - [`observation`]: capture summaries, windows and the no-base64 rule.
//! - [`artifact`]: the session's artifact directory, where captures are written.
//! - [`frame`]: reading PNG frames, and the blank check (feature `blank-check`).
//! - [`rule`]: the contract's rules, [`rule::Finding`]s and the reading limits.
//! - [`schema`]: the contract's JSON Schema and tools' output schemas.
//! - [`validate`] (feature `validate`): the compiled validator and the lints.
//! - [`legacy`]: migrating the older `CommandResult` shape.
//! - [`guarantee`]: the second contract, guarantee results (settlement, policy, impact,
//!   recovery) for tools with side effects, and their refusals.
//! - [`replay`] (feature `replay`): same-key replay, idempotency keys, RFC 8785 fingerprints,
//!   the ledger contract and its stores.
//! - [`mcp`]: the MCP projection of both contracts; [`http`] (feature `http`): the HTTP façade,
//!   RFC 9457 problems, the REST profile of guarantee results and the agent's classifier.
//! - [`registry`] (features `replay` and `schemars`): a server's tools listed once, served over
//!   REST and MCP and documented in OpenAPI, each with its [`Hints`] (MCP's annotations).
//!
//! # Features
//!
//! The default build is the types a tool crate needs and nothing heavier.
//!
//! - `schemars`: `JsonSchema` for the wire types, and tools' compact output schemas.
//! - `validate`: `validate::Validator`, the compiled schema (the `jsonschema` crate) plus the
//!   contract lints.
//! - `blank-check`: `frame::blank_check` and `SessionArtifacts::summarize_png`, which decode
//!   captures with the `png` crate (on a second thread for large frames: call them from a
//!   blocking pool in async code).
//! - `http`: the HTTP façade's responses, RFC 9457 problems, the REST profile, the classifier
//!   and the bearer gate, with the `http` crate.
//! - `axum`: `IntoResponse` for envelopes, faults, problems and guarantee answers, the layers
//!   that make every error a problem, and, with `replay`, a registry's REST routes (`axum`
//!   without its default features: no server, no runtime of its own).
//! - `rmcp`: return envelopes and guarantee answers from `rmcp` tools; see [`mcp`].
//! - `replay`: idempotency keys, request fingerprints (SHA-256 over RFC 8785 JSON), the ledger
//!   trait and its in-memory store, and the replay sequence around it.
//!   With `schemars` too, `registry`: a server's tools listed once, from which come its REST
//!   routes (`axum`), its MCP router (`rmcp`) and its OpenAPI operations (`openapi`).
//! - `sqlite`: the SQLite ledger, SQLite bundled.
//! - `postgres`: the PostgreSQL ledger, shared by processes on many machines (`tokio-postgres`,
//!   no TLS stack; inside a Tokio runtime).
//! - `openapi`: `http::openapi`, the REST profile as an OpenAPI 3.1 document, and a producer's
//!   problem types read back from one.
//! - `tracing`: the replay sequence reports through `tracing` (see `replay::telemetry`): a
//!   span per keyed call naming its tool, scope and key digest (never the raw key or an
//!   argument), an event for how it ended, the ledger's latency.
//! - `metrics`: the replay sequence counts through the `metrics` facade (see
//!   `replay::telemetry`): calls by outcome, refusals by kind, the ledger's latency and the
//!   sequence's overhead, for any exporter (Prometheus, say).
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod artifact;
mod breach;
pub mod category;
pub mod code;
pub mod decision;
pub mod document;
mod envelope;
mod error;
pub mod frame;
pub mod guarantee;
mod hints;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
pub mod legacy;
#[cfg(feature = "validate")]
mod locate;
pub mod mcp;
mod object;
pub mod observation;
mod parse;
mod pointer;
#[cfg(all(feature = "replay", feature = "schemars"))]
#[cfg_attr(docsrs, doc(cfg(all(feature = "replay", feature = "schemars"))))]
pub mod registry;
#[cfg(feature = "replay")]
#[cfg_attr(docsrs, doc(cfg(feature = "replay")))]
pub mod replay;
pub mod rule;
pub mod schema;
mod strict;
#[cfg(feature = "validate")]
#[cfg_attr(docsrs, doc(cfg(feature = "validate")))]
pub mod validate;
mod warning;

pub use category::ErrorCategory;
pub use code::{Classified, ErrorCode, WarningCode};
pub use envelope::{Envelope, Outcome};
pub use error::ToolError;
pub use hints::Hints;
pub use object::JsonObject;
pub use observation::Observation;
pub use parse::ParseError;
pub use rule::Rule;
pub use warning::Warning;

/// The README's Rust examples, compiled and run as doctests in every build, each feature alone
/// included: an example that needs a feature says so and is guarded by it, so one that
/// compiles only with more features than it says fails in that feature's build.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
