//! The tools: the two guarantee tools, each written once (its name, arguments, fields and
//! what it does), the lookups' names, and the checks of a guarantee call's arguments, made as
//! they are read, before the key is begun or any policy decides.

use agent_tool_result::replay::{Done, GuaranteeTool, Operation};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use crate::service::Service;

/// `send_sms`: one SMS, sent under the key's fence and recorded with its answer.
pub struct SendSms<'a>(pub &'a Service);

impl GuaranteeTool for SendSms<'_> {
    const NAME: &'static str = "send_sms";
    const DESCRIPTION: &'static str = "Sends one SMS. An opted-out number is denied by contact \
        policy before the provider (isError, policy.decision deny).";
    const OPERATION: &'static str = "msg";
    type Arguments = SmsArgs;
    type Fields = MessageRef;

    async fn run(&self, args: SmsArgs, operation: Operation) -> Done<MessageRef> {
        let (id, principal) = (operation.id(), operation.principal());
        self.0
            .sms(&args, id, principal, Some(operation.lease()))
            .await
    }

    /// On PostgreSQL the message and the provider's send are one transaction on the
    /// ledger's database, the key begun in it. (On SQLite, one writer at a time, the key is
    /// begun first, so the provider's work is not done holding the file's write lock.)
    fn effect_in_ledger(&self) -> bool {
        self.0.on_postgres()
    }
}

/// `send_campaign_batch`: a campaign, sent up to the window's cap now and held for later
/// windows past it.
pub struct SendBatch<'a>(pub &'a Service);

impl GuaranteeTool for SendBatch<'_> {
    const NAME: &'static str = "send_campaign_batch";
    const DESCRIPTION: &'static str = "Sends a campaign: up to the window's cap now, the rest \
        held durably for later windows (committed + defer). Read campaignId and look it up \
        with lookup_marketing_campaigns; never send the batch again to resume it.";
    const OPERATION: &'static str = "cmp";
    type Arguments = BatchArgs;
    type Fields = CampaignRef;

    async fn run(&self, args: BatchArgs, operation: Operation) -> Done<CampaignRef> {
        self.0.send_batch(&args, &operation).await
    }
}

/// Looks a campaign up by id.
pub const LOOKUP_CAMPAIGNS: &str = "lookup_marketing_campaigns";
/// Looks a single message up by id.
pub const LOOKUP_SMS: &str = "lookup_sms";

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

/// An E.164 number, as the arguments' schema says it: `+`, a non-zero digit, at most 15
/// digits in all ([`is_e164`]).
const E164: &str = r"^\+[1-9][0-9]{1,14}$";

/// `send_campaign_batch`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchArgs {
    /// The recipients' numbers (E.164); a number listed twice is sent once.
    #[schemars(length(min = 1, max = MAX_RECIPIENTS), inner(regex(pattern = E164)))]
    #[serde(deserialize_with = "recipients")]
    pub recipients: Vec<String>,
    /// The text every recipient gets.
    #[schemars(length(min = 1, max = MAX_TEXT), regex(pattern = r"\S"))]
    #[serde(deserialize_with = "text")]
    pub message: String,
}

/// `lookup_marketing_campaigns`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CampaignArgs {
    /// The `campaignId` a batch answered with.
    pub campaign_id: String,
}

/// `lookup_sms`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MessageArgs {
    /// The `messageId` `send_sms` answered with.
    pub message_id: String,
}

/// The tool's own field of a batch result.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CampaignRef {
    /// The campaign, to look up by id.
    pub campaign_id: String,
}

/// The tool's own field of an SMS result.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MessageRef {
    /// The message, to look up by id.
    pub message_id: String,
}

/// Recipient counts of a campaign; they add up to `requested`.
#[derive(Serialize, Deserialize, JsonSchema, Debug, PartialEq, Eq)]
pub struct Counts {
    /// Distinct recipients asked for.
    pub requested: u64,
    /// Accepted by the provider.
    pub sent: u64,
    /// Claimed and being sent now.
    pub sending: u64,
    /// Held for a later window.
    pub held: u64,
    /// Denied by contact policy (opted out).
    pub denied: u64,
}

/// What `lookup_marketing_campaigns` answers: the authority on a campaign.
#[derive(Serialize, Deserialize, JsonSchema, Debug)]
#[serde(rename_all = "camelCase")]
pub struct CampaignStatus {
    /// The campaign.
    pub campaign_id: String,
    /// `sending`, `held` (waiting for a window) or `completed`.
    pub status: String,
    /// The recipient counts.
    pub counts: Counts,
    /// When the campaign last changed (RFC 3339).
    pub updated_at: String,
    /// When held recipients are next attempted (RFC 3339), while some are held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_attempt_at: Option<String>,
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

/// The most recipients one batch takes.
pub const MAX_RECIPIENTS: usize = 10_000;

/// The longest text one message carries, in characters.
pub const MAX_TEXT: usize = 1_600;

/// Whether `phone` is an E.164 number: `+`, a non-zero digit, at most 15 digits in all.
fn is_e164(phone: &str) -> bool {
    phone.strip_prefix('+').is_some_and(|digits| {
        (2..=15).contains(&digits.len())
            && digits.bytes().all(|b| b.is_ascii_digit())
            && !digits.starts_with('0')
    })
}

/// Why `phone` is no number to send to, if it is not.
fn number_problem(phone: &str) -> Option<String> {
    (!is_e164(phone)).then(|| {
        let shown: String = phone.chars().take(32).collect();
        format!("`{shown}` is not an E.164 number (+ and 2 to 15 digits, as +15550100)")
    })
}

/// A recipient's number, checked as it is read.
fn phone<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let phone = String::deserialize(deserializer)?;
    match number_problem(&phone) {
        Some(problem) => Err(serde::de::Error::custom(problem)),
        None => Ok(phone),
    }
}

/// A text to send, checked as it is read: not blank, at most [`MAX_TEXT`] characters.
fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let text = String::deserialize(deserializer)?;
    if text.trim().is_empty() {
        Err(serde::de::Error::custom("empty: there is nothing to send"))
    } else if text.chars().count() > MAX_TEXT {
        Err(serde::de::Error::custom(format!(
            "longer than {MAX_TEXT} characters"
        )))
    } else {
        Ok(text)
    }
}

/// A batch's recipients, checked as they are read: 1 to [`MAX_RECIPIENTS`] numbers, each
/// E.164 (the first that is not is named by its place).
fn recipients<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    let recipients = Vec::<String>::deserialize(deserializer)?;
    let count = recipients.len();
    let problem = if count == 0 {
        Some("empty: a batch names at least one number".to_owned())
    } else if count > MAX_RECIPIENTS {
        Some(format!(
            "{count} numbers; a batch takes at most {MAX_RECIPIENTS}"
        ))
    } else {
        recipients
            .iter()
            .enumerate()
            .find_map(|(i, phone)| number_problem(phone).map(|problem| format!("[{i}]: {problem}")))
    };
    match problem {
        Some(problem) => Err(serde::de::Error::custom(problem)),
        None => Ok(recipients),
    }
}
