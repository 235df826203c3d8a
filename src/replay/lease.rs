//! [`Lease`]: the hold of one call on its key, shared by the call's tool and its keepalive.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use super::fence::{EffectKey, Fence};
use super::fingerprint::Fingerprint;
use super::key::IdempotencyKey;
use super::scope::Scope;

/// The hold of one call on its key: the scope and key, its [`Fence`], and when it expires by
/// the store's clock. Only the holder of the current fence, before its lease has passed,
/// completes, renews or releases the key.
///
/// Its holder also knows a conservative deadline by its own clock (measured from before the
/// store was asked), for [`Lease::remaining`]: a side effect that no provider deduplicates
/// should not start with less than a safe margin left.
///
/// ```
/// use agent_tool_result::replay::{Begin, Fingerprint, IdempotencyKey, Ledger, MemoryLedger, Scope};
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let ledger = MemoryLedger::new();
/// let key = IdempotencyKey::new("order-7")?;
/// let print = Fingerprint::of("send_sms", "acct_1", &json!({ "to": "+15550100" }));
/// let Begin::Fresh(lease) = ledger.begin(&Scope::principal("acct_1"), &key, print, "msg_1").await? else {
///     unreachable!("a new key")
/// };
/// // What a tool's own writes check, and what it hands a provider that deduplicates.
/// assert!(lease.fence().get() > 0);
/// assert_eq!(lease.effect_key("+15550100"), lease.effect_key("+15550100"));
/// assert!(!lease.remaining().is_zero());
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Lease {
    scope: Scope,
    key: IdempotencyKey,
    fence: Fence,
    length: Duration,
    /// Shared by every clone: the keepalive renews the one term the tool reads.
    term: Arc<Mutex<Term>>,
    /// For a call whose effect is in the ledger's database, whose key is not begun yet: what
    /// the typed transaction begins it with, inside the effect's own transaction.
    effect_in_ledger: Option<Arc<KeyToBegin>>,
}

/// A key to begin inside the transaction of its call's effect: its request's fingerprint and
/// the context stored with it (read by the SQL stores' typed transactions).
#[derive(Debug)]
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) struct KeyToBegin {
    pub(crate) fingerprint: Fingerprint,
    pub(crate) context: String,
}

/// Where a lease stands: its expiry by the store's clock, its deadline by this process's,
/// and whether it is known to be lost.
#[derive(Clone, Copy, Debug)]
struct Term {
    expires: SystemTime,
    deadline: Instant,
    lost: bool,
}

/// Two leases are the same hold when they name one key under one fence.
impl PartialEq for Lease {
    fn eq(&self, other: &Self) -> bool {
        (&self.scope, &self.key, self.fence) == (&other.scope, &other.key, other.fence)
    }
}

impl Eq for Lease {}

impl Lease {
    /// A lease as a store hands it out: `asked` is when the store was asked for it (by this
    /// process's monotonic clock), `length` the store's lease time.
    pub(crate) fn new(
        scope: Scope,
        key: IdempotencyKey,
        fence: Fence,
        expires: SystemTime,
        asked: Instant,
        length: Duration,
    ) -> Self {
        Lease {
            scope,
            key,
            fence,
            length,
            term: Arc::new(Mutex::new(Term {
                expires,
                deadline: asked + length,
                lost: false,
            })),
            effect_in_ledger: None,
        }
    }

    /// The lease of a key not begun yet: the typed transaction of the call's effect begins
    /// it (checking that nobody has) and records it with its answer, in one transaction. It
    /// carries no fence (a fence of 0, which no key holds).
    pub(crate) fn for_effect_in_ledger(
        scope: Scope,
        key: IdempotencyKey,
        fingerprint: Fingerprint,
        context: String,
        length: Duration,
    ) -> Self {
        let now = Instant::now();
        Lease {
            effect_in_ledger: Some(Arc::new(KeyToBegin {
                fingerprint,
                context,
            })),
            ..Lease::new(
                scope,
                key,
                Fence::new(0),
                SystemTime::now() + length,
                now,
                length,
            )
        }
    }

    /// Whether the call's effect is in the ledger's database, its key begun by the typed
    /// transaction of that effect at its commit
    /// ([`Call::with_effect_in_ledger`](super::Call::with_effect_in_ledger)) rather than
    /// before the tool ran. The typed transactions read it; a tool need not.
    #[must_use]
    pub fn effect_in_ledger(&self) -> bool {
        self.effect_in_ledger.is_some()
    }

    /// What to begin the key with, when its effect is in the ledger and it is not begun yet.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn key_to_begin(&self) -> Option<&KeyToBegin> {
        self.effect_in_ledger.as_deref()
    }

    fn term(&self) -> Term {
        *self.term.lock().unwrap_or_else(PoisonError::into_inner)
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

    /// The fencing token: pass it to every write the call makes that must not land once the
    /// key is another's (see [`Fence`]).
    #[must_use]
    pub fn fence(&self) -> Fence {
        self.fence
    }

    /// When the lease expires, by the store's clock (later after each renewal).
    #[must_use]
    pub fn expires(&self) -> SystemTime {
        self.term().expires
    }

    /// The store's lease time: how long each grant or renewal holds.
    #[must_use]
    pub fn length(&self) -> Duration {
        self.length
    }

    /// How much of the lease is left by this process's monotonic clock, counted from before
    /// the store was asked for it (so never more than the store would grant), and zero once
    /// it has passed or is known to be lost (a renewal found the key another's). The
    /// [`Sequence`](super::Sequence) renews it while the tool runs, so this stays above zero
    /// as long as the store keeps granting it. A pause of the process counts, as it should.
    #[must_use]
    pub fn remaining(&self) -> Duration {
        let term = self.term();
        if term.lost {
            return Duration::ZERO;
        }
        term.deadline.saturating_duration_since(Instant::now())
    }

    /// Whether the lease still holds its key as far as this process knows: false once it has
    /// passed by this process's clock, or a renewal found it lost. Ask before each effect
    /// that no fence or provider guards; a write checked against the fence is safe either
    /// way.
    #[must_use]
    pub fn is_held(&self) -> bool {
        !self.remaining().is_zero()
    }

    /// The effect key of `part` of this call's operation (a recipient, say): the same for
    /// every holder of this key, whatever its fence, so a provider that deduplicates on it
    /// performs the part once however many holders ask. See [`EffectKey`].
    #[must_use]
    pub fn effect_key(&self, part: &str) -> EffectKey {
        EffectKey::of(&[self.scope.as_str(), self.key.as_str()], part)
    }

    /// The same lease, renewed: expiring at `expires` (after a renewal asked at `asked`).
    /// Every clone sees the new term.
    pub(crate) fn renewed(&self, expires: SystemTime, asked: Instant, length: Duration) -> Self {
        {
            let mut term = self.term.lock().unwrap_or_else(PoisonError::into_inner);
            if !term.lost {
                term.expires = expires;
                term.deadline = term.deadline.max(asked + length);
            }
        }
        self.clone()
    }

    /// Marks the lease lost: a renewal found the key another's, or the store said so.
    pub(crate) fn lose(&self) {
        self.term
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .lost = true;
    }
}
