//! The service every tool shares: its tables, the replay [`Sequence`] its guarantee tools run
//! under (each tool recovers its own abandoned keys), its settings, each account's rate limit,
//! and the settling every live process does in the background.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agent_tool_result::guarantee::{Answer, Refusal};
use agent_tool_result::registry::Admission;
use agent_tool_result::replay::{Durability, Sequence};

use crate::db::Target;
use crate::db::error::DbError;
use crate::db::ledger::{LedgerError, ServiceLedger};
use crate::limits::RateLimits;
use crate::provider::{Accepted, Provider, ProviderError, Send};
use crate::store::Store;
use crate::store::claims::Claim;
use crate::store::window::SendWindow;

/// The service's settings.
#[derive(Debug)]
pub struct Config {
    /// Each account's send window: its length, and the cap of an account given none of its
    /// own.
    pub window: SendWindow,
    /// Accounts with a cap of their own, by principal.
    pub caps: HashMap<String, u64>,
    /// The provider the service sends through.
    pub provider: Provider,
    /// An injected full disk, to watch the service recover from one.
    #[cfg(feature = "faults")]
    pub full_disk: Option<crate::faults::FullDisk>,
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

/// How often the service asks again whether its primary waits for a synchronous standby.
pub const DURABILITY_CHECK: Duration = Duration::from_secs(5);

/// A failure of the service's own storage.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The service's tables.
    #[error("the campaign store failed: {0}")]
    Store(#[from] DbError),
    /// The idempotency ledger.
    #[error("the idempotency ledger failed: {0}")]
    Ledger(#[from] LedgerError),
    /// The provider (a send that may have gone through: the effect key makes trying again
    /// safe).
    #[error("the provider failed: {0}")]
    Provider(#[from] ProviderError),
}

/// The campaign service on one database, shared by any number of its processes: its tables,
/// the replay sequence its guarantee tools run under, and its settings. Its tools (in
/// [`crate::tools`]) each hold it.
pub struct Service {
    store: Arc<Store>,
    sequence: Arc<Sequence<ServiceLedger>>,
    config: Config,
    /// This process's name in the provider's log.
    sender: String,
}

/// The refusal of a call whose store failed: nothing more was done by it, and the same
/// request with the same key answers what it did (a campaign it created is found by its id).
pub fn unavailable<T>(why: &dyn std::fmt::Display) -> Answer<T> {
    Refusal::unavailable(format!(
        "the campaign store failed ({why}); send the same request with the same key again"
    ))
    .with_retry_after(Duration::from_secs(1))
    .into()
}

/// The refusal of a call whose send the provider did not confirm: it may have gone through,
/// and the same request with the same key sends it at most once more as the same effect,
/// which the provider takes once.
pub fn not_sent<T>(why: &ProviderError) -> Answer<T> {
    Refusal::unavailable(format!(
        "the provider did not confirm the send ({why}); send the same request with the same \
         key again: the provider takes it once"
    ))
    .with_retry_after(Duration::from_secs(1))
    .into()
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
    pub async fn open(
        target: &Target,
        #[cfg_attr(not(feature = "faults"), allow(unused_mut))] mut config: Config,
    ) -> Result<Self, ServiceError> {
        let store = Arc::new(
            Store::open(target, config.lease, config.connections, config.db_timeout).await?,
        );
        #[cfg(feature = "faults")]
        if let Some(full) = config.full_disk.take() {
            store.guard().inject(full);
        }
        let ledger = ServiceLedger::open(&store, config.lease, config.db_timeout).await?;
        Ok(Service {
            sequence: Arc::new(Sequence::new(ledger)),
            store,
            config,
            sender: sender(),
        })
    }

    /// Whether the service's tables and ledger are on PostgreSQL.
    pub fn on_postgres(&self) -> bool {
        self.store.db().pool().is_some()
    }

    /// The service's tables.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The service's settings.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The replay sequence its guarantee tools run under.
    pub fn sequence(&self) -> &Arc<Sequence<ServiceLedger>> {
        &self.sequence
    }

    /// Counts a guarantee call by `principal` against its account's rate limit: admitted, or
    /// the refusal to answer (before the sequence begins anything; the registry reports it as
    /// it reports every refusal), with the account's `RateLimit` fields either way.
    pub async fn admit(&self, principal: &str) -> Admission {
        self.config
            .rates
            .admit(&self.store, principal)
            .await
            .admission()
    }

    /// Records that `phone` opted out.
    pub async fn opt_out(&self, phone: &str) -> Result<(), ServiceError> {
        Ok(self.store.opt_out(phone).await?)
    }

    /// Sends `send` through the provider, as this process, with no transaction open.
    pub async fn send(&self, send: Send<'_>) -> Result<Accepted, ProviderError> {
        self.config.provider.send(&send, &self.sender).await
    }

    /// Sends to one claimed recipient, if the claim is still current: renewed first, sent
    /// through the provider (once for the recipient's effect key, however many claims ask),
    /// then marked sent under the claim's fence.
    pub async fn send_claimed(&self, claim: &Claim) -> Result<(), ServiceError> {
        if !self.store.renew_claim(claim).await? {
            return Ok(());
        }
        let effect = Send::effect_of(&claim.campaign_id, &claim.phone);
        self.send(Send {
            effect_key: effect.as_str(),
            phone: &claim.phone,
            body: &claim.message,
            campaign_id: Some(&claim.campaign_id),
            message_id: None,
            fence: claim.fence,
        })
        .await?;
        self.store.mark_sent(claim).await?;
        Ok(())
    }

    /// Sends the held recipients that are due, within the window's cap; returns how many.
    pub async fn release_due(&self) -> Result<usize, ServiceError> {
        let claims = self
            .store
            .claim_due(|principal| self.config.window_of(principal))
            .await?;
        for claim in &claims {
            self.send_claimed(claim).await?;
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

    /// Says at start, on stderr, whether a commit the PostgreSQL primary acknowledges waited
    /// for a synchronous standby, and warns when it does not (a failover may then lose calls
    /// answered `committed`); then asks again every [`DURABILITY_CHECK`], keeping the
    /// `atr_ledger_synchronous_standby` gauge current and saying when the answer changes (a
    /// failover promoted a server set otherwise, or its standby left). Nothing on SQLite.
    ///
    /// # Errors
    ///
    /// When the server does not answer at start.
    pub async fn watch_durability(self: &Arc<Self>) -> Result<(), LedgerError> {
        let Some(first) = self.sequence.ledger().durability().await? else {
            return Ok(());
        };
        let say = |durability: &Durability| {
            if durability.survives_failover() {
                eprintln!("campaigns: {durability}");
            } else {
                eprintln!("campaigns: warning: {durability}");
            }
        };
        say(&first);
        let service = Arc::clone(self);
        tokio::spawn(async move {
            let mut last = first.survives_failover();
            loop {
                tokio::time::sleep(DURABILITY_CHECK).await;
                if let Ok(Some(now)) = service.sequence.ledger().durability().await
                    && now.survives_failover() != last
                {
                    last = now.survives_failover();
                    say(&now);
                }
            }
        });
        Ok(())
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
            // Said once when settling starts failing (the database is down, say), with every
            // cause, and once when it works again: not every tick.
            let mut failing = false;
            loop {
                match service.settle().await {
                    Err(err) if !failing => {
                        failing = true;
                        eprintln!(
                            "campaigns: settling failed: {}",
                            crate::db::error::chain(&err)
                        );
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
}
