//! `send_sms` through the campaign service's REST handler at 32 concurrent clients (keep-alive
//! HTTP/1.1 on 127.0.0.1), with its tables and ledger on PostgreSQL (a server of the bench's
//! own, run as deployed: `fsync` and `synchronous_commit` on), in one run, the arms
//! interleaved round by round:
//! - the library: the service's own route, under the replay sequence;
//! - by hand: the same guarantee as a careful author writes it without the library (the key,
//!   its request's fingerprint and the stored response written in the effect's own statement,
//!   with the message's row; a key found answers its stored response, or 422 for another
//!   request under it);
//! - the floor: the same handler with no guarantee at all (no key kept);
//! - the library for an account with a rate limit (one it never reaches), counted in the
//!   shared database.
//!
//! Reports each arm's throughput and p99 latency, and the ratios a script reads, one a line as
//! `<store>, <what>: <ratio>x`: the library against the hand-written arm (the goal: at least
//! 0.97x), the library and the hand-written arm against the floor (the guarantee's price: the
//! key row each writes), and the limited account against the library (the goal: at least
//! 0.95x).
//!
//! `cargo bench -p campaigns --bench rest`
#[path = "../../../tests/support/postgres.rs"]
mod postgres;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use agent_tool_result::guarantee::{GuaranteeResult, PolicyCode, Refusal, RefusalKind, Tally};
use agent_tool_result::http::{KeyedJson, RestProfile};
use agent_tool_result::registry::Principal;
use agent_tool_result::replay::{Call, Done, GuaranteeTool, OperationFields};
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use campaigns::db::Target;
use campaigns::limits;
use campaigns::provider::{Provider, Send, stand_in};
use campaigns::service::{Config, Service};
use campaigns::store::messages::Message;
use campaigns::store::window::SendWindow;
use campaigns::tools::send_sms::{MessageRef, SendSms, SmsArgs};
use serde::Deserialize;

/// Concurrent clients.
const CLIENTS: usize = 32;
/// Requests per client per round.
const PER_CLIENT: usize = 60;
/// Rounds of each arm.
const ROUNDS: u32 = 20;
const PRINCIPAL: &str = "acct_bench";
/// An account with a rate limit it never reaches.
const LIMITED: &str = "acct_limited";
/// Where the service serves `send_sms`.
const SEQUENCED: &str = "/v1/tools/send_sms";

/// Sends message `id` through the provider (its effect key makes a second send of it a
/// no-op): the refusal to answer when the provider fails.
async fn send_message(service: &Service, id: &str, args: &SmsArgs) -> Result<(), Response> {
    let effect = Send::effect_of(id, &args.to);
    let send = Send {
        effect_key: effect.as_str(),
        phone: &args.to,
        body: &args.body,
        campaign_id: None,
        message_id: Some(id),
        fence: 0,
    };
    service
        .send(send)
        .await
        .map(|_| ())
        .map_err(|err| Refusal::unavailable(err.to_string()).into_response())
}

