//! `send_sms`: one SMS, sent under the key's fence and recorded with its answer in one
//! transaction. An opted-out number is denied by contact policy before the provider.

use std::sync::Arc;
use std::time::Duration;

use agent_tool_result::Hints;
use agent_tool_result::guarantee::{GuaranteeResult, PolicyCode};
use agent_tool_result::replay::{Done, GuaranteeTool, Lease, Operation};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::checks::{E164, MAX_TEXT, phone, text};
use crate::operations::MESSAGE;
use crate::service::{Service, unavailable};
use crate::store::messages::Message;

/// `send_sms`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SmsArgs {
    /// The recipient's number (E.164).
    #[schemars(regex(pattern = E164))]
    #[serde(deserialize_with = "phone")]
    pub to: String,
    /// The text.
    #[schemars(length(min = 1, max = MAX_TEXT), regex(pattern = r"\S"))]
    #[serde(deserialize_with = "text")]
    pub body: String,
}

/// The tool's own field of an SMS result.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MessageRef {
    /// The message, to look up by id.
    pub message_id: String,
}

/// The tool, on the service.
pub struct SendSms(pub Arc<Service>);

impl GuaranteeTool for SendSms {
    const NAME: &'static str = "send_sms";
    const DESCRIPTION: &'static str = "Sends one SMS. An opted-out number is denied by contact \
        policy before the provider (isError, policy.decision deny).";
    const OPERATION: &'static str = MESSAGE;
    /// A message adds to the world and reaches a person.
    const HINTS: Hints = Hints::new().destructive(false);
    type Arguments = SmsArgs;
    type Fields = MessageRef;

    async fn run(&self, args: SmsArgs, operation: Operation) -> Done<MessageRef> {
        let (id, principal) = (operation.id(), operation.principal());
        send(&self.0, &args, id, principal, Some(operation.lease())).await
    }

    /// On PostgreSQL the message and the provider's send are one transaction on the
    /// ledger's database, the key begun in it. (On SQLite, one writer at a time, the key is
    /// begun first, so the provider's work is not done holding the file's write lock.)
    fn effect_in_ledger(&self) -> bool {
        self.0.on_postgres()
    }
}

/// Sends `args` as message `id` of `principal`: an opted-out number is denied before the
/// provider; any other is sent, under the key's `lease`, its answer committed with the send.
/// Without a lease (outside the replay sequence: the benchmark's baseline) the same send is
/// made in a plain transaction, and its answer is the tool's own.
pub async fn send(
    service: &Service,
    args: &SmsArgs,
    id: &str,
    principal: &str,
    lease: Option<&Lease>,
) -> Done<MessageRef> {
    let store = service.store();
    match store.is_opted_out(&args.to).await {
        Ok(false) => {}
        Ok(true) => return GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT).into(),
        Err(err) => return unavailable(&err).into(),
    }
    let message = Message {
        id,
        principal,
        phone: &args.to,
        body: &args.body,
    };
    let sent = MessageRef {
        message_id: id.to_owned(),
    };
    // The provider's work is done inside the transaction that begins the key, when it does,
    // so a second caller meanwhile is told the key is in flight.
    let delay = service.config().provider_delay;
    if lease.is_some_and(Lease::in_transaction) {
        return store.send_message(lease, &message, sent, delay).await;
    }
    tokio::time::sleep(delay).await;
    store
        .send_message(lease, &message, sent, Duration::ZERO)
        .await
}
