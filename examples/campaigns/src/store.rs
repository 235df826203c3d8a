//! The service's own tables, in the database it shares with the idempotency ledger (SQLite or
//! PostgreSQL, see [`crate::db`]): opted-out contacts, campaigns and their recipients, single
//! messages, and the "provider": a table of every send it accepted, duplicates included, so a
//! second send of anyone would show.
//!
//! Every campaign and message belongs to the principal whose call created it; a lookup by
//! another principal finds nothing.
//!
//! A recipient (or message) is `sending` from the moment it is claimed until the provider's
//! send is recorded as `sent`. A claim carries a lease: its owner (one process) and an expiry
//! by the database's clock. The owner renews the claim just before it hands the recipient to
//! the provider, and sends only if the claim is still its own, so a recipient is sent by one
//! process at most, as long as no process stalls between that renewal and the provider's
//! acceptance for longer than the lease (which is why the lease is far longer than a send:
//! 30 seconds by default; a provider that took an idempotency key per recipient would close
//! even that gap). A process that stops leaves claims that expire; any live process then
//! settles them against the provider ([`Store::reconcile`]): sent if the provider has the
//! send, held again (due now) if not, so nobody is sent twice and nobody is dropped.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::db::{Conn, Db, DbError, Target};

const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS opt_outs (phone text PRIMARY KEY);
    CREATE TABLE IF NOT EXISTS campaigns (
        id text PRIMARY KEY,
        principal text NOT NULL,
        message text NOT NULL,
        created_ms bigint NOT NULL,
        updated_ms bigint NOT NULL
    );
    CREATE TABLE IF NOT EXISTS recipients (
        campaign_id text NOT NULL REFERENCES campaigns (id),
        phone text NOT NULL,
        state text NOT NULL CHECK (state IN ('sending', 'sent', 'held', 'denied')),
        next_attempt_ms bigint,
        owner text,
        claim_until_ms bigint,
        PRIMARY KEY (campaign_id, phone)
    );
    CREATE INDEX IF NOT EXISTS recipients_due ON recipients (state, next_attempt_ms);
    CREATE TABLE IF NOT EXISTS messages (
        id text PRIMARY KEY,
        principal text NOT NULL,
        phone text NOT NULL,
        state text NOT NULL CHECK (state IN ('sending', 'sent', 'not_sent')),
        updated_ms bigint NOT NULL,
        owner text,
        claim_until_ms bigint
    );
    CREATE TABLE IF NOT EXISTS provider_sends (
        seq SERIAL,
        campaign_id text,
        message_id text,
        phone text NOT NULL,
        body text NOT NULL,
        sent_ms bigint NOT NULL,
        sender text NOT NULL
    );
    CREATE INDEX IF NOT EXISTS provider_by_campaign ON provider_sends (campaign_id, phone);
    CREATE INDEX IF NOT EXISTS provider_by_time ON provider_sends (sent_ms);";

/// The per-window cap on campaign sends.
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

/// The service's tables.
pub struct Store {
    db: Db,
    faults: Arc<Faults>,
    /// This process, as the owner of its claims.
    owner: String,
    /// How long a claim holds.
    lease_ms: i64,
}

/// The database's clock, in milliseconds.
async fn now(conn: &mut Conn<'_>) -> Result<i64, DbError> {
    Ok(conn.query("SELECT NOW_MS", &[]).await?[0].int(0))
}

impl Store {
    /// Opens (and creates, if need be) the tables at `target`, under the injected `full`
    /// disk, with `owner` as this process's name on its claims.
    pub async fn open(
        target: &Target,
        full: Option<FullDisk>,
        owner: String,
        lease: Duration,
    ) -> Result<Self, DbError> {
        let db = Db::open(target, SCHEMA).await?;
        // Once the file exists: it is the one to tell a replacement from.
        let faults = Arc::new(Faults::new(target, full));
        Ok(Store {
            db,
            faults,
            owner,
            lease_ms: i64::try_from(lease.as_millis()).unwrap_or(i64::MAX),
        })
    }

    /// The faults the store is under, for the ledger beside it.
    pub fn faults(&self) -> Arc<Faults> {
        Arc::clone(&self.faults)
    }

