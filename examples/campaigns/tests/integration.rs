//! The campaign service's tests, one binary: each module drives the service (a child
//! process) on one concern.

mod agents;
mod bounds;
mod captures;
mod continuity;
mod crash;
mod failover;
mod faults;
mod full_disk;
mod long_calls;
mod oauth_discovery;
mod patroni;
mod pauses;
mod processes;
mod python;
mod rate_batches;
mod recorded;
mod replays;
mod rest;
mod stateless;
mod stopped;
mod support;
mod telemetry;
mod transport;
mod typescript;
