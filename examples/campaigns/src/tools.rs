//! The tools' names, arguments and results, and the checks of a guarantee call's arguments
//! that come before any policy decision.

use agent_tool_result::guarantee::Refusal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Sends one SMS.
pub const SEND_SMS: &str = "send_sms";
/// Sends a campaign to a batch of recipients.
pub const SEND_CAMPAIGN_BATCH: &str = "send_campaign_batch";
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
    pub to: String,
    /// The text.
    #[schemars(length(min = 1, max = MAX_TEXT), regex(pattern = r"\S"))]
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
    pub recipients: Vec<String>,
    /// The text every recipient gets.
    #[schemars(length(min = 1, max = MAX_TEXT), regex(pattern = r"\S"))]
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

/// A guarantee command, its arguments read.
pub enum Command {
    /// `send_sms`.
    Sms(SmsArgs),
    /// `send_campaign_batch`.
    Batch(BatchArgs),
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

/// Why a text cannot be sent, if it cannot.
fn text_problem(name: &str, text: &str) -> Option<String> {
    if text.trim().is_empty() {
        Some(format!(
            "argument `{name}` is empty: there is nothing to send"
        ))
    } else if text.chars().count() > MAX_TEXT {
        Some(format!(
            "argument `{name}` is longer than {MAX_TEXT} characters"
        ))
    } else {
        None
    }
}

fn number_problem(at: &str, phone: &str) -> Option<String> {
    (!is_e164(phone)).then(|| {
        let shown: String = phone.chars().take(32).collect();
        format!("{at} `{shown}` is not an E.164 number (+ and 2 to 15 digits, as +15550100)")
    })
}

impl Command {
    /// Reads and checks the arguments of guarantee tool `tool`, before any policy decision:
    /// `None` when `tool` is not one, the `invalid-arguments` refusal when they do not fit.
    pub fn parse(tool: &str, arguments: &Value) -> Option<Result<Command, Refusal>> {
        let shape = |err: serde_json::Error| {
            Refusal::invalid_arguments(format!("the arguments do not fit {tool}: {err}"))
        };
        let parsed = match tool {
            SEND_SMS => SmsArgs::deserialize(arguments)
                .map_err(shape)
                .and_then(|args| {
                    let problem = number_problem("argument `to`", &args.to)
                        .or_else(|| text_problem("body", &args.body));
                    match problem {
                        Some(problem) => Err(Refusal::invalid_arguments(problem)),
                        None => Ok(Command::Sms(args)),
                    }
                }),
            SEND_CAMPAIGN_BATCH => BatchArgs::deserialize(arguments).map_err(shape).and_then(
                |args| {
                    let count = args.recipients.len();
                    let problem = if count == 0 {
                        Some("argument `recipients` is empty: a batch names at least one".into())
                    } else if count > MAX_RECIPIENTS {
                        Some(format!(
                            "argument `recipients` names {count} numbers; a batch takes at most \
                             {MAX_RECIPIENTS}"
                        ))
                    } else {
                        args.recipients
                            .iter()
                            .enumerate()
                            .find_map(|(i, phone)| {
                                number_problem(&format!("recipients[{i}]"), phone)
                            })
                            .or_else(|| text_problem("message", &args.message))
                    };
                    match problem {
                        Some(problem) => Err(Refusal::invalid_arguments(problem)),
                        None => Ok(Command::Batch(args)),
                    }
                },
            ),
            _ => return None,
        };
        Some(parsed)
    }

    /// The tool's name.
    pub fn tool(&self) -> &'static str {
        match self {
            Command::Sms(_) => SEND_SMS,
            Command::Batch(_) => SEND_CAMPAIGN_BATCH,
        }
    }
}
