//! The tools, whatever the transport: a guarantee call goes through the idempotency ledger and
//! answers the REST projection of its answer (its result, or a refusal), which the ledger
//! keeps and replays; MCP reads the same response back as the crate's transport-neutral
//! `Answer` and projects that, so both transports give one decision.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agent_tool_result::guarantee::{GuaranteeResult, Impact, PolicyCode, Refusal, format_instant};
use agent_tool_result::http::RestProfile;
use agent_tool_result::replay::{
    self, Abandoned, Begin, Completion, Fingerprint, IdempotencyKey, Lease, Ledger, Scope,
    SqliteLedger, StoredResponse,
};
use agent_tool_result::{Envelope, ErrorCategory, ErrorCode, JsonObject, ToolError};
use http::Response;
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::store::{CampaignRow, DbFile, FullDisk, SendWindow, Store};
use crate::tools::{
    BatchArgs, CampaignRef, CampaignStatus, Command, Counts, LOOKUP_CAMPAIGNS, LOOKUP_SMS,
    MessageRef, MessageStatus, SEND_CAMPAIGN_BATCH, SEND_SMS, SmsArgs,
};

/// The service's settings.
#[derive(Debug)]
pub struct Config {
    /// The per-window cap on campaign sends.
    pub window: SendWindow,
    /// How long the provider takes to accept one send.
    pub provider_delay: Duration,
    /// An injected full disk, to watch the service recover from one.
    pub full_disk: Option<FullDisk>,
    /// How long a call holds its key: a key a stopped process held is answered `unknown`
    /// once this has passed.
    pub lease: Duration,
}

