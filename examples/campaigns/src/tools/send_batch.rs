//! `send_campaign_batch`: a campaign, sent up to the account's window's cap now and held
//! durably for later windows past it; its answer commits with the campaign.

use std::sync::Arc;

use agent_tool_result::Hints;
use agent_tool_result::guarantee::{GuaranteeResult, PolicyCode};
use agent_tool_result::registry::EnvelopeTool;
use agent_tool_result::replay::{
    Done, GuaranteeTool, Operation, OperationFields, Recovered, RecoveryError,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::checks::{E164, MAX_RECIPIENTS, MAX_TEXT, recipients, text};
use super::lookup_campaign::LookupCampaign;
use crate::service::{Service, unavailable};

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

/// The tool's own field of a batch result.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CampaignRef {
    /// The campaign, to look up by id.
    pub campaign_id: String,
}

impl OperationFields for CampaignRef {
    fn of_operation(id: &str) -> Self {
        CampaignRef {
            campaign_id: id.to_owned(),
        }
    }
}

/// The tool, on the service.
pub struct SendBatch(pub Arc<Service>);

impl GuaranteeTool for SendBatch {
    const NAME: &'static str = "send_campaign_batch";
    const DESCRIPTION: &'static str = "Sends a campaign: up to the window's cap now, the rest \
        held durably for later windows (committed + defer). Read campaignId and look it up \
        with lookup_marketing_campaigns; never send the batch again to resume it.";
    const OPERATION: &'static str = "cmp";
    const LOOKUP: &'static str = LookupCampaign::NAME;
    /// A campaign adds to the world and reaches people.
    const HINTS: Hints = Hints::new().destructive(false);
    type Arguments = BatchArgs;
    type Fields = CampaignRef;

    /// Opted-out recipients are denied, as many others as the window has room for are
    /// claimed and the rest held durably for the next window, and the answer commits with
    /// the campaign; then the claimed ones are sent.
    async fn run(&self, args: BatchArgs, operation: Operation) -> Done<CampaignRef> {
        let service = &self.0;
        let store = service.store();
        let (principal, id) = (operation.principal(), operation.id());
        let mut recipients = args.recipients;
        recipients.sort();
        recipients.dedup();
        let mut opted_out = 0;
        for phone in &recipients {
            match store.is_opted_out(phone).await {
                Ok(out) => opted_out += usize::from(out),
                Err(err) => return unavailable(&err).into(),
            }
        }
        if opted_out == recipients.len() {
            return GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT).into();
        }
        let (done, claimed) = store
            .create_campaign(
                Some(operation.lease()),
                id,
                principal,
                &args.message,
                &recipients,
                service.config().window_of(principal),
                |row| {
                    row.answer(CampaignRef::of_operation(id))
                        .with_next_tool(Self::LOOKUP)
                        .into()
                },
            )
            .await;
        for claim in &claimed {
            // A send that fails leaves its claim to expire: it is held again, and sent by
            // whichever process settles it (the provider takes the one effect once). The
            // answer stands either way.
            if service.send_claimed(claim).await.is_err() {
                break;
            }
        }
        done
    }

    /// The campaign is created with its call's answer, under the key's fence: found, its
    /// answer is where it stands; not found, it never was created, and now never can be under
    /// the old fence (its sends follow its creation, each under a claim of its own).
    async fn recover(&self, operation: Operation) -> Result<Recovered<CampaignRef>, RecoveryError> {
        let id = operation.id();
        let found = self.0.store().campaign(id, operation.principal()).await?;
        Ok(found.map_or(Recovered::NotStarted, |row| {
            Recovered::Settled(
                row.answer(CampaignRef::of_operation(id))
                    .with_next_tool(Self::LOOKUP),
            )
        }))
    }
}
