//! The library's integration tests, one binary: each module is one concern (a file of its
//! own), compiled when the features it needs are on.

#[cfg(feature = "blank-check")]
mod support;

// What several modules share, loaded once (a server's scratch directories are numbered per
// process, so two copies would hand out the same ones).
#[cfg(any(feature = "replay", feature = "postgres"))]
#[path = "support/answers.rs"]
mod keyed_answers;
#[cfg(feature = "validate")]
#[path = "support/differential.rs"]
mod mutations;
#[cfg(feature = "postgres")]
#[path = "support/pgbouncer.rs"]
mod pgbouncer;
#[cfg(feature = "postgres")]
#[path = "support/postgres.rs"]
mod postgres;
#[cfg(all(feature = "axum", any(feature = "validate", feature = "replay")))]
#[path = "support/server.rs"]
mod server;

#[cfg(feature = "validate")]
mod answers;
mod artifact;
#[cfg(feature = "validate")]
mod bad_input;
#[cfg(feature = "blank-check")]
mod blank;
mod category;
mod code;
mod compile_fail;
#[cfg(all(feature = "validate", feature = "schemars"))]
mod conformance;
mod decision;
#[cfg(feature = "validate")]
mod differential;
mod errors;
#[cfg(feature = "blank-check")]
mod frame_memory;
#[cfg(feature = "validate")]
mod guarantee;
#[cfg(all(feature = "axum", feature = "validate"))]
mod http;
#[cfg(feature = "replay")]
mod keyed_call;
mod keyed_mcp;
mod layering;
#[cfg(feature = "replay")]
mod ledger;
#[cfg(feature = "validate")]
mod legacy;
#[cfg(feature = "schemars")]
mod mcp;
#[cfg(feature = "validate")]
mod observation;
#[cfg(feature = "openapi")]
mod openapi;
#[cfg(feature = "schemars")]
mod output_schema;
mod package;
#[cfg(feature = "validate")]
mod properties;
mod readme;
mod recorded;
mod recovery;
#[cfg(all(feature = "axum", feature = "rmcp", feature = "openapi"))]
mod registry;
#[cfg(feature = "replay")]
mod replay;
#[cfg(feature = "http")]
mod rest;
mod rest_problems;
#[cfg(all(feature = "axum", feature = "replay"))]
mod rest_server;
#[cfg(feature = "rmcp")]
mod rmcp;
#[cfg(feature = "validate")]
mod rules;
#[cfg(all(feature = "schemars", feature = "validate"))]
mod schema;
mod sequence;
#[cfg(feature = "http")]
mod sf_fields;
#[cfg(feature = "postgres")]
mod transaction;
mod typed_answers;
mod wire;
