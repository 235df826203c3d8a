//! [`MemoryLedger`]: a ledger in memory, for one process and tests. Its clock is the
//! process's.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use super::fence::Fence;
use super::fingerprint::Fingerprint;
use super::key::IdempotencyKey;
use super::lease::Lease;
use super::ledger::{
    Abandoned, Begin, Completion, DEFAULT_LEASE, DEFAULT_RETENTION, Ledger, store_settings,
};
use super::scope::Scope;
use super::stored::StoredAnswer;

/// The keys, and the last fence handed out.
#[derive(Debug, Default)]
struct State {
    keys: HashMap<(Scope, IdempotencyKey), Entry>,
    fence: u64,
}

#[derive(Clone, Debug)]
struct Entry {
    fingerprint: Fingerprint,
    context: String,
    /// The fence of the lease holding the key and its expiry, while it has no answer.
    owner: Option<(Fence, SystemTime)>,
    /// The last fence the key was held under.
    fence: Fence,
    /// The answer, and when it was recorded.
    answer: Option<(StoredAnswer, SystemTime)>,
}

/// A ledger in memory: one process, and tests.
///
/// ```
/// use agent_tool_result::guarantee::{Answer, GuaranteeResult};
/// use agent_tool_result::replay::{Call, IdempotencyKey, MemoryLedger, ReplyKind, Sequence};
/// use serde_json::json;
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let sequence = Sequence::new(MemoryLedger::new().with_lease(Duration::from_secs(60)));
/// let args = json!({ "to": "+15550100" });
/// let call = || Call::of("send_sms", "acct_1", IdempotencyKey::new("k-3").unwrap(), &args);
/// let tool = |_lease| async { Answer::Result(GuaranteeResult::<agent_tool_result::JsonObject>::committed()) };
/// assert_eq!(sequence.run(call(), tool).await.kind(), ReplyKind::Ran);
/// assert_eq!(sequence.run(call(), tool).await.kind(), ReplyKind::Replayed);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct MemoryLedger {
    entries: Mutex<State>,
    retention: Duration,
    lease: Duration,
}

impl Default for MemoryLedger {
    fn default() -> Self {
        MemoryLedger::new()
    }
}

impl MemoryLedger {
    /// An empty ledger, with the default retention window and lease.
    #[must_use]
    pub fn new() -> Self {
        MemoryLedger {
            entries: Mutex::new(State::default()),
            retention: DEFAULT_RETENTION,
            lease: DEFAULT_LEASE,
        }
    }

    store_settings!();

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A lease on `key` under the next fence.
    fn lease_for(
        &self,
        fence: &mut u64,
        scope: &Scope,
        key: &IdempotencyKey,
        now: SystemTime,
    ) -> Lease {
        *fence += 1;
        Lease::new(
            scope.clone(),
            key.clone(),
            Fence::new(*fence),
            now + self.lease,
            Instant::now(),
            self.lease,
        )
    }

    fn begin_now(
        &self,
        scope: &Scope,
        key: &IdempotencyKey,
        fingerprint: Fingerprint,
        context: &str,
    ) -> Begin {
        let now = SystemTime::now();
        let mut state = self.lock();
        let State { keys, fence } = &mut *state;
        let slot = (scope.clone(), key.clone());
        let Some(entry) = keys.get_mut(&slot) else {
            let lease = self.lease_for(fence, scope, key, now);
            let owner = Some((lease.fence(), lease.expires()));
            keys.insert(
                slot,
                Entry {
                    fingerprint,
                    context: context.to_owned(),
                    owner,
                    fence: lease.fence(),
                    answer: None,
                },
            );
            return Begin::Fresh(lease);
        };
        if entry.fingerprint != fingerprint {
            return Begin::Mismatch;
        }
        if let Some((answer, _)) = &entry.answer {
            return Begin::Replay(answer.clone());
        }
        match entry.owner {
            Some((_, until)) if until > now => Begin::InFlight { until },
            _ => {
                let lease = self.lease_for(fence, scope, key, now);
                entry.owner = Some((lease.fence(), lease.expires()));
                entry.fence = lease.fence();
                Begin::Abandoned(Abandoned::new(lease, entry.context.clone()))
            }
        }
    }

