//! Same-key replay (feature `replay`), after the IETF httpapi Idempotency-Key draft.
//!
//! A guarantee tool call carries an [`IdempotencyKey`]: the `Idempotency-Key` header over
//! REST, the `idempotencyKey` argument over MCP (there is no standard field there; the same
//! ledger serves both). The tool [`Ledger::begin`]s the key with the request's
//! [`Fingerprint`] (tool, principal, canonical arguments) and learns what to do:
//!
//! - [`Begin::Fresh`]: run the command, then [`Ledger::complete`] the key with the response;
//! - [`Begin::Replay`]: answer the first response again, byte for byte, and send nothing;
//! - [`Begin::Mismatch`]: the key was used with another payload (a 422 problem);
//! - [`Begin::InFlight`]: the first request with the key is still running (a 409 problem).
//!
//! A key begun and never completed (the process stopped between the provider and the
//! record) is listed by [`Ledger::in_flight`] and must be answered `settlement.state:
//! unknown` with a re-query by id: never a second send, never a `not_started`.
//!
//! Keys expire after a retention window, 24 hours by default. [`MemoryLedger`] serves one
//! process (and tests); a store shared by several machines (`PostgreSQL`, `Redis`) implements
//! [`Ledger`] the same way: `begin` is one atomic insert-if-absent of the key with its
//! fingerprint, `complete` one update of the stored response.

mod fingerprint;
mod key;
mod ledger;
mod memory;
#[cfg(feature = "sqlite")]
mod sqlite;

pub use fingerprint::{Fingerprint, canonical_json};
pub use key::{IdempotencyKey, InvalidKey, MAX_KEY_LEN, MCP_ARGUMENT};
pub use ledger::{Begin, DEFAULT_RETENTION, Ledger, Pending, StoredResponse, recover};
pub use memory::{Infallible, MemoryLedger};
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use sqlite::{SqliteError, SqliteLedger};
