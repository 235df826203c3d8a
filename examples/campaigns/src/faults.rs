//! Fault injection (feature `faults`, for the service's tests; no part of the model to copy):
//! a disk that fills up, so a test can watch the service recover from one without a restart.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use crate::db::error::DbError;

/// A disk that fills up: after `after` writes, every write of the service (its tables and its
/// ledger) fails for `length`, then space is back. The provider's table is the provider's
/// own: its sends never fail this way.
#[derive(Debug)]
pub struct FullDisk {
    /// How many writes succeed first.
    pub after: usize,
    /// How long the disk stays full.
    pub length: Duration,
}

/// A full disk, once injected: the writes counted so far, and when space is back.
#[derive(Debug, Default)]
pub struct Injected {
    full: OnceLock<FullDisk>,
    writes: AtomicUsize,
    until: Mutex<Option<Instant>>,
}

impl Injected {
    /// Injects `full` (once; a second is ignored).
    pub fn set(&self, full: FullDisk) {
        let _ = self.full.set(full);
    }

    /// Fails while the injected disk is full.
    pub fn may_write(&self) -> Result<(), DbError> {
        let Some(full) = self.full.get() else {
            return Ok(());
        };
        if self.writes.fetch_add(1, Ordering::SeqCst) < full.after {
            return Ok(());
        }
        let mut until = self.until.lock().unwrap_or_else(PoisonError::into_inner);
        let until = *until.get_or_insert_with(|| Instant::now() + full.length);
        if Instant::now() < until {
            Err(DbError::Full)
        } else {
            Ok(())
        }
    }
}