    /// A connection, once the file is checked.
    async fn conn(&self) -> Result<Conn<'_>, DbError> {
        self.faults.check()?;
        self.db.conn().await
    }

    /// A connection for a write of the service's own.
    async fn writer(&self) -> Result<Conn<'_>, DbError> {
        self.faults.may_write()?;
        self.db.conn().await
    }

    /// Records that `phone` opted out of messages.
    pub async fn opt_out(&self, phone: &str) -> Result<(), DbError> {
        let sql = "INSERT INTO opt_outs (phone) VALUES ($1) ON CONFLICT DO NOTHING";
        self.writer().await?.execute(sql, &[phone.into()]).await?;
        Ok(())
    }

    /// Whether `phone` opted out.
    pub async fn is_opted_out(&self, phone: &str) -> Result<bool, DbError> {
        let sql = "SELECT 1 FROM opt_outs WHERE phone = $1";
        Ok(!self
            .conn()
            .await?
            .query(sql, &[phone.into()])
            .await?
            .is_empty())
    }

    /// Creates campaign `id` of `principal` for `recipients` (distinct numbers) in one
    /// exclusive transaction: opted-out numbers are denied, as many of the rest as the window
    /// has room for are claimed to send now, and the others are held until the next window.
    pub async fn create_campaign(
        &self,
        id: &str,
        principal: &str,
        message: &str,
        recipients: &[String],
        window: SendWindow,
    ) -> Result<Created, DbError> {
        let mut conn = self.writer().await?;
        conn.begin_exclusive().await?;
        let now = now(&mut conn).await?;
        conn.execute(
            "INSERT INTO campaigns (id, principal, message, created_ms, updated_ms) \
             VALUES ($1, $2, $3, $4, $4)",
            &[id.into(), principal.into(), message.into(), now.into()],
        )
        .await?;
        let mut room = room(&mut conn, window, now).await?;
        let next = window.next(now);
        let mut created = Created {
            claimed: Vec::new(),
            held: 0,
            denied: 0,
            next_attempt_ms: None,
        };
        for phone in recipients {
            let opted_out = !conn
                .query(
                    "SELECT 1 FROM opt_outs WHERE phone = $1",
                    &[phone.as_str().into()],
                )
                .await?
                .is_empty();
            let (state, next_attempt, owner) = if opted_out {
                created.denied += 1;
                ("denied", None, None)
            } else if room > 0 {
                room -= 1;
                created.claimed.push(phone.clone());
                ("sending", None, Some(self.owner.as_str()))
            } else {
                created.held += 1;
                created.next_attempt_ms = Some(next);
                ("held", Some(next), None)
            };
            conn.execute(
                "INSERT INTO recipients (campaign_id, phone, state, next_attempt_ms, owner, \
                 claim_until_ms) VALUES ($1, $2, $3, $4, $5, $6)",
                &[
                    id.into(),
                    phone.as_str().into(),
                    state.into(),
                    next_attempt.into(),
                    owner.into(),
                    owner.map(|_| now + self.lease_ms).into(),
                ],
            )
            .await?;
        }
        conn.commit().await?;
        Ok(created)
    }

    /// Claims held recipients that are due, as many as the window has room for.
    pub async fn claim_due(&self, window: SendWindow) -> Result<Vec<Claim>, DbError> {
        let mut conn = self.writer().await?;
        conn.begin_exclusive().await?;
        let now = now(&mut conn).await?;
        let room = room(&mut conn, window, now).await?;
        let claims: Vec<Claim> = conn
            .query(
                "SELECT r.campaign_id, r.phone, c.message FROM recipients r \
                 JOIN campaigns c ON c.id = r.campaign_id \
                 WHERE r.state = 'held' AND r.next_attempt_ms <= $1 \
                 ORDER BY r.next_attempt_ms, r.campaign_id, r.phone LIMIT $2",
                &[now.into(), i64::try_from(room).unwrap_or(i64::MAX).into()],
            )
            .await?
            .iter()
            .map(|row| Claim {
                campaign_id: row.text(0),
                phone: row.text(1),
                message: row.text(2),
            })
            .collect();
        for claim in &claims {
            conn.execute(
                "UPDATE recipients SET state = 'sending', next_attempt_ms = NULL, owner = $3, \
                 claim_until_ms = $4 WHERE campaign_id = $1 AND phone = $2",
                &[
                    claim.campaign_id.as_str().into(),
                    claim.phone.as_str().into(),
                    self.owner.as_str().into(),
                    (now + self.lease_ms).into(),
                ],
            )
            .await?;
            touch(&mut conn, &claim.campaign_id, now).await?;
        }
        conn.commit().await?;
        Ok(claims)
    }

    /// Renews this process's claim on a recipient (`campaign`, `phone`) or on message
    /// `message` just before its send: whether the claim is still this process's own (it did
    /// not expire and get settled by another process).
    pub async fn renew_claim(&self, target: Claimed<'_>) -> Result<bool, DbError> {
        let (owner, lease) = (self.owner.as_str().into(), self.lease_ms.into());
        let (sql, args) = match target {
            Claimed::Recipient { campaign, phone } => (
                "UPDATE recipients SET claim_until_ms = NOW_MS + $4 WHERE campaign_id = $1 \
                 AND phone = $2 AND owner = $3 AND state = 'sending' AND claim_until_ms > NOW_MS",
                vec![campaign.into(), phone.into(), owner, lease],
            ),
            Claimed::Message(id) => (
                "UPDATE messages SET claim_until_ms = NOW_MS + $3 WHERE id = $1 \
                 AND owner = $2 AND state = 'sending' AND claim_until_ms > NOW_MS",
                vec![id.into(), owner, lease],
            ),
        };
        Ok(self.writer().await?.execute(sql, &args).await? == 1)
    }

    /// The provider accepts a send: one row, committed on its own, as a remote provider's
    /// acceptance is independent of the service's own record (and never fails as the
    /// service's disk does). It records which process sent it (its owner name, whose first
    /// part is the process id).
    pub async fn provider_send(
        &self,
        campaign_id: Option<&str>,
        message_id: Option<&str>,
        phone: &str,
        body: &str,
    ) -> Result<(), DbError> {
        self.conn()
            .await?
            .execute(
                "INSERT INTO provider_sends (campaign_id, message_id, phone, body, sent_ms, \
                 sender) VALUES ($1, $2, $3, $4, NOW_MS, $5)",
                &[
                    campaign_id.into(),
                    message_id.into(),
                    phone.into(),
                    body.into(),
                    self.owner.as_str().into(),
                ],
            )
            .await?;
        Ok(())
    }

    /// Records a claimed recipient as sent.
    pub async fn mark_sent(&self, campaign_id: &str, phone: &str) -> Result<(), DbError> {
        let mut conn = self.writer().await?;
        conn.execute(
            "UPDATE recipients SET state = 'sent', owner = NULL, claim_until_ms = NULL \
             WHERE campaign_id = $1 AND phone = $2 AND state = 'sending'",
            &[campaign_id.into(), phone.into()],
        )
        .await?;
        // The campaign's clock in the same round trip as its statement: one a recipient.
        conn.execute(
            "UPDATE campaigns SET updated_ms = NOW_MS WHERE id = $1",
            &[campaign_id.into()],
        )
        .await?;
        Ok(())
    }

    /// Settles every claim whose lease expired (its process stopped, or its call failed)
    /// against the provider: a recipient or message the provider has a send for is `sent`;
    /// one it has none for was never sent, so a recipient is held again, due now, and a
    /// message is `not_sent`. Returns how many were settled.
    pub async fn reconcile(&self) -> Result<u64, DbError> {
        let mut conn = self.writer().await?;
        conn.begin_exclusive().await?;
        let now = now(&mut conn).await?;
        let expired = "state = 'sending' AND claim_until_ms <= $1";
        conn.execute(
            &format!(
                "UPDATE campaigns SET updated_ms = $1 WHERE id IN \
                 (SELECT campaign_id FROM recipients WHERE {expired})"
            ),
            &[now.into()],
        )
        .await?;
        let mut settled = conn
            .execute(
                &format!(
                    "UPDATE recipients SET state = 'sent', owner = NULL, claim_until_ms = NULL \
                     WHERE {expired} AND EXISTS (SELECT 1 FROM provider_sends p \
                     WHERE p.campaign_id = recipients.campaign_id \
                     AND p.phone = recipients.phone)"
                ),
                &[now.into()],
            )
            .await?;
        settled += conn
            .execute(
                &format!(
                    "UPDATE recipients SET state = 'held', next_attempt_ms = $1, owner = NULL, \
                     claim_until_ms = NULL WHERE {expired}"
                ),
                &[now.into()],
            )
            .await?;
        settled += conn
            .execute(
                &format!(
                    "UPDATE messages SET state = CASE WHEN EXISTS (SELECT 1 FROM provider_sends \
                     p WHERE p.message_id = messages.id) THEN 'sent' ELSE 'not_sent' END, \
                     updated_ms = $1, owner = NULL, claim_until_ms = NULL WHERE {expired}"
                ),
                &[now.into()],
            )
            .await?;
        conn.commit().await?;
        Ok(settled)
    }

    /// Records message `id` of `principal` to `phone` as being sent, claimed by this process.
    pub async fn begin_message(
        &self,
        id: &str,
        principal: &str,
        phone: &str,
    ) -> Result<(), DbError> {
        self.writer()
            .await?
            .execute(
                "INSERT INTO messages (id, principal, phone, state, updated_ms, owner, \
                 claim_until_ms) VALUES ($1, $2, $3, 'sending', NOW_MS, $4, NOW_MS + $5)",
                &[
                    id.into(),
                    principal.into(),
                    phone.into(),
                    self.owner.as_str().into(),
                    self.lease_ms.into(),
                ],
            )
            .await?;
        Ok(())
    }

    /// Records message `id` as sent.
    pub async fn message_sent(&self, id: &str) -> Result<(), DbError> {
        self.writer()
            .await?
            .execute(
                "UPDATE messages SET state = 'sent', updated_ms = NOW_MS, owner = NULL, \
                 claim_until_ms = NULL WHERE id = $1 AND state = 'sending'",
                &[id.into()],
            )
            .await?;
        Ok(())
    }

    /// Message `id`'s state and when it last changed, if `principal` has it.
    pub async fn message(
        &self,
        id: &str,
        principal: &str,
    ) -> Result<Option<(String, i64)>, DbError> {
        let rows = self
            .conn()
            .await?
            .query(
                "SELECT state, updated_ms FROM messages WHERE id = $1 AND principal = $2",
                &[id.into(), principal.into()],
            )
            .await?;
        Ok(rows.first().map(|row| (row.text(0), row.int(1))))
    }

    /// Campaign `id`'s counts, or `None` when `principal` has no such campaign.
    pub async fn campaign(
        &self,
        id: &str,
        principal: &str,
    ) -> Result<Option<CampaignRow>, DbError> {
        let mut conn = self.conn().await?;
        let found = conn
            .query(
                "SELECT updated_ms FROM campaigns WHERE id = $1 AND principal = $2",
                &[id.into(), principal.into()],
            )
            .await?;
        let Some(updated) = found.first() else {
            return Ok(None);
        };
        let mut row = CampaignRow {
            updated_ms: updated.int(0),
            ..CampaignRow::default()
        };
        let states = conn
            .query(
                "SELECT state, COUNT(*), MIN(next_attempt_ms) FROM recipients \
                 WHERE campaign_id = $1 GROUP BY state",
                &[id.into()],
            )
            .await?;
        for state in &states {
            let count = u64::try_from(state.int(1)).unwrap_or(0);
            row.requested += count;
            match state.text(0).as_str() {
                "sending" => row.sending = count,
                "sent" => row.sent = count,
                "held" => {
                    row.held = count;
                    row.next_attempt_ms = state.opt_int(2);
                }
                _ => row.denied = count,
            }
        }
        Ok(Some(row))
    }
}

