//! `send_sms`: one SMS, sent through the provider (an outside service, which takes the send's
//! effect key once) with no transaction open, then recorded with its answer in one
//! transaction under the key's fence. An opted-out number is denied by contact policy before
//! the provider. Its abandoned key is recovered from the message's record.

use std::sync::Arc;

use agent_tool_result::Hints;
use agent_tool_result::guarantee::{GuaranteeResult, PolicyCode, Tally};
use agent_tool_result::registry::EnvelopeTool;
use agent_tool_result::replay::{
    Done, GuaranteeTool, Operation, OperationFields, Recovered, RecoveryError,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::checks::{E164, MAX_TEXT, phone, text};
use super::lookup_sms::LookupSms;
use crate::provider::Send;
use crate::service::{Service, not_sent, unavailable};
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

impl OperationFields for MessageRef {
    fn of_operation(id: &str) -> Self {
        MessageRef {
            message_id: id.to_owned(),
        }
    }
}

/// The tool, on the service.
pub struct SendSms(pub Arc<Service>);

impl GuaranteeTool for SendSms {
    const NAME: &'static str = "send_sms";
    const DESCRIPTION: &'static str = "Sends one SMS. An opted-out number is denied by contact \
        policy before the provider (isError, policy.decision deny).";
    const OPERATION: &'static str = "msg";
    const LOOKUP: &'static str = LookupSms::NAME;
    /// A message adds to the world and reaches a person.
    const HINTS: Hints = Hints::new().destructive(false);
    type Arguments = SmsArgs;
    type Fields = MessageRef;

    /// An opted-out number is denied before the provider; any other is sent through the
    /// provider (the key reads in flight to a second caller meanwhile), then recorded sent
    /// with its answer under the key's fence.
    async fn run(&self, args: SmsArgs, operation: Operation) -> Done<MessageRef> {
        let (service, id) = (&self.0, operation.id());
        match service.store().is_opted_out(&args.to).await {
            Ok(false) => {}
            Ok(true) => return GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT).into(),
            Err(err) => return unavailable(&err).into(),
        }
        let effect = Send::effect_of(id, &args.to);
        let send = Send::message(
            effect.as_str(),
            id,
            &args.to,
            &args.body,
            operation.lease().fence().as_i64(),
        );
        if let Err(err) = service.send(send).await {
            return not_sent(&err).into();
        }
        let message = Message {
            id,
            principal: operation.principal(),
            phone: &args.to,
        };
        let fields = MessageRef::of_operation(id);
        service
            .store()
            .record_sent(Some(operation.lease()), &message, fields)
            .await
    }

    /// The message is recorded sent with its call's answer, under the key's fence: found, it
    /// was sent (and that is its answer). Not found, its record never committed, and under
    /// the old fence never can: the call runs again, and its send, the same effect, reaches
    /// the person once whether or not the provider took the first.
    async fn recover(&self, operation: Operation) -> Result<Recovered<MessageRef>, RecoveryError> {
        let id = operation.id();
        Ok(
            match self.0.store().message(id, operation.principal()).await? {
                Some(_) => Recovered::Settled(GuaranteeResult::committed_with(
                    Tally::sent(1),
                    MessageRef::of_operation(id),
                )),
                None => Recovered::NotStarted,
            },
        )
    }
}
