//! Single messages: one sent in the transaction that records its call's answer, and whether
//! one was.

use std::time::Duration;

use agent_tool_result::guarantee::{GuaranteeResult, Tally};
use agent_tool_result::replay::{Done, EffectKey, Lease, TransactionError};

use super::Store;
use super::provider::ProviderSend;
use crate::db::error::DbError;

/// A single message to send: its id (the operation's), whose it is, to whom, and what.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    /// The message's id (its operation's).
    pub id: &'a str,
    /// The account whose message it is.
    pub principal: &'a str,
    /// The recipient's number.
    pub phone: &'a str,
    /// The text.
    pub body: &'a str,
}

impl Store {
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
            let answer = GuaranteeResult::committed_with(Tally::sent(1), fields);
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
            let send = ProviderSend {
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
}
