//! A campaign's recipients, claimed under a fence and sent under it: how they are claimed when
//! due, renewed before a send, sent, and held again when a claim expires.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use super::window::{SendWindow, room};
use super::{Store, now};
use crate::db::error::DbError;
use crate::db::tx::Statements;

/// Held recipients one pass of [`Store::claim_due`] looks at.
pub const DUE_BATCH: i64 = 1000;

/// A recipient claimed for sending: its campaign, number, the campaign's message, and the
/// claim's fence.
#[derive(Clone, Debug)]
pub struct Claim {
    /// The campaign.
    pub campaign_id: String,
    /// The recipient's number.
    pub phone: String,
    /// The campaign's text.
    pub message: String,
    /// The claim's fence: the recipient's claim count when it was claimed.
    pub fence: i64,
}

impl Store {
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

    /// Marks a claimed recipient sent (the provider took its send), under the claim's fence:
    /// only if `claim`'s fence is still its claim's. Returns whether it was marked; `false`
    /// means another claim holds the recipient now, which sends it (the provider takes the
    /// one effect once) and marks it.
    pub async fn mark_sent(&self, claim: &Claim) -> Result<bool, DbError> {
        let mut conn = self.writer().await?;
        conn.begin().await?;
        let taken = conn
            .execute(
                "UPDATE recipients SET state = 'sent', claim_until_ms = NULL, sent_ms = NOW_MS \
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
        conn.execute(
            "UPDATE campaigns SET updated_ms = NOW_MS WHERE id = $1",
            &[claim.campaign_id.as_str().into()],
        )
        .await?;
        conn.commit().await?;
        Ok(true)
    }

    /// Holds again, due now, every recipient whose claim expired (its process stopped, paused
    /// or was cut off, or its call failed) before it was marked sent. Its next claim has a
    /// greater fence, so the claim's first holder can never mark it; should the provider have
    /// taken the first holder's send, it takes the next one's as the same effect, once.
    /// Returns how many were held again.
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
}

async fn touch(conn: &mut impl Statements, campaign_id: &str, now_ms: i64) -> Result<(), DbError> {
    conn.execute(
        "UPDATE campaigns SET updated_ms = $2 WHERE id = $1",
        &[campaign_id.into(), now_ms.into()],
    )
    .await?;
    Ok(())
}
