//! One result envelope and one closed error taxonomy for AI-agent tools.
//!
//! Every tool call answers with an [`Envelope`]: `ok`, then either a `result` or an `error`
//! whose [`ErrorCategory`] comes from a closed set an agent can branch on exhaustively, plus
//! an optional `sessionId` and non-fatal [`Warning`]s. The types make an envelope that breaks
//! the contract impossible to build and impossible to deserialize; the embedded JSON Schema
//! ([`ENVELOPE_SCHEMA`]) and the [`Validator`] check JSON from any producer.
//!
//! ```
//! use agent_tool_result::{Envelope, ErrorCategory, ErrorCode, ToolError};
//! use serde_json::json;
//!
//! // A tool builds its outcome...
//! let envelope: Envelope = Envelope::failure(ToolError::new(
//!     ErrorCode::WINDOW_NOT_FOUND,
//!     "No window titled 'Untitled - Notepad'.",
//! ))
//! .with_session("s-4f2a");
//! let wire = envelope.to_json()?;
//!
//! // ...and an agent branches on it.
//! let read = Envelope::<serde_json::Value>::from_json(&wire)?;
//! match read.error().map(|e| e.category()) {
//!     None => println!("done: {:?}", read.result()),
//!     Some(ErrorCategory::NoTarget) => println!("query for targets, then retry"),
//!     Some(other) => println!("{}", other.recovery()),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! - `schemars` (default): `JsonSchema` for the wire types and the generated envelope schema.
//! - `validate` (default): [`Validator`], the compiled schema plus the contract lints.
//! - `http`: [`http`], the HTTP façade's responses and RFC 9457 problems, with the `http` crate.
//! - `axum`: `IntoResponse` for envelopes, faults and problems.
//! - `rmcp`: return envelopes from `rmcp` tools; see [`mcp`].
//! - `blank-check` (default): [`blank_check`] and [`SessionArtifacts::summarize_png`], which
//!   decode captures with the `png` crate.

mod artifact;
mod breach;
mod category;
mod code;
mod envelope;
mod error;
mod finding;
mod frame;
#[cfg(feature = "http")]
pub mod http;
mod legacy;
mod locate;
pub mod mcp;
mod object;
mod observation;
mod parse;
mod pointer;
mod rule;
mod schema;
mod strict;
#[cfg(feature = "validate")]
mod validate;
mod warning;

pub use artifact::{CaptureError, InvalidSessionId, MAX_SESSION_ID_LEN, SessionArtifacts};
pub use category::{ErrorCategory, ParseCategoryError, RetryClass};
pub use code::{ErrorCode, InvalidCode, KnownCode, WarningCode, is_kebab_case};
pub use envelope::{Envelope, Outcome};
pub use error::ToolError;
pub use finding::Finding;
#[cfg(feature = "blank-check")]
pub use frame::blank_check;
pub use frame::{FrameError, FrameErrorKind, MAX_PIXELS, png_dimensions};
pub use legacy::{LegacyError, Migration};
pub use object::JsonObject;
pub use observation::{
    ArtifactOutcome, BlankCheck, CaptureSummary, EmptyArtifactText, InvalidFraction,
    MAX_INLINE_BASE64, Observation, ObservationError, WindowInfo, find_base64, is_inline_base64,
};
pub use parse::ParseError;
pub use rule::{ParseRuleError, Rule, Severity};
pub use schema::{ENVELOPE_SCHEMA, envelope_schema};
#[cfg(feature = "schemars")]
pub use schema::{OutputSchemaError, generated_envelope_schema, output_schema_for};
pub use strict::MAX_DEPTH;
#[cfg(feature = "validate")]
pub use validate::{Report, Validator};
pub use warning::Warning;

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
