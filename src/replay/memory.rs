//! [`MemoryLedger`]: a ledger in memory, for one process and tests.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use super::fingerprint::Fingerprint;
use super::key::IdempotencyKey;
use super::ledger::{Begin, DEFAULT_RETENTION, Ledger, Pending, StoredResponse};

#[derive(Clone, Debug)]
struct Entry {
    fingerprint: Fingerprint,
    begun: SystemTime,
    response: Option<StoredResponse>,
}

/// A ledger in memory: one process, and tests.
#[derive(Debug)]
pub struct MemoryLedger {
    entries: Mutex<HashMap<IdempotencyKey, Entry>>,
    retention: Duration,
}

impl Default for MemoryLedger {
    fn default() -> Self {
        MemoryLedger::new(DEFAULT_RETENTION)
    }
}

impl MemoryLedger {
    /// An empty ledger that forgets keys after `retention`.
    #[must_use]
    pub fn new(retention: Duration) -> Self {
        MemoryLedger {
            entries: Mutex::new(HashMap::new()),
            retention,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<IdempotencyKey, Entry>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The memory ledger cannot fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the memory ledger cannot fail")]
pub struct Infallible;

impl Ledger for MemoryLedger {
    type Error = Infallible;

    fn begin(
        &self,
        key: &IdempotencyKey,
        fingerprint: Fingerprint,
        now: SystemTime,
    ) -> Result<Begin, Infallible> {
        let mut entries = self.lock();
        let expired = entries.get(key).is_some_and(|entry| {
            now.duration_since(entry.begun).unwrap_or_default() > self.retention
        });
        if expired {
            entries.remove(key);
        }
        Ok(match entries.get(key) {
            None => {
                entries.insert(
                    key.clone(),
                    Entry {
                        fingerprint,
                        begun: now,
                        response: None,
                    },
                );
                Begin::Fresh
            }
            Some(entry) if entry.fingerprint != fingerprint => Begin::Mismatch,
            Some(Entry {
                response: Some(response),
                ..
            }) => Begin::Replay(response.clone()),
            Some(_) => Begin::InFlight,
        })
    }

    fn complete(&self, key: &IdempotencyKey, response: StoredResponse) -> Result<(), Infallible> {
        if let Some(entry) = self.lock().get_mut(key)
            && entry.response.is_none()
        {
            entry.response = Some(response);
        }
        Ok(())
    }

    fn in_flight(&self) -> Result<Vec<Pending>, Infallible> {
        Ok(self
            .lock()
            .iter()
            .filter(|(_, entry)| entry.response.is_none())
            .map(|(key, entry)| Pending {
                key: key.clone(),
                fingerprint: entry.fingerprint,
                begun: entry.begun,
            })
            .collect())
    }
}
