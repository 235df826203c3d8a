//! The "provider": a table of every send it accepted, duplicates included, so a second send of
//! anyone would show. Each send is logged with its sender (the process), its effect key and
//! the fence it was made under.

use agent_tool_result::replay::EffectKey;

use super::Store;
use crate::db::error::DbError;
use crate::db::sql::Arg;
use crate::db::tx::Statements;

/// One send to log: its campaign or message, to whom, what, its effect key and the fence it
/// was made under.
pub(super) struct ProviderSend<'a> {
    pub(super) ids: [Option<&'a str>; 2],
    pub(super) phone: &'a str,
    pub(super) body: &'a str,
    pub(super) effect: &'a EffectKey,
    pub(super) fence: i64,
}

impl Store {
    /// Logs one send the provider accepted, with this process as its sender.
    pub(super) async fn log_send(
        &self,
        db: &mut impl Statements,
        send: &ProviderSend<'_>,
    ) -> Result<(), DbError> {
        let (sql, args) = self.send_row(send);
        db.execute(sql, &args).await?;
        Ok(())
    }

    /// The statement that logs `send` in the provider's table, with its parameters.
    pub(super) fn send_row(&self, send: &ProviderSend<'_>) -> (&'static str, [Arg; 7]) {
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
}
