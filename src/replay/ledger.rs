//! The [`Ledger`]: where keys, fingerprints and first responses are kept, what beginning a key
//! finds ([`Begin`]), and answering the keys a stopped process left in flight ([`recover`]).

use std::time::{Duration, SystemTime};

use super::fingerprint::Fingerprint;
use super::key::IdempotencyKey;

/// The default retention window: keys older than this are forgotten.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(24 * 60 * 60);

/// A response as it was first sent: replayed byte for byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredResponse {
    /// The HTTP status (200 for an MCP tool result).
    pub status: u16,
    /// The headers worth replaying (`Content-Type`, `Retry-After`), in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

/// What [`Ledger::begin`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Begin {
    /// The key is new: run the command, then complete the key.
    Fresh,
    /// The same request completed before: answer this again and send nothing.
    Replay(StoredResponse),
    /// The key was used with another request.
    Mismatch,
    /// The first request with the key is still running (or stopped without completing).
    InFlight,
}

impl Begin {
    /// The refusal this answer refuses the call with: a mismatch (422 over REST) or a key in
    /// flight (409); `None` for a fresh key or a replay.
    #[must_use]
    pub fn refusal(&self) -> Option<crate::guarantee::Refusal> {
        use crate::guarantee::{Refusal, RefusalKind};
        let kind = match self {
            Begin::Mismatch => RefusalKind::KeyMismatch,
            Begin::InFlight => RefusalKind::KeyInFlight,
            Begin::Fresh | Begin::Replay(_) => return None,
        };
        let detail = match kind {
            RefusalKind::KeyMismatch => {
                "the key was first used with other arguments; its first result stands"
            }
            _ => "the first request with this key is still running",
        };
        Some(Refusal::new(kind, detail))
    }
}

/// A key begun and not completed, as [`Ledger::in_flight`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    /// The key.
    pub key: IdempotencyKey,
    /// The request's fingerprint.
    pub fingerprint: Fingerprint,
    /// When it was begun.
    pub begun: SystemTime,
}

/// Where keys, fingerprints and first responses are kept.
pub trait Ledger {
    /// The store's own error.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Begins `key` for the request `fingerprint` at `now`: atomically, so of two requests
    /// with one key exactly one is [`Begin::Fresh`].
    ///
    /// # Errors
    ///
    /// The store's error.
    fn begin(
        &self,
        key: &IdempotencyKey,
        fingerprint: Fingerprint,
        now: SystemTime,
    ) -> Result<Begin, Self::Error>;

    /// Records the response of a begun key; later begins with the same request replay it.
    ///
    /// # Errors
    ///
    /// The store's error.
    fn complete(&self, key: &IdempotencyKey, response: StoredResponse) -> Result<(), Self::Error>;

    /// The keys begun and never completed: after a crash, answer each `unknown`.
    ///
    /// # Errors
    ///
    /// The store's error.
    fn in_flight(&self) -> Result<Vec<Pending>, Self::Error>;
}

/// Answers every key left in flight since before `begun_before` (the process stopped between
/// the provider call and the record): each is completed with `answer`'s response, so later
/// requests with the key replay it and nothing is sent twice. Returns the keys recovered.
///
/// The answer must not claim what is not known: a guarantee result whose settlement is
/// `unknown` and whose `recovery.suggestedNextTool` looks the operation up by id, never a
/// `not_started`. A process that is alone on its ledger passes the instant it started as
/// `begun_before`, so the keys it begins from then on are left alone. Where several processes
/// share the ledger, a key another live process began before this one started looks just like
/// an abandoned one: pass an instant older than the longest a call may run (now minus the
/// call timeout) instead.
///
/// ```
/// # #[cfg(feature = "http")] {
/// use std::time::SystemTime;
/// use agent_tool_result::guarantee::GuaranteeResult;
/// use agent_tool_result::http::RestProfile;
/// use agent_tool_result::replay::{self, Begin, Fingerprint, IdempotencyKey, Ledger, MemoryLedger, StoredResponse};
/// use serde_json::json;
///
/// let ledger = MemoryLedger::default();
/// let key = IdempotencyKey::new("batch-7")?;
/// let print = Fingerprint::of("send_campaign_batch", "acct_1", &json!({ "batch": 7 }));
/// let began = SystemTime::now();
/// ledger.begin(&key, print, began)?; // ... and the process stopped here.
///
/// let unknown = GuaranteeResult::unknown().with_next_tool("get_campaign");
/// let response = StoredResponse::from_response(&RestProfile::default().response(&unknown)?);
/// let recovered = replay::recover(&ledger, SystemTime::now(), |_| response.clone())?;
/// assert_eq!(recovered.len(), 1);
/// assert!(matches!(ledger.begin(&key, print, SystemTime::now())?, Begin::Replay(_)));
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// The store's error; keys completed before it stay completed.
pub fn recover<L: Ledger + ?Sized>(
    ledger: &L,
    begun_before: SystemTime,
    mut answer: impl FnMut(&Pending) -> StoredResponse,
) -> Result<Vec<Pending>, L::Error> {
    let mut recovered = Vec::new();
    for pending in ledger.in_flight()? {
        if pending.begun < begun_before {
            ledger.complete(&pending.key, answer(&pending))?;
            recovered.push(pending);
        }
    }
    Ok(recovered)
}
