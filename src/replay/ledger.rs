//! The [`Ledger`] contract: what beginning a key finds ([`Begin`]), the [`Lease`] a fresh or
//! abandoned key is held by, and how a call ends ([`Ledger::complete`], [`Ledger::release`]).
//! The semantics every store keeps are the module's (see [`crate::replay`]).

use std::future::Future;
use std::time::{Duration, SystemTime};

use super::fingerprint::Fingerprint;
use super::key::IdempotencyKey;
use super::lease::Lease;
use super::scope::Scope;
use super::stored::StoredAnswer;

/// The default retention window: completed keys are replayed for at least this long, and may
/// be purged after.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(24 * 60 * 60);

/// The default lease: how long a call holds its key before another process may take it for
/// abandoned. A call that runs longer renews its lease.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// The builders every store has for its two settings, its `retention` and `lease` fields.
macro_rules! store_settings {
    () => {
        /// The ledger with another retention window (24 hours by default): answered keys are
        /// replayed for at least this long, and may be purged after.
        #[must_use]
        pub fn with_retention(mut self, retention: std::time::Duration) -> Self {
            self.retention = retention;
            self
        }

        /// The ledger with another lease time (30 seconds by default): how long a call holds
        /// its key before another process may take it for abandoned.
        #[must_use]
        pub fn with_lease(mut self, lease: std::time::Duration) -> Self {
            self.lease = lease;
            self
        }
    };
}
pub(crate) use store_settings;

/// A key whose lease expired before any answer was recorded: the call that held it stopped
/// (or lost its store) somewhere between beginning and completing, so whether it took effect
/// is not known. It is **never run again**: the holder of this lease answers it
/// `settlement.state: unknown` with the lookup its [`context`](Abandoned::context) names, and
/// completes the key with that answer, which every later request replays.
///
/// ```
/// use agent_tool_result::replay::{Begin, Fingerprint, IdempotencyKey, Ledger, MemoryLedger, Scope};
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let ledger = MemoryLedger::new().with_lease(Duration::from_millis(1));
/// let (scope, key) = (Scope::principal("acct_1"), IdempotencyKey::new("batch-9")?);
/// let print = Fingerprint::of("send_campaign_batch", "acct_1", &serde_json::json!({}));
/// // A call begins the key, then stops before it answers.
/// assert!(matches!(ledger.begin(&scope, &key, print, "cmp_9").await?, Begin::Fresh(_)));
/// tokio::time::sleep(Duration::from_millis(5)).await;
/// // Whoever finds it next takes it over, once, under a greater fence, with its context.
/// let Begin::Abandoned(abandoned) = ledger.begin(&scope, &key, print, "cmp_9").await? else {
///     unreachable!("the lease passed")
/// };
/// assert_eq!(abandoned.context(), "cmp_9");
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Abandoned {
    lease: Lease,
    context: String,
}

impl Abandoned {
    pub(crate) fn new(lease: Lease, context: String) -> Self {
        Abandoned { lease, context }
    }

    /// The lease to complete it with.
    #[must_use]
    pub fn lease(&self) -> &Lease {
        &self.lease
    }

    /// The lease, to run the call under after all (its operation never took effect).
    #[must_use]
    pub fn into_lease(self) -> Lease {
        self.lease
    }

    /// What the call that began the key stored with it (the id of the operation it would
    /// create, say), to name the lookup.
    #[must_use]
    pub fn context(&self) -> &str {
        &self.context
    }
}

/// What [`Ledger::begin`] found.
///
/// ```
/// use agent_tool_result::guarantee::RefusalKind;
/// use agent_tool_result::replay::{Begin, Fingerprint, IdempotencyKey, Ledger, MemoryLedger, Scope};
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let ledger = MemoryLedger::new();
/// let (scope, key) = (Scope::principal("acct_1"), IdempotencyKey::new("k-1")?);
/// let first = Fingerprint::of("send_sms", "acct_1", &json!({ "to": "+15550100" }));
/// let other = Fingerprint::of("send_sms", "acct_1", &json!({ "to": "+15550199" }));
/// assert!(matches!(ledger.begin(&scope, &key, first, "").await?, Begin::Fresh(_)));
/// // While the first holds its lease, the same request waits; another is refused.
/// let in_flight = ledger.begin(&scope, &key, first, "").await?;
/// assert_eq!(in_flight.refusal().map(|r| r.kind()), Some(RefusalKind::KeyInFlight));
/// let mismatch = ledger.begin(&scope, &key, other, "").await?;
/// assert_eq!(mismatch.refusal().map(|r| r.kind()), Some(RefusalKind::KeyMismatch));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Begin {
    /// The key is new in its scope: run the command under this lease, then complete it (or
    /// release it, if the call provably did nothing).
    Fresh(Lease),
    /// The same request completed before: answer this again and run nothing.
    Replay(StoredAnswer),
    /// The key was used in this scope with another request: refuse (422), run nothing.
    Mismatch,
    /// The first request with the key still holds its lease until `until`: refuse (409, with
    /// `Retry-After`), run nothing.
    InFlight {
        /// When the lease expires, by the store's clock.
        until: SystemTime,
    },
    /// The first request stopped without an answer: answer it `unknown` and complete the key
    /// with that; never run it.
    Abandoned(Abandoned),
}

