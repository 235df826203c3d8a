//! Campaigns: one created with its recipients (denied, claimed to send now, or held for a
//! later window) in the transaction that records its call's answer, and where one stands.

use std::time::SystemTime;

use agent_tool_result::guarantee::{Answer, GuaranteeResult, PolicyCode, Tally};
use agent_tool_result::replay::{Done, Lease, TransactionError};

use super::claims::Claim;
use super::window::{SendWindow, room};
use super::{Store, instant};
use crate::db::error::DbError;
use crate::db::tx::{Statements, Tx};

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

/// Where a campaign stands, as a lookup reports it.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct CampaignRow {
    /// Distinct recipients asked for.
    pub requested: u64,
    /// Claimed and being sent now.
    pub sending: u64,
    /// Accepted by the provider.
    pub sent: u64,
    /// Held for a later window.
    pub held: u64,
    /// Denied by contact policy (opted out).
    pub denied: u64,
    /// When the campaign last changed, in milliseconds since 1970.
    pub updated_ms: i64,
    /// When held recipients are next attempted, while some are held.
    pub next_attempt_ms: Option<i64>,
}

impl CampaignRow {
    /// A batch's answer from its campaign as it stands, with the tool's `fields`: sent and
    /// claimed are committed, held deferred by the send window until the next attempt.
    pub fn answer<T>(&self, fields: T) -> GuaranteeResult<T> {
        let tally = Tally::sent(self.sent + self.sending)
            .with_denied(self.denied)
            .with_held(self.held);
        if self.held > 0 {
            let next = self.next_attempt_ms.map_or_else(SystemTime::now, instant);
            GuaranteeResult::deferred_with(PolicyCode::CAMPAIGN_SEND_WINDOW, next, tally, fields)
        } else {
            GuaranteeResult::committed_with(tally, fields)
        }
    }
}

impl Store {
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
