//! Same-key replay over HTTP (features `http` and `replay`): the key from its header, and
//! the replay sequence's reply as a response. How a producer refuses a call over its
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

use ::http::{HeaderMap, Response};

use super::header::{IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED};
use crate::guarantee::Answer;
use crate::replay::{IdempotencyKey, InvalidKey, Reply};

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
impl super::RestProfile {
    /// The REST response of the replay sequence's [`Reply`]: the profile's response for its
    /// answer ([`RestProfile::answer_response`](super::RestProfile::answer_response)), marked
    /// [`Idempotent-Replayed: true`](super::header::IDEMPOTENT_REPLAYED) when it is a replay.
    /// The answer is always read back from its stored form, so a replay is the first
    /// response's bytes (with `Retry-After` as an HTTP date, the same instant).
    ///
    /// # Panics
    ///
    /// Never: a reply's answer was read back from JSON, so its fields are an object.
    ///
    /// ```
    /// use agent_tool_result::guarantee::{Answer, GuaranteeResult};
    /// use agent_tool_result::http::RestProfile;
    /// use agent_tool_result::replay::{Call, IdempotencyKey, MemoryLedger, Sequence};
    ///
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     let waker = std::task::Waker::noop();
    /// #     let mut cx = std::task::Context::from_waker(&waker);
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
    /// # }
    /// let sequence = Sequence::new(MemoryLedger::new());
    /// let call = || Call::of("send_sms", "acct_1", IdempotencyKey::new("k").unwrap(), &serde_json::json!({}));
    /// let send = |_| async { Answer::Result(GuaranteeResult::<agent_tool_result::JsonObject>::committed()) };
    /// let profile = RestProfile::default();
    /// let first = profile.reply_response(&block_on(sequence.run(call(), send)));
    /// let again = profile.reply_response(&block_on(sequence.run(call(), send)));
    /// assert_eq!((first.status().as_u16(), again.status().as_u16()), (200, 200));
    /// assert_eq!(first.body(), again.body());
    /// assert_eq!(again.headers()["idempotent-replayed"], "true");
    /// assert!(first.headers().get("idempotent-replayed").is_none());
    /// ```
    #[must_use]
    pub fn reply_response(&self, reply: &Reply) -> Response<Vec<u8>> {
        // A result is sent as the ledger stores it, the first time and at every replay.
        let stored = match reply.answer() {
            Answer::Result(result) => self.stored_response(result, reply.stored().json()),
            Answer::Refused(_) => None,
        };
        let mut response = stored.unwrap_or_else(|| {
            self.answer_response(reply.answer())
                .expect("a stored answer's fields are an object")
        });
        if reply.is_replay() {
            response.headers_mut().insert(
                IDEMPOTENT_REPLAYED,
                ::http::HeaderValue::from_static("true"),
            );
        }
        response
    }
}

/// With `axum`, a [`Reply`] is a response: the default profile's
/// [`reply_response`](super::RestProfile::reply_response).
#[cfg(feature = "axum")]
#[cfg_attr(docsrs, doc(cfg(all(feature = "axum", feature = "replay"))))]
impl axum_core::response::IntoResponse for Reply {
    fn into_response(self) -> axum_core::response::Response {
        super::RestProfile::default()
            .reply_response(&self)
            .map(axum_core::body::Body::from)
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

/// With `axum`, a guarantee call as REST carries it: the key from its `Idempotency-Key`
/// header and the arguments from a JSON body, each refused with the profile's problem before
/// the handler runs: the key's 400 (`KeyMissing`, `KeyInvalid`), 415 for a body that is not
/// `application/json`, and `invalid-arguments` (400) for a body that is not JSON, with the
/// parser's line and column. [`KeyedJson::serve`] runs the call under the replay sequence,
/// which reads the arguments as the tool's (naming an argument that does not fit).
///
/// ```
/// use std::sync::Arc;
///
/// use agent_tool_result::http::KeyedJson;
/// use agent_tool_result::replay::{GuaranteeTool, MemoryLedger, Reply, Sequence};
/// # use agent_tool_result::guarantee::GuaranteeResult;
/// # use agent_tool_result::replay::{Done, Operation, OperationFields};
/// # #[derive(serde::Serialize)]
/// # struct Sent { message_id: String }
/// # impl OperationFields for Sent {
/// #     fn of_operation(id: &str) -> Self { Sent { message_id: id.to_owned() } }
/// # }
/// # struct SendSms;
/// # impl GuaranteeTool for SendSms {
/// #     const NAME: &'static str = "send_sms";
/// #     const DESCRIPTION: &'static str = "Sends one SMS.";
/// #     const OPERATION: &'static str = "msg";
/// #     const LOOKUP: &'static str = "lookup_sms";
/// #     type Arguments = serde_json::Value;
/// #     type Fields = Sent;
/// #     async fn run(&self, _: serde_json::Value, _: Operation) -> Done<Sent> {
/// #         Done::Answer(GuaranteeResult::committed().into())
/// #     }
/// # }
///
/// /// The sequence, and the tool it serves.
/// type Served = (Arc<Sequence<MemoryLedger>>, Arc<SendSms>);
///
/// async fn send_sms(axum::extract::State((sequence, tool)): axum::extract::State<Served>, call: KeyedJson) -> Reply {
///     call.serve(&sequence, &tool, "acct_1").await
/// }
///
/// let app: axum::Router = axum::Router::new()
///     .route(&format!("/tools/{}", SendSms::NAME), axum::routing::post(send_sms))
///     .with_state((Arc::new(Sequence::new(MemoryLedger::new())), Arc::new(SendSms)));
/// ```
#[cfg(feature = "axum")]
#[cfg_attr(docsrs, doc(cfg(all(feature = "axum", feature = "replay"))))]
#[derive(Debug)]
pub struct KeyedJson {
    key: IdempotencyKey,
    arguments: serde_json::Value,
}

#[cfg(feature = "axum")]
impl KeyedJson {
    /// The key and the arguments as they came.
    #[must_use]
    pub fn into_parts(self) -> (IdempotencyKey, serde_json::Value) {
        (self.key, self.arguments)
    }

    /// Serves the call of `tool` by `principal` under `sequence`: see
    /// [`Sequence::serve`](crate::replay::Sequence::serve).
    pub async fn serve<T, L, P>(
        self,
        sequence: &crate::replay::Sequence<L, P>,
        tool: &std::sync::Arc<T>,
        principal: &str,
    ) -> Reply
    where
        T: crate::replay::GuaranteeTool + 'static,
        L: crate::replay::Ledger,
        P: crate::replay::EffectProbe,
    {
        sequence
            .serve(tool, principal, self.key, self.arguments)
            .await
    }
}

#[cfg(feature = "axum")]
impl<S: Send + Sync> axum_core::extract::FromRequest<S> for KeyedJson {
    type Rejection = axum_core::response::Response;

    async fn from_request(
        request: ::http::Request<axum_core::body::Body>,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        use axum_core::response::IntoResponse;

        let key = IdempotencyKey::from_headers(request.headers())
            .map_err(|err| err.refusal().into_response())?;
        super::auth::require_json(request.headers()).map_err(IntoResponse::into_response)?;
        let body = bytes::Bytes::from_request(request, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let arguments = serde_json::from_slice(&body).map_err(|err| {
            crate::guarantee::Refusal::invalid_arguments(format!("the body is not JSON: {err}"))
                .into_response()
        })?;
        Ok(KeyedJson { key, arguments })
    }
}
