//! The service's own tables, in the database it shares with the idempotency ledger (SQLite or
//! PostgreSQL, see [`crate::db`]): opted-out contacts, campaigns and their recipients, single
//! messages, and the "provider": a table of every send it accepted, duplicates included, so a
//! second send of anyone would show.
//!
//! Every campaign and message belongs to the principal whose call created it; a lookup by
//! another principal finds nothing.
//!
//! A recipient is `sending` from the moment it is claimed until the provider's send is
//! recorded as `sent`. A claim carries a fence from the database (the recipient's claim
//! count, one more at every claim) and an expiry by the database's clock. The provider
//! accepts a send only under the current fence of the recipient's claim, in the transaction
//! that marks the recipient sent ([`Store::send_recipient`]), so a process paused or cut off
//! past its claim, or a task of the same process that claimed it earlier, finds its fence
//! stale and sends nothing, however late it wakes. A process that stops leaves claims that
//! expire; any live process then holds their recipients again, due now
//! ([`Store::reconcile`]), so nobody is sent twice and nobody is dropped.
//!
//! A message and a campaign are created under the fence of the idempotency key of the call
//! that creates them, checked in the same transaction ([`Conn::effect`]): once another
//! process has taken the key over, the first call creates nothing, so whether the operation
//! took effect is a lookup by its id ([`Store::operation_exists`]). Each send is logged with
//! its effect key and fence.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_tool_result::guarantee::{Answer, GuaranteeResult};
use agent_tool_result::replay::{Done, EffectKey, Lease, TransactionError};

use crate::db::{Conn, Db, DbError, Target};
use crate::sql::Arg;
use crate::tx::{Statements, Tx};

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
        fence bigint NOT NULL DEFAULT 0,
        claim_until_ms bigint,
        PRIMARY KEY (campaign_id, phone)
    );
    CREATE INDEX IF NOT EXISTS recipients_due ON recipients (state, next_attempt_ms);
    CREATE TABLE IF NOT EXISTS messages (
        id text PRIMARY KEY,
        principal text NOT NULL,
        phone text NOT NULL,
        state text NOT NULL CHECK (state IN ('sent')),
        updated_ms bigint NOT NULL
    );
    CREATE TABLE IF NOT EXISTS provider_sends (
        seq SERIAL,
        campaign_id text,
        message_id text,
        phone text NOT NULL,
        body text NOT NULL,
        sent_ms bigint NOT NULL,
        sender text NOT NULL,
        effect_key text NOT NULL,
        fence bigint NOT NULL
    );
    CREATE INDEX IF NOT EXISTS provider_by_campaign ON provider_sends (campaign_id, phone);
    CREATE INDEX IF NOT EXISTS provider_by_time ON provider_sends (sent_ms);";

/// Held recipients one pass of [`Store::claim_due`] looks at.
const DUE_BATCH: i64 = 1000;

/// The per-window cap on one account's campaign sends.
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
    pub claimed: Vec<Claim>,
    /// How many are held for a later window.
    pub held: u64,
    /// How many were denied (opted out).
    pub denied: u64,
    /// When the held ones are next attempted.
    pub next_attempt_ms: Option<i64>,
}

/// A single message to send: its id (the operation's), whose it is, to whom, and what.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    pub id: &'a str,
    pub principal: &'a str,
    pub phone: &'a str,
    pub body: &'a str,
}

/// One send to log: its campaign or message, to whom, what, its effect key and the fence it
/// was made under.
struct Send<'a> {
    ids: [Option<&'a str>; 2],
    phone: &'a str,
    body: &'a str,
    effect: &'a EffectKey,
    fence: i64,
}

/// A recipient claimed for sending: its campaign, number, the campaign's message, and the
/// claim's fence.
#[derive(Clone, Debug)]
pub struct Claim {
    pub campaign_id: String,
    pub phone: String,
    pub message: String,
    pub fence: i64,
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
    /// This process's name, logged with every send it makes.
    sender: String,
    /// How long a claim holds.
    lease_ms: i64,
}

