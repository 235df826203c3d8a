//! A stand-in provider, which the service starts on loopback unless `--provider-url` names a
//! real one: `POST /sends` sends (after `--provider-delay-ms`, as a gateway takes time), once
//! per effect key (a second send of the same effect is refused, 409, as providers with
//! idempotency keys refuse it); `GET /sends` lists every send it accepted, and
//! `GET /sends/{effectKey}` finds one.
//!
//! It keeps its log in a table of its own, `provider_sends`, in the database it is given (the
//! service's, by default, through connections of its own): every process's stand-in then
//! shares one log and one deduplication, as one provider would, and a test counts the sends
//! where they land.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};

use crate::db::error::DbError;
use crate::db::sql::Row;
use crate::db::{Db, Target};

/// The stand-in's table.
const SCHEMA: &str = include_str!("provider.sql");

/// A send as the stand-in takes it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Sending {
    effect_key: String,
    phone: String,
    body: String,
    campaign_id: Option<String>,
    message_id: Option<String>,
    sender: String,
    fence: i64,
}

/// A send as the stand-in lists it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Logged {
    seq: i64,
    effect_key: String,
    phone: String,
    campaign_id: Option<String>,
    message_id: Option<String>,
    sender: String,
    fence: i64,
    sent_ms: i64,
}

impl Logged {
    fn of(row: &Row) -> Self {
        let text = |i| Some(row.text(i)).filter(|text: &String| !text.is_empty());
        Logged {
            seq: row.int(0),
            effect_key: row.text(1),
            phone: row.text(2),
            campaign_id: text(3),
            message_id: text(4),
            sender: row.text(5),
            fence: row.int(6),
            sent_ms: row.int(7),
        }
    }
}

const COLUMNS: &str = "seq, effect_key, phone, coalesce(campaign_id, ''), \
    coalesce(message_id, ''), sender, fence, sent_ms";

/// The stand-in: its log, and how long a send takes.
struct StandIn {
    db: Db,
    delay: Duration,
}

/// A failure of the stand-in's log: 503, so the caller tries again (the effect key makes
/// that safe).
fn failed(err: &DbError) -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        format!("the provider's log failed: {err}"),
    )
        .into_response()
}

async fn send(State(stand_in): State<Arc<StandIn>>, Json(sending): Json<Sending>) -> Response {
    tokio::time::sleep(stand_in.delay).await;
    let inserted = async {
        stand_in
            .db
            .conn()
            .await?
            .execute(
                "INSERT INTO provider_sends (campaign_id, message_id, phone, body, sent_ms, \
                 sender, effect_key, fence) VALUES ($1, $2, $3, $4, NOW_MS, $5, $6, $7) \
                 ON CONFLICT (effect_key) DO NOTHING",
                &[
                    sending.campaign_id.as_deref().into(),
                    sending.message_id.as_deref().into(),
                    sending.phone.as_str().into(),
                    sending.body.as_str().into(),
                    sending.sender.as_str().into(),
                    sending.effect_key.as_str().into(),
                    sending.fence.into(),
                ],
            )
            .await
    };
    match inserted.await {
        Ok(1) => StatusCode::CREATED.into_response(),
        Ok(_) => (
            StatusCode::CONFLICT,
            format!("`{}` was sent already", sending.effect_key),
        )
            .into_response(),
        Err(err) => failed(&err),
    }
}

async fn list(State(stand_in): State<Arc<StandIn>>) -> Response {
    let sql = format!("SELECT {COLUMNS} FROM provider_sends ORDER BY seq");
    let rows = async { stand_in.db.conn().await?.query(&sql, &[]).await };
    match rows.await {
        Ok(rows) => Json(rows.iter().map(Logged::of).collect::<Vec<_>>()).into_response(),
        Err(err) => failed(&err),
    }
}

async fn find(State(stand_in): State<Arc<StandIn>>, Path(effect): Path<String>) -> Response {
    let sql = format!("SELECT {COLUMNS} FROM provider_sends WHERE effect_key = $1");
    let rows = async {
        stand_in
            .db
            .conn()
            .await?
            .query(&sql, &[effect.as_str().into()])
            .await
    };
    match rows.await {
        Ok(rows) => match rows.first() {
            Some(row) => Json(Logged::of(row)).into_response(),
            None => StatusCode::NOT_FOUND.into_response(),
        },
        Err(err) => failed(&err),
    }
}

/// Why the stand-in did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Its log could not be opened.
    #[error("the stand-in provider's log: {0}")]
    Log(#[from] DbError),
    /// It could not listen on loopback.
    #[error("the stand-in provider could not listen on loopback: {0}")]
    Listen(#[from] std::io::Error),
}

/// Starts the stand-in on a free loopback port, its log at `target` (a pool of its own of
/// `connections`, each statement bounded by `timeout`), each send taking `delay`: its base
/// URL.
pub async fn start(
    target: &Target,
    delay: Duration,
    connections: usize,
    timeout: Duration,
) -> Result<String, StartError> {
    let db = Db::open(target, SCHEMA, connections, timeout).await?;
    let app = axum::Router::new()
        .route("/sends", post(send).get(list))
        .route("/sends/{effect}", get(find))
        .with_state(Arc::new(StandIn { db, delay }));
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(base)
}
