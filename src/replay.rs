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
//!   - the first is [`Begin::Fresh`] with a [`Lease`]: a [`Fence`] and an expiry by the
//!     store's own clock (never a caller's), renewable ([`Ledger::renew`]) for a long call;
//!   - a request like one that completed is [`Begin::Replay`] of its answer, byte for byte;
//!   - a request unlike the first is [`Begin::Mismatch`] (422);
//!   - a request while the first holds its lease is [`Begin::InFlight`] with the lease's
//!     expiry (409 with `Retry-After`).
//! - **Fences.** Every lease a store hands out, fresh or taken over, carries a [`Fence`]
//!   greater than every fence the store handed out before. Only the current fence of a key,
//!   before its lease has passed, completes, renews or releases it.
//! - **Abandoned keys are never run blindly.** A lease that expired without an answer (its
//!   process stopped, paused, or lost its store, between beginning and completing) is taken
//!   by whoever finds it, exactly once, under a new fence, as [`Begin::Abandoned`] (or in the
//!   background, with [`Ledger::abandoned`]), with the context stored at begin. Its taker
//!   asks the tool that began the key what its operation came to
//!   ([`GuaranteeTool::recover`]; for a hand-built call, the application's [`EffectProbe`];
//!   with neither, it assumes the operation may have taken effect): if it may have, the
//!   taker answers it `settlement.state: unknown` with the tool's lookup and the
//!   operation's id, and completes the key with that answer, which every later request
//!   replays; if running it again repeats nothing, the call runs now under the new fence (or,
//!   in the background, the key is released). This holds at any age: an unanswered key older
//!   than the retention window is never begun afresh.
//! - **Complete** ([`Ledger::complete`]) records the answer under the lease and says whether it
//!   took effect: [`Completion::LeaseLost`] means the lease had passed or the key had been
//!   taken over, and what its new holder decides stays the key's answer.
//! - **Resolve** ([`Ledger::resolve`]) replaces a [provisional](StoredAnswer::is_provisional)
//!   answer (the `unknown` of a key found abandoned) with the truth, when the call that began
//!   the key comes back with it and nobody ran the key since.
//!
//! # Which answers are final
//!
//! The first reply a caller gets for a key is the answer the ledger keeps for it, and every
//! replay gives it again, byte for byte, with one exception: `unknown`. The [`Sequence`] keeps
//! a running call's lease alive (renewed at a third of its length under the same fence), so a
//! long call keeps its key; a call that loses it anyway (paused, cut off) and whose record
//! comes back [`Completion::LeaseLost`] answers what the ledger holds for the key (taking it
//! again if nobody did, waiting for whoever holds it), never its own answer unrecorded.
//! `unknown` is the only answer that may change after it is given, and only to the truth:
//!
//! - a key found abandoned is answered `unknown` provisionally, unless its tool's recovery
//!   ([`Recovered::Settled`], or a hand-built call's [`EffectProbe::outcome`]) knows what
//!   the operation came to (that answer is final);
//! - when the call that began the key comes back with its answer and nobody ran the key
//!   since, its answer replaces the provisional `unknown` ([`Ledger::resolve`]); a refusal
//!   (nothing was done) forgets the key instead;
//! - a call whose answer the ledger could not take (it failed) is answered `unknown`, and its
//!   answer is written later by [`Sequence::settle`], replacing it.
//! - **Release** ([`Ledger::release`]) forgets a key whose call provably did nothing (refused
//!   before any side effect), so the key can be used again, as Stripe does not store
//!   validation failures.
//! - **Retention and purge.** A completed key is replayed for at least the retention window
//!   (24 hours by default); [`Ledger::purge`] removes those older in bounded batches. A purge
//!   never removes a key without an answer, so it never turns one into a fresh key.
//! - **Async.** Every method is a future, for axum and rmcp servers; the embedded SQLite
//!   store runs its statements on a thread of its own.
//!
//!
//! # What the ledger guarantees, and what it cannot
//!
//! The ledger decides, atomically and by its own clock, who holds a key. It cannot stop a
//! holder that was paused (a VM migrated, a disk stalled, a long collection) or cut off from
//! it (a partition) from *acting* after its lease passed: such a holder does not know it lost
//! the key until it next asks. Leases alone therefore never make an effect safe; fences do,
//! at the place the effect happens. Every side effect of a call must be one of:
//!
//! 1. **Deduplicated by the provider on a deterministic effect key.** [`Lease::effect_key`]
//!    (or [`EffectKey::new`] for work outside a call) names one part of one operation (a
//!    recipient of a campaign, say) the same way for every holder of the key, so a provider
//!    that deduplicates on it (an idempotency key of its own) performs the part once however
//!    many holders ask.
//! 2. **A write conditional on the current fence, in the same transaction.** When the effect
//!    is a write to the ledger's own database, make it in the typed transaction the crate
//!    hands the tool ([`PostgresTransaction`], [`SqliteTransaction`]): its `begin` checks the
//!    lease's fence and locks the key until the transaction ends, the tool makes its writes
//!    through it, and its `commit` records the tool's typed answer with the key and commits,
//!    so the effect and the answer commit together, or neither does. An effect of one write
//!    goes with its answer in one step, whose record checks the fence as it writes
//!    ([`PostgresTransaction::commit_one`], [`SqliteTransaction::commit_one`]). A holder whose
//!    key was taken over performs nothing; the taker waits for the lock, so the tool's
//!    recovery sees the write committed or never made. A check made in one statement and the
//!    effect made in another is no fence: a pause between them is exactly the fault it must
//!    survive.
//!
//! Where neither is possible (a provider that neither deduplicates nor checks a token), a
//! window is left: an effect started just before the lease passed, by a holder then paused
//! past it, can happen after another holder has decided the key. Narrow it: start no such
//! effect with less than a margin of the lease left ([`Lease::remaining`], by this process's
//! monotonic clock, counted from before the store was asked), choose a lease far longer than
//! the effect takes, and make the effect itself short and bounded in time. The window is then
//! a pause longer than the margin landing inside the effect; it is never closed.
//!
//! A store that fails is not an effect: a call whose store failed before the effect could
//! have started answers [`Refusal::unavailable`](crate::guarantee::Refusal::unavailable)
//! (503 with `Retry-After` over REST, the same refusal over MCP) and its key is released or
//! left to expire, never answered `unknown`; only a call whose effect may have started is.
//!
//! [`MemoryLedger`] serves one process and tests; [`SqliteLedger`] (feature `sqlite`) one
//! file, which processes on one machine may share; [`PostgresLedger`] (feature `postgres`) any
//! number of processes on any number of machines.
//!
//! # Example
//!
//! A call under the [`Sequence`]: the tool runs once for its key, its answer is recorded, the
//! same request replays it, and the key used with other arguments is refused.
//!
//! ```
//! use agent_tool_result::guarantee::{Answer, GuaranteeResult, RefusalKind};
//! use agent_tool_result::replay::{Call, IdempotencyKey, MemoryLedger, ReplyKind, Sequence};
//! use serde_json::json;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let sequence = Sequence::new(MemoryLedger::new());
//! let sent = &AtomicUsize::new(0);
//! let send = |to: &str| {
//!     let call = Call::of("send_sms", "acct_1", IdempotencyKey::new("k-7").unwrap(), &json!({ "to": to }));
//!     sequence.run(call.with_context("msg_7"), |lease| async move {
//!         // Hand the provider `lease.effect_key(to)`; write under `lease.fence()`.
//!         let _ = lease.fence();
//!         sent.fetch_add(1, Ordering::Relaxed);
//!         Answer::Result(GuaranteeResult::<agent_tool_result::JsonObject>::committed())
//!     })
//! };
//! assert_eq!(send("+15550100").await.kind(), ReplyKind::Ran);
//! assert_eq!(send("+15550100").await.kind(), ReplyKind::Replayed);
//! let other = send("+15550199").await;
//! assert_eq!(other.answer().refusal().map(|r| r.kind()), Some(RefusalKind::KeyMismatch));
//! assert_eq!(sent.load(Ordering::Relaxed), 1);
//! # Ok(()) }
//! ```

