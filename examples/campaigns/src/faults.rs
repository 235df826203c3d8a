//! The faults the service can be told to inject (a disk that fills up), and the check that
//! its SQLite file is still the one it opened.

use std::time::{Duration, Instant};

use crate::db::Target;
use crate::db::error::DbError;

/// A disk that fills up, for fault injection: after `after` writes, every write of the
/// service (its tables and its ledger) fails for `length`, then space is back. The provider's
/// table is the provider's own: its sends never fail this way.
#[derive(Debug)]
pub struct FullDisk {
    /// How many writes succeed first.
    pub after: usize,
    /// How long the disk stays full.
    pub length: Duration,
}

/// The injected faults, shared by the store and the ledger.
#[derive(Debug, Default)]
pub struct Faults {
    full: Option<FullDisk>,
    writes: std::sync::atomic::AtomicUsize,
    until: std::sync::Mutex<Option<Instant>>,
    file: Option<DbFile>,
}

impl Faults {
    /// The faults of a service on `target`: `full`, and for a SQLite file, the file itself
    /// deleted or replaced.
    pub fn new(target: &Target, full: Option<FullDisk>) -> Self {
        Faults {
            full,
            file: match target {
                Target::Sqlite(path) => Some(DbFile::open(path)),
                Target::Postgres(_) => None,
            },
            ..Faults::default()
        }
    }

    /// Fails once the database file is not the one opened.
    pub fn check(&self) -> Result<(), DbError> {
        self.file
            .as_ref()
            .map_or(Ok(()), |file| file.check().map_err(DbError::Gone))
    }

    /// Every write of the service's own asks first: fails while the (injected) disk is full.
    pub fn may_write(&self) -> Result<(), DbError> {
        use std::sync::atomic::Ordering;
        self.check()?;
        let Some(full) = &self.full else {
            return Ok(());
        };
        if self.writes.fetch_add(1, Ordering::SeqCst) < full.after {
            return Ok(());
        }
        let mut until = self
            .until
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let until = *until.get_or_insert_with(|| Instant::now() + full.length);
        if Instant::now() < until {
            Err(DbError::Full)
        } else {
            Ok(())
        }
    }
}

/// The file the service opened, to tell when it is deleted or replaced under it.
#[derive(Debug)]
pub struct DbFile {
    path: std::path::PathBuf,
    identity: Option<(u64, u64)>,
}

impl DbFile {
    fn open(path: &std::path::Path) -> Self {
        DbFile {
            path: path.to_owned(),
            identity: DbFile::identity_of(path),
        }
    }

    #[cfg(unix)]
    fn identity_of(path: &std::path::Path) -> Option<(u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }

    #[cfg(not(unix))]
    fn identity_of(path: &std::path::Path) -> Option<(u64, u64)> {
        std::fs::metadata(path).ok().map(|_| (0, 0))
    }

    /// Fails, naming the path, once it no longer names the file that was opened.
    fn check(&self) -> Result<(), String> {
        if self.identity.is_some() && DbFile::identity_of(&self.path) == self.identity {
            Ok(())
        } else {
            Err(self.path.display().to_string())
        }
    }
}
