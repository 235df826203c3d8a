//! Same-key replay (feature `replay`), after the IETF httpapi Idempotency-Key draft.
//!
//! A guarantee tool call carries an [`IdempotencyKey`]: the `Idempotency-Key` header over
//! REST, the `idempotencyKey` argument over MCP (there is no standard field there; the same
//! ledger serves both). The tool [`Ledger::begin`]s the key with the request's
//! [`Fingerprint`] (tool, principal, canonical arguments) and learns what to do:
//!
//! - [`Begin::Fresh`]: run the command, then [`Ledger::complete`] the key with the response;
//! - [`Begin::Replay`]: answer the first response again, byte for byte, and send nothing;
//! - [`Begin::Mismatch`]: the key was used with another payload (a 422 problem);
//! - [`Begin::InFlight`]: the first request with the key is still running (a 409 problem).
//!
//! A key begun and never completed (the process stopped between the provider and the
//! record) is listed by [`Ledger::in_flight`] and must be answered `settlement.state:
//! unknown` with a re-query by id: never a second send, never a `not_started`.
//!
//! Keys expire after a retention window, 24 hours by default. [`MemoryLedger`] serves one
//! process (and tests); a store shared by several machines (`PostgreSQL`, `Redis`) implements
//! [`Ledger`] the same way: `begin` is one atomic insert-if-absent of the key with its
//! fingerprint, `complete` one update of the stored response.

mod key;
#[cfg(feature = "sqlite")]
mod sqlite;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde_json::Value;
use sha2::{Digest, Sha256};

pub use key::{IdempotencyKey, InvalidKey};
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use sqlite::{SqliteError, SqliteLedger};

/// The name of the MCP argument that carries the key.
pub const MCP_ARGUMENT: &str = "idempotencyKey";

/// The longest key accepted, in characters.
pub const MAX_KEY_LEN: usize = 255;

/// The default retention window: keys older than this are forgotten.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(24 * 60 * 60);

/// What a request is, for telling a replay from a mismatch: SHA-256 over the tool's name,
/// the principal and the arguments in the JSON Canonicalization Scheme (RFC 8785): keys
/// sorted by their UTF-16 code units, no insignificant whitespace, strings escaped one way and
/// numbers written as ECMAScript writes a double. Key order, spacing and how a client's JSON
/// library prints numbers (`1`, `1.0`, `1e0`; `0.0`, `-0.0`) do not matter: a client that
/// re-encodes its arguments still replays. Integers beyond 2^53 compare as the doubles they
/// round to, as RFC 8785 (and I-JSON) have it.
///
/// ```
/// use agent_tool_result::replay::Fingerprint;
/// use serde_json::json;
///
/// let a = Fingerprint::of("send_sms", "acct_1", &json!({ "to": "+1555", "body": "hi" }));
/// let b = Fingerprint::of("send_sms", "acct_1", &json!({ "body": "hi", "to": "+1555" }));
/// assert_eq!(a, b);
/// assert_ne!(a, Fingerprint::of("send_sms", "acct_2", &json!({ "to": "+1555", "body": "hi" })));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fingerprint([u8; 32]);

impl Fingerprint {
    /// The fingerprint of a call.
    #[must_use]
    pub fn of(tool: &str, principal: &str, arguments: &Value) -> Self {
        let mut hasher = Sha256::new();
        for part in [tool, principal] {
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part.as_bytes());
        }
        hasher.update(canonical_json(arguments).as_bytes());
        Fingerprint(hasher.finalize().into())
    }

    /// A fingerprint read back from [`Fingerprint::to_hex`].
    #[must_use]
    pub fn from_hex(hex: &str) -> Option<Self> {
        if hex.len() != 64 {
            return None;
        }
        let mut bytes = [0u8; 32];
        for (i, byte) in bytes.iter_mut().enumerate() {
            *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(Fingerprint(bytes))
    }

    /// The fingerprint as 64 lowercase hex digits, for storage.
    #[must_use]
    pub fn to_hex(&self) -> String {
        use std::fmt::Write as _;
        self.0.iter().fold(String::with_capacity(64), |mut hex, b| {
            let _ = write!(hex, "{b:02x}");
            hex
        })
    }
}

