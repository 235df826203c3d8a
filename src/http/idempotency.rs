//! The header that marks a replayed response. How a producer refuses a call over its
//! idempotency key (after the IETF httpapi Idempotency-Key draft) is one table with the other
//! refusals, [`RefusalKind`](crate::guarantee::RefusalKind):
//!
//! | refusal | status | when |
//! |---|---|---|
//! | `KeyMissing` | 400 | a guarantee call without `Idempotency-Key` |
//! | `KeyInvalid` | 400 | the key is not an sf-string of at most 255 characters |
//! | `KeyMismatch` | 422 | the key was used before with another payload |
//! | `KeyInFlight` | 409 | the first request with the key is still running (`Retry-After` when known) |
//!
//! A mismatch has its own problem type: it is never a policy deny, though both are 422.

/// The header that marks a response replayed from the ledger rather than produced anew; its
/// value is `true`.
pub const IDEMPOTENT_REPLAYED: &str = "idempotent-replayed";