impl Begin {
    /// The refusal this answer refuses the call with: a mismatch (422 over REST) or a key in
    /// flight (409, retry when its lease expires); `None` for the others.
    #[must_use]
    pub fn refusal(&self) -> Option<crate::guarantee::Refusal> {
        use crate::guarantee::{Refusal, RefusalKind};
        match self {
            Begin::Mismatch => Some(Refusal::new(
                RefusalKind::KeyMismatch,
                "the key was first used with other arguments; its first result stands",
            )),
            Begin::InFlight { until } => Some(
                Refusal::new(
                    RefusalKind::KeyInFlight,
                    "the first request with this key is still running",
                )
                .with_retry_near(*until),
            ),
            Begin::Fresh(_) | Begin::Replay(_) | Begin::Abandoned(_) => None,
        }
    }
}

/// Whether completing or releasing a key took effect.
///
/// ```
/// use agent_tool_result::guarantee::{Answer, GuaranteeResult};
/// use agent_tool_result::replay::{
///     Begin, Completion, Fingerprint, IdempotencyKey, Ledger, MemoryLedger, Scope, StoredAnswer,
/// };
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let ledger = MemoryLedger::new();
/// let (scope, key) = (Scope::principal("acct_1"), IdempotencyKey::new("k-2")?);
/// let print = Fingerprint::of("send_sms", "acct_1", &serde_json::json!({}));
/// let Begin::Fresh(lease) = ledger.begin(&scope, &key, print, "").await? else { unreachable!() };
/// let answer = StoredAnswer::of(&Answer::Result(GuaranteeResult::<agent_tool_result::JsonObject>::committed()))?;
/// assert_eq!(ledger.complete(&lease, &answer).await?, Completion::Recorded);
/// // The key is answered: the same lease records nothing more, and the request replays.
/// assert_eq!(ledger.complete(&lease, &answer).await?, Completion::LeaseLost);
/// assert!(matches!(ledger.begin(&scope, &key, print, "").await?, Begin::Replay(_)));
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum Completion {
    /// It did: the answer is recorded (or the key released).
    Recorded,
    /// The lease was lost: it had passed (by the store's clock), or another process had
    /// taken the key over with a greater fence. Nothing was written; the key is answered by
    /// whoever holds it now (`unknown` when its effect may have started).
    LeaseLost,
}

impl Completion {
    /// `Recorded` when the store's guarded statement changed its one row, `LeaseLost` when the
    /// guard (the lease's fence, the lease not passed, no answer yet) matched none.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn of_rows_changed(changed: u64) -> Completion {
        if changed == 1 {
            Completion::Recorded
        } else {
            Completion::LeaseLost
        }
    }
}

/// Where keys, fingerprints, leases and first answers are kept, shared by every process that
/// serves the same principals. Every method is one atomic step of the store, on the store's
/// own clock.
///
/// A store of its own implements the seven steps; here, one that counts the keys it begins and
/// keeps them in a [`MemoryLedger`](super::MemoryLedger). Run the conformance of the `replay`
/// module's docs against any store before trusting it.
///
/// ```
/// use agent_tool_result::replay::{
///     Abandoned, Begin, Completion, Fingerprint, IdempotencyKey, Lease, Ledger, MemoryLedger,
///     Scope, StoredAnswer,
/// };
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// #[derive(Default)]
/// struct Counted {
///     inner: MemoryLedger,
///     begun: AtomicUsize,
/// }
///
/// impl Ledger for Counted {
///     type Error = <MemoryLedger as Ledger>::Error;
///
///     async fn begin(
///         &self,
///         scope: &Scope,
///         key: &IdempotencyKey,
///         fingerprint: Fingerprint,
///         context: &str,
///     ) -> Result<Begin, Self::Error> {
///         self.begun.fetch_add(1, Ordering::Relaxed);
///         self.inner.begin(scope, key, fingerprint, context).await
///     }
///     async fn renew(&self, lease: &Lease) -> Result<Option<Lease>, Self::Error> {
///         self.inner.renew(lease).await
///     }
///     async fn complete(&self, lease: &Lease, answer: &StoredAnswer) -> Result<Completion, Self::Error> {
///         self.inner.complete(lease, answer).await
///     }
///     async fn release(&self, lease: &Lease) -> Result<Completion, Self::Error> {
///         self.inner.release(lease).await
///     }
///     async fn resolve(&self, lease: &Lease, truth: Option<&StoredAnswer>) -> Result<Completion, Self::Error> {
///         self.inner.resolve(lease, truth).await
///     }
///     async fn abandoned(&self, limit: usize) -> Result<Vec<Abandoned>, Self::Error> {
///         self.inner.abandoned(limit).await
///     }
///     async fn purge(&self, limit: usize) -> Result<usize, Self::Error> {
///         self.inner.purge(limit).await
///     }
/// }
/// ```
pub trait Ledger: Send + Sync {
    /// The store's own error.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Begins `key` in `scope` for the request `fingerprint`, storing `context` with it:
    /// atomically, so of any number of requests with one key exactly one is
    /// [`Begin::Fresh`], and of any number that find it abandoned exactly one is
    /// [`Begin::Abandoned`].
    fn begin(
        &self,
        scope: &Scope,
        key: &IdempotencyKey,
        fingerprint: Fingerprint,
        context: &str,
    ) -> impl Future<Output = Result<Begin, Self::Error>> + Send;

