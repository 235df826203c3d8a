//! [`Guard`]: what every statement of the service asks first, its tables' and its ledger's
//! alike: that its SQLite file is still the one it opened (a file deleted or replaced under a
//! running service would take its writes where no other process, nor a restart, sees them),
//! and, with the `faults` feature, whether an injected full disk fails the write.

use crate::db::Target;
use crate::db::error::DbError;

/// The checks every statement makes, shared by the store and the ledger.
#[derive(Debug)]
pub struct Guard {
    file: Option<DbFile>,
    #[cfg(feature = "faults")]
    full_disk: crate::faults::Injected,
}

impl Guard {
    /// The guard of a service on `target`: for a SQLite file, the file itself.
    pub fn new(target: &Target) -> Self {
        Guard {
            file: match target {
                Target::Sqlite(path) => Some(DbFile::open(path)),
                Target::Postgres(_) => None,
            },
            #[cfg(feature = "faults")]
            full_disk: crate::faults::Injected::default(),
        }
    }

    /// Fails once the database file is not the one opened.
    pub fn check(&self) -> Result<(), DbError> {
        self.file
            .as_ref()
            .map_or(Ok(()), |file| file.check().map_err(DbError::Gone))
    }

    /// What every write of the service's asks: [`Guard::check`], and the injected full disk.
    pub fn may_write(&self) -> Result<(), DbError> {
        self.check()?;
        #[cfg(feature = "faults")]
        self.full_disk.may_write()?;
        Ok(())
    }

    /// Injects `full`: from now on, the service's writes fail as a full disk fails them.
    #[cfg(feature = "faults")]
    pub fn inject(&self, full: crate::faults::FullDisk) {
        self.full_disk.set(full);
    }
}

/// The file the service opened, to tell when it is deleted or replaced under it.
#[derive(Debug)]
struct DbFile {
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
