//! The operations the guarantee tools create, by id: a campaign (`cmp_...`) or a message
//! (`msg_...`). An operation's id is its call's key's context, so the field of an answer that
//! names it and the lookup that finds it follow from the id alone: what the recovery of a key
//! its call abandoned names.

use agent_tool_result::JsonObject;
use agent_tool_result::guarantee::GuaranteeResult;
use serde_json::Value;

/// The prefix of a campaign's id.
pub const CAMPAIGN: &str = "cmp";
/// The prefix of a message's id.
pub const MESSAGE: &str = "msg";
/// The field of a batch's answer naming its campaign.
pub const CAMPAIGN_ID: &str = "campaignId";
/// The field of an SMS's answer naming its message.
pub const MESSAGE_ID: &str = "messageId";
/// The lookup of a campaign, by id.
pub const LOOKUP_CAMPAIGNS: &str = "lookup_marketing_campaigns";
/// The lookup of a message, by id.
pub const LOOKUP_SMS: &str = "lookup_sms";

/// What `id` is: its kind's lookup and the field that names it, if it is an operation's id.
pub fn kind_of(id: &str) -> Option<(&'static str, &'static str)> {
    match id.split_once('_') {
        Some((CAMPAIGN, _)) => Some((LOOKUP_CAMPAIGNS, CAMPAIGN_ID)),
        Some((MESSAGE, _)) => Some((LOOKUP_SMS, MESSAGE_ID)),
        _ => None,
    }
}

/// A tool's own field naming the operation: `{ field: id }`.
pub fn naming(field: &str, id: &str) -> JsonObject {
    let mut fields = JsonObject::new();
    fields.insert(field.to_owned(), Value::String(id.to_owned()));
    fields
}

/// The `unknown` answer of a key whose call stopped: the campaign or message it began (its
/// context, whose prefix says which), to look up by id.
pub fn recovery(id: &str) -> GuaranteeResult {
    let unknown = GuaranteeResult::unknown();
    match kind_of(id) {
        Some((lookup, field)) => unknown
            .with_next_tool(lookup)
            .with_fields(naming(field, id))
            .expect("an id is no contract field"),
        // Nothing names an id.
        None => unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::{CAMPAIGN_ID, LOOKUP_CAMPAIGNS, LOOKUP_SMS, MESSAGE_ID, recovery};

    /// A key found abandoned is answered from its context alone: the operation's id, whose
    /// prefix names the lookup, whatever the call got to before it stopped.
    #[test]
    fn the_recovery_names_the_operation_of_the_context() {
        for (id, lookup, field) in [
            ("cmp_0123456789abcdef", LOOKUP_CAMPAIGNS, CAMPAIGN_ID),
            ("msg_0123456789abcdef", LOOKUP_SMS, MESSAGE_ID),
        ] {
            let unknown = recovery(id);
            assert_eq!(
                unknown.settlement(),
                agent_tool_result::guarantee::SettlementState::Unknown
            );
            assert_eq!(unknown.suggested_next_tool(), Some(lookup));
            assert_eq!(unknown.fields().unwrap()[field], id);
        }
        let bare = recovery("");
        assert_eq!(bare.suggested_next_tool(), None);
        assert!(bare.fields().is_none());
    }
}
