//! The service's own tables in the SQLite file it shares with the idempotency ledger: opted-out
//! contacts, campaigns and their recipients, single messages, and the "provider": a table of
//! every send it accepted, duplicates included, so a second send of anyone would show.
//!
//! A recipient is `sending` from the moment it is claimed until the provider's send is
//! recorded as `sent`; a process that stops in between leaves it `sending`, and
//! [`Store::reconcile`] settles it against the provider when the service starts again.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

const SCHEMA: &str = "
    PRAGMA journal_mode = WAL;
    PRAGMA synchronous = NORMAL;
    CREATE TABLE IF NOT EXISTS opt_outs (phone TEXT PRIMARY KEY);
    CREATE TABLE IF NOT EXISTS campaigns (
        id TEXT PRIMARY KEY,
        message TEXT NOT NULL,
        created_ms INTEGER NOT NULL,
        updated_ms INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS recipients (
        campaign_id TEXT NOT NULL REFERENCES campaigns (id),
        phone TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('sending', 'sent', 'held', 'denied')),
        next_attempt_ms INTEGER,
        PRIMARY KEY (campaign_id, phone)
    );
    CREATE INDEX IF NOT EXISTS recipients_due ON recipients (state, next_attempt_ms);
    CREATE TABLE IF NOT EXISTS messages (
        id TEXT PRIMARY KEY,
        phone TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('sending', 'sent', 'not_sent')),
        updated_ms INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS provider_sends (
        seq INTEGER PRIMARY KEY,
        campaign_id TEXT,
        message_id TEXT,
        phone TEXT NOT NULL,
        body TEXT NOT NULL,
        sent_ms INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS provider_by_campaign ON provider_sends (campaign_id, phone);
    CREATE INDEX IF NOT EXISTS provider_by_time ON provider_sends (sent_ms);
    CREATE TABLE IF NOT EXISTS operations (id TEXT PRIMARY KEY, tool TEXT NOT NULL);";

/// The per-window cap on campaign sends.
/// The file the service opened, to tell when it is deleted or replaced under it.
pub struct DbFile {
    path: std::path::PathBuf,
    identity: Option<(u64, u64)>,
}

impl DbFile {
    pub fn open(path: &Path) -> Self {
        DbFile {
            path: path.to_owned(),
            identity: DbFile::identity_of(path),
        }
    }

    #[cfg(unix)]
    fn identity_of(path: &Path) -> Option<(u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }

    #[cfg(not(unix))]
    fn identity_of(path: &Path) -> Option<(u64, u64)> {
        std::fs::metadata(path).ok().map(|_| (0, 0))
    }

    /// Fails, naming the path, once it no longer names the file that was opened.
    pub fn check(&self) -> Result<(), String> {
        if self.identity.is_some() && DbFile::identity_of(&self.path) == self.identity {
            Ok(())
        } else {
            Err(self.path.display().to_string())
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct SendWindow {
    /// Campaign sends allowed in one window.
    pub cap: u64,
    /// The window's length in milliseconds; windows start at multiples of it.
    pub length_ms: i64,
}

impl SendWindow {
    /// When the window holding `now_ms` started.
    fn start(self, now_ms: i64) -> i64 {
        now_ms - now_ms.rem_euclid(self.length_ms)
    }

    /// When the next window starts.
    pub fn next(self, now_ms: i64) -> i64 {
        self.start(now_ms) + self.length_ms
    }
}

/// A campaign as [`Store::create_campaign`] set it up.
#[derive(Debug)]
pub struct Created {
    /// The recipients claimed to send now.
    pub claimed: Vec<String>,
    /// How many are held for a later window.
    pub held: u64,
    /// How many were denied (opted out).
    pub denied: u64,
    /// When the held ones are next attempted.
    pub next_attempt_ms: Option<i64>,
}

/// A recipient claimed for sending: its campaign, number and the campaign's message.
#[derive(Debug)]
pub struct Claim {
    pub campaign_id: String,
    pub phone: String,
    pub message: String,
}

/// Where a campaign stands, as a lookup reports it.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct CampaignRow {
    pub requested: u64,
    pub sending: u64,
    pub sent: u64,
    pub held: u64,
    pub denied: u64,
    pub updated_ms: i64,
    pub next_attempt_ms: Option<i64>,
}

/// A disk that fills up, for fault injection: after `after` writes, every write of the
/// service fails with `SQLITE_FULL` for `length`, then space is back. The provider's table is
/// the provider's own: its sends never fail this way.
#[derive(Debug)]
pub struct FullDisk {
    /// How many writes succeed first.
    pub after: usize,
    /// How long the disk stays full.
    pub length: Duration,
}

#[derive(Debug)]
struct Faults {
    full: FullDisk,
    writes: AtomicUsize,
    until: Mutex<Option<Instant>>,
}

/// The service's tables, behind one connection.
#[derive(Debug)]
pub struct Store {
    connection: Mutex<Connection>,
    faults: Option<Faults>,
}

impl Store {
    /// Opens (and creates, if need be) the tables in the file at `path`.
    pub fn open(path: &Path, full: Option<FullDisk>) -> rusqlite::Result<Self> {
        let connection = Connection::open(path)?;
        connection.busy_timeout(Duration::from_secs(5))?;
        connection.execute_batch(SCHEMA)?;
        Ok(Store {
            connection: Mutex::new(connection),
            faults: full.map(|full| Faults {
                full,
                writes: AtomicUsize::new(0),
                until: Mutex::new(None),
            }),
        })
    }

    /// Every write of the service's own asks first: fails while the (injected) disk is full.
    pub fn may_write(&self) -> rusqlite::Result<()> {
        let Some(faults) = &self.faults else {
            return Ok(());
        };
        if faults.writes.fetch_add(1, Ordering::SeqCst) < faults.full.after {
            return Ok(());
        }
        let mut until = faults.until.lock().unwrap_or_else(PoisonError::into_inner);
        let until = *until.get_or_insert_with(|| Instant::now() + faults.full.length);
        if Instant::now() < until {
            Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
                Some("database or disk is full (injected)".to_owned()),
            ))
        } else {
            Ok(())
        }
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Records that `phone` opted out of messages.
    pub fn opt_out(&self, phone: &str) -> rusqlite::Result<()> {
        self.may_write()?;
        self.lock().execute(
            "INSERT OR IGNORE INTO opt_outs (phone) VALUES (?1)",
            [phone],
        )?;
        Ok(())
    }

    /// Whether `phone` opted out.
    pub fn is_opted_out(&self, phone: &str) -> rusqlite::Result<bool> {
        self.lock()
            .query_row("SELECT 1 FROM opt_outs WHERE phone = ?1", [phone], |_| {
                Ok(())
            })
            .optional()
            .map(|found| found.is_some())
    }

    /// Creates campaign `id` for `recipients` (distinct numbers) in one transaction: opted-out
    /// numbers are denied, as many of the rest as the window has room for are claimed to send
    /// now, and the others are held until the next window.
    pub fn create_campaign(
        &self,
        id: &str,
        message: &str,
        recipients: &[String],
        window: SendWindow,
        now_ms: i64,
    ) -> rusqlite::Result<Created> {
        self.may_write()?;
        let mut connection = self.lock();
        let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO campaigns (id, message, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?3)",
            params![id, message, now_ms],
        )?;
        let mut room = room(&tx, window, now_ms)?;
        let next = window.next(now_ms);
        let mut created = Created {
            claimed: Vec::new(),
            held: 0,
            denied: 0,
            next_attempt_ms: None,
        };
        for phone in recipients {
            let opted_out = tx
                .query_row("SELECT 1 FROM opt_outs WHERE phone = ?1", [phone], |_| {
                    Ok(())
                })
                .optional()?
                .is_some();
            let (state, next_attempt) = if opted_out {
                created.denied += 1;
                ("denied", None)
            } else if room > 0 {
                room -= 1;
                created.claimed.push(phone.clone());
                ("sending", None)
            } else {
                created.held += 1;
                created.next_attempt_ms = Some(next);
                ("held", Some(next))
            };
            tx.execute(
                "INSERT INTO recipients (campaign_id, phone, state, next_attempt_ms) \
                 VALUES (?1, ?2, ?3, ?4)",
                params![id, phone, state, next_attempt],
            )?;
        }
        tx.commit()?;
        Ok(created)
    }

    /// Claims held recipients that are due, as many as the window has room for.
    pub fn claim_due(&self, window: SendWindow, now_ms: i64) -> rusqlite::Result<Vec<Claim>> {
        self.may_write()?;
        let mut connection = self.lock();
        let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let room = room(&tx, window, now_ms)?;
        let claims = {
            let mut due = tx.prepare(
                "SELECT r.campaign_id, r.phone, c.message FROM recipients r \
                 JOIN campaigns c ON c.id = r.campaign_id \
                 WHERE r.state = 'held' AND r.next_attempt_ms <= ?1 \
                 ORDER BY r.next_attempt_ms, r.campaign_id, r.phone LIMIT ?2",
            )?;
            due.query_map(params![now_ms, room], |row| {
                Ok(Claim {
                    campaign_id: row.get(0)?,
                    phone: row.get(1)?,
                    message: row.get(2)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?
        };
        for claim in &claims {
            tx.execute(
                "UPDATE recipients SET state = 'sending', next_attempt_ms = NULL \
                 WHERE campaign_id = ?1 AND phone = ?2",
                params![claim.campaign_id, claim.phone],
            )?;
            touch(&tx, &claim.campaign_id, now_ms)?;
        }
        tx.commit()?;
        Ok(claims)
    }

    /// The provider accepts a send: one row, committed on its own, as a remote provider's
    /// acceptance is independent of the service's own record.
    pub fn provider_send(
        &self,
        campaign_id: Option<&str>,
        message_id: Option<&str>,
        phone: &str,
        body: &str,
        now_ms: i64,
    ) -> rusqlite::Result<()> {
        self.lock().execute(
            "INSERT INTO provider_sends (campaign_id, message_id, phone, body, sent_ms) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![campaign_id, message_id, phone, body, now_ms],
        )?;
        Ok(())
    }

    /// Records a claimed recipient as sent.
    pub fn mark_sent(&self, campaign_id: &str, phone: &str, now_ms: i64) -> rusqlite::Result<()> {
        self.may_write()?;
        let mut connection = self.lock();
        let tx = connection.transaction()?;
        tx.execute(
            "UPDATE recipients SET state = 'sent' WHERE campaign_id = ?1 AND phone = ?2",
            params![campaign_id, phone],
        )?;
        touch(&tx, campaign_id, now_ms)?;
        tx.commit()
    }

    /// Settles what a stopped process (or a call that failed) left `sending` against the
    /// provider: a recipient or message the provider has a send for is `sent`; one it has
    /// none for was never sent, so a recipient is held again, due now, and a message is
    /// `not_sent`. Operations in `running` (still being sent by a live call) are left alone.
    /// Returns how many were settled.
    pub fn reconcile(&self, now_ms: i64, running: &[String]) -> rusqlite::Result<usize> {
        self.may_write()?;
        let running = serde_json::to_string(running).expect("strings serialize");
        let mut connection = self.lock();
        let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "UPDATE campaigns SET updated_ms = ?1 WHERE id IN \
             (SELECT campaign_id FROM recipients WHERE state = 'sending') \
             AND id NOT IN (SELECT value FROM json_each(?2))",
            params![now_ms, running],
        )?;
        let mut settled = tx.execute(
            "UPDATE recipients SET state = 'sent' WHERE state = 'sending' AND EXISTS \
             (SELECT 1 FROM provider_sends p \
              WHERE p.campaign_id = recipients.campaign_id AND p.phone = recipients.phone) \
             AND campaign_id NOT IN (SELECT value FROM json_each(?1))",
            [&running],
        )?;
        settled += tx.execute(
            "UPDATE recipients SET state = 'held', next_attempt_ms = ?1 WHERE state = 'sending' \
             AND campaign_id NOT IN (SELECT value FROM json_each(?2))",
            params![now_ms, running],
        )?;
        settled += tx.execute(
            "UPDATE messages SET state = CASE WHEN EXISTS (SELECT 1 FROM provider_sends p \
             WHERE p.message_id = messages.id) THEN 'sent' ELSE 'not_sent' END, updated_ms = ?1 \
             WHERE state = 'sending' AND id NOT IN (SELECT value FROM json_each(?2))",
            params![now_ms, running],
        )?;
        tx.commit()?;
        Ok(settled)
    }

    /// Records operation `id` of `tool`, before its key is begun (once: the id is the same for
    /// the same key and request).
    pub fn record_operation(&self, id: &str, tool: &str) -> rusqlite::Result<()> {
        self.may_write()?;
        self.lock().execute(
            "INSERT OR IGNORE INTO operations (id, tool) VALUES (?1, ?2)",
            [id, tool],
        )?;
        Ok(())
    }

    /// The tool of operation `id`, if it was recorded.
    pub fn operation(&self, id: &str) -> rusqlite::Result<Option<String>> {
        self.lock()
            .query_row("SELECT tool FROM operations WHERE id = ?1", [id], |row| {
                row.get(0)
            })
            .optional()
    }

    /// Records message `id` to `phone` as being sent.
    pub fn begin_message(&self, id: &str, phone: &str, now_ms: i64) -> rusqlite::Result<()> {
        self.may_write()?;
        self.lock().execute(
            "INSERT INTO messages (id, phone, state, updated_ms) VALUES (?1, ?2, 'sending', ?3)",
            params![id, phone, now_ms],
        )?;
        Ok(())
    }

    /// Records message `id` as sent.
    pub fn message_sent(&self, id: &str, now_ms: i64) -> rusqlite::Result<()> {
        self.may_write()?;
        self.lock().execute(
            "UPDATE messages SET state = 'sent', updated_ms = ?2 WHERE id = ?1",
            params![id, now_ms],
        )?;
        Ok(())
    }

    /// Message `id`'s state and when it last changed.
    pub fn message(&self, id: &str) -> rusqlite::Result<Option<(String, i64)>> {
        self.lock()
            .query_row(
                "SELECT state, updated_ms FROM messages WHERE id = ?1",
                [id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
    }

    /// Campaign `id`'s counts, or `None` when there is no such campaign.
    pub fn campaign(&self, id: &str) -> rusqlite::Result<Option<CampaignRow>> {
        let connection = self.lock();
        let Some(updated_ms) = connection
            .query_row(
                "SELECT updated_ms FROM campaigns WHERE id = ?1",
                [id],
                |row| row.get(0),
            )
            .optional()?
        else {
            return Ok(None);
        };
        let mut row = CampaignRow {
            updated_ms,
            ..CampaignRow::default()
        };
        let mut states = connection.prepare(
            "SELECT state, COUNT(*), MIN(next_attempt_ms) FROM recipients \
             WHERE campaign_id = ?1 GROUP BY state",
        )?;
        let mut rows = states.query([id])?;
        while let Some(state) = rows.next()? {
            let count: u64 = state.get(1)?;
            row.requested += count;
            match state.get_ref(0)?.as_str()? {
                "sending" => row.sending = count,
                "sent" => row.sent = count,
                "held" => {
                    row.held = count;
                    row.next_attempt_ms = state.get(2)?;
                }
                _ => row.denied = count,
            }
        }
        Ok(Some(row))
    }
}

/// Campaign sends the window still has room for: its cap, less the campaign sends the
/// provider accepted in it and the recipients claimed and not yet sent.
fn room(connection: &Connection, window: SendWindow, now_ms: i64) -> rusqlite::Result<u64> {
    let used: u64 = connection.query_row(
        "SELECT (SELECT COUNT(*) FROM provider_sends WHERE campaign_id IS NOT NULL AND sent_ms >= ?1) \
              + (SELECT COUNT(*) FROM recipients WHERE state = 'sending')",
        [window.start(now_ms)],
        |row| row.get(0),
    )?;
    Ok(window.cap.saturating_sub(used))
}

fn touch(connection: &Connection, campaign_id: &str, now_ms: i64) -> rusqlite::Result<()> {
    connection.execute(
        "UPDATE campaigns SET updated_ms = ?2 WHERE id = ?1",
        params![campaign_id, now_ms],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: SendWindow = SendWindow {
        cap: 3,
        length_ms: 3_600_000,
    };

    /// A store in memory: one connection, no files left behind.
    fn store() -> Store {
        Store::open(std::path::Path::new(":memory:"), None).unwrap()
    }

    fn phones(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("+1555000{i:04}")).collect()
    }

    /// The three places a stop can fall: before the provider, between the provider and the
    /// record, and after both. Only the first is sent again, and the window's room counts
    /// what the provider already accepted.
    #[test]
    fn reconcile_settles_each_place_a_stop_can_fall() {
        let store = store();
        let now = 7_200_000;
        let created = store
            .create_campaign("cmp_a", "hi", &phones(5), WINDOW, now)
            .unwrap();
        assert_eq!((created.claimed.len(), created.held), (3, 2));
        let [recorded, unrecorded, unsent] = [0, 1, 2].map(|i| created.claimed[i].clone());
        store
            .provider_send(Some("cmp_a"), None, &recorded, "hi", now)
            .unwrap();
        store.mark_sent("cmp_a", &recorded, now).unwrap();
        store
            .provider_send(Some("cmp_a"), None, &unrecorded, "hi", now)
            .unwrap();
        store.begin_message("msg_a", "+15559990000", now).unwrap();
        store.begin_message("msg_b", "+15559990001", now).unwrap();
        store
            .provider_send(None, Some("msg_b"), "+15559990001", "hi", now)
            .unwrap();

        assert_eq!(store.reconcile(now + 1, &[]).unwrap(), 4);
        let row = store.campaign("cmp_a").unwrap().unwrap();
        assert_eq!((row.sent, row.sending, row.held), (2, 0, 3));
        assert_eq!(store.message("msg_a").unwrap().unwrap().0, "not_sent");
        assert_eq!(store.message("msg_b").unwrap().unwrap().0, "sent");

        // Only the unsent recipient is due now, and the window has room for it alone.
        let claims = store.claim_due(WINDOW, now + 2).unwrap();
        assert_eq!(claims.len(), 1);
        assert_eq!(claims[0].phone, unsent);
    }

    #[test]
    fn opted_out_recipients_are_denied_and_never_claimed() {
        let store = store();
        let all = phones(4);
        store.opt_out(&all[0]).unwrap();
        let created = store
            .create_campaign("cmp_b", "hi", &all, WINDOW, 0)
            .unwrap();
        assert_eq!(
            (created.denied, created.claimed.len(), created.held),
            (1, 3, 0)
        );
        assert!(!created.claimed.contains(&all[0]));
        assert_eq!(created.next_attempt_ms, None);
    }
}
