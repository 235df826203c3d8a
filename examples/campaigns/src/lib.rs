//! `campaigns`: a small campaign service whose guarantee tools answer the second contract
//! (settlement, policy, impact, recovery) over REST and over MCP, on one database (a SQLite
//! file, or PostgreSQL, which any number of its processes share) that also holds the
//! idempotency ledger. The provider it sends through is an outside HTTP service (a stand-in it
//! starts itself on loopback, unless told another), which takes each send's effect key once
//! and logs every send it accepted where a test counts them. See this package's README for
//! the thin-continuity walkthrough.
//!
//! The library is the service; its binary (`src/main.rs`) reads the command line and serves
//! it, and its tests and benchmark use the same modules. A tool is a module of [`tools`] and a
//! line in its list; the store is split by concept under [`store`], its schema in
//! `src/schema.sql`.

#![allow(
    clippy::missing_errors_doc,
    clippy::missing_panics_doc,
    clippy::must_use_candidate,
    reason = "the service's own library, shared by its binary, tests and benchmark, not a \
              published API: each layer has one error type, said in its module"
)]

pub mod allowed_hosts;
pub mod db;
#[cfg(feature = "faults")]
pub mod faults;
pub mod limits;
pub mod mcp;
pub mod provider;
pub mod rest;
pub mod serve;
pub mod service;
pub mod store;
pub mod telemetry;
pub mod tools;