mod call;
mod done;
mod fence;
mod fingerprint;
mod join;
mod key;
mod lease;
mod ledger;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
mod probe;
mod recovery;
mod reply;
mod scope;
mod sequence;
#[cfg(feature = "sqlite")]
mod sqlite;
mod stored;
pub mod telemetry;
mod tool;

pub use call::Call;
pub use done::Done;
pub use fence::{EffectKey, Fence};
pub use fingerprint::{Fingerprint, InvalidFingerprint, canonical_json};
pub use key::{IdempotencyKey, InvalidKey, InvalidKeyKind, MAX_KEY_LEN, MCP_ARGUMENT};
pub use lease::Lease;
pub use ledger::{
    Abandoned, Begin, Completion, DEFAULT_LEASE, DEFAULT_RETENTION, Ledger, TransactionError,
};
pub use memory::MemoryLedger;
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use postgres::connections::PostgresError;
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use postgres::durability::Durability;
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use postgres::settings::TransactionSettings;
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use postgres::transaction::PostgresTransaction;
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use postgres::{DEFAULT_TIMEOUT, PostgresLedger};
pub use probe::{AssumeStarted, EffectProbe};
pub use recovery::{OperationFields, Recovered, RecoveryError};
pub use reply::{Reply, ReplyKind};
pub use scope::Scope;
pub use sequence::{Sequence, Settled};
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use sqlite::transaction::SqliteTransaction;
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use sqlite::{SqliteError, SqliteLedger};
pub use stored::{StoredAnswer, UnreadableAnswer};
#[cfg(feature = "schemars")]
pub(crate) use tool::arguments_misfit;
#[cfg(feature = "rmcp")]
pub(crate) use tool::read_arguments;
pub use tool::{GuaranteeTool, Operation};
