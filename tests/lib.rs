//! The integration tests, benchmarks and long runs of `agent-tool-result`: a package of their
//! own, never published, so that the published crate declares only the targets it ships. Each
//! test is a target of this package (`cargo test -p agent-tool-result-tests --test NAME`),
//! with the library's features under the same names.
