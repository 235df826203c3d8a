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

use std::sync::Arc;
use std::time::Duration;

use agent_tool_result::guarantee::{Answer, GuaranteeResult};
use agent_tool_result::replay::{Done, EffectKey, Lease, TransactionError};

use crate::db::{Conn, Db, DbError, Target};
use crate::faults::{Faults, FullDisk};
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
    /// The window's length in milliseconds.
    pub length_ms: i64,
    /// When one window starts, in milliseconds since 1970: windows start every `length_ms`
    /// before and after it (0: at multiples of the length).
    pub origin_ms: i64,
}

impl SendWindow {
    /// When the window holding `now_ms` started.
    fn start(self, now_ms: i64) -> i64 {
        now_ms - (now_ms - self.origin_ms).rem_euclid(self.length_ms)
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

#[path = "store/claims.rs"]
mod claims;
#[cfg(test)]
#[path = "store/tests.rs"]
mod tests;
