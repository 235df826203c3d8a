//! The provider the service sends through: an outside HTTP service (an SMS gateway, in
//! production), which deduplicates on the effect key every send carries, as providers with
//! idempotency keys do. A send the provider has seen already is refused (409) and counts as
//! sent, so a call whose process stopped after the provider took its send, and that runs again
//! under its key, reaches the person once. The service starts a stand-in of its own on loopback
//! ([`stand_in`]) unless `--provider-url` names another.
//!
//! No database transaction is open while the provider is called: a paused or slow provider
//! holds no connection of the service's pool.

use std::time::Duration;

use agent_tool_result::replay::EffectKey;
use bytes::Bytes;
use http::{Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::Serialize;

pub mod stand_in;

/// How many idle connections to the provider are kept for the next sends: as many as a busy
/// process has sends in flight at once (a fourth of the requests it handles at once, by
/// default). Kept fewer, every burst of sends (keyed calls let go together once their keys are
/// begun together) opens connections again: with 16 kept, 32 callers of `send_sms` opened a
/// connection for about one send in ten.
const IDLE_CONNECTIONS: usize = 64;

/// How long an idle connection to the provider is kept.
const IDLE_TIMEOUT: Duration = Duration::from_secs(5);

/// One send, as the provider takes it.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Send<'a> {
    /// The effect key: the same for every attempt at this part of this operation (a
    /// recipient of a campaign, a message), whoever makes it.
    pub effect_key: &'a str,
    /// The recipient's number.
    pub phone: &'a str,
    /// The text.
    pub body: &'a str,
    /// The campaign it is part of, if any.
    pub campaign_id: Option<&'a str>,
    /// The message it is, if any.
    pub message_id: Option<&'a str>,
    /// The fence it was sent under, for the provider's log.
    pub fence: i64,
}

/// A send as it goes to the provider: with the process that makes it.
#[derive(Serialize)]
struct Sending<'a> {
    #[serde(flatten)]
    send: &'a Send<'a>,
    sender: &'a str,
}

impl<'a> Send<'a> {
    /// The effect key of the send to `phone` of operation `id` (a message's, a campaign's).
    pub fn effect_of(id: &str, phone: &str) -> EffectKey {
        EffectKey::new(id, phone)
    }

    /// The send of single message `id`, `body` to `phone`, under `effect_key` (its
    /// [`Send::effect_of`]) and `fence`.
    pub fn message(
        effect_key: &'a str,
        id: &'a str,
        phone: &'a str,
        body: &'a str,
        fence: i64,
    ) -> Self {
        Send {
            effect_key,
            phone,
            body,
            campaign_id: None,
            message_id: Some(id),
            fence,
        }
    }
}

/// What the provider did with a send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accepted {
    /// It sent it, now.
    Sent,
    /// It had sent it already, on an earlier attempt with the same effect key.
    AlreadySent,
}

/// Why a send did not go through (it may have: the effect key makes trying again safe).
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// The provider did not answer in time.
    #[error("the provider did not answer within {0:?}")]
    TimedOut(Duration),
    /// The provider could not be reached.
    #[error("the provider could not be reached: {0}")]
    Unreachable(String),
    /// The provider refused the send.
    #[error("the provider answered {status}: {detail}")]
    Refused {
        /// Its status.
        status: u16,
        /// What it said.
        detail: String,
    },
}

/// The provider's client: its address, a pool of kept-alive connections, and how long a send
/// may take.
#[derive(Clone)]
pub struct Provider {
    client: Client<HttpConnector, Full<Bytes>>,
    sends: Uri,
    timeout: Duration,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("sends", &self.sends)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Provider {
    /// The provider at `base` (`http://127.0.0.1:4010`), each send bounded by `timeout`.
    ///
    /// # Errors
    ///
    /// When `base` is no HTTP URL.
    pub fn new(base: &str, timeout: Duration) -> Result<Self, http::uri::InvalidUri> {
        let sends = format!("{}/sends", base.trim_end_matches('/')).parse()?;
        // A burst of sends opens as many connections as it has sends at once; no more than a
        // busy process's steady traffic reuses are kept for the next, and not for long, so a
        // burst leaves no thousand idle sockets (and their buffers) behind.
        let client = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(IDLE_CONNECTIONS)
            .pool_idle_timeout(IDLE_TIMEOUT)
            .build_http();
        Ok(Provider {
            client,
            sends,
            timeout,
        })
    }

    /// Sends `send` as process `sender`, once for its effect key, however many times it is
    /// asked.
    pub async fn send(&self, send: &Send<'_>, sender: &str) -> Result<Accepted, ProviderError> {
        let body = serde_json::to_vec(&Sending { send, sender }).expect("a send serializes");
        let request = Request::builder()
            .method(Method::POST)
            .uri(self.sends.clone())
            .header(http::header::CONTENT_TYPE, "application/json")
            .header("idempotency-key", send.effect_key)
            .body(Full::new(Bytes::from(body)))
            .expect("a well-formed request");
        let answered = tokio::time::timeout(self.timeout, async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|err| ProviderError::Unreachable(err.to_string()))?;
            let status = response.status();
            let said = response
                .into_body()
                .collect()
                .await
                .map_err(|err| ProviderError::Unreachable(err.to_string()))?
                .to_bytes();
            Ok::<_, ProviderError>((status, said))
        })
        .await
        .map_err(|_| ProviderError::TimedOut(self.timeout))??;
        match answered {
            (StatusCode::CREATED, _) => Ok(Accepted::Sent),
            (StatusCode::CONFLICT, _) => Ok(Accepted::AlreadySent),
            (status, said) => Err(ProviderError::Refused {
                status: status.as_u16(),
                detail: String::from_utf8_lossy(&said).chars().take(200).collect(),
            }),
        }
    }
}
