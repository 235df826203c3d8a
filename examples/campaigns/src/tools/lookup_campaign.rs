//! `lookup_marketing_campaigns`: where a campaign stands, by its id, from the store: the
//! authority on a campaign.

use std::sync::Arc;

use agent_tool_result::guarantee::format_instant;
use agent_tool_result::registry::{EnvelopeTool, Principal};
use agent_tool_result::{Classified, Envelope, Hints, ToolError, classified};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::service::{Service, ServiceError};
use crate::store::campaigns::CampaignRow;
use crate::store::instant;

/// `lookup_marketing_campaigns`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CampaignArgs {
    /// The `campaignId` a batch answered with.
    pub campaign_id: String,
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

/// What `lookup_marketing_campaigns` answers.
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

/// No campaign has the id a lookup named.
const CAMPAIGN_NOT_FOUND: Classified = classified!("campaign-not-found", NoTarget);

/// The tool, on the service.
pub struct LookupCampaign(pub Arc<Service>);

impl EnvelopeTool for LookupCampaign {
    const NAME: &'static str = "lookup_marketing_campaigns";
    const DESCRIPTION: &'static str = "Where a campaign stands, by campaignId: status, counts, \
        updatedAt, next attempt. The authority: re-query it rather than trusting notes.";
    const HINTS: Hints = Hints::READ_ONLY;
    type Arguments = CampaignArgs;
    type Output = CampaignStatus;
    type Error = ServiceError;

    async fn run(
        &self,
        args: CampaignArgs,
        principal: &Principal,
    ) -> Result<Envelope<CampaignStatus>, ServiceError> {
        let id = args.campaign_id;
        let Some(row) = self.0.store().campaign(&id, principal.as_str()).await? else {
            return Ok(Envelope::failure(ToolError::new(
                CAMPAIGN_NOT_FOUND,
                format!("No campaign {id}: nothing was recorded or sent under that id."),
            )));
        };
        let CampaignRow {
            requested,
            sending,
            sent,
            held,
            denied,
            updated_ms,
            next_attempt_ms,
        } = row;
        let status = if sending > 0 {
            "sending"
        } else if held > 0 {
            "held"
        } else {
            "completed"
        };
        Ok(Envelope::success(CampaignStatus {
            campaign_id: id,
            status: status.to_owned(),
            counts: Counts {
                requested,
                sent,
                sending,
                held,
                denied,
            },
            updated_at: format_instant(instant(updated_ms)),
            next_attempt_at: next_attempt_ms.map(|ms| format_instant(instant(ms))),
        }))
    }
}
