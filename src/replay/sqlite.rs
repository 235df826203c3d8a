//! [`SqliteLedger`]: the embedded ledger (feature `sqlite`), one SQLite file with WAL, one
//! transaction (a single statement) per transition.

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, params};

use super::fingerprint::Fingerprint;
use super::key::IdempotencyKey;
use super::ledger::{Begin, DEFAULT_RETENTION, Ledger, Pending, StoredResponse};

/// A ledger in a SQLite file: keys survive the process, so a key begun before a crash is
/// still listed by [`Ledger::in_flight`] after it.
///
/// ```
/// use agent_tool_result::replay::{Begin, Fingerprint, IdempotencyKey, Ledger, SqliteLedger};
/// use std::time::SystemTime;
///
/// let ledger = SqliteLedger::open_in_memory()?;
/// let key = IdempotencyKey::new("k-1")?;
/// let print = Fingerprint::of("send_sms", "acct", &serde_json::json!({ "to": "+1555" }));
/// assert_eq!(ledger.begin(&key, print, SystemTime::now())?, Begin::Fresh);
/// assert_eq!(ledger.begin(&key, print, SystemTime::now())?, Begin::InFlight);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SqliteLedger {
    connection: Mutex<Connection>,
    retention: Duration,
}

/// A SQLite error from the ledger; the driver's error is its `source()`.
#[derive(Debug, thiserror::Error)]
#[error("the SQLite ledger failed")]
pub struct SqliteError(#[source] rusqlite::Error);

const SCHEMA: &str = "
    PRAGMA journal_mode = WAL;
    PRAGMA synchronous = NORMAL;
    CREATE TABLE IF NOT EXISTS idempotency (
        key TEXT PRIMARY KEY,
        fingerprint TEXT NOT NULL,
        begun_ms INTEGER NOT NULL,
        status INTEGER,
        headers TEXT,
        body BLOB
    );";

impl SqliteLedger {
    /// Opens (and creates, if need be) the ledger in the file at `path`.
    ///
    /// # Errors
    ///
    /// [`SqliteError`] when the file cannot be opened or set up.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, SqliteError> {
        SqliteLedger::with(Connection::open(path).map_err(SqliteError)?)
    }

    /// A ledger in memory (for tests).
    ///
    /// # Errors
    ///
    /// [`SqliteError`] when SQLite cannot set it up.
    pub fn open_in_memory() -> Result<Self, SqliteError> {
        SqliteLedger::with(Connection::open_in_memory().map_err(SqliteError)?)
    }

    fn with(connection: Connection) -> Result<Self, SqliteError> {
        connection.execute_batch(SCHEMA).map_err(SqliteError)?;
        connection
            .busy_timeout(Duration::from_secs(5))
            .map_err(SqliteError)?;
        Ok(SqliteLedger {
            connection: Mutex::new(connection),
            retention: DEFAULT_RETENTION,
        })
    }

    /// The ledger with another retention window (24 hours by default).
    #[must_use]
    pub fn with_retention(mut self, retention: Duration) -> Self {
        self.retention = retention;
        self
    }

    /// The rare second try of a key deleted between the insert and the select.
    fn begin_again(
        key: &IdempotencyKey,
        fingerprint: Fingerprint,
        now: SystemTime,
        connection: &Connection,
    ) -> Result<Begin, SqliteError> {
        let inserted = connection
            .execute(
                "INSERT OR IGNORE INTO idempotency (key, fingerprint, begun_ms) VALUES (?1, ?2, ?3)",
                params![key.as_str(), fingerprint.to_hex(), millis(now)],
            )
            .map_err(SqliteError)?;
        Ok(if inserted == 1 {
            Begin::Fresh
        } else {
            Begin::InFlight
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.connection
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A stored key: its fingerprint, and the response once completed.
type Row = (String, Option<u16>, Option<String>, Option<Vec<u8>>);

fn millis(time: SystemTime) -> i64 {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

fn headers_text(headers: &[(String, String)]) -> String {
    serde_json::to_string(headers).unwrap_or_default()
}

impl Ledger for SqliteLedger {
    type Error = SqliteError;

    fn begin(
        &self,
        key: &IdempotencyKey,
        fingerprint: Fingerprint,
        now: SystemTime,
    ) -> Result<Begin, SqliteError> {
        let connection = self.lock();
        let oldest = millis(now) - i64::try_from(self.retention.as_millis()).unwrap_or(i64::MAX);
        // One statement, one transaction: a new key is inserted, an expired one begun afresh,
        // and anything else left as it is.
        let inserted = connection
            .prepare_cached(
                "INSERT INTO idempotency (key, fingerprint, begun_ms) VALUES (?1, ?2, ?3) \
                 ON CONFLICT(key) DO UPDATE SET fingerprint = excluded.fingerprint, \
                 begun_ms = excluded.begun_ms, status = NULL, headers = NULL, body = NULL \
                 WHERE idempotency.begun_ms < ?4",
            )
            .and_then(|mut insert| {
                insert.execute(params![
                    key.as_str(),
                    fingerprint.to_hex(),
                    millis(now),
                    oldest
                ])
            })
            .map_err(SqliteError)?;
        if inserted == 1 {
            return Ok(Begin::Fresh);
        }
        let row: Option<Row> = connection
            .prepare_cached(
                "SELECT fingerprint, status, headers, body FROM idempotency WHERE key = ?1",
            )
            .and_then(|mut select| {
                select
                    .query_row(params![key.as_str()], |row| {
                        Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
                    })
                    .optional()
            })
            .map_err(SqliteError)?;
        Ok(match row {
            // Removed since the insert: begin again.
            None => return SqliteLedger::begin_again(key, fingerprint, now, &connection),
            Some((stored, _, _, _)) if stored != fingerprint.to_hex() => Begin::Mismatch,
            Some((_, Some(status), headers, body)) => Begin::Replay(StoredResponse {
                status,
                headers: headers
                    .and_then(|text| serde_json::from_str(&text).ok())
                    .unwrap_or_default(),
                body: body.unwrap_or_default(),
            }),
            Some(_) => Begin::InFlight,
        })
    }

    fn complete(&self, key: &IdempotencyKey, response: StoredResponse) -> Result<(), SqliteError> {
        // One statement, one transaction; a completed key keeps its first response.
        self.lock()
            .prepare_cached(
                "UPDATE idempotency SET status = ?2, headers = ?3, body = ?4 \
                 WHERE key = ?1 AND status IS NULL",
            )
            .and_then(|mut update| {
                update.execute(params![
                    key.as_str(),
                    response.status,
                    headers_text(&response.headers),
                    response.body
                ])
            })
            .map(|_| ())
            .map_err(SqliteError)
    }

    fn in_flight(&self) -> Result<Vec<Pending>, SqliteError> {
        let connection = self.lock();
        let mut statement = connection
            .prepare("SELECT key, fingerprint, begun_ms FROM idempotency WHERE status IS NULL")
            .map_err(SqliteError)?;
        let rows = statement
            .query_map([], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, i64>(2)?,
                ))
            })
            .map_err(SqliteError)?;
        let mut pending = Vec::new();
        for row in rows {
            let (key, fingerprint, begun) = row.map_err(SqliteError)?;
            let (Ok(key), Some(fingerprint)) = (
                IdempotencyKey::new(key),
                Fingerprint::from_hex(&fingerprint),
            ) else {
                continue;
            };
            pending.push(Pending {
                key,
                fingerprint,
                begun: UNIX_EPOCH + Duration::from_millis(u64::try_from(begun).unwrap_or(0)),
            });
        }
        Ok(pending)
    }
}
