//! Same-key replay (feature `replay`), after the IETF httpapi Idempotency-Key draft and
//! Stripe's documented behaviour, on stores that several processes on several machines share.
//!
//! A guarantee tool call carries an [`IdempotencyKey`]: the `Idempotency-Key` header over
//! REST, the `idempotencyKey` argument over MCP (there is no standard field there; the same
//! ledger serves both). The tool [`Ledger::begin`]s the key in the caller's [`Scope`] with the
//! request's [`Fingerprint`] (tool, principal, canonical arguments) and an opaque context (the
//! id of the operation the call will create, say), and learns what to do.
//!
//! # The contract every store keeps
//!
//! - **Scopes.** A key lives in a scope, the principal: the same key under two scopes is two
//!   independent keys. No answer ever depends on another scope's keys: a principal never
//!   replays, and is never refused over, a key another principal used. (The tool is in the
//!   fingerprint, not the scope: one principal's key sent to two tools is a mismatch.)
//! - **Begin.** Atomically, of every request with one key in one scope:
//!   - the first is [`Begin::Fresh`] with a [`Lease`]: an owner token and an expiry by the
//!     store's own clock (never a caller's), renewable ([`Ledger::renew`]) for a long call;
//!   - a request like one that completed is [`Begin::Replay`] of its answer, byte for byte;
//!   - a request unlike the first is [`Begin::Mismatch`] (422);
//!   - a request while the first holds its lease is [`Begin::InFlight`] with the lease's
//!     expiry (409 with `Retry-After`).
//! - **Abandoned keys are never run again.** A lease that expired without an answer (its
//!   process stopped, or lost its store, between beginning and completing) is taken by whoever
//!   finds it, exactly once, as [`Begin::Abandoned`] (or in the background, with
//!   [`Ledger::abandoned`]), with the context stored at begin. Its taker answers it
//!   `settlement.state: unknown` with the lookup the context names and completes the key with
//!   that answer; every later request replays it. This holds at any age: an unanswered key
//!   older than the retention window is answered `unknown`, never begun afresh.
//! - **Complete** ([`Ledger::complete`]) records the answer under the lease and says whether it
//!   took effect: [`Completion::LeaseLost`] means the call ran past its lease and another
//!   process answered `unknown`, which stays the key's answer.
//! - **Release** ([`Ledger::release`]) forgets a key whose call provably did nothing (refused
//!   before any side effect), so the key can be used again, as Stripe does not store
//!   validation failures.
//! - **Retention and purge.** A completed key is replayed for at least the retention window
//!   (24 hours by default); [`Ledger::purge`] removes those older in bounded batches. A purge
//!   never removes a key without an answer, so it never turns one into a fresh key.
//! - **Async.** Every method is a future, for axum and rmcp servers; the embedded SQLite
//!   store runs its statements on a thread of its own.
//!
//! [`MemoryLedger`] serves one process and tests; [`SqliteLedger`] (feature `sqlite`) one
//! file, which processes on one machine may share; [`PostgresLedger`] (feature `postgres`) any
//! number of processes on any number of machines.

mod fingerprint;
mod key;
mod ledger;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
mod sequence;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(feature = "sqlite")]
mod worker;

pub use fingerprint::{Fingerprint, InvalidFingerprint, canonical_json};
pub use key::{IdempotencyKey, InvalidKey, InvalidKeyKind, MAX_KEY_LEN, MCP_ARGUMENT};
pub use ledger::{
    Abandoned, Begin, Completion, DEFAULT_LEASE, DEFAULT_RETENTION, Lease, Ledger, Scope,
    StoredAnswer, UnreadableAnswer,
};
pub use memory::MemoryLedger;
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use postgres::{PostgresError, PostgresLedger};
pub use sequence::{Call, Reply, ReplyKind, Sequence, Settled};
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use sqlite::{SqliteError, SqliteLedger};
