//! The tools, whatever the transport. A guarantee call runs under the crate's replay
//! [`Sequence`]: the service writes only the tool (what to send, what to answer) and the
//! recovery of a key its first call abandoned (`unknown`, naming the lookup of the operation
//! the key's context names). The sequence's [`Reply`] is projected by REST and MCP alike, so
//! both transports give one decision.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agent_tool_result::guarantee::{
    Answer, GuaranteeResult, Impact, PolicyCode, Refusal, format_instant,
};
use agent_tool_result::replay::{
    Abandoned, Done, EffectProbe, GuaranteeTool, IdempotencyKey, Lease, Operation, Reply, Sequence,
};
use agent_tool_result::{Classified, Envelope, JsonObject, ToolError, classified};
use serde_json::Value;

use crate::db::{DbError, Target};
use crate::faults::FullDisk;
use crate::ledger::{LedgerError, ServiceLedger};
use crate::limits::{RateLimits, Standing};
use crate::store::{CampaignRow, Claim, Message, SendWindow, Store};
use crate::tools::{
    BatchArgs, CampaignRef, CampaignStatus, Counts, LOOKUP_CAMPAIGNS, LOOKUP_SMS, MessageRef,
    MessageStatus, SendBatch, SendSms, SmsArgs,
};

/// The service's settings.
#[derive(Debug)]
pub struct Config {
    /// Each account's send window: its length, and the cap of an account given none of its
    /// own.
    pub window: SendWindow,
    /// Accounts with a cap of their own, by principal.
    pub caps: HashMap<String, u64>,
    /// How long the provider takes to accept one send.
    pub provider_delay: Duration,
    /// An injected full disk, to watch the service recover from one.
    pub full_disk: Option<FullDisk>,
    /// How long a call holds its key, and a process its claims: what a stopped process held
    /// is answered (a key) or settled by another process (a claim) once this has passed.
    pub lease: Duration,
    /// How many PostgreSQL connections the process keeps at most (its tables and its ledger
    /// share them).
    pub connections: usize,
    /// How long one database statement, or the wait for a connection, may take: while the
    /// database is down or cut off, every call answers within a few of these.
    pub db_timeout: Duration,
    /// Each account's rate limit on the guarantee tools.
    pub rates: RateLimits,
}

impl Config {
    /// `principal`'s send window: its own cap, or the default one.
    pub fn window_of(&self, principal: &str) -> SendWindow {
        SendWindow {
            cap: self.caps.get(principal).copied().unwrap_or(self.window.cap),
            ..self.window
        }
    }
}

