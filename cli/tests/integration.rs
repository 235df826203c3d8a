//! The `atr` CLI's tests, one binary: each module runs the `atr` the workspace builds on one
//! concern.

mod agents;
mod chunks;
mod cli;
mod common;
mod edges;
mod explain;
mod framing;
mod hostile;
mod http_sessions;
mod jsonrpc;
mod outcomes;
mod precommit;
mod record;
mod sarif;
mod session;