    /// Extends a lease by the store's lease time, for a call that runs long; `None` when the
    /// lease was lost (it had passed, or the key has another fence).
    fn renew(
        &self,
        lease: &Lease,
    ) -> impl Future<Output = Result<Option<Lease>, Self::Error>> + Send;

    /// Records the answer of a leased key; later begins with the same request replay it.
    /// Only the current fence, before its lease has passed, records:
    /// [`Completion::LeaseLost`] otherwise. A [provisional](StoredAnswer::is_provisional)
    /// answer is stored as provisional, and replayed so.
    fn complete(
        &self,
        lease: &Lease,
        answer: &StoredAnswer,
    ) -> impl Future<Output = Result<Completion, Self::Error>> + Send;

    /// Forgets a leased key whose call provably did nothing (it was refused before any side
    /// effect), so the key can be used again. Guarded as [`Ledger::complete`] is.
    fn release(
        &self,
        lease: &Lease,
    ) -> impl Future<Output = Result<Completion, Self::Error>> + Send;

    /// The truth about a key whose answer is provisional: the call that began it under
    /// `lease` (an earlier fence than the key's now) came back after the key was found
    /// abandoned and answered `unknown`, and nobody ran the key since. Atomically, only while
    /// the key's answer is still provisional: `truth` replaces it (a final answer from then
    /// on), or, with `None` (the call did nothing: it was refused), the key is forgotten as
    /// [`Ledger::release`] forgets one. [`Completion::LeaseLost`] when the key's answer is
    /// not provisional (it is final, or the key is held or gone): nothing is written.
    fn resolve(
        &self,
        lease: &Lease,
        truth: Option<&StoredAnswer>,
    ) -> impl Future<Output = Result<Completion, Self::Error>> + Send;

    /// Takes up to `limit` abandoned keys (leases expired without an answer), each to be
    /// answered `unknown`: what a process runs in the background so that no such key waits
    /// for its next request.
    fn abandoned(
        &self,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<Abandoned>, Self::Error>> + Send;

    /// Removes up to `limit` keys completed longer ago than the retention window; returns how
    /// many. A key without an answer is never removed (it would begin fresh and run again).
    fn purge(&self, limit: usize) -> impl Future<Output = Result<usize, Self::Error>> + Send;
}

/// Why a transaction a tool runs on the ledger's own database, under its lease's fence,
/// did not commit with its answer (`PostgresTransaction`, `SqliteTransaction`). A tool turns
/// it into what it answers with `?` or [`Done::from`](super::Done): a store that failed
/// before the commit is the `unavailable` refusal (nothing was written; the same request
/// later), and a lost lease or a commit whose outcome is not known is
/// [`Done::Lost`](super::Done::Lost), whose reply the sequence reads from the ledger.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransactionError<E> {
    /// The lease no longer holds the key (it passed, or another process took the key
    /// over): nothing was written.
    #[error("the call's lease no longer holds its key; nothing was written")]
    Fenced,
    /// The store failed before the commit: nothing was written.
    #[error("the store failed before the commit; nothing was written")]
    Failed(#[source] E),
    /// The store failed during the commit: whether the effect and the answer committed
    /// (together, or neither) is not known.
    #[error("the store failed during the commit; whether it committed is not known")]
    Unsure(#[source] E),
    /// Another call with the same key is running its own transaction (a key begun in its
    /// effect's transaction): nothing was written.
    #[error("another call with this key is running; nothing was written")]
    InFlight,
}