/// `value` in the JSON Canonicalization Scheme (RFC 8785): the text a [`Fingerprint`] hashes
/// after the tool's name and the principal. Print it to see why two calls' arguments differ.
///
/// ```
/// use agent_tool_result::replay::canonical_json;
/// use serde_json::json;
///
/// let args: serde_json::Value = serde_json::from_str(r#"{ "n": 1.0e2, "b": [-0.0, 4.50] }"#)?;
/// assert_eq!(canonical_json(&args), r#"{"b":[0,4.5],"n":100}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
///
/// # Panics
///
/// Never: a `Value` holds no NaN, no infinity and no raw text, the only inputs the scheme
/// refuses.
#[must_use]
pub fn canonical_json(value: &Value) -> String {
    serde_json_canonicalizer::to_string(value).expect("every JSON value has a canonical form")
}

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

#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
impl StoredResponse {
    /// What is kept of a response to replay it: the status, `Content-Type`, `Retry-After` and
    /// the body. `Retry-After` is kept as sent, so a replay repeats the first instant rather
    /// than a delay counted from the replay.
    #[must_use]
    pub fn from_response(response: &::http::Response<Vec<u8>>) -> Self {
        use ::http::header::{CONTENT_TYPE, RETRY_AFTER};
        let headers = [CONTENT_TYPE, RETRY_AFTER]
            .into_iter()
            .filter_map(|name| {
                let value = response.headers().get(&name)?.to_str().ok()?;
                Some((name.as_str().to_owned(), value.to_owned()))
            })
            .collect();
        StoredResponse {
            status: response.status().as_u16(),
            headers,
            body: response.body().clone(),
        }
    }

    /// The first response again, byte for byte, marked
    /// [`Idempotent-Replayed: true`](crate::http::IDEMPOTENT_REPLAYED).
    ///
    /// # Errors
    ///
    /// [`::http::Error`] when the stored status or a header is not valid HTTP (a store that
    /// was written by something else).
    pub fn replayed(&self) -> Result<::http::Response<Vec<u8>>, ::http::Error> {
        let mut builder = ::http::Response::builder().status(self.status);
        for (name, value) in &self.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        builder
            .header(crate::http::IDEMPOTENT_REPLAYED, "true")
            .body(self.body.clone())
    }
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

#[derive(Clone, Debug)]
struct Entry {
    fingerprint: Fingerprint,
    begun: SystemTime,
    response: Option<StoredResponse>,
}

/// A ledger in memory: one process, and tests.
#[derive(Debug)]
pub struct MemoryLedger {
    entries: Mutex<HashMap<IdempotencyKey, Entry>>,
    retention: Duration,
}

impl Default for MemoryLedger {
    fn default() -> Self {
        MemoryLedger::new(DEFAULT_RETENTION)
    }
}

impl MemoryLedger {
    /// An empty ledger that forgets keys after `retention`.
    #[must_use]
    pub fn new(retention: Duration) -> Self {
        MemoryLedger {
            entries: Mutex::new(HashMap::new()),
            retention,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<IdempotencyKey, Entry>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The memory ledger cannot fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the memory ledger cannot fail")]
pub struct Infallible;

impl Ledger for MemoryLedger {
    type Error = Infallible;

    fn begin(
        &self,
        key: &IdempotencyKey,
        fingerprint: Fingerprint,
        now: SystemTime,
    ) -> Result<Begin, Infallible> {
        let mut entries = self.lock();
        let expired = entries.get(key).is_some_and(|entry| {
            now.duration_since(entry.begun).unwrap_or_default() > self.retention
        });
        if expired {
            entries.remove(key);
        }
        Ok(match entries.get(key) {
            None => {
                entries.insert(
                    key.clone(),
                    Entry {
                        fingerprint,
                        begun: now,
                        response: None,
                    },
                );
                Begin::Fresh
            }
            Some(entry) if entry.fingerprint != fingerprint => Begin::Mismatch,
            Some(Entry {
                response: Some(response),
                ..
            }) => Begin::Replay(response.clone()),
            Some(_) => Begin::InFlight,
        })
    }

    fn complete(&self, key: &IdempotencyKey, response: StoredResponse) -> Result<(), Infallible> {
        if let Some(entry) = self.lock().get_mut(key)
            && entry.response.is_none()
        {
            entry.response = Some(response);
        }
        Ok(())
    }

    fn in_flight(&self) -> Result<Vec<Pending>, Infallible> {
        Ok(self
            .lock()
            .iter()
            .filter(|(_, entry)| entry.response.is_none())
            .map(|(key, entry)| Pending {
                key: key.clone(),
                fingerprint: entry.fingerprint,
                begun: entry.begun,
            })
            .collect())
    }
}