/// The database's clock, in milliseconds.
async fn now(conn: &mut Conn<'_>) -> Result<i64, DbError> {
    Ok(conn.query("SELECT NOW_MS", &[]).await?[0].int(0))
}

impl Store {
    /// Opens (and creates, if need be) the tables at `target`, under the injected `full`
    /// disk, with `sender` as this process's name in the provider's log; a PostgreSQL
    /// database gets a pool of `connections`, each statement bounded by `timeout`.
    pub async fn open(
        target: &Target,
        full: Option<FullDisk>,
        sender: String,
        lease: Duration,
        connections: usize,
        timeout: Duration,
    ) -> Result<Self, DbError> {
        let db = Db::open(target, SCHEMA, connections, timeout).await?;
        // Once the file exists: it is the one to tell a replacement from.
        let faults = Arc::new(Faults::new(target, full));
        Ok(Store {
            db,
            faults,
            sender,
            lease_ms: i64::try_from(lease.as_millis()).unwrap_or(i64::MAX),
        })
    }

    /// The faults the store is under, for the ledger beside it.
    pub fn faults(&self) -> Arc<Faults> {
        Arc::clone(&self.faults)
    }

    /// The database, whose pool the ledger shares.
    pub fn db(&self) -> &Db {
        &self.db
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
    /// exclusive transaction under `lease` (the fence of the call's key, checked first in the
    /// same transaction): opted-out numbers are denied, as many of the rest as the window has
    /// room for are claimed to send now, and the others are held until the next window. The
    /// call's answer, `answer` of where the campaign stands, commits with it. A campaign an
    /// earlier call under the key created already (its answer lost to a purge) is answered
    /// as it stands. Returns what the tool answers, and the recipients to send now.
    #[allow(clippy::too_many_arguments)]
    pub async fn create_campaign<F: serde::Serialize>(
        &self,
        lease: Option<&Lease>,
        id: &str,
        principal: &str,
        message: &str,
        recipients: &[String],
        window: SendWindow,
        answer: impl FnOnce(&CampaignRow) -> Answer<F>,
    ) -> (Done<F>, Vec<Claim>) {
        let created = async {
            let mut conn = self.writer().await?;
            let mut tx = conn.effect(lease).await?;
            if self.db.pool().is_some() {
                // What SQLite's immediate transaction is by itself: one at a time.
                tx.execute("SELECT pg_advisory_xact_lock(7462022)", &[])
                    .await?;
            }
            if let Some(row) = campaign_in(&mut tx, id, principal).await? {
                // Created by an earlier call under this key: answered as it stands.
                return Ok((tx.commit(answer(&row)).await, Vec::new()));
            }
            let created = self
                .insert_campaign(&mut tx, id, principal, message, recipients, window)
                .await?;
            let row = CampaignRow {
                requested: recipients.len() as u64,
                sending: created.claimed.len() as u64,
                sent: 0,
                held: created.held,
                denied: created.denied,
                updated_ms: 0,
                next_attempt_ms: created.next_attempt_ms,
            };
            Ok::<_, TransactionError<DbError>>((tx.commit(answer(&row)).await, created.claimed))
        };
        created
            .await
            .unwrap_or_else(|err| (Done::from(err), Vec::new()))
    }

    /// The campaign's rows, inserted in `tx`.
    async fn insert_campaign(
        &self,
        tx: &mut Tx<'_, '_>,
        id: &str,
        principal: &str,
        message: &str,
        recipients: &[String],
        window: SendWindow,
    ) -> Result<Created, DbError> {
        let now = tx.query("SELECT NOW_MS", &[]).await?[0].int(0);
        tx.execute(
            "INSERT INTO campaigns (id, principal, message, created_ms, updated_ms) \
             VALUES ($1, $2, $3, $4, $4)",
            &[id.into(), principal.into(), message.into(), now.into()],
        )
        .await?;
        let mut room = room(tx, window, principal, now).await?;
        let next = window.next(now);
        let mut created = Created {
            claimed: Vec::new(),
            held: 0,
            denied: 0,
            next_attempt_ms: None,
        };
        for phone in recipients {
            let opted_out = !tx
                .query(
                    "SELECT 1 FROM opt_outs WHERE phone = $1",
                    &[phone.as_str().into()],
                )
                .await?
                .is_empty();
            let (state, next_attempt, fence) = if opted_out {
                created.denied += 1;
                ("denied", None, 0)
            } else if room > 0 {
                room -= 1;
                created.claimed.push(Claim {
                    campaign_id: id.to_owned(),
                    phone: phone.clone(),
                    message: message.to_owned(),
                    fence: 1,
                });
                ("sending", None, 1)
            } else {
                created.held += 1;
                created.next_attempt_ms = Some(next);
                ("held", Some(next), 0)
            };
            tx.execute(
                "INSERT INTO recipients (campaign_id, phone, state, next_attempt_ms, fence, \
                 claim_until_ms) VALUES ($1, $2, $3, $4, $5, $6)",
                &[
                    id.into(),
                    phone.as_str().into(),
                    state.into(),
                    next_attempt.into(),
                    fence.into(),
                    (fence > 0).then_some(now + self.lease_ms).into(),
                ],
            )
            .await?;
        }
        Ok(created)
    }

    /// Claims held recipients that are due, as many of each account's as its window has room
    /// for (`window_of` the principal), at most [`DUE_BATCH`] at a time, each under a new
    /// fence.
    pub async fn claim_due(
        &self,
        window_of: impl Fn(&str) -> SendWindow,
    ) -> Result<Vec<Claim>, DbError> {
        let mut conn = self.writer().await?;
        conn.begin_exclusive().await?;
        let now = now(&mut conn).await?;
        let due = conn
            .query(
                "SELECT r.campaign_id, r.phone, c.message, c.principal FROM recipients r \
                 JOIN campaigns c ON c.id = r.campaign_id \
                 WHERE r.state = 'held' AND r.next_attempt_ms <= $1 \
                 ORDER BY r.next_attempt_ms, r.campaign_id, r.phone LIMIT $2",
                &[now.into(), DUE_BATCH.into()],
            )
            .await?;
        let mut rooms: HashMap<String, u64> = HashMap::new();
        let mut claims = Vec::with_capacity(due.len());
        for row in &due {
            let principal = row.text(3);
            let room = match rooms.entry(principal) {
                Entry::Occupied(room) => room.into_mut(),
                Entry::Vacant(vacant) => {
                    let window = window_of(vacant.key());
                    let left = room(&mut conn, window, vacant.key(), now).await?;
                    vacant.insert(left)
                }
            };
            if *room == 0 {
                continue;
            }
            *room -= 1;
            let (campaign_id, phone) = (row.text(0), row.text(1));
            let fence = conn
                .query(
                    "UPDATE recipients SET state = 'sending', next_attempt_ms = NULL, \
                     fence = fence + 1, claim_until_ms = $3 \
                     WHERE campaign_id = $1 AND phone = $2 RETURNING fence",
                    &[
                        campaign_id.as_str().into(),
                        phone.as_str().into(),
                        (now + self.lease_ms).into(),
                    ],
                )
                .await?[0]
                .int(0);
            touch(&mut conn, &campaign_id, now).await?;
            claims.push(Claim {
                campaign_id,
                phone,
                message: row.text(2),
                fence,
            });
        }
        conn.commit().await?;
        Ok(claims)
    }

    /// Renews `claim` just before its send: whether its fence is still the recipient's and
    /// its lease has not passed.
    pub async fn renew_claim(&self, claim: &Claim) -> Result<bool, DbError> {
        let changed = self
            .writer()
            .await?
            .execute(
                "UPDATE recipients SET claim_until_ms = NOW_MS + $4 WHERE campaign_id = $1 \
                 AND phone = $2 AND fence = $3 AND state = 'sending' \
                 AND claim_until_ms > NOW_MS",
                &[
                    claim.campaign_id.as_str().into(),
                    claim.phone.as_str().into(),
                    claim.fence.into(),
                    self.lease_ms.into(),
                ],
            )
            .await?;
        Ok(changed == 1)
    }

    /// The provider sends to a claimed recipient, under the claim's fence: in one
    /// transaction, the recipient is marked sent only if `claim`'s fence is still its claim's,
    /// and the provider's send is logged (with its effect key) only then. Returns whether it
    /// was sent; `false` means another claim holds the recipient now, which sends it (or
    /// did).
    pub async fn send_recipient(&self, claim: &Claim) -> Result<bool, DbError> {
        let mut conn = self.writer().await?;
        conn.begin().await?;
        let taken = conn
            .execute(
                "UPDATE recipients SET state = 'sent', claim_until_ms = NULL \
                 WHERE campaign_id = $1 AND phone = $2 AND state = 'sending' AND fence = $3",
                &[
                    claim.campaign_id.as_str().into(),
                    claim.phone.as_str().into(),
                    claim.fence.into(),
                ],
            )
            .await?;
        if taken != 1 {
            conn.rollback().await?;
            return Ok(false);
        }
        let effect = EffectKey::new(&claim.campaign_id, &claim.phone);
        let send = Send {
            ids: [Some(claim.campaign_id.as_str()), None],
            phone: &claim.phone,
            body: &claim.message,
            effect: &effect,
            fence: claim.fence,
        };
        self.log_send(&mut conn, &send).await?;
        conn.execute(
            "UPDATE campaigns SET updated_ms = NOW_MS WHERE id = $1",
            &[claim.campaign_id.as_str().into()],
        )
        .await?;
        conn.commit().await?;
        Ok(true)
    }

    /// The provider sends message `id` of `principal` to `phone`, in one transaction under
    /// `lease` (the fence of the call's key; without a lease, outside the replay sequence, a
    /// plain one): the message recorded sent, the send logged, and the call's answer, `sent`
    /// (committed, one of one, with `fields`), recorded with the key; all commit together, or
    /// nothing does, so a crash, or a key that is another's, leaves nothing. A message an
    /// earlier call under the key sent already (its answer lost to a purge) is not sent again.
    /// The provider takes `provider` to accept the send, inside the transaction.
    pub async fn send_message<F: serde::Serialize>(
        &self,
        lease: Option<&Lease>,
        message: &Message<'_>,
        fields: F,
        provider: Duration,
    ) -> Done<F> {
        let Message {
            id,
            principal,
            phone,
            body,
        } = *message;
        let sent = async {
            let answer = GuaranteeResult::committed_one()
                .with_fields(fields)
                .map_err(DbError::from)?;
            let mut conn = self.writer().await?;
            let mut tx = conn.effect(lease).await?;
            // The provider's work, inside the transaction.
            tokio::time::sleep(provider).await;
            let inserted = tx
                .execute(
                    "INSERT INTO messages (id, principal, phone, state, updated_ms) \
                     VALUES ($1, $2, $3, 'sent', NOW_MS) ON CONFLICT (id) DO NOTHING",
                    &[id.into(), principal.into(), phone.into()],
                )
                .await?;
            if inserted == 0 {
                // Sent by an earlier call under this key: not again.
                return Ok(tx.commit(answer.into()).await);
            }
            let effect = EffectKey::new(id, phone);
            let fence = lease.map_or(0, |lease| lease.fence().as_i64());
            let send = Send {
                ids: [None, Some(id)],
                phone,
                body,
                effect: &effect,
                fence,
            };
            // The provider's send, in the statement that records the answer.
            let (sql, args) = self.send_row(&send);
            Ok::<_, TransactionError<DbError>>(tx.commit_with(sql, &args, answer.into()).await)
        };
        sent.await.unwrap_or_else(Done::from)
    }

    /// Logs one send the provider accepted, with this process as its sender.
    async fn log_send(&self, db: &mut impl Statements, send: &Send<'_>) -> Result<(), DbError> {
        let (sql, args) = self.send_row(send);
        db.execute(sql, &args).await?;
        Ok(())
    }

    /// The statement that logs `send` in the provider's table, with its parameters.
    fn send_row(&self, send: &Send<'_>) -> (&'static str, [Arg; 7]) {
        (
            "INSERT INTO provider_sends (campaign_id, message_id, phone, body, sent_ms, sender, \
             effect_key, fence) VALUES ($1, $2, $3, $4, NOW_MS, $5, $6, $7)",
            [
                send.ids[0].into(),
                send.ids[1].into(),
                send.phone.into(),
                send.body.into(),
                self.sender.as_str().into(),
                send.effect.as_str().into(),
                send.fence.into(),
            ],
        )
    }

    /// Holds again, due now, every recipient whose claim expired (its process stopped, paused
    /// or was cut off, or its call failed): it was not sent, since a send marks it sent in
    /// the same transaction. Its next claim has a greater fence, so the claim's first holder
    /// can never send it. Returns how many were held again.
    pub async fn reconcile(&self) -> Result<u64, DbError> {
        let mut conn = self.writer().await?;
        conn.begin_exclusive().await?;
        let now = now(&mut conn).await?;
        // Recipients first, then their campaigns: the order every transaction here locks
        // them in, so none waits on another for good.
        let held = conn
            .query(
                "UPDATE recipients SET state = 'held', next_attempt_ms = $1, \
                 claim_until_ms = NULL WHERE state = 'sending' AND claim_until_ms <= $1 \
                 RETURNING campaign_id",
                &[now.into()],
            )
            .await?;
        let mut campaigns: Vec<String> = held.iter().map(|row| row.text(0)).collect();
        campaigns.sort();
        campaigns.dedup();
        for campaign in &campaigns {
            touch(&mut conn, campaign, now).await?;
        }
        conn.commit().await?;
        Ok(held.len() as u64)
    }

    /// Whether operation `id` (a campaign's or a message's) was created: what a call under
    /// its key may have done. Asked once the key is held under a greater fence, so a `false`
    /// stays false.
    pub async fn operation_exists(&self, id: &str) -> Result<bool, DbError> {
        let rows = self
            .conn()
            .await?
            .query(
                "SELECT 1 FROM campaigns WHERE id = $1 UNION ALL \
                 SELECT 1 FROM messages WHERE id = $1",
                &[id.into()],
            )
            .await?;
        Ok(!rows.is_empty())
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
        campaign_in(&mut self.conn().await?, id, principal).await
    }
}

/// Campaign `id`'s counts as `db` sees them, or `None` when `principal` has no such campaign.
async fn campaign_in(
    db: &mut impl Statements,
    id: &str,
    principal: &str,
) -> Result<Option<CampaignRow>, DbError> {
    let found = db
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
    let states = db
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

/// Campaign sends `principal`'s window still has room for: its cap, less the sends of its
/// campaigns the provider accepted in it and its recipients claimed and not yet sent. Each
/// account has a window of its own, so one account's sends never use another's room.
async fn room(
    conn: &mut impl Statements,
    window: SendWindow,
    principal: &str,
    now_ms: i64,
) -> Result<u64, DbError> {
    let used = conn
        .query(
            "SELECT (SELECT COUNT(*) FROM provider_sends s JOIN campaigns c \
             ON c.id = s.campaign_id WHERE c.principal = $2 AND s.sent_ms >= $1) \
             + (SELECT COUNT(*) FROM recipients r JOIN campaigns c ON c.id = r.campaign_id \
             WHERE c.principal = $2 AND r.state = 'sending')",
            &[window.start(now_ms).into(), principal.into()],
        )
        .await?[0]
        .int(0);
    Ok(window.cap.saturating_sub(u64::try_from(used).unwrap_or(0)))
}

async fn touch(conn: &mut impl Statements, campaign_id: &str, now_ms: i64) -> Result<(), DbError> {
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
    use agent_tool_result::JsonObject;
    use agent_tool_result::replay::{
        Begin, Fingerprint, IdempotencyKey, Ledger, Scope, SqliteLedger,
    };

    const WINDOW: SendWindow = SendWindow {
        cap: 3,
        length_ms: 3_600_000,
    };

    const HI: Message<'static> = Message {
        id: "msg_1",
        principal: "acct",
        phone: "+15550000001",
        body: "hi",
    };

    fn phones(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("+1555000{i:04}")).collect()
    }