/// A failure of the service's own storage.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The service's tables.
    #[error("the campaign store failed: {0}")]
    Store(#[from] DbError),
    /// The idempotency ledger.
    #[error("the idempotency ledger failed: {0}")]
    Ledger(#[from] LedgerError),
}

/// The campaign service on one database, shared by any number of its processes.
pub struct Service {
    store: Arc<Store>,
    sequence: Sequence<ServiceLedger, Arc<Store>>,
    config: Config,
}

/// Whether the operation an abandoned key began was created: a campaign or message with the
/// id its context names. Asked once the key is held under a greater fence, and every creation
/// checks its fence in its own transaction, so "not created" is final.
impl EffectProbe for Store {
    type Error = DbError;

    async fn started(&self, abandoned: &Abandoned) -> Result<bool, DbError> {
        if abandoned.context().is_empty() {
            return Ok(true);
        }
        self.operation_exists(abandoned.context()).await
    }

    /// What the operation came to, from the store: a campaign as it stands, a message sent.
    /// Each commits with its call's answer, so this is what that answer said (or, for a
    /// campaign, where it stands since).
    async fn outcome(&self, abandoned: &Abandoned) -> Result<Option<GuaranteeResult>, DbError> {
        let id = abandoned.context();
        let principal = abandoned.lease().scope().as_str();
        let found = match id.split_once('_') {
            Some((CAMPAIGN, _)) => self
                .campaign(id, principal)
                .await?
                .map(|row| as_found(&row).with_next_tool(LOOKUP_CAMPAIGNS)),
            Some((MESSAGE, _)) => self
                .message(id, principal)
                .await?
                .map(|_| GuaranteeResult::committed_one()),
            _ => None,
        };
        let field = if id.starts_with(CAMPAIGN) {
            CAMPAIGN_ID
        } else {
            MESSAGE_ID
        };
        Ok(found.and_then(|result| result.with_fields(naming(field, id)).ok()))
    }
}

/// The refusal of a call whose store failed: nothing more was done by it, and the same
/// request with the same key answers what it did (a campaign it created is found by its id).
fn unavailable<T>(why: &dyn std::fmt::Display) -> Answer<T> {
    Refusal::unavailable(format!(
        "the campaign store failed ({why}); send the same request with the same key again"
    ))
    .with_retry_after(Duration::from_secs(1))
    .into()
}

fn instant(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

/// The prefix of a campaign's id.
const CAMPAIGN: &str = "cmp";
/// The prefix of a message's id.
const MESSAGE: &str = "msg";
/// The field of a batch's answer naming its campaign.
const CAMPAIGN_ID: &str = "campaignId";
/// The field of an SMS's answer naming its message.
const MESSAGE_ID: &str = "messageId";

/// The `unknown` answer of a key whose call stopped: the campaign or message it began (its
/// context, whose prefix says which), to look up by id.
fn recovery(id: &str) -> GuaranteeResult {
    let unknown = GuaranteeResult::unknown();
    let (tool, field) = match id.split_once('_') {
        Some((CAMPAIGN, _)) => (LOOKUP_CAMPAIGNS, CAMPAIGN_ID),
        Some((MESSAGE, _)) => (LOOKUP_SMS, MESSAGE_ID),
        // Nothing names an id.
        _ => return unknown,
    };
    unknown
        .with_next_tool(tool)
        .with_fields(naming(field, id))
        .expect("an id is no contract field")
}

/// A process's name in the provider's log: unique among processes, its process id first.
fn sender() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("{}-{:016x}", std::process::id(), hasher.finish())
}

impl Service {
    /// Opens the service's tables and its ledger at `target`.
    pub async fn open(target: &Target, mut config: Config) -> Result<Self, ServiceError> {
        let store = Arc::new(
            Store::open(
                target,
                config.full_disk.take(),
                sender(),
                config.lease,
                config.connections,
                config.db_timeout,
            )
            .await?,
        );
        let ledger = ServiceLedger::open(target, &store, config.lease, config.db_timeout).await?;
        Ok(Service {
            sequence: Sequence::new(ledger)
                .with_recovery(recovery)
                .with_probe(Arc::clone(&store)),
            store,
            config,
        })
    }

    /// Whether the service's tables and ledger are on PostgreSQL.
    pub fn on_postgres(&self) -> bool {
        self.store.db().pool().is_some()
    }

    /// Whether `tool` is one of the guarantee tools (the calls that send).
    pub fn is_guarantee_tool(tool: &str) -> bool {
        matches!(tool, SendSms::NAME | SendBatch::NAME)
    }

    /// Counts a guarantee call of `tool` by `principal` against its account's rate limit: admitted,
    /// or the refusal to answer (before the sequence begins anything).
    pub fn admit(&self, tool: &str, principal: &str) -> Standing<'_> {
        let standing = self.config.rates.admit(principal);
        if let Standing::Refused { .. } = standing {
            crate::telemetry::rate_limited(tool, principal);
        }
        standing
    }

    /// Records that `phone` opted out.
    pub async fn opt_out(&self, phone: &str) -> Result<(), ServiceError> {
        Ok(self.store.opt_out(phone).await?)
    }

    /// Runs guarantee tool `tool` for `principal` under `key`, with `arguments` as a REST
    /// body carries them, through the replay sequence: the first time it runs and its answer
    /// is recorded; with the same key and arguments it is replayed and nothing is sent again;
    /// a key reused or in flight is refused; a store that fails answers 503 ("the same request
    /// with the same key, later"), and the key is not burned; an answer names the operation's
    /// id. `None` when `tool` is no guarantee tool.
    pub async fn call(
        &self,
        tool: &str,
        principal: &str,
        key: IdempotencyKey,
        arguments: Value,
    ) -> Option<Reply> {
        let sequence = &self.sequence;
        Some(match tool {
            SendSms::NAME => {
                sequence
                    .serve(&SendSms(self), principal, key, arguments)
                    .await
            }
            SendBatch::NAME => {
                sequence
                    .serve(&SendBatch(self), principal, key, arguments)
                    .await
            }
            _ => return None,
        })
    }

    /// [`Service::call`] for a call whose key rides in its arguments, as MCP carries it.
    pub async fn call_keyed(
        &self,
        tool: &str,
        principal: &str,
        arguments: Option<JsonObject>,
    ) -> Option<Reply> {
        let sequence = &self.sequence;
        Some(match tool {
            SendSms::NAME => {
                sequence
                    .serve_keyed(&SendSms(self), principal, arguments)
                    .await
            }
            SendBatch::NAME => {
                sequence
                    .serve_keyed(&SendBatch(self), principal, arguments)
                    .await
            }
            _ => return None,
        })
    }

    /// `send_sms`: an opted-out number is denied before the provider; any other is sent,
    /// under the key's fence, its answer committed with the send. Without an operation
    /// (outside the replay sequence: the benchmark's baseline) the same send is made in a
    /// plain transaction, and its answer is the tool's own.
    pub async fn sms(
        &self,
        args: &SmsArgs,
        id: &str,
        principal: &str,
        lease: Option<&Lease>,
    ) -> Done<MessageRef> {
        match self.store.is_opted_out(&args.to).await {
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
        // The provider's work is done inside the transaction that begins the key, when it
        // does, so a second caller meanwhile is told the key is in flight.
        let delay = self.config.provider_delay;
        if lease.is_some_and(Lease::in_transaction) {
            return self.store.send_message(lease, &message, sent, delay).await;
        }
        tokio::time::sleep(delay).await;
        self.store
            .send_message(lease, &message, sent, Duration::ZERO)
            .await
    }

    /// `send_campaign_batch`: opted-out recipients are denied, as many others as the window
    /// has room for are claimed and the rest held durably for the next window, and the
    /// answer commits with the campaign; then the claimed ones are sent.
    pub async fn send_batch(&self, args: &BatchArgs, operation: &Operation) -> Done<CampaignRef> {
        let (principal, id) = (operation.principal(), operation.id());
        let mut recipients = args.recipients.clone();
        recipients.sort();
        recipients.dedup();
        let mut opted_out = 0;
        for phone in &recipients {
            match self.store.is_opted_out(phone).await {
                Ok(out) => opted_out += usize::from(out),
                Err(err) => return unavailable(&err).into(),
            }
        }
        if opted_out == recipients.len() {
            return GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT).into();
        }
        let named = CampaignRef {
            campaign_id: id.to_owned(),
        };
        let answer = |row: &CampaignRow| match as_found(row)
            .with_next_tool(LOOKUP_CAMPAIGNS)
            .with_fields(named)
        {
            Ok(result) => result.into(),
            Err(err) => unavailable(&err),
        };
        let (done, claimed) = self
            .store
            .create_campaign(
                Some(operation.lease()),
                id,
                principal,
                &args.message,
                &recipients,
                self.config.window_of(principal),
                answer,
            )
            .await;
        for claim in &claimed {
            // A send that fails leaves its claim to expire: it is held again, and sent by
            // whichever process settles it. The answer stands either way.
            if self.send_one(claim).await.is_err() {
                break;
            }
        }
        done
    }

    /// The provider sends to one claimed recipient, if the claim is still current: renewed
    /// first, then sent under its fence.
    async fn send_one(&self, claim: &Claim) -> Result<(), DbError> {
        if !self.store.renew_claim(claim).await? {
            return Ok(());
        }
        tokio::time::sleep(self.config.provider_delay).await;
        self.store.send_recipient(claim).await?;
        Ok(())
    }

    /// Sends the held recipients that are due, within the window's cap; returns how many.
    pub async fn release_due(&self) -> Result<usize, ServiceError> {
        let claims = self
            .store
            .claim_due(|principal| self.config.window_of(principal))
            .await?;
        for claim in &claims {
            self.send_one(claim).await?;
        }
        Ok(claims.len())
    }

    /// What any live process does every little while, for every process: claims whose lease
    /// expired are settled against the provider, the replay sequence's owed writes are made
    /// and abandoned keys answered `unknown`, and due recipients are sent. Returns how many
    /// keys it answered `unknown`.
    pub async fn settle(&self) -> Result<usize, ServiceError> {
        self.store.reconcile().await?;
        let settled = self.sequence.settle(256).await?;
        self.release_due().await?;
        Ok(settled.recovered)
    }

    /// Settles as [`Service::settle`] does, as a task of its own, for as long as the process
    /// lives.
    pub fn start_settling(self: &Arc<Self>) {
        let service = Arc::clone(self);
        let tick = Duration::from_millis(
            u64::try_from(service.config.window.length_ms / 20)
                .unwrap_or(1000)
                .clamp(50, 1000)
                .min(u64::try_from(service.config.lease.as_millis() / 3).unwrap_or(1000))
                .max(20),
        );
        tokio::spawn(async move {
            use std::fmt::Write as _;
            // Said once when settling starts failing (the database is down, say), with every
            // cause, and once when it works again: not every tick.
            let mut failing = false;
            loop {
                match service.settle().await {
                    Err(err) if !failing => {
                        failing = true;
                        let mut line = format!("campaigns: settling failed: {err}");
                        let mut cause = std::error::Error::source(&err);
                        while let Some(inner) = cause {
                            // A cause its error did not already say.
                            let said = inner.to_string();
                            if !line.contains(&said) {
                                let _ = write!(line, ": {said}");
                            }
                            cause = inner.source();
                        }
                        eprintln!("{line}");
                    }
                    Ok(_) if failing => {
                        failing = false;
                        eprintln!("campaigns: settling works again");
                    }
                    _ => {}
                }
                tokio::time::sleep(tick).await;
            }
        });
    }

    /// `lookup_marketing_campaigns`: where `principal`'s campaign stands, from the store.
    pub async fn lookup_campaign(
        &self,
        id: &str,
        principal: &str,
    ) -> Result<Envelope<CampaignStatus>, ServiceError> {
        let Some(row) = self.store.campaign(id, principal).await? else {
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
            campaign_id: id.to_owned(),
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

    /// `lookup_sms`: whether `principal`'s message was sent, from the store.
    pub async fn lookup_message(
        &self,
        id: &str,
        principal: &str,
    ) -> Result<Envelope<MessageStatus>, ServiceError> {
        Ok(match self.store.message(id, principal).await? {
            Some((status, updated_ms)) => Envelope::success(MessageStatus {
                message_id: id.to_owned(),
                status,
                updated_at: format_instant(instant(updated_ms)),
            }),
            None => Envelope::failure(ToolError::new(
                MESSAGE_NOT_FOUND,
                format!("No message {id}: nothing was recorded or sent under that id."),
            )),
        })
    }
}

/// A batch's answer from its campaign as found (an earlier call under the same key created
/// it, and its answer was lost): sent and claimed are committed, held deferred.
fn as_found<T>(row: &CampaignRow) -> GuaranteeResult<T> {
    let impact = Impact::new()
        .with_requested(row.requested)
        .with_committed(row.sent + row.sending)
        .with_deferred(row.held)
        .with_denied(row.denied);
    let result = if row.held > 0 {
        GuaranteeResult::deferred(PolicyCode::CAMPAIGN_SEND_WINDOW)
            .with_impact(impact)
            .and_then(|held| {
                held.with_retry_at(row.next_attempt_ms.map_or_else(SystemTime::now, instant))
            })
    } else {
        GuaranteeResult::committed().with_impact(impact)
    };
    result.expect("a campaign's counts add up to requested")
}

/// A tool's own field naming the operation: `{ field: id }`.
fn naming(field: &str, id: &str) -> JsonObject {
    let mut fields = JsonObject::new();
    fields.insert(field.to_owned(), Value::String(id.to_owned()));
    fields
}

/// No campaign has the id a lookup named.
const CAMPAIGN_NOT_FOUND: Classified = classified!("campaign-not-found", NoTarget);
/// No message has the id a lookup named.
const MESSAGE_NOT_FOUND: Classified = classified!("message-not-found", NoTarget);

#[cfg(test)]
mod tests {
    /// A key found abandoned is answered from its context alone: the operation's id, whose
    /// prefix names the lookup, whatever the call got to before it stopped.
    #[test]
    fn the_recovery_names_the_operation_of_the_context() {
        use super::{CAMPAIGN_ID, LOOKUP_CAMPAIGNS, LOOKUP_SMS, MESSAGE_ID, recovery};
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
