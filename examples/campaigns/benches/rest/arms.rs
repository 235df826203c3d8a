//! The arms the library's route is measured against: the same `send_sms` handler with no
//! guarantee at all (the floor), and with the guarantee written by hand as a careful author
//! writes it without the library.

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

/// The hand-written arm's table: each key, its request's fingerprint and its response.
pub const BY_HAND_TABLE: &str = "CREATE TABLE IF NOT EXISTS bench_keys (key text PRIMARY KEY, \
    fingerprint text NOT NULL, status bigint NOT NULL, content_type text NOT NULL, \
    body text NOT NULL)";

/// The response stored under `key`, if any: itself for the same request (`fingerprint`),
/// else the refusal of another request under the key.
async fn stored(
    conn: &mut Conn<'_>,
    key: &str,
    fingerprint: &str,
) -> Result<Option<Response>, DbError> {
    let rows = conn
        .query(
            "SELECT fingerprint, status, content_type, body FROM bench_keys WHERE key = $1",
            &[key.into()],
        )
        .await?;
    Ok(rows.first().map(|row| {
        if row.text(0) != fingerprint {
            return Refusal::new(RefusalKind::KeyMismatch, "another request").into_response();
        }
        let status = u16::try_from(row.int(1)).expect("a status");
        http::Response::builder()
            .status(status)
            .header("content-type", row.text(2))
            .body(axum::body::Body::from(row.text(3)))
            .expect("a stored response")
    }))
}

/// The key's row with its response, and the message's (`None` for a deny: no message), as
/// a careful author writes them on each store: on PostgreSQL one statement (its own
/// transaction); on SQLite one transaction of two. Whether the key was written (not another
/// call's meanwhile).
async fn write_key(
    conn: &mut Conn<'_>,
    key: [Arg; 5],
    message: Option<[Arg; 3]>,
) -> Result<bool, DbError> {
    const KEY_ROW: &str = "INSERT INTO bench_keys (key, fingerprint, status, content_type, body) \
                           VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key) DO NOTHING";
    const MESSAGE_ROW: &str = "INSERT INTO messages (id, principal, phone, state, updated_ms) \
                               VALUES ($1, $2, $3, 'sent', NOW_MS) ON CONFLICT (id) DO NOTHING";
    if let Conn::Postgres(_) = conn {
        let rows = match message {
            None => {
                let sql = format!("WITH k AS ({KEY_ROW} RETURNING 1) SELECT count(*) FROM k");
                conn.query(&sql, &key).await?
            }
            Some(message) => {
                let sql = format!(
                    "WITH k AS ({KEY_ROW} RETURNING 1), m AS ({}) SELECT count(*) FROM k",
                    MESSAGE_ROW
                        .replace("$3", "$8")
                        .replace("$2", "$7")
                        .replace("$1", "$6")
                );
                let args: Vec<Arg> = key.into_iter().chain(message).collect();
                conn.query(&sql, &args).await?
            }
        };
        return Ok(rows.first().is_some_and(|row| row.int(0) == 1));
    }
    conn.begin_exclusive().await?;
    let written = async {
        if conn.execute(KEY_ROW, &key).await? == 0 {
            return Ok(false);
        }
        if let Some(message) = message {
            conn.execute(MESSAGE_ROW, &message).await?;
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

/// The same guarantee as a careful author writes it by hand: a key found answers its stored
/// response (or 422, for another request under it); otherwise the tool's work (the opt-out
/// check, the send through the provider, whose effect key makes a second send of the message
/// a no-op), then the key written with its fingerprint and response beside the message's row
/// ([`write_key`]); a key another call wrote meanwhile answers what that call stored.
///
/// What it leaves out, and the library's arm pays for (the key's row written before the work,
/// then again with the answer): nothing holds the key while the work runs, so a second
/// caller meanwhile does the work too instead of hearing 409, and the first of the two to
/// write its answer wins. When the two answers differ (the number opted out between their
/// checks: one sent, one denied), the one that sent may be answered `denied`.
pub async fn by_hand(State(service): State<Arc<Service>>, call: KeyedJson) -> Response {
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
    match stored(&mut conn, key, &fingerprint).await {
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
        if let Err(refused) = send_message(&service, &id, &args).await {
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
    match write_key(&mut conn, key_row, message).await {
        Ok(true) => response.map(axum::body::Body::from),
        // Another call wrote the key meanwhile: its response is the key's.
        Ok(false) => match stored(&mut conn, key, &fingerprint).await {
            Ok(Some(response)) => response,
            Ok(None) => Refusal::unavailable("the key's row is gone").into_response(),
            Err(err) => unavailable(err),
        },
        Err(err) => unavailable(err),
    }
}
