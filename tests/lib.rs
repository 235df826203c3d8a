//! The integration tests, benchmarks and long runs of `agent-tool-result`: a package of their
//! own, never published, so that the published crate declares only the targets it ships. The
//! tests are one binary, `integration`, each file a module of it compiled when the features
//! it needs are on (`cargo test -p agent-tool-result-tests --test integration NAME::`), with
//! the library's features under the same names; two tests whose subject is their own process
//! are binaries of their own (`telemetry`, as tracing's interest cache is process-wide, and
//! `ledger_processes`, which runs its own processes).
