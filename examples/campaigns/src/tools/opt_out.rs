//! `opt_out`: a number opted out of every later message, as its owner asked (a STOP reply,
//! say), and `lookup_opt_out`, where an opt-out stands. A kind of operation of its own, in one
//! module: its arguments, its fields, its logic, its SQL and its recovery, with its table
//! (`opt_out_requests`) in the schema.
//!
//! The number gets one confirmation through the provider (with no transaction open), then the
//! opt-out is recorded with the call's answer in one transaction under the key's fence: the
//! number joins the opted-out, whose later sends are denied by contact policy, and its held
//! recipients of campaigns are denied with it rather than sent in a later window.

use std::sync::Arc;

use agent_tool_result::guarantee::{GuaranteeResult, Tally, format_instant};
use agent_tool_result::registry::{EnvelopeTool, Principal};
use agent_tool_result::replay::{
    Done, GuaranteeTool, Operation, OperationFields, Recovered, RecoveryError, TransactionError,
};
use agent_tool_result::{Classified, Envelope, Hints, ToolError, classified};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::checks::{E164, phone};
use crate::db::error::DbError;
use crate::provider::Send;
use crate::service::{Service, ServiceError, not_sent, unavailable};
use crate::store::instant;

/// The confirmation the number gets.
const CONFIRMATION: &str = "You are opted out: no more messages will be sent to this number.";

/// `opt_out`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptOutArgs {
    /// The number to send nothing more to (E.164).
    #[schemars(regex(pattern = E164))]
    #[serde(deserialize_with = "phone")]
    pub phone: String,
}

/// The tool's own field of an opt-out result.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OptOutRef {
    /// The opt-out, to look up by id.
    pub opt_out_id: String,
}

impl OperationFields for OptOutRef {
    fn of_operation(id: &str) -> Self {
        OptOutRef {
            opt_out_id: id.to_owned(),
        }
    }
}

/// The tool, on the service.
pub struct OptOut(pub Arc<Service>);

impl GuaranteeTool for OptOut {
    const NAME: &'static str = "opt_out";
    const DESCRIPTION: &'static str = "Opts a number out of every later message, as its owner \
        asked: later sends to it, held campaign recipients included, are denied by contact \
        policy. The number gets one confirmation (sent 1); a number opted out already gets none.";
    const OPERATION: &'static str = "opt";
    const LOOKUP: &'static str = LookupOptOut::NAME;
    /// An opt-out adds to the world (a confirmation reaches a person) and takes nothing away
    /// that the caller asked for.
    const HINTS: Hints = Hints::new().destructive(false);
    type Arguments = OptOutArgs;
    type Fields = OptOutRef;

    /// A number not opted out yet is sent its confirmation through the provider (the key
    /// reads in flight to a second caller meanwhile); then the opt-out is recorded with the
    /// answer under the key's fence.
    async fn run(&self, args: OptOutArgs, operation: Operation) -> Done<OptOutRef> {
        let (service, id) = (&self.0, operation.id());
        let confirmed = match service.store().is_opted_out(&args.phone).await {
            Ok(true) => false,
            Ok(false) => {
                let effect = Send::effect_of(id, &args.phone);
                let send = Send {
                    effect_key: effect.as_str(),
                    phone: &args.phone,
                    body: CONFIRMATION,
                    campaign_id: None,
                    message_id: Some(id),
                    fence: operation.lease().fence().as_i64(),
                };
                if let Err(err) = service.send(send).await {
                    return not_sent(&err).into();
                }
                true
            }
            Err(err) => return unavailable(&err).into(),
        };
        let recorded = async {
            let mut conn = service.store().writer().await?;
            let mut tx = conn.effect(Some(operation.lease())).await?;
            tx.execute(
                "INSERT INTO opt_outs (phone) VALUES ($1) ON CONFLICT DO NOTHING",
                &[args.phone.as_str().into()],
            )
            .await?;
            let withdrawn = tx
                .execute(
                    "UPDATE recipients SET state = 'denied', next_attempt_ms = NULL \
                     WHERE phone = $1 AND state = 'held'",
                    &[args.phone.as_str().into()],
                )
                .await?;
            let sql = "INSERT INTO opt_out_requests \
                       (id, principal, phone, confirmed, withdrawn, created_ms) \
                       VALUES ($1, $2, $3, $4, $5, NOW_MS)";
            let row = [
                id.into(),
                operation.principal().into(),
                args.phone.as_str().into(),
                i64::from(confirmed).into(),
                i64::try_from(withdrawn).unwrap_or(i64::MAX).into(),
            ];
            let answer = answer(id, confirmed);
            Ok::<_, TransactionError<DbError>>(tx.commit_with(sql, &row, answer.into()).await)
        };
        recorded.await.unwrap_or_else(Done::from)
    }