/// A failure of the service's own storage.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The service's tables.
    #[error("the campaign store failed")]
    Store(#[from] rusqlite::Error),
    /// The idempotency ledger.
    #[error("the idempotency ledger failed")]
    Ledger(#[from] replay::SqliteError),
    /// The database file the service opened was deleted or replaced while it ran: what it
    /// would write goes nowhere another process (or a restart) would see.
    #[error("the database file {0} was deleted or replaced while the service ran")]
    Gone(String),
}

/// The campaign service on one SQLite file.
pub struct Service {
    store: Store,
    ledger: SqliteLedger,
    config: Config,
    profile: RestProfile,
    file: DbFile,
    /// The operations a call of this process is running now: their claims are not settled
    /// behind their back.
    running: Mutex<HashSet<String>>,
    /// Answers sent whose record in the ledger failed (a full disk): recorded as soon as the
    /// store takes writes again, so a replay gets them without a restart.
    unrecorded: Mutex<Vec<(Lease, StoredResponse)>>,
}

/// Runs a ledger step from the blocking thread a call runs on.
fn wait<T>(step: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Handle::current().block_on(step)
}

fn now_ms() -> i64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

fn instant(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

/// The id of the operation a key began: the same for the same key and request, so a
/// recovery finds it from the ledger alone.
fn operation_id(prefix: &str, key: &IdempotencyKey, print: Fingerprint) -> String {
    let digest = Sha256::new()
        .chain_update(key.as_str())
        .chain_update([0])
        .chain_update(print.to_hex())
        .finalize();
    let head: [u8; 8] = digest[..8].try_into().expect("a digest has 32 bytes");
    format!("{prefix}_{:016x}", u64::from_be_bytes(head))
}

impl Service {
    /// Opens the service's tables and its ledger in the file at `path`.
    pub fn open(path: &Path, mut config: Config) -> Result<Self, ServiceError> {
        let store = Store::open(path, config.full_disk.take())?;
        Ok(Service {
            store,
            ledger: SqliteLedger::open(path)?.with_lease(config.lease),
            config,
            profile: RestProfile::default(),
            file: DbFile::open(path),
            running: Mutex::new(HashSet::new()),
            unrecorded: Mutex::new(Vec::new()),
        })
    }

    /// Records that `phone` opted out.
    pub fn opt_out(&self, phone: &str) -> Result<(), ServiceError> {
        Ok(self.store.opt_out(phone)?)
    }

    /// Settles what a stopped process left behind: recipients and messages left `sending`
    /// against the provider, then every key whose lease expired without an answer, answered
    /// `unknown` with the id to look up. Returns how many keys it answered.
    pub fn settle_abandoned(&self) -> Result<usize, ServiceError> {
        let running: Vec<String> = self.lock_running().iter().cloned().collect();
        self.store.reconcile(now_ms(), &running)?;
        let mut answered = 0;
        loop {
            let found = wait(self.ledger.abandoned(64))?;
            if found.is_empty() {
                return Ok(answered);
            }
            for abandoned in &found {
                self.answer_abandoned(abandoned)?;
                answered += 1;
            }
        }
    }

    /// Answers an abandoned key `unknown`, and records that answer under its lease.
    fn answer_abandoned(&self, abandoned: &Abandoned) -> Result<Response<Vec<u8>>, ServiceError> {
        let response = self.response(&self.unknown_answer(abandoned.context())?);
        let _ = wait(
            self.ledger
                .complete(abandoned.lease(), &StoredResponse::from_response(&response)),
        )?;
        Ok(response)
    }

    /// The `unknown` answer of a key whose call stopped: the campaign or message it began (its
    /// context), when the store has one, to look up by id.
    fn unknown_answer(&self, id: &str) -> Result<GuaranteeResult, ServiceError> {
        let unknown = GuaranteeResult::unknown();
        // The operation is recorded before its key is begun, so a key left in flight always
        // names the id to look up.
        let (tool, field) = match self.store.operation(id)?.as_deref() {
            Some(SEND_CAMPAIGN_BATCH) => (LOOKUP_CAMPAIGNS, "campaignId"),
            Some(SEND_SMS) => (LOOKUP_SMS, "messageId"),
            // Nothing names an id (a key begun by an older build of the service).
            _ => return Ok(unknown),
        };
        let mut fields = JsonObject::new();
        fields.insert(field.to_owned(), Value::String(id.to_owned()));
        Ok(unknown
            .with_next_tool(tool)
            .with_fields(fields)
            .expect("an id is no contract field"))
    }

    fn response<T: Serialize>(&self, result: &GuaranteeResult<T>) -> Response<Vec<u8>> {
        self.profile
            .response(result)
            .expect("the tool's fields serialize to an object")
    }

    /// Runs guarantee `command` for `principal` under `key` and answers its REST response:
    /// the first time it runs and its response is recorded; with the same key and arguments it
    /// is replayed and nothing is sent again; a key reused or in flight is refused; a store
    /// that fails (or is gone) before anything was sent answers 503, "the same request with
    /// the same key, later"; after a send, the answer names the operation's id.
    pub fn call(
        &self,
        command: &Command,
        arguments: &Value,
        principal: &str,
        key: &IdempotencyKey,
    ) -> Response<Vec<u8>> {
        let print = Fingerprint::of(command.tool(), principal, arguments);
        let (prefix, tool) = match command {
            Command::Sms(_) => ("msg", SEND_SMS),
            Command::Batch(_) => ("cmp", SEND_CAMPAIGN_BATCH),
        };
        let id = operation_id(prefix, key, print);
        let scope = Scope::principal(principal);
        let began = self
            .file
            .check()
            .map_err(ServiceError::Gone)
            .and_then(|()| Ok(self.store.record_operation(&id, tool)?))
            .and_then(|()| Ok(wait(self.ledger.begin(&scope, key, print, &id))?));
        let lease = match began {
            Ok(Begin::Fresh(lease)) => lease,
            Ok(Begin::Replay(stored)) => {
                return stored
                    .replayed()
                    .expect("the ledger holds what it was given");
            }
            Ok(Begin::Abandoned(abandoned)) => {
                // Its first call stopped: never run again, answered `unknown` once.
                return self
                    .answer_abandoned(&abandoned)
                    .unwrap_or_else(|err| self.unavailable(&err));
            }
            Ok(refused) => {
                let refusal = refused
                    .refusal()
                    .expect("neither fresh, replay nor abandoned");
                return self.profile.refusal_response(&refusal);
            }
            Err(err) => return self.unavailable(&err),
        };
        self.lock_running().insert(id.clone());
        let response = match command {
            Command::Sms(args) => self.send_sms(args, &id),
            Command::Batch(args) => self.send_batch(args, &id),
        };
        self.lock_running().remove(&id);
        let stored = StoredResponse::from_response(&response);
        match self.record(&lease, &stored) {
            Ok(Completion::Recorded) => {}
            // The call ran past its lease and another process answered it `unknown`, which
            // stays the key's answer; this answer (which names the same id) is still true.
            Ok(Completion::LeaseLost) => {
                eprintln!("campaigns: the lease of key {key} was lost before its answer");
            }
            Err(err) => {
                // The answer stands (it names the operation); it is recorded as soon as the
                // store takes writes again, and until then the key answers 409 "in flight".
                eprintln!("campaigns: recording the answer of key {key} failed, retrying: {err}");
                self.lock_unrecorded().push((lease, stored));
            }
        }
        response
    }

    fn record(&self, lease: &Lease, stored: &StoredResponse) -> Result<Completion, ServiceError> {
        self.file.check().map_err(ServiceError::Gone)?;
        self.store.may_write()?;
        Ok(wait(self.ledger.complete(lease, stored))?)
    }

    fn lock_running(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_unrecorded(&self) -> std::sync::MutexGuard<'_, Vec<(Lease, StoredResponse)>> {
        self.unrecorded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Settles, without a restart, what calls of this process left behind when the store
    /// failed under them: answers not yet recorded are recorded, and claims left `sending` by
    /// a call that has ended are settled against the provider. Returns how many of each.
    pub fn settle_ended(&self) -> Result<(usize, usize), ServiceError> {
        self.file.check().map_err(ServiceError::Gone)?;
        let pending = std::mem::take(&mut *self.lock_unrecorded());
        let mut recorded = 0;
        let mut failed = None;
        for (lease, stored) in pending {
            if failed.is_none() {
                match self.record(&lease, &stored) {
                    Ok(_) => {
                        recorded += 1;
                        continue;
                    }
                    Err(err) => failed = Some(err),
                }
            }
            self.lock_unrecorded().push((lease, stored));
        }
        if let Some(err) = failed {
            return Err(err);
        }
        // Every abandoned key (this process's or a stopped one's) is answered now, not at its
        // next request; answers older than the retention window go, a batch at a time.
        let answered = self.settle_abandoned()?;
        let _ = wait(self.ledger.purge(1_000))?;
        Ok((recorded, answered))
    }

    /// 503: the service cannot answer now, and nothing was sent.
    fn unavailable(&self, err: &ServiceError) -> Response<Vec<u8>> {
        let detail = match err {
            ServiceError::Gone(_) => err.to_string(),
            other => format!("{other}; nothing was sent"),
        };
        self.profile.refusal_response(&Refusal::unavailable(detail))
    }

    /// `send_sms`: an opted-out number is denied before the provider; any other is sent.
    fn send_sms(&self, args: &SmsArgs, id: &str) -> Response<Vec<u8>> {
        let sent = || -> Result<bool, ServiceError> {
            if self.store.is_opted_out(&args.to)? {
                return Ok(false);
            }
            self.store.begin_message(id, &args.to, now_ms())?;
            thread::sleep(self.config.provider_delay);
            self.store
                .provider_send(None, Some(id), &args.to, &args.body, now_ms())?;
            self.store.message_sent(id, now_ms())?;
            Ok(true)
        };
        let fields = MessageRef {
            message_id: id.to_owned(),
        };
        match sent() {
            Ok(false) => self.response(&GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT)),
            Ok(true) => self.response(
                &GuaranteeResult::committed()
                    .with_impact(Impact::new().with_requested(1).with_committed(1))
                    .expect("one of one")
                    .with_fields(fields)
                    .expect("an id is no contract field"),
            ),
            Err(_) => self.response(
                &GuaranteeResult::unknown()
                    .with_next_tool(LOOKUP_SMS)
                    .with_fields(fields)
                    .expect("an id is no contract field"),
            ),
        }
    }

    /// `send_campaign_batch`: opted-out recipients are denied, as many others as the window
    /// has room for are sent now, and the rest are held durably for the next window.
    fn send_batch(&self, args: &BatchArgs, id: &str) -> Response<Vec<u8>> {
        let mut recipients = args.recipients.clone();
        recipients.sort();
        recipients.dedup();
        let fields = CampaignRef {
            campaign_id: id.to_owned(),
        };
        let result = self.run_batch(args, &recipients, id).map(|outcome| {
            outcome.map(|result| {
                result
                    .with_next_tool(LOOKUP_CAMPAIGNS)
                    .with_fields(fields)
                    .expect("an id is no contract field")
            })
        });
        match result {
            Ok(Some(result)) => self.response(&result),
            Ok(None) => self.response(&GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT)),
            Err(_) => self.response(
                &GuaranteeResult::unknown()
                    .with_next_tool(LOOKUP_CAMPAIGNS)
                    .with_fields(CampaignRef {
                        campaign_id: id.to_owned(),
                    })
                    .expect("an id is no contract field"),
            ),
        }
    }

    /// The batch's result, or `None` when every recipient is opted out (a deny).
    fn run_batch(
        &self,
        args: &BatchArgs,
        recipients: &[String],
        id: &str,
    ) -> Result<Option<GuaranteeResult>, ServiceError> {
        let mut opted_out = 0;
        for phone in recipients {
            opted_out += usize::from(self.store.is_opted_out(phone)?);
        }
        if opted_out == recipients.len() {
            return Ok(None);
        }
        let created = self.store.create_campaign(
            id,
            &args.message,
            recipients,
            self.config.window,
            now_ms(),
        )?;
        for phone in &created.claimed {
            self.send_one(id, phone, &args.message)?;
        }
        let impact = Impact::new()
            .with_requested(recipients.len() as u64)
            .with_committed(created.claimed.len() as u64)
            .with_deferred(created.held)
            .with_denied(created.denied);
        let result = match created.next_attempt_ms {
            Some(next) => GuaranteeResult::deferred(PolicyCode::CAMPAIGN_SEND_WINDOW)
                .with_impact(impact)
                .and_then(|held| held.with_retry_at(instant(next))),
            None => GuaranteeResult::committed().with_impact(impact),
        };
        Ok(Some(result.expect("the counts add up to requested")))
    }

    /// The provider sends to one claimed recipient, and the send is recorded.
    fn send_one(&self, campaign: &str, phone: &str, message: &str) -> Result<(), ServiceError> {
        thread::sleep(self.config.provider_delay);
        self.store
            .provider_send(Some(campaign), None, phone, message, now_ms())?;
        Ok(self.store.mark_sent(campaign, phone, now_ms())?)
    }

    /// Sends the held recipients that are due, within the window's cap; returns how many.
    pub fn release_due(&self) -> Result<usize, ServiceError> {
        self.file.check().map_err(ServiceError::Gone)?;
        let claims = self.store.claim_due(self.config.window, now_ms())?;
        for claim in &claims {
            self.send_one(&claim.campaign_id, &claim.phone, &claim.message)?;
        }
        Ok(claims.len())
    }

    /// Releases held recipients as their windows open, on a thread of its own, for as long as
    /// the process lives.
    pub fn start_releasing(self: &Arc<Self>) {
        let service = Arc::clone(self);
        let tick = Duration::from_millis(
            u64::try_from(service.config.window.length_ms / 20)
                .unwrap_or(1000)
                .clamp(50, 1000),
        );
        let runtime = tokio::runtime::Handle::current();
        thread::spawn(move || {
            // The ledger's steps run on the service's runtime.
            let _entered = runtime.enter();
            loop {
                if let Err(err) = service.settle_ended() {
                    eprintln!("campaigns: settling ended calls failed: {err}");
                }
                if let Err(err) = service.release_due() {
                    eprintln!("campaigns: releasing held recipients failed: {err}");
                }
                thread::sleep(tick);
            }
        });
    }

    /// `lookup_marketing_campaigns`: where the campaign stands, from the store.
    pub fn lookup_campaign(&self, id: &str) -> Result<Envelope<CampaignStatus>, ServiceError> {
        self.file.check().map_err(ServiceError::Gone)?;
        let Some(row) = self.store.campaign(id)? else {
            return Ok(Envelope::failure(not_found(
                "campaign-not-found",
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

    /// `lookup_sms`: whether the message was sent, from the store.
    pub fn lookup_message(&self, id: &str) -> Result<Envelope<MessageStatus>, ServiceError> {
        self.file.check().map_err(ServiceError::Gone)?;
        Ok(match self.store.message(id)? {
            Some((status, updated_ms)) => Envelope::success(MessageStatus {
                message_id: id.to_owned(),
                status,
                updated_at: format_instant(instant(updated_ms)),
            }),
            None => Envelope::failure(not_found(
                "message-not-found",
                format!("No message {id}: nothing was recorded or sent under that id."),
            )),
        })
    }
}

fn not_found(code: &'static str, detail: String) -> ToolError {
    ToolError::classified(
        ErrorCode::from_static(code),
        ErrorCategory::NoTarget,
        detail,
    )
    .expect("the service's own code rides under any category")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key cut after it was begun but before anything of its operation was written (no
    /// campaign, no message): recovery still names the id to look up, since the operation
    /// is recorded before the key is begun.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_unknown_always_names_the_operation() {
        let dir = std::env::temp_dir().join(format!("campaigns-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = || Config {
            window: SendWindow {
                cap: 10,
                length_ms: 60_000,
            },
            provider_delay: Duration::ZERO,
            full_disk: None,
            lease: Duration::from_millis(200),
        };
        for (tool, prefix, field, lookup) in [
            (SEND_CAMPAIGN_BATCH, "cmp", "campaignId", LOOKUP_CAMPAIGNS),
            (SEND_SMS, "msg", "messageId", LOOKUP_SMS),
        ] {
            let path = dir.join(format!("{tool}.sqlite"));
            let scope = Scope::principal("acct");
            let key = IdempotencyKey::new("cut-early").unwrap();
            let print = Fingerprint::of(tool, "acct", &serde_json::json!({}));
            let id = operation_id(prefix, &key, print);
            let service = Service::open(&path, config()).unwrap();
            // What `call` does before running anything; then the process stops.
            service.store.record_operation(&id, tool).unwrap();
            let begun = service
                .ledger
                .begin(&scope, &key, print, &id)
                .await
                .unwrap();
            assert!(matches!(begun, Begin::Fresh(_)));
            drop(service);

            tokio::time::sleep(Duration::from_millis(300)).await;
            let service = Arc::new(Service::open(&path, config()).unwrap());
            let settled = Arc::clone(&service);
            let answered = tokio::task::spawn_blocking(move || settled.settle_abandoned())
                .await
                .unwrap()
                .unwrap();
            assert_eq!(answered, 1);
            let Begin::Replay(stored) = service
                .ledger
                .begin(&scope, &key, print, &id)
                .await
                .unwrap()
            else {
                panic!("an answered key replays");
            };
            let body: Value = serde_json::from_slice(stored.body()).unwrap();
            assert_eq!(body["settlement"]["state"], "unknown");
            assert_eq!(body[field], id.as_str(), "{body}");
            assert_eq!(body["recovery"]["suggestedNextTool"], lookup);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
