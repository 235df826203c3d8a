//! The ledger's table on SQLite and the statements on it, each transition one statement on
//! SQLite's clock (milliseconds since 1970).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub(super) const SCHEMA: &str = "
    PRAGMA journal_mode = WAL;
    PRAGMA synchronous = NORMAL;
    CREATE TABLE IF NOT EXISTS atr_idempotency (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        context TEXT NOT NULL,
        claims INTEGER NOT NULL DEFAULT 0,
        fence INTEGER,
        lease_until_ms INTEGER,
        completed_ms INTEGER,
        refused INTEGER,
        answer TEXT,
        provisional INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (scope, key)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS atr_idempotency_completed
        ON atr_idempotency (completed_ms) WHERE completed_ms IS NOT NULL;
    CREATE TABLE IF NOT EXISTS atr_fence (id INTEGER PRIMARY KEY CHECK (id = 1), last INTEGER NOT NULL);
    INSERT OR IGNORE INTO atr_fence (id, last) VALUES (1, 0);
";

/// The columns a table made by an earlier release lacks, each with the statement that adds
/// it: fences, then provisional answers.
pub(super) const MIGRATIONS: [(&str, &str); 2] = [
    (
        "fence",
        "ALTER TABLE atr_idempotency ADD COLUMN fence INTEGER",
    ),
    (
        "provisional",
        "ALTER TABLE atr_idempotency ADD COLUMN provisional INTEGER NOT NULL DEFAULT 0",
    ),
];

/// The next fence: one counter for the file, so a fence is greater than every one before it,
/// whichever key it was for, and never handed out twice (a key released and begun again
/// gets a greater one).
pub(super) const NEXT_FENCE: &str =
    "UPDATE atr_fence SET last = last + 1 WHERE id = 1 RETURNING last";

/// Takes `?1` fences at once: the last of them is returned, the others are the ones below it.
pub(super) const NEXT_FENCES: &str =
    "UPDATE atr_fence SET last = last + ?1 WHERE id = 1 RETURNING last";

/// Whether `lease` guards the key: its fence is the key's and it has not passed.
macro_rules! held {
    () => {
        concat!(
            "scope = ?1 AND key = ?2 AND fence = ?3 AND completed_ms IS NULL AND lease_until_ms > ",
            now!()
        )
    };
}

/// SQLite's clock, in milliseconds since 1970, spliced into each statement's text.
macro_rules! now {
    () => {
        "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
    };
}

/// A new key is inserted; an abandoned one (lease expired, no answer, the same request) is
/// taken over; anything else is left as it is, and nothing is returned.
pub(super) const BEGIN: &str = concat!(
    "INSERT INTO atr_idempotency (scope, key, fingerprint, context, fence, lease_until_ms) ",
    "VALUES (?1, ?2, ?3, ?4, ?5, ",
    now!(),
    " + ?6) ",
    "ON CONFLICT (scope, key) DO UPDATE SET fence = excluded.fence, ",
    "lease_until_ms = excluded.lease_until_ms, claims = claims + 1 ",
    "WHERE completed_ms IS NULL AND lease_until_ms <= ",
    now!(),
    " ",
    "AND fingerprint = excluded.fingerprint ",
    "RETURNING claims, context, lease_until_ms"
);

pub(super) const LOOKUP: &str = "SELECT fingerprint, refused, answer, lease_until_ms, provisional \
    FROM atr_idempotency WHERE scope = ?1 AND key = ?2";

pub(super) const RENEW: &str = concat!(
    "UPDATE atr_idempotency SET lease_until_ms = ",
    now!(),
    " + ?4 WHERE ",
    held!(),
    " RETURNING lease_until_ms"
);

/// The answer `(?4, ?5, ?6)` (refused, answer, provisional) recorded under the lease
/// `(?1, ?2, ?3)`, guarded by `$guard`.
macro_rules! record {
    ($guard:expr) => {
        concat!(
            "UPDATE atr_idempotency SET completed_ms = ",
            now!(),
            ", refused = ?4, answer = ?5, provisional = ?6, lease_until_ms = NULL WHERE ",
            $guard
        )
    };
}

pub(super) const COMPLETE: &str = record!(held!());

pub(super) const RELEASE: &str = concat!("DELETE FROM atr_idempotency WHERE ", held!());

/// A provisional answer of a key taken over after the lease `(?1, ?2, ?3)`, replaced by the
/// truth `(?4, ?5)`.
pub(super) const RESOLVE: &str = concat!(
    "UPDATE atr_idempotency SET completed_ms = ",
    now!(),
    ", refused = ?4, answer = ?5, provisional = 0 WHERE scope = ?1 AND key = ?2 \
     AND fence > ?3 AND provisional = 1 AND completed_ms IS NOT NULL"
);

/// A provisional answer of a key taken over after the lease `(?1, ?2, ?3)`, forgotten: the
/// call did nothing.
pub(super) const RESOLVE_RELEASE: &str = "DELETE FROM atr_idempotency WHERE scope = ?1 AND key = ?2 \
    AND fence > ?3 AND provisional = 1 AND completed_ms IS NOT NULL";

/// The keys whose lease expired without an answer: read without taking the write lock (there
/// is no index for it, so that a call's statements write one index fewer; a sweep is rare).
pub(super) const CANDIDATES: &str = concat!(
    "SELECT scope, key FROM atr_idempotency WHERE completed_ms IS NULL AND lease_until_ms <= ",
    now!(),
    " LIMIT ?1"
);

/// Takes one abandoned key, if it still is one.
pub(super) const CLAIM: &str = concat!(
    "UPDATE atr_idempotency SET fence = ?3, lease_until_ms = ",
    now!(),
    " + ?4, ",
    "claims = claims + 1 WHERE scope = ?1 AND key = ?2 AND completed_ms IS NULL ",
    "AND lease_until_ms <= ",
    now!(),
    " RETURNING context, lease_until_ms"
);

pub(super) const PURGE: &str = concat!(
    "DELETE FROM atr_idempotency WHERE (scope, key) IN (SELECT scope, key FROM atr_idempotency ",
    "WHERE completed_ms IS NOT NULL AND completed_ms < ",
    now!(),
    " - ?1 LIMIT ?2)"
);

/// A time the table holds (milliseconds since 1970), as a [`SystemTime`].
pub(super) fn instant(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}
