//! The arms the library's route is measured against: the same `send_sms` handler with no
//! guarantee at all (the floor), and with the guarantee written by hand as a careful author
//! writes it without the library: the key written once, after the work ([`by_hand`]), and
//! the key claimed before the work and answered after it, as Stripe's published design does
//! around a call to another service ([`claimed_by_hand`]).

use std::sync::Arc;

use agent_tool_result::guarantee::{GuaranteeResult, PolicyCode, Refusal, RefusalKind, Tally};
use agent_tool_result::http::{KeyedJson, RestProfile};
use agent_tool_result::replay::{Call, Done, GuaranteeTool, OperationFields};
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use campaigns::db::Conn;
use campaigns::db::error::DbError;
use campaigns::db::sql::Arg;
use campaigns::provider::Send;
use campaigns::service::Service;
use campaigns::store::messages::Message;
use campaigns::tools::send_sms::{MessageRef, SendSms, SmsArgs};
use serde::Deserialize;

/// The account every arm's calls are made as.
pub const PRINCIPAL: &str = "acct_bench";

/// Sends message `id` through the provider (its effect key makes a second send of it a
/// no-op): the refusal to answer when the provider fails.
async fn send_message(service: &Service, id: &str, args: &SmsArgs) -> Result<(), Response> {
    let effect = Send::effect_of(id, &args.to);
    let send = Send::message(effect.as_str(), id, &args.to, &args.body, 0);
    service
        .send(send)
        .await
        .map(|_| ())
        .map_err(|err| Refusal::unavailable(err.to_string()).into_response())
}

/// The same handler without the sequence: the tool's work (the opt-out check, the send
/// through the provider, the message recorded sent in a plain transaction), answered through
/// the profile.
pub async fn bare(State(service): State<Arc<Service>>, call: KeyedJson) -> Response {
    let (key, arguments) = call.into_parts();
    let args = match SmsArgs::deserialize(&arguments) {
        Ok(args) => args,
        Err(err) => return Refusal::invalid_arguments(err.to_string()).into_response(),
    };
    let id = Call::of(SendSms::NAME, PRINCIPAL, key, &arguments).operation_id(SendSms::OPERATION);
    let store = service.store();
    let answer = match store.is_opted_out(&args.to).await {
        Ok(false) => {
            if let Err(refused) = send_message(&service, &id, &args).await {
                return refused;
            }
            let message = Message {
                id: &id,
                principal: PRINCIPAL,
                phone: &args.to,
            };
            let fields = MessageRef::of_operation(&id);
            let Done::Answer(answer) = store.record_sent(None, &message, fields).await else {
                unreachable!("without a lease the store records nothing itself")
            };
            answer
        }
        Ok(true) => GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT).into(),
        Err(err) => return Refusal::unavailable(err.to_string()).into_response(),
    };
    RestProfile::default()
        .answer_response(&answer)
        .expect("an answer's fields are an object")
        .map(axum::body::Body::from)
}

/// The tables of the hand-written arms: each key, its request's fingerprint and its response
/// (a status of 0 while a key claimed first has none yet); a key claimed first also says until
/// when its claim holds (milliseconds since 1970, none once answered).
pub const TABLES: [&str; 2] = [
    "CREATE TABLE IF NOT EXISTS bench_keys (key text PRIMARY KEY, fingerprint text NOT NULL, \
     status bigint NOT NULL, content_type text NOT NULL, body text NOT NULL)",
    "CREATE TABLE IF NOT EXISTS bench_claimed_keys (key text PRIMARY KEY, \
     fingerprint text NOT NULL, locked_until bigint, status bigint NOT NULL DEFAULT 0, \
     content_type text NOT NULL DEFAULT '', body text NOT NULL DEFAULT '')",
];

/// How long a claimed key's claim holds before another call may take the key over, in
/// milliseconds.
const CLAIM_MS: i64 = 30_000;

/// How a hand-written arm keeps its keys.
#[derive(Clone, Copy)]
enum Keys {
    /// The key written once, with its response, after the work ([`by_hand`]).
    WrittenOnce,
    /// The key claimed before the work, its response written after ([`claimed_by_hand`]).
    ClaimedFirst,
}