    /// The entry a lease still holds: its fence is the key's, and it has not passed.
    fn held<'a>(state: &'a mut State, lease: &Lease) -> Option<&'a mut Entry> {
        let now = SystemTime::now();
        state
            .keys
            .get_mut(&(lease.scope().clone(), lease.key().clone()))
            .filter(|entry| {
                entry.answer.is_none()
                    && entry
                        .owner
                        .is_some_and(|(fence, until)| fence == lease.fence() && until > now)
            })
    }
}

impl Ledger for MemoryLedger {
    type Error = Infallible;

    async fn begin(
        &self,
        scope: &Scope,
        key: &IdempotencyKey,
        fingerprint: Fingerprint,
        context: &str,
    ) -> Result<Begin, Infallible> {
        Ok(self.begin_now(scope, key, fingerprint, context))
    }

    async fn renew(&self, lease: &Lease) -> Result<Option<Lease>, Infallible> {
        let asked = Instant::now();
        let until = SystemTime::now() + self.lease;
        let mut state = self.lock();
        Ok(MemoryLedger::held(&mut state, lease).map(|entry| {
            entry.owner = Some((lease.fence(), until));
            lease.renewed(until, asked, self.lease)
        }))
    }

    async fn complete(
        &self,
        lease: &Lease,
        answer: &StoredAnswer,
    ) -> Result<Completion, Infallible> {
        let mut state = self.lock();
        Ok(match MemoryLedger::held(&mut state, lease) {
            Some(entry) => {
                entry.owner = None;
                entry.answer = Some((answer.clone(), SystemTime::now()));
                Completion::Recorded
            }
            None => Completion::LeaseLost,
        })
    }

    async fn release(&self, lease: &Lease) -> Result<Completion, Infallible> {
        let mut state = self.lock();
        if MemoryLedger::held(&mut state, lease).is_none() {
            return Ok(Completion::LeaseLost);
        }
        state
            .keys
            .remove(&(lease.scope().clone(), lease.key().clone()));
        Ok(Completion::Recorded)
    }

    async fn resolve(
        &self,
        lease: &Lease,
        truth: Option<&StoredAnswer>,
    ) -> Result<Completion, Infallible> {
        let mut state = self.lock();
        let slot = (lease.scope().clone(), lease.key().clone());
        let Some(entry) = state.keys.get_mut(&slot) else {
            return Ok(Completion::LeaseLost);
        };
        let provisional = entry
            .answer
            .as_ref()
            .is_some_and(|(answer, _)| answer.is_provisional());
        if !provisional || entry.fence <= lease.fence() {
            return Ok(Completion::LeaseLost);
        }
        match truth {
            Some(truth) => entry.answer = Some((truth.clone(), SystemTime::now())),
            None => {
                state.keys.remove(&slot);
            }
        }
        Ok(Completion::Recorded)
    }

    async fn abandoned(&self, limit: usize) -> Result<Vec<Abandoned>, Infallible> {
        let now = SystemTime::now();
        let mut state = self.lock();
        let State { keys, fence } = &mut *state;
        let mut taken = Vec::new();
        for ((scope, key), entry) in keys.iter_mut() {
            if taken.len() == limit {
                break;
            }
            let expired = entry.owner.as_ref().is_none_or(|(_, until)| *until <= now);
            if entry.answer.is_none() && expired {
                let lease = self.lease_for(fence, scope, key, now);
                entry.owner = Some((lease.fence(), lease.expires()));
                entry.fence = lease.fence();
                taken.push(Abandoned::new(lease, entry.context.clone()));
            }
        }
        Ok(taken)
    }

    async fn purge(&self, limit: usize) -> Result<usize, Infallible> {
        let Some(cutoff) = SystemTime::now().checked_sub(self.retention) else {
            return Ok(0);
        };
        let mut state = self.lock();
        let old: Vec<(Scope, IdempotencyKey)> = state
            .keys
            .iter()
            .filter(|(_, entry)| entry.answer.as_ref().is_some_and(|(_, at)| *at < cutoff))
            .map(|(slot, _)| slot.clone())
            .take(limit)
            .collect();
        for slot in &old {
            state.keys.remove(slot);
        }
        Ok(old.len())
    }
}