    fn note(text: &str) -> JsonObject {
        let mut fields = JsonObject::new();
        fields.insert("note".into(), text.into());
        fields
    }

    /// A batch's answer as the service makes it: where the campaign stands.
    fn standing(row: &CampaignRow) -> Answer<JsonObject> {
        let impact = agent_tool_result::guarantee::Impact::new()
            .with_requested(row.requested)
            .with_committed(row.sent + row.sending)
            .with_deferred(row.held)
            .with_denied(row.denied);
        GuaranteeResult::committed()
            .with_impact(impact)
            .unwrap()
            .into()
    }

    /// Two processes' stores on one scratch file, and the ledger beside them.
    async fn two(name: &str, lease: Duration) -> (Store, Store, SqliteLedger, std::path::PathBuf) {
        let dir =
            std::env::temp_dir().join(format!("campaigns-store-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("store.sqlite");
        let target = Target::Sqlite(path.clone());
        let timeout = Duration::from_secs(5);
        let a = Store::open(&target, None, "a".into(), lease, 1, timeout)
            .await
            .unwrap();
        let b = Store::open(&target, None, "b".into(), lease, 1, timeout)
            .await
            .unwrap();
        let ledger = SqliteLedger::open(&path).unwrap().with_lease(lease);
        (a, b, ledger, dir)
    }

    /// A fresh lease on `key`.
    async fn lease(ledger: &SqliteLedger, key: &str) -> Lease {
        let print = Fingerprint::of("t", "acct", &serde_json::json!({ "key": key }));
        match ledger
            .begin(
                &Scope::principal("acct"),
                &IdempotencyKey::new(key).unwrap(),
                print,
                "",
            )
            .await
            .unwrap()
        {
            Begin::Fresh(lease) => lease,
            other => panic!("{other:?}"),
        }
    }

    /// Claims that expire are held again by another process and claimed anew under a greater
    /// fence; the first claim's holder (a process paused past its lease, or a task of the
    /// same process) can no longer send: nobody is sent twice, nobody is dropped.
    #[tokio::test]
    async fn an_expired_claim_is_held_again_and_its_first_holder_is_fenced_out() {
        let (a, b, ledger, dir) = two("expired", Duration::from_millis(150)).await;
        let key = lease(&ledger, "k1").await;
        let (done, claimed) = a
            .create_campaign(
                Some(&key),
                "cmp_a",
                "acct",
                "hi",
                &phones(5),
                WINDOW,
                standing,
            )
            .await;
        assert!(matches!(done, Done::Recorded(_)), "{done:?}");
        assert_eq!(claimed.len(), 3);
        let [sent, late, _] = [0, 1, 2].map(|i| claimed[i].clone());
        assert!(a.send_recipient(&sent).await.unwrap());
        assert!(!a.send_recipient(&sent).await.unwrap(), "sent once");

        // While the claims are live, nobody else settles them.
        assert_eq!(b.reconcile().await.unwrap(), 0);
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(b.reconcile().await.unwrap(), 2);
        let row = b.campaign("cmp_a", "acct").await.unwrap().unwrap();
        assert_eq!((row.sent, row.sending, row.held), (1, 0, 4));
        assert!(
            !a.renew_claim(&late).await.unwrap(),
            "the first holder lost it"
        );

        // Held again, claimed again under a greater fence: the stale claim sends nothing, the
        // new one sends.
        let claims = b.claim_due(|_| WINDOW).await.unwrap();
        assert_eq!(claims.len(), 2, "the window's room: three, one sent");
        let again = claims.iter().find(|c| c.phone == late.phone).unwrap();
        assert!(again.fence > late.fence);
        assert!(!a.send_recipient(&late).await.unwrap(), "fenced out");
        assert!(b.send_recipient(again).await.unwrap());
        assert_eq!(
            a.campaign("cmp_a", "other").await.unwrap().map(|_| ()),
            None
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A campaign or message is created only under the current fence of its call's key: once
    /// the key is taken over, the first call makes nothing, and the probe finds nothing made;
    /// the answer commits with the effect.
    #[tokio::test]
    async fn creation_is_fenced_by_the_calls_key() {
        let (a, _, ledger, dir) = two("fenced", Duration::from_millis(100)).await;
        let first = lease(&ledger, "k2").await;
        tokio::time::sleep(Duration::from_millis(150)).await;
        // Passed: nothing is made, even before anyone takes the key over.
        assert!(matches!(
            a.send_message(Some(&first), &HI, note("late"), Duration::ZERO)
                .await,
            Done::Lost
        ));
        let print = Fingerprint::of("t", "acct", &serde_json::json!({ "key": "k2" }));
        let begin = async || {
            let key = IdempotencyKey::new("k2").unwrap();
            ledger
                .begin(&Scope::principal("acct"), &key, print, "")
                .await
                .unwrap()
        };
        let Begin::Abandoned(taken) = begin().await else {
            panic!("abandoned")
        };
        let (done, claimed) = a
            .create_campaign(
                Some(&first),
                "cmp_1",
                "acct",
                "hi",
                &phones(2),
                WINDOW,
                standing,
            )
            .await;
        assert!(matches!(done, Done::Lost) && claimed.is_empty());
        assert!(!a.operation_exists("cmp_1").await.unwrap());
        assert!(!a.operation_exists("msg_1").await.unwrap());
        // The new holder makes it, once, its answer recorded with it.
        let current = taken.into_lease();
        let Done::Recorded(recorded) = a
            .send_message(Some(&current), &HI, note("sent"), Duration::ZERO)
            .await
        else {
            panic!("recorded")
        };
        assert!(a.operation_exists("msg_1").await.unwrap());
        assert_eq!(begin().await, Begin::Replay(recorded));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn opted_out_recipients_are_denied_and_never_claimed() {
        let (a, _, ledger, dir) = two("opted-out", Duration::from_secs(30)).await;
        let key = lease(&ledger, "k3").await;
        let all = phones(4);
        a.opt_out(&all[0]).await.unwrap();
        let (done, claimed) = a
            .create_campaign(Some(&key), "cmp_b", "acct", "hi", &all, WINDOW, standing)
            .await;
        let Done::Recorded(recorded) = done else {
            panic!("recorded")
        };
        let impact = recorded
            .answer()
            .unwrap()
            .result()
            .unwrap()
            .impact()
            .copied()
            .unwrap();
        assert_eq!((impact.denied(), impact.committed()), (Some(1), Some(3)));
        assert_eq!(claimed.len(), 3);
        assert!(!claimed.iter().any(|c| c.phone == all[0]));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Without a lease (outside the replay sequence) the send is a plain transaction, and its
    /// answer the tool's own; a store that fails before it is the `unavailable` refusal.
    #[tokio::test]
    async fn an_unkeyed_send_answers_for_itself() {
        let (a, _, _, dir) = two("unkeyed", Duration::from_secs(30)).await;
        let Done::Answer(answer) = a
            .send_message(None, &HI, note("plain"), Duration::ZERO)
            .await
        else {
            panic!("answered")
        };
        assert!(answer.result().is_some());
        assert!(a.operation_exists("msg_1").await.unwrap());
        std::fs::remove_file(dir.join("store.sqlite")).unwrap();
        let Done::Answer(refused) = a
            .send_message(None, &HI, note("gone"), Duration::ZERO)
            .await
        else {
            panic!("refused")
        };
        assert_eq!(
            refused
                .refusal()
                .map(agent_tool_result::guarantee::Refusal::kind),
            Some(agent_tool_result::guarantee::RefusalKind::Unavailable)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
