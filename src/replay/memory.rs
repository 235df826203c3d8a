//! [`MemoryLedger`]: a ledger in memory, for one process and tests. Its clock is the
//! process's.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use super::fingerprint::Fingerprint;
use super::key::IdempotencyKey;
use super::ledger::{
    Abandoned, Begin, Completion, DEFAULT_LEASE, DEFAULT_RETENTION, Lease, Ledger, Scope,
    StoredAnswer, new_token, store_settings,
};

#[derive(Clone, Debug)]
struct Entry {
    fingerprint: Fingerprint,
    context: String,
    /// The lease holding the key, while it has no answer.
    owner: Option<(String, SystemTime)>,
    /// The answer, and when it was recorded.
    answer: Option<(StoredAnswer, SystemTime)>,
}

/// A ledger in memory: one process, and tests.
#[derive(Debug)]
pub struct MemoryLedger {
    entries: Mutex<HashMap<(Scope, IdempotencyKey), Entry>>,
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
            entries: Mutex::new(HashMap::new()),
            retention: DEFAULT_RETENTION,
            lease: DEFAULT_LEASE,
        }
    }

    store_settings!();

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(Scope, IdempotencyKey), Entry>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn lease_for(&self, scope: &Scope, key: &IdempotencyKey, now: SystemTime) -> Lease {
        Lease::new(scope.clone(), key.clone(), new_token(), now + self.lease)
    }

    fn begin_now(
        &self,
        scope: &Scope,
        key: &IdempotencyKey,
        fingerprint: Fingerprint,
        context: &str,
    ) -> Begin {
        let now = SystemTime::now();
        let mut entries = self.lock();
        let slot = (scope.clone(), key.clone());
        let Some(entry) = entries.get_mut(&slot) else {
            let lease = self.lease_for(scope, key, now);
            let owner = Some((lease.token().to_owned(), lease.expires()));
            entries.insert(
                slot,
                Entry {
                    fingerprint,
                    context: context.to_owned(),
                    owner,
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
                let lease = self.lease_for(scope, key, now);
                entry.owner = Some((lease.token().to_owned(), lease.expires()));
                Begin::Abandoned(Abandoned::new(lease, entry.context.clone()))
            }
        }
    }

    /// The entry a lease still holds.
    fn held<'a>(
        entries: &'a mut HashMap<(Scope, IdempotencyKey), Entry>,
        lease: &Lease,
    ) -> Option<&'a mut Entry> {
        entries
            .get_mut(&(lease.scope().clone(), lease.key().clone()))
            .filter(|entry| {
                entry.answer.is_none()
                    && entry
                        .owner
                        .as_ref()
                        .is_some_and(|(token, _)| token == lease.token())
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
        let until = SystemTime::now() + self.lease;
        let mut entries = self.lock();
        Ok(MemoryLedger::held(&mut entries, lease).map(|entry| {
            entry.owner = Some((lease.token().to_owned(), until));
            lease.renewed(until)
        }))
    }

    async fn complete(
        &self,
        lease: &Lease,
        answer: &StoredAnswer,
    ) -> Result<Completion, Infallible> {
        let mut entries = self.lock();
        Ok(match MemoryLedger::held(&mut entries, lease) {
            Some(entry) => {
                entry.owner = None;
                entry.answer = Some((answer.clone(), SystemTime::now()));
                Completion::Recorded
            }
            None => Completion::LeaseLost,
        })
    }

    async fn release(&self, lease: &Lease) -> Result<Completion, Infallible> {
        let mut entries = self.lock();
        if MemoryLedger::held(&mut entries, lease).is_none() {
            return Ok(Completion::LeaseLost);
        }
        entries.remove(&(lease.scope().clone(), lease.key().clone()));
        Ok(Completion::Recorded)
    }

    async fn abandoned(&self, limit: usize) -> Result<Vec<Abandoned>, Infallible> {
        let now = SystemTime::now();
        let mut entries = self.lock();
        let mut taken = Vec::new();
        for ((scope, key), entry) in entries.iter_mut() {
            if taken.len() == limit {
                break;
            }
            let expired = entry.owner.as_ref().is_none_or(|(_, until)| *until <= now);
            if entry.answer.is_none() && expired {
                let lease = self.lease_for(scope, key, now);
                entry.owner = Some((lease.token().to_owned(), lease.expires()));
                taken.push(Abandoned::new(lease, entry.context.clone()));
            }
        }
        Ok(taken)
    }

    async fn purge(&self, limit: usize) -> Result<usize, Infallible> {
        let Some(cutoff) = SystemTime::now().checked_sub(self.retention) else {
            return Ok(0);
        };
        let mut entries = self.lock();
        let old: Vec<(Scope, IdempotencyKey)> = entries
            .iter()
            .filter(|(_, entry)| entry.answer.as_ref().is_some_and(|(_, at)| *at < cutoff))
            .map(|(slot, _)| slot.clone())
            .take(limit)
            .collect();
        for slot in &old {
            entries.remove(slot);
        }
        Ok(old.len())
    }
}
