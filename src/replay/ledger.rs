//! The [`Ledger`] contract: what beginning a key finds ([`Begin`]), the [`Lease`] a fresh or
//! abandoned key is held by, and how a call ends ([`Ledger::complete`], [`Ledger::release`]).
//! The semantics every store keeps are the module's (see [`crate::replay`]).

use std::future::Future;
use std::time::{Duration, SystemTime};

use super::fingerprint::Fingerprint;
use super::key::IdempotencyKey;

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

/// Whose keys these are: the principal (the account a token authenticates). The same key
/// under two scopes is two independent keys; nothing of one scope's keys is seen from another.
///
/// The tool is not part of the scope: it is part of the [`Fingerprint`], so the same key sent
/// by one principal to two tools is a mismatch (a client bug that reuses keys), as Stripe has
/// it, and never a second execution.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Scope(String);

impl Scope {
    /// The scope of `principal`'s keys.
    #[must_use]
    pub fn principal(principal: impl Into<String>) -> Self {
        Scope(principal.into())
    }

    /// The principal.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An answer as a guarantee tool first gave it, kept to give again whatever the transport:
/// the guarantee result (or the refusal) as its compact JSON, and which of the two it is.
/// REST and MCP project the same stored answer, so a replay of one key over either is the
/// same decision, and the same bytes as the first answer over that transport.
///
/// ```
/// use agent_tool_result::guarantee::{Answer, GuaranteeResult};
/// use agent_tool_result::replay::StoredAnswer;
///
/// let stored = StoredAnswer::of(&Answer::from(GuaranteeResult::committed()))?;
/// assert!(!stored.is_refusal());
/// assert_eq!(stored.answer()?.result().map(|r| r.is_deny()), Some(false));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredAnswer {
    refused: bool,
    json: String,
}

impl StoredAnswer {
    /// The answer to keep.
    ///
    /// # Errors
    ///
    /// When the result's own fields do not serialize to an object.
    pub fn of<T: serde::Serialize>(
        answer: &crate::guarantee::Answer<T>,
    ) -> Result<Self, serde_json::Error> {
        Ok(StoredAnswer {
            refused: answer.refusal().is_some(),
            json: answer.to_json()?,
        })
    }

    /// An answer as a store reads it back.
    pub(crate) fn from_stored(refused: bool, json: String) -> Self {
        StoredAnswer { refused, json }
    }

    /// Whether the answer is a refusal (else a guarantee result).
    #[must_use]
    pub fn is_refusal(&self) -> bool {
        self.refused
    }

    /// The answer's compact JSON, as it was first written.
    #[must_use]
    pub fn json(&self) -> &str {
        &self.json
    }

    /// The answer, read back.
    ///
    /// # Errors
    ///
    /// [`UnreadableAnswer`] when the store holds something no guarantee tool answered (it was
    /// written by something else).
    pub fn answer(&self) -> Result<crate::guarantee::Answer, UnreadableAnswer> {
        use crate::guarantee::{Answer, GuaranteeResult, Refusal};
        if self.refused {
            Refusal::from_json(&self.json)
                .map(Answer::Refused)
                .map_err(|err| UnreadableAnswer(err.to_string()))
        } else {
            GuaranteeResult::from_json(&self.json)
                .map(Answer::Result)
                .map_err(|err| UnreadableAnswer(err.to_string()))
        }
    }
}

/// A stored answer that is not a guarantee result or a refusal: the store was written by
/// something else.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the stored answer cannot be read: {0}")]
pub struct UnreadableAnswer(String);

/// The hold of one call on its key: the scope and key, an owner token no other call has, and
/// when it expires by the store's clock. Only the holder of the lease completes, renews or
/// releases the key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    scope: Scope,
    key: IdempotencyKey,
    token: String,
    expires: SystemTime,
}

impl Lease {
    /// A lease as a store hands it out.
    pub(crate) fn new(
        scope: Scope,
        key: IdempotencyKey,
        token: String,
        expires: SystemTime,
    ) -> Self {
        Lease {
            scope,
            key,
            token,
            expires,
        }
    }

    /// The scope.
    #[must_use]
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// The key.
    #[must_use]
    pub fn key(&self) -> &IdempotencyKey {
        &self.key
    }

    /// The owner token.
    #[must_use]
    pub fn token(&self) -> &str {
        &self.token
    }

    /// When the lease expires, by the store's clock.
    #[must_use]
    pub fn expires(&self) -> SystemTime {
        self.expires
    }

    /// The same lease, expiring at `expires` (after a renewal).
    pub(crate) fn renewed(&self, expires: SystemTime) -> Self {
        Lease {
            expires,
            ..self.clone()
        }
    }
}

/// A key whose lease expired before any answer was recorded: the call that held it stopped
/// (or lost its store) somewhere between beginning and completing, so whether it took effect
/// is not known. It is **never run again**: the holder of this lease answers it
/// `settlement.state: unknown` with the lookup its [`context`](Abandoned::context) names, and
/// completes the key with that answer, which every later request replays.
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

    /// What the call that began the key stored with it (the id of the operation it would
    /// create, say), to name the lookup.
    #[must_use]
    pub fn context(&self) -> &str {
        &self.context
    }
}

/// What [`Ledger::begin`] found.
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
                .with_retry_at(*until),
            ),
            Begin::Fresh(_) | Begin::Replay(_) | Begin::Abandoned(_) => None,
        }
    }
}

/// Whether completing or releasing a key took effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum Completion {
    /// It did: the answer is recorded (or the key released).
    Recorded,
    /// The lease was lost: its call ran past it and another process took the key for
    /// abandoned and answered it `unknown`, which stays the key's answer.
    LeaseLost,
}

impl Completion {
    /// `Recorded` when the store's guarded statement changed its one row, `LeaseLost` when the
    /// guard (the lease's owner token, no answer yet) matched none.
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
    /// lease was lost.
    fn renew(
        &self,
        lease: &Lease,
    ) -> impl Future<Output = Result<Option<Lease>, Self::Error>> + Send;

    /// Records the answer of a leased key; later begins with the same request replay it.
    fn complete(
        &self,
        lease: &Lease,
        answer: &StoredAnswer,
    ) -> impl Future<Output = Result<Completion, Self::Error>> + Send;

    /// Forgets a leased key whose call provably did nothing (it was refused before any side
    /// effect), so the key can be used again.
    fn release(
        &self,
        lease: &Lease,
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

/// An owner token no other lease has: 128 bits from this process's random hash keys (std
/// seeds them from the operating system), over a counter, the process and the time.
pub(crate) fn new_token() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static KEYS: std::sync::OnceLock<[std::collections::hash_map::RandomState; 2]> =
        std::sync::OnceLock::new();
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let keys = KEYS.get_or_init(Default::default);
    let count = COUNT.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let half = |keys: &std::collections::hash_map::RandomState| {
        let mut hasher = keys.build_hasher();
        hasher.write_u64(count);
        hasher.write_u32(std::process::id());
        hasher.write_u128(nanos);
        hasher.finish()
    };
    format!("{:016x}{:016x}", half(&keys[0]), half(&keys[1]))
}
