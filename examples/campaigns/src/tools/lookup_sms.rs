//! `lookup_sms`: whether a message was sent, by its id, from the store.

use std::sync::Arc;

use agent_tool_result::guarantee::format_instant;
use agent_tool_result::registry::{EnvelopeTool, Principal};
use agent_tool_result::{Classified, Envelope, Hints, ToolError, classified};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::service::{Service, ServiceError};
use crate::store::instant;

/// `lookup_sms`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MessageArgs {
    /// The `messageId` `send_sms` answered with.
    pub message_id: String,
}

/// What `lookup_sms` answers.
#[derive(Serialize, Deserialize, JsonSchema, Debug)]
#[serde(rename_all = "camelCase")]
pub struct MessageStatus {
    /// The message.
    pub message_id: String,
    /// `sending`, `sent` or `not_sent`.
    pub status: String,
    /// When it last changed (RFC 3339).
    pub updated_at: String,
}

/// No message has the id a lookup named.
const MESSAGE_NOT_FOUND: Classified = classified!("message-not-found", NoTarget);

/// The tool, on the service.
pub struct LookupSms(pub Arc<Service>);

impl EnvelopeTool for LookupSms {
    const NAME: &'static str = "lookup_sms";
    const DESCRIPTION: &'static str = "Whether a message was sent, by messageId.";
    const HINTS: Hints = Hints::READ_ONLY;
    type Arguments = MessageArgs;
    type Output = MessageStatus;
    type Error = ServiceError;

    async fn run(
        &self,
        args: MessageArgs,
        principal: &Principal,
    ) -> Result<Envelope<MessageStatus>, ServiceError> {
        let id = args.message_id;
        let found = self.0.store().message(&id, principal.as_str()).await?;
        Ok(match found {
            Some((status, updated_ms)) => Envelope::success(MessageStatus {
                status,
                updated_at: format_instant(instant(updated_ms)),
                message_id: id,
            }),
            None => Envelope::failure(ToolError::new(
                MESSAGE_NOT_FOUND,
                format!("No message {id}: nothing was recorded or sent under that id."),
            )),
        })
    }
}