/// What a claim is on: a campaign's recipient, or a single message.
#[derive(Clone, Copy, Debug)]
pub enum Claimed<'a> {
    /// Recipient `phone` of campaign `campaign`.
    Recipient { campaign: &'a str, phone: &'a str },
    /// A single message, by id.
    Message(&'a str),
}

/// Campaign sends the window still has room for: its cap, less the campaign sends the
/// provider accepted in it and the recipients claimed and not yet sent.
async fn room(conn: &mut Conn<'_>, window: SendWindow, now_ms: i64) -> Result<u64, DbError> {
    let used = conn
        .query(
            "SELECT (SELECT COUNT(*) FROM provider_sends WHERE campaign_id IS NOT NULL \
             AND sent_ms >= $1) + (SELECT COUNT(*) FROM recipients WHERE state = 'sending')",
            &[window.start(now_ms).into()],
        )
        .await?[0]
        .int(0);
    Ok(window.cap.saturating_sub(u64::try_from(used).unwrap_or(0)))
}

async fn touch(conn: &mut Conn<'_>, campaign_id: &str, now_ms: i64) -> Result<(), DbError> {
    conn.execute(
        "UPDATE campaigns SET updated_ms = $2 WHERE id = $1",
        &[campaign_id.into(), now_ms.into()],
    )
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: SendWindow = SendWindow {
        cap: 3,
        length_ms: 3_600_000,
    };

    fn phones(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("+1555000{i:04}")).collect()
    }

    /// Two processes' stores on one scratch file, each the owner of its claims.
    async fn two(name: &str, lease: Duration) -> (Store, Store, std::path::PathBuf) {
        let dir =
            std::env::temp_dir().join(format!("campaigns-store-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = Target::Sqlite(dir.join("store.sqlite"));
        let a = Store::open(&target, None, "a".into(), lease).await.unwrap();
        let b = Store::open(&target, None, "b".into(), lease).await.unwrap();
        (a, b, dir)
    }

    /// The three places a stop can fall (before the provider, between the provider and the
    /// record, after both): a live claim is left alone, an expired one is settled by another
    /// process, and only the unsent recipient is sent again, by whoever claims it; the claim's
    /// first owner can no longer send it.
    #[tokio::test]
    async fn an_expired_claim_is_settled_by_another_process_and_sent_once() {
        let (a, b, dir) = two("expired", Duration::from_millis(150)).await;
        let created = a
            .create_campaign("cmp_a", "acct", "hi", &phones(5), WINDOW)
            .await
            .unwrap();
        assert_eq!((created.claimed.len(), created.held), (3, 2));
        let [recorded, unrecorded, unsent] = [0, 1, 2].map(|i| created.claimed[i].clone());
        a.provider_send(Some("cmp_a"), None, &recorded, "hi")
            .await
            .unwrap();
        a.mark_sent("cmp_a", &recorded).await.unwrap();
        a.provider_send(Some("cmp_a"), None, &unrecorded, "hi")
            .await
            .unwrap();

        // While the claims are live, nobody else settles them.
        assert_eq!(b.reconcile().await.unwrap(), 0);
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(b.reconcile().await.unwrap(), 2);
        let row = b.campaign("cmp_a", "acct").await.unwrap().unwrap();
        assert_eq!((row.sent, row.sending, row.held), (2, 0, 3));
        let gone = Claimed::Recipient {
            campaign: "cmp_a",
            phone: &unsent,
        };
        assert!(
            !a.renew_claim(gone).await.unwrap(),
            "the first owner lost it"
        );

        // Only the unsent recipient is due now, and the window has room for it alone.
        let claims = b.claim_due(WINDOW).await.unwrap();
        assert_eq!(claims.len(), 1);
        assert_eq!(claims[0].phone, unsent);
        assert!(b.renew_claim(gone).await.unwrap());
        // Another account does not see the campaign.
        assert!(a.campaign("cmp_a", "other").await.unwrap().is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn opted_out_recipients_are_denied_and_never_claimed() {
        let (a, _, dir) = two("opted-out", Duration::from_secs(30)).await;
        let all = phones(4);
        a.opt_out(&all[0]).await.unwrap();
        let created = a
            .create_campaign("cmp_b", "acct", "hi", &all, WINDOW)
            .await
            .unwrap();
        assert_eq!(
            (created.denied, created.claimed.len(), created.held),
            (1, 3, 0)
        );
        assert!(!created.claimed.contains(&all[0]));
        assert_eq!(created.next_attempt_ms, None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