/// The same handler without the sequence: the tool's work (the opt-out check, the send
/// through the provider, the message recorded sent in a plain transaction), answered through
/// the profile.
async fn bare(State(service): State<Arc<Service>>, call: KeyedJson) -> Response {
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
const BY_HAND_TABLE: &str = "CREATE TABLE IF NOT EXISTS bench_keys (key text PRIMARY KEY, \
    fingerprint text NOT NULL, status int NOT NULL, content_type text NOT NULL, \
    body text NOT NULL)";

/// The response stored under `key`, if any: itself for the same request (`fingerprint`),
/// else the refusal of another request under the key.
async fn stored(
    client: &deadpool_postgres::Object,
    key: &str,
    fingerprint: &str,
) -> Result<Option<Response>, tokio_postgres::Error> {
    let row = client
        .query_opt(
            "SELECT fingerprint, status, content_type, body FROM bench_keys WHERE key = $1",
            &[&key],
        )
        .await?;
    Ok(row.map(|row| {
        if row.get::<_, &str>(0) != fingerprint {
            return Refusal::new(RefusalKind::KeyMismatch, "another request").into_response();
        }
        let status = u16::try_from(row.get::<_, i32>(1)).expect("a status");
        http::Response::builder()
            .status(status)
            .header("content-type", row.get::<_, &str>(2))
            .body(axum::body::Body::from(row.get::<_, String>(3)))
            .expect("a stored response")
    }))
}

/// The same guarantee as a careful author writes it by hand: a key found answers its stored
/// response (or 422, for another request under it); otherwise the tool's work (the opt-out
/// check, the send through the provider, whose effect key makes a second send of the message
/// a no-op) and one statement that writes the key with its fingerprint and response and the
/// message's row; a key another call wrote meanwhile answers what that call stored.
async fn by_hand(State(service): State<Arc<Service>>, call: KeyedJson) -> Response {
    let (key, arguments) = call.into_parts();
    let args = match SmsArgs::deserialize(&arguments) {
        Ok(args) => args,
        Err(err) => return Refusal::invalid_arguments(err.to_string()).into_response(),
    };
    let keyed = Call::of(SendSms::NAME, PRINCIPAL, key.clone(), &arguments);
    let fingerprint = keyed.fingerprint().to_hex();
    let id = keyed.operation_id(SendSms::OPERATION);
    let key = key.as_str();
    let pool = service
        .store()
        .db()
        .pool()
        .expect("the bench's store is PostgreSQL");
    let client = match pool.get().await {
        Ok(client) => client,
        Err(err) => return Refusal::unavailable(err.to_string()).into_response(),
    };
    match stored(&client, key, &fingerprint).await {
        Ok(Some(response)) => return response,
        Ok(None) => {}
        Err(err) => return Refusal::unavailable(err.to_string()).into_response(),
    }
    let opted_out = match client
        .query_opt("SELECT 1 FROM opt_outs WHERE phone = $1", &[&args.to])
        .await
    {
        Ok(row) => row.is_some(),
        Err(err) => return Refusal::unavailable(err.to_string()).into_response(),
    };
    let answer: agent_tool_result::guarantee::Answer<MessageRef> = if opted_out {
        GuaranteeResult::denied(PolicyCode::CONTACT_OPTED_OUT).into()
    } else {
        if let Err(refused) = send_message(&service, &id, &args).await {
            return refused;
        }
        GuaranteeResult::committed_with(Tally::sent(1), MessageRef::of_operation(&id)).into()
    };
    let response = RestProfile::default()
        .answer_response(&answer)
        .expect("an answer's fields are an object");
    let status = i32::from(response.status().as_u16());
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    let body = String::from_utf8(response.body().clone()).expect("JSON is text");
    let key_row = "INSERT INTO bench_keys (key, fingerprint, status, content_type, body) \
                   VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key) DO NOTHING RETURNING 1";
    let written = if opted_out {
        client
            .query(
                &format!("WITH k AS ({key_row}) SELECT count(*) FROM k"),
                &[&key, &fingerprint, &status, &content_type, &body],
            )
            .await
    } else {
        client
            .query(
                &format!(
                    "WITH k AS ({key_row}), m AS (INSERT INTO messages \
                     (id, principal, phone, state, updated_ms) VALUES ($6, $7, $8, 'sent', \
                     (extract(epoch FROM clock_timestamp()) * 1000)::bigint) \
                     ON CONFLICT (id) DO NOTHING) SELECT count(*) FROM k"
                ),
                &[
                    &key,
                    &fingerprint,
                    &status,
                    &content_type,
                    &body,
                    &id,
                    &PRINCIPAL,
                    &args.to,
                ],
            )
            .await
    };
    match written.map(|rows| rows[0].get::<_, i64>(0)) {
        Ok(1) => response.map(axum::body::Body::from),
        // Another call wrote the key meanwhile: its response is the key's.
        Ok(_) => match stored(&client, key, &fingerprint).await {
            Ok(Some(response)) => response,
            Ok(None) => Refusal::unavailable("the key's row is gone").into_response(),
            Err(err) => Refusal::unavailable(err.to_string()).into_response(),
        },
        Err(err) => Refusal::unavailable(err.to_string()).into_response(),
    }
}

/// One round of one arm: throughput (requests a second) and every latency.
fn round(base: &str, path: &str, next: &AtomicUsize) -> (f64, Vec<Duration>) {
    let start = Instant::now();
    let latencies: Vec<Duration> = thread::scope(|scope| {
        let clients: Vec<_> = (0..CLIENTS)
            .map(|_| {
                scope.spawn(|| {
                    let agent: ureq::Agent = ureq::Agent::config_builder()
                        .http_status_as_error(false)
                        .build()
                        .into();
                    (0..PER_CLIENT)
                        .map(|_| {
                            let n = next.fetch_add(1, Ordering::Relaxed);
                            let body = format!(r#"{{"to":"+1558{n:08}","body":"hi"}}"#);
                            let sent = Instant::now();
                            let mut response = agent
                                .post(format!("{base}{path}"))
                                .header("content-type", "application/json")
                                .header("idempotency-key", format!("\"bench-{n}\""))
                                .send(body.as_bytes())
                                .expect("the service answers");
                            assert_eq!(response.status(), 200);
                            // Read to its end, so the connection is kept for the next one.
                            response.body_mut().read_to_vec().expect("the body");
                            sent.elapsed()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        clients
            .into_iter()
            .flat_map(|client| client.join().unwrap())
            .collect()
    });
    let count = f64::from(u32::try_from(latencies.len()).expect("a few thousand"));
    let rate = count / start.elapsed().as_secs_f64();
    (rate, latencies)
}

fn p99(mut latencies: Vec<Duration>) -> f64 {
    latencies.sort();
    latencies[(latencies.len() - 1) * 99 / 100].as_secs_f64() * 1e3
}

/// Serves `app` on a loopback port of its own: its base URL.
fn serve(runtime: &tokio::runtime::Runtime, app: axum::Router) -> String {
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    runtime.spawn(async move { axum::serve(listener, app).await });
    base
}

fn main() {
    let server = postgres::Postgres::start_as_deployed();
    let url = server.database("bench_rest");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // The stand-in provider, as the service starts it by default (no delay: what is measured
    // is the service's own cost).
    let target = Target::Postgres(url);
    let provider = runtime
        .block_on(stand_in::start(
            &target,
            Duration::ZERO,
            8,
            Duration::from_secs(5),
        ))
        .expect("the stand-in provider starts");
    let provider = Provider::new(&provider, Duration::from_secs(5)).unwrap();
    let config = Config {
        window: SendWindow {
            cap: 20,
            length_ms: 60_000,
            origin_ms: 0,
        },
        caps: std::collections::HashMap::new(),
        provider,
        #[cfg(feature = "faults")]
        full_disk: None,
        lease: Duration::from_secs(30),
        connections: 8,
        db_timeout: Duration::from_secs(5),
        // One account limited, to a billion calls a second: counted, never refused.
        rates: limits::RateLimits::new(
            [LIMITED],
            None,
            &[(
                LIMITED.to_owned(),
                std::num::NonZeroU32::new(1_000_000_000).unwrap(),
            )]
            .into(),
            Duration::from_secs(1),
        ),
    };
    let service = Arc::new(runtime.block_on(Service::open(&target, config)).unwrap());
    runtime.block_on(async {
        let pool = service.store().db().pool().expect("PostgreSQL");
        pool.get()
            .await
            .unwrap()
            .batch_execute(BY_HAND_TABLE)
            .await
            .unwrap();
    });
    // The service's own routes, from its registry, as the account the bearer gate would name.
    let app = campaigns::rest::router(&campaigns::tools::registry(&service))
        .route(
            "/bare",
            axum::routing::post(bare).with_state(Arc::clone(&service)),
        )
        .route(
            "/by-hand",
            axum::routing::post(by_hand).with_state(Arc::clone(&service)),
        )
        .layer(axum::Extension(Principal::new(PRINCIPAL)));
    let base = serve(&runtime, app);
    // The same routes as the limited account.
    let limited_app = campaigns::rest::router(&campaigns::tools::registry(&service))
        .layer(axum::Extension(Principal::new(LIMITED)));
    let limited_base = serve(&runtime, limited_app);

    let next = AtomicUsize::new(0);
    // Warm up every arm: connections, prepared statements, the tables' first pages.
    round(&base, SEQUENCED, &next);
    round(&base, "/by-hand", &next);
    round(&base, "/bare", &next);
    round(&limited_base, SEQUENCED, &next);
    let arms = [
        ("the library", &base, SEQUENCED),
        ("by hand", &base, "/by-hand"),
        ("the floor (no key kept)", &base, "/bare"),
        ("the library, one account's limit", &limited_base, SEQUENCED),
    ];
    let mut measured: Vec<(f64, Vec<Duration>)> = arms.iter().map(|_| (0.0, Vec::new())).collect();
    for _ in 0..ROUNDS {
        for ((_, base, path), arm) in arms.iter().zip(&mut measured) {
            let (rate, latencies) = round(base, path, &next);
            arm.0 += rate / f64::from(ROUNDS);
            arm.1.extend(latencies);
        }
    }
    report(&arms.map(|(name, _, _)| name), measured);
}

/// Prints each arm's throughput and p99, then the ratios, one a line as
/// `<store>, <what>: <ratio>x`.
fn report(names: &[&str; 4], measured: Vec<(f64, Vec<Duration>)>) {
    println!(
        "send_sms over REST, {CLIENTS} clients, {} requests an arm, PostgreSQL as deployed \
         (fsync on):",
        CLIENTS * PER_CLIENT * ROUNDS as usize
    );
    let summary: Vec<(f64, f64)> = measured
        .into_iter()
        .map(|(rate, latencies)| (rate, p99(latencies)))
        .collect();
    for (name, (rate, p99)) in names.iter().zip(&summary) {
        println!("  {name}: {rate:.0} requests/s, p99 {p99:.2} ms");
    }
    let [library, by_hand, floor, limited] = [0, 1, 2, 3].map(|i| summary[i]);
    println!(
        "Goals: the library at least 0.97x the throughput by hand; one account's limit at \
         least 0.95x the library's. The floor keeps no key: against it, each arm's price is \
         its key row."
    );
    let ratio = |what: &str, a: (f64, f64), b: (f64, f64)| {
        println!("postgres, {what}: {:.2}x", a.0 / b.0);
        println!("postgres, {what} p99: {:.2}x", a.1 / b.1);
    };
    ratio("library / by hand", library, by_hand);
    ratio("library / floor", library, floor);
    ratio("by hand / floor", by_hand, floor);
    ratio("one account's limit / library", limited, library);
}
