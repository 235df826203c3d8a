//! Single messages: one recorded sent in the transaction that records its call's answer, and
//! whether one was.

use agent_tool_result::guarantee::{GuaranteeResult, Tally};
use agent_tool_result::replay::{Done, Lease, TransactionError};

use super::Store;
use crate::db::error::DbError;

/// A single message, sent: its id (the operation's), whose it is, and to whom.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    /// The message's id (its operation's).
    pub id: &'a str,
    /// The account whose message it is.
    pub principal: &'a str,
    /// The recipient's number.
    pub phone: &'a str,
}

impl Store {
    /// Records `message` sent (the provider took it) under `lease` (the fence of the call's
    /// key) with the call's answer, `sent` (committed, one of one, with `fields`), in one
    /// statement on PostgreSQL and one transaction on SQLite (without a lease, outside the
    /// replay sequence, in a plain transaction): the record and the answer commit together,
    /// or neither does, and once the key is another's nothing is recorded. A message an
    /// earlier call under the key recorded is recorded once.
    pub async fn record_sent<F: serde::Serialize>(
        &self,
        lease: Option<&Lease>,
        message: &Message<'_>,
        fields: F,
    ) -> Done<F> {
        let recorded = async {
            let answer = GuaranteeResult::committed_with(Tally::sent(1), fields);
            let mut conn = self.writer().await?;
            let sql = "INSERT INTO messages (id, principal, phone, state, updated_ms) \
                       VALUES ($1, $2, $3, 'sent', NOW_MS) ON CONFLICT (id) DO NOTHING";
            let args = [
                message.id.into(),
                message.principal.into(),
                message.phone.into(),
            ];
            Ok::<_, TransactionError<DbError>>(
                conn.commit_one(lease, sql, &args, answer.into()).await,
            )
        };
        recorded.await.unwrap_or_else(Done::from)
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