    /// The opt-out is recorded with its call's answer, under the key's fence: found, that is
    /// its answer. Not found, it never committed, and under the old fence never can: the call
    /// runs again, and its confirmation, the same effect, reaches the person once.
    async fn recover(&self, operation: Operation) -> Result<Recovered<OptOutRef>, RecoveryError> {
        let id = operation.id();
        Ok(
            match opt_out_row(&self.0, id, operation.principal()).await? {
                Some(row) => Recovered::Settled(answer(id, row.confirmed)),
                None => Recovered::NotStarted,
            },
        )
    }
}

/// An opt-out's answer: committed, with its confirmation counted sent when one was.
fn answer(id: &str, confirmed: bool) -> GuaranteeResult<OptOutRef> {
    let tally = Tally::sent(u64::from(confirmed));
    GuaranteeResult::committed_with(tally, OptOutRef::of_operation(id))
        .with_next_tool(OptOut::LOOKUP)
}

/// An opt-out as recorded.
struct OptOutRow {
    phone: String,
    confirmed: bool,
    withdrawn: i64,
    created_ms: i64,
}

/// Opt-out `id`, if `principal` made it.
async fn opt_out_row(
    service: &Service,
    id: &str,
    principal: &str,
) -> Result<Option<OptOutRow>, DbError> {
    let rows = service
        .store()
        .conn()
        .await?
        .query(
            "SELECT phone, confirmed, withdrawn, created_ms FROM opt_out_requests \
             WHERE id = $1 AND principal = $2",
            &[id.into(), principal.into()],
        )
        .await?;
    Ok(rows.first().map(|row| OptOutRow {
        phone: row.text(0),
        confirmed: row.int(1) != 0,
        withdrawn: row.int(2),
        created_ms: row.int(3),
    }))
}

/// `lookup_opt_out`'s arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OptOutLookupArgs {
    /// The `optOutId` `opt_out` answered with.
    pub opt_out_id: String,
}

/// What `lookup_opt_out` answers.
#[derive(Serialize, Deserialize, JsonSchema, Debug)]
#[serde(rename_all = "camelCase")]
pub struct OptOutStatus {
    /// The opt-out.
    pub opt_out_id: String,
    /// The number opted out.
    pub phone: String,
    /// Whether the number was sent a confirmation (not when it was opted out already).
    pub confirmed: bool,
    /// How many held recipients of campaigns were denied rather than sent.
    pub withdrawn: u64,
    /// When it was recorded (RFC 3339).
    pub opted_out_at: String,
}

/// No opt-out has the id a lookup named.
const OPT_OUT_NOT_FOUND: Classified = classified!("opt-out-not-found", NoTarget);

/// The lookup, on the service.
pub struct LookupOptOut(pub Arc<Service>);

impl EnvelopeTool for LookupOptOut {
    const NAME: &'static str = "lookup_opt_out";
    const DESCRIPTION: &'static str = "Whether a number was opted out, by optOutId.";
    const HINTS: Hints = Hints::READ_ONLY;
    type Arguments = OptOutLookupArgs;
    type Output = OptOutStatus;
    type Error = ServiceError;

    async fn run(
        &self,
        args: OptOutLookupArgs,
        principal: &Principal,
    ) -> Result<Envelope<OptOutStatus>, ServiceError> {
        let id = args.opt_out_id;
        Ok(match opt_out_row(&self.0, &id, principal.as_str()).await? {
            Some(row) => Envelope::success(OptOutStatus {
                phone: row.phone,
                confirmed: row.confirmed,
                withdrawn: u64::try_from(row.withdrawn).unwrap_or(0),
                opted_out_at: format_instant(instant(row.created_ms)),
                opt_out_id: id,
            }),
            None => Envelope::failure(ToolError::new(
                OPT_OUT_NOT_FOUND,
                format!("No opt-out {id}: nothing was recorded under that id."),
            )),
        })
    }
}