impl Keys {
    /// The table the keys are kept in.
    fn table(self) -> &'static str {
        match self {
            Keys::WrittenOnce => "bench_keys",
            Keys::ClaimedFirst => "bench_claimed_keys",
        }
    }

    /// What the key answers before the work, if it answers: its stored response, 422 for
    /// another request under it, or 409 while the call that claimed it works. A key claimed
    /// first is claimed here, in a statement of its own (or taken over, its claim run out).
    async fn before(
        self,
        conn: &mut Conn<'_>,
        key: &str,
        fingerprint: &str,
    ) -> Result<Option<Response>, DbError> {
        if let Keys::ClaimedFirst = self {
            let claim = format!(
                "INSERT INTO bench_claimed_keys AS t (key, fingerprint, locked_until) \
                 VALUES ($1, $2, NOW_MS + {CLAIM_MS}) ON CONFLICT (key) DO UPDATE \
                 SET locked_until = EXCLUDED.locked_until WHERE t.status = 0 \
                 AND t.locked_until <= NOW_MS AND t.fingerprint = EXCLUDED.fingerprint"
            );
            if conn
                .execute(&claim, &[key.into(), fingerprint.into()])
                .await?
                == 1
            {
                return Ok(None);
            }
        }
        self.stored(conn, key, fingerprint).await
    }

    /// What the key's row answers, if there is one.
    async fn stored(
        self,
        conn: &mut Conn<'_>,
        key: &str,
        fingerprint: &str,
    ) -> Result<Option<Response>, DbError> {
        let sql = format!(
            "SELECT fingerprint, status, content_type, body FROM {} WHERE key = $1",
            self.table()
        );
        let rows = conn.query(&sql, &[key.into()]).await?;
        Ok(rows.first().map(|row| {
            if row.text(0) != fingerprint {
                return Refusal::new(RefusalKind::KeyMismatch, "another request").into_response();
            }
            let Ok(status @ 1..) = u16::try_from(row.int(1)) else {
                return Refusal::new(RefusalKind::KeyInFlight, "the key's call is working")
                    .into_response();
            };
            http::Response::builder()
                .status(status)
                .header("content-type", row.text(2))
                .body(axum::body::Body::from(row.text(3)))
                .expect("a stored response")
        }))
    }

    /// The key's response written beside the message's row (`None` for a deny: no message), as
    /// a careful author writes them on each store: on PostgreSQL one statement (its own
    /// transaction), on SQLite one transaction of two. The key's row is `[key, fingerprint,
    /// status, content type, body]`. Whether it was written: not when another call wrote the
    /// key meanwhile (or took a claimed key over, its claim run out, and answered it).
    async fn after(
        self,
        conn: &mut Conn<'_>,
        key: [Arg; 5],
        message: Option<[Arg; 3]>,
    ) -> Result<bool, DbError> {
        let key_row = match self {
            Keys::WrittenOnce => {
                "INSERT INTO bench_keys (key, fingerprint, status, content_type, body) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key) DO NOTHING"
            }
            Keys::ClaimedFirst => {
                "UPDATE bench_claimed_keys SET status = $3, content_type = $4, body = $5, \
                 locked_until = NULL WHERE key = $1 AND fingerprint = $2 AND status = 0"
            }
        };
        let message_row = |first: usize| {
            format!(
                "INSERT INTO messages (id, principal, phone, state, updated_ms) \
                 VALUES (${first}, ${}, ${}, 'sent', NOW_MS) ON CONFLICT (id) DO NOTHING",
                first + 1,
                first + 2
            )
        };
        if let Conn::Postgres(_) = conn {
            let (sql, args) = match message {
                None => (
                    format!("WITH k AS ({key_row} RETURNING 1) SELECT count(*) FROM k"),
                    key.to_vec(),
                ),
                Some(message) => (
                    format!(
                        "WITH k AS ({key_row} RETURNING 1), m AS ({}) SELECT count(*) FROM k",
                        message_row(6)
                    ),
                    key.into_iter().chain(message).collect(),
                ),
            };
            let rows = conn.query(&sql, &args).await?;
            return Ok(rows.first().is_some_and(|row| row.int(0) == 1));
        }
        conn.begin_exclusive().await?;
        let written = async {
            if conn.execute(key_row, &key).await? == 0 {
                return Ok(false);
            }
            if let Some(message) = message {
                conn.execute(&message_row(1), &message).await?;
            }
            Ok(true)
        }
        .await;
        match written {
            Ok(true) => conn.commit().await.map(|()| true),
            other => {
                conn.rollback().await?;
                other
            }
        }
    }
}

