//! Same-key replay over HTTP (features `http` and `replay`): the key from its header, and a
//! response kept and replayed. How a producer refuses a call over its
//! idempotency key (after the IETF httpapi Idempotency-Key draft) is one table with the other
//! refusals, [`RefusalKind`](crate::guarantee::RefusalKind):
//!
//! | refusal | status | when |
//! |---|---|---|
//! | `KeyMissing` | 400 | a guarantee call without `Idempotency-Key` |
//! | `KeyInvalid` | 400 | the key is not an sf-string of at most 255 characters |
//! | `KeyMismatch` | 422 | the key was used before with another payload |
//! | `KeyInFlight` | 409 | the first request with the key is still running (`Retry-After` when known) |
//!
//! A mismatch has its own problem type: it is never a policy deny, though both are 422.

use ::http::header::{CONTENT_TYPE, RETRY_AFTER};
use ::http::{HeaderMap, Response};

use super::header::{IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED};
use crate::replay::{IdempotencyKey, InvalidKey, StoredResponse};

#[cfg_attr(docsrs, doc(cfg(all(feature = "http", feature = "replay"))))]
impl IdempotencyKey {
    /// The key of a REST call, from its `Idempotency-Key` header.
    ///
    /// # Errors
    ///
    /// [`InvalidKey`] when the header is absent ([`InvalidKey::is_missing`]), repeated, or
    /// not a valid sf-string key.
    pub fn from_headers(headers: &HeaderMap) -> Result<Self, InvalidKey> {
        let mut values = headers.get_all(IDEMPOTENCY_KEY).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return Err(if headers.contains_key(IDEMPOTENCY_KEY) {
                InvalidKey::malformed("the header is repeated")
            } else {
                InvalidKey::missing()
            });
        };
        let value = value.to_str().map_err(|_| {
            InvalidKey::malformed("it holds a character that is not printable ASCII")
        })?;
        IdempotencyKey::from_header(value)
    }
}

#[cfg_attr(docsrs, doc(cfg(all(feature = "http", feature = "replay"))))]
impl StoredResponse {
    /// What is kept of a response to replay it: the status, `Content-Type`, `Retry-After` and
    /// the body. `Retry-After` is kept as sent, so a replay repeats the first instant rather
    /// than a delay counted from the replay.
    #[must_use]
    pub fn from_response(response: &Response<Vec<u8>>) -> Self {
        let headers = [CONTENT_TYPE, RETRY_AFTER]
            .into_iter()
            .filter_map(|name| {
                let value = response.headers().get(&name)?.to_str().ok()?;
                Some((name.as_str().to_owned(), value.to_owned()))
            })
            .collect();
        StoredResponse::new(response.status().as_u16(), headers, response.body().clone())
    }

    /// The first response again, byte for byte, marked
    /// [`Idempotent-Replayed: true`](super::header::IDEMPOTENT_REPLAYED).
    ///
    /// # Errors
    ///
    /// [`::http::Error`] when the stored status or a header is not valid HTTP (a store that
    /// was written by something else).
    pub fn replayed(&self) -> Result<Response<Vec<u8>>, ::http::Error> {
        let mut builder = Response::builder().status(self.status());
        for (name, value) in self.headers() {
            builder = builder.header(name.as_str(), value.as_str());
        }
        builder
            .header(IDEMPOTENT_REPLAYED, "true")
            .body(self.body().to_vec())
    }
}

/// With `axum`, the key is an extractor: a handler that takes an `IdempotencyKey` runs only for
/// a request with one valid `Idempotency-Key` header; any other request is refused with the
/// key's problem (400, `KeyMissing` or `KeyInvalid`) before the handler runs. Take
/// `Result<IdempotencyKey, Refusal>` to decide the order of checks yourself (credentials
/// first, say).
///
/// ```
/// use agent_tool_result::replay::IdempotencyKey;
///
/// async fn send_sms(key: IdempotencyKey) -> String {
///     format!("running under {key}")
/// }
/// let app: axum::Router = axum::Router::new().route("/tools/send_sms", axum::routing::post(send_sms));
/// ```
#[cfg(feature = "axum")]
#[cfg_attr(docsrs, doc(cfg(all(feature = "axum", feature = "replay"))))]
impl<S: Sync> axum_core::extract::FromRequestParts<S> for IdempotencyKey {
    type Rejection = crate::guarantee::Refusal;

    async fn from_request_parts(
        parts: &mut ::http::request::Parts,
        _state: &S,
    ) -> Result<Self, crate::guarantee::Refusal> {
        IdempotencyKey::from_headers(&parts.headers).map_err(|err| err.refusal())
    }
}
