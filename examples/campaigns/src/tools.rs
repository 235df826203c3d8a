//! The service's tools, listed once: from this list come the REST routes, MCP `tools/list` and
//! `tools/call`, and the OpenAPI operations. Each tool is a module of its own (its arguments,
//! its fields or output, its logic and its declaration); adding one is a module and a line
//! here.

use std::sync::Arc;

use agent_tool_result::registry::Registry;

use crate::db::ledger::ServiceLedger;
use crate::service::Service;

pub mod checks;
pub mod lookup_campaign;
pub mod lookup_sms;
pub mod opt_out;
pub mod send_batch;
pub mod send_sms;

/// The service's tools.
pub type Tools = Registry<ServiceLedger>;

/// The service's tools, on its sequence: guarantee tools at `POST /v1/tools/{name}` over
/// REST, each call counted against its account's rate limit first.
pub fn registry(service: &Arc<Service>) -> Tools {
    let limits = Arc::clone(service);
    Registry::new(Arc::clone(service.sequence()))
        .with_tools_path("/v1/tools")
        .with_admission(move |_tool, principal| {
            let (limits, principal) = (Arc::clone(&limits), principal.clone());
            async move { limits.admit(principal.as_str()).await }
        })
        .guarantee(send_sms::SendSms(Arc::clone(service)))
        .guarantee(send_batch::SendBatch(Arc::clone(service)))
        .lookup(
            lookup_campaign::LookupCampaign(Arc::clone(service)),
            "/v1/campaigns/{campaignId}",
        )
        .lookup(
            lookup_sms::LookupSms(Arc::clone(service)),
            "/v1/messages/{messageId}",
        )
        .guarantee_with_lookup(
            opt_out::OptOut(Arc::clone(service)),
            opt_out::LookupOptOut(Arc::clone(service)),
            "/v1/opt-outs/{optOutId}",
        )
}