/// The same guarantee as a careful author writes it by hand, the key written once: a key
/// found answers its stored response (or 422, for another request under it); otherwise the
/// tool's work (the opt-out check, the send through the provider, whose effect key makes a
/// second send of the message a no-op), then the key written with its fingerprint and
/// response beside the message's row; a key another call wrote meanwhile answers what that
/// call stored.
///
/// What it leaves out, and the library's arm pays for (the key's row written before the work,
/// then again with the answer): nothing holds the key while the work runs, so a second
/// caller meanwhile does the work too instead of hearing 409, and the first of the two to
/// write its answer wins. When the two answers differ (the number opted out between their
/// checks: one sent, one denied), the one that sent may be answered `denied`.
pub async fn by_hand(State(service): State<Arc<Service>>, call: KeyedJson) -> Response {
    hand_written(&service, call, Keys::WrittenOnce).await
}

/// The guarantee by hand as Stripe's engineers published it for a request that calls another
/// service: the key claimed first, with its request's fingerprint, in a statement of its own
/// (a key found answers its stored response, 422 for another request under it, or 409 while
/// the call that claimed it works); then the tool's work; then the response written to the
/// key's row beside the message's row. The key's row is written twice, as the library's arm
/// writes it, where [`by_hand`] writes it once.
pub async fn claimed_by_hand(State(service): State<Arc<Service>>, call: KeyedJson) -> Response {
    hand_written(&service, call, Keys::ClaimedFirst).await
}

/// `send_sms` with its key kept by hand as `keys` says.
async fn hand_written(service: &Service, call: KeyedJson, keys: Keys) -> Response {
    let (key, arguments) = call.into_parts();
    let args = match SmsArgs::deserialize(&arguments) {
        Ok(args) => args,
        Err(err) => return Refusal::invalid_arguments(err.to_string()).into_response(),
    };
    let keyed = Call::of(SendSms::NAME, PRINCIPAL, key.clone(), &arguments);
    let fingerprint = keyed.fingerprint().to_hex();
    let id = keyed.operation_id(SendSms::OPERATION);
    let key = key.as_str();
    let unavailable = |err: DbError| Refusal::unavailable(err.to_string()).into_response();
    let mut conn = match service.store().db().conn().await {
        Ok(conn) => conn,
        Err(err) => return unavailable(err),
    };
    match keys.before(&mut conn, key, &fingerprint).await {
        Ok(Some(response)) => return response,
        Ok(None) => {}
        Err(err) => return unavailable(err),
    }
    let opted_out = match conn
        .query(
            "SELECT 1 FROM opt_outs WHERE phone = $1",
            &[args.to.as_str().into()],
        )
        .await
    {
        Ok(rows) => !rows.is_empty(),
        Err(err) => return unavailable(err),
    };
    // The connection goes back while the provider works (on SQLite, the one connection
    // every call shares).
    drop(conn);
    let answer: agent_tool_result::guarantee::Answer<MessageRef> = if opted_out {
        GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT).into()
    } else {
        if let Err(refused) = send_message(service, &id, &args).await {
            return refused;
        }
        GuaranteeResult::committed_with(Tally::sent(1), MessageRef::of_operation(&id)).into()
    };
    let mut conn = match service.store().db().conn().await {
        Ok(conn) => conn,
        Err(err) => return unavailable(err),
    };
    let response = RestProfile::default()
        .answer_response(&answer)
        .expect("an answer's fields are an object");
    let content_type = response.headers()["content-type"]
        .to_str()
        .expect("a content type")
        .to_owned();
    let body = String::from_utf8(response.body().clone()).expect("JSON is text");
    let key_row = [
        key.into(),
        fingerprint.as_str().into(),
        i64::from(response.status().as_u16()).into(),
        content_type.as_str().into(),
        body.as_str().into(),
    ];
    let message = (!opted_out).then(|| {
        [
            id.as_str().into(),
            PRINCIPAL.into(),
            args.to.as_str().into(),
        ]
    });
    match keys.after(&mut conn, key_row, message).await {
        Ok(true) => response.map(axum::body::Body::from),
        // Another call wrote the key meanwhile: its response is the key's.
        Ok(false) => match keys.stored(&mut conn, key, &fingerprint).await {
            Ok(Some(response)) => response,
            Ok(None) => Refusal::unavailable("the key's row is gone").into_response(),
            Err(err) => unavailable(err),
        },
        Err(err) => unavailable(err),
    }
}
