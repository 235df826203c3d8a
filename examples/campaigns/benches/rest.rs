//! `send_sms` through the campaign service's REST handler at 32 concurrent clients (keep-alive
//! HTTP/1.1 on 127.0.0.1), with its tables and ledger on PostgreSQL (a server of the bench's
//! own): under the library's replay sequence, against the same handler calling the tool
//! directly (no ledger, no fence), in one run, the two arms interleaved round by round. Reports each
//! arm's throughput and p99 latency, and their ratios (goal: at least 0.95x the throughput,
//! p99 within 1.25x). A third arm is the sequenced route for an account with a rate limit
//! (one it never reaches), counted in the shared database: what one account's limit costs a
//! call, as a ratio of the sequenced arm.
//!
//! `cargo bench -p campaigns --bench rest`
#[path = "../../../tests/support/postgres.rs"]
mod postgres;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use agent_tool_result::guarantee::{GuaranteeResult, PolicyCode, Refusal};
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
            let effect = Send::effect_of(&id, &args.to);
            let send = Send {
                effect_key: effect.as_str(),
                phone: &args.to,
                body: &args.body,
                campaign_id: None,
                message_id: Some(&id),
                fence: 0,
            };
            if let Err(err) = service.send(send).await {
                return Refusal::unavailable(err.to_string()).into_response();
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
    let server = postgres::Postgres::start();
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
    // The service's own routes, from its registry, as the account the bearer gate would name.
    let app = campaigns::rest::router(&campaigns::tools::registry(&service))
        .route(
            "/bare",
            axum::routing::post(bare).with_state(Arc::clone(&service)),
        )
        .layer(axum::Extension(Principal::new(PRINCIPAL)));
    let base = serve(&runtime, app);
    // The same routes as the limited account.
    let limited_app = campaigns::rest::router(&campaigns::tools::registry(&service))
        .layer(axum::Extension(Principal::new(LIMITED)));
    let limited_base = serve(&runtime, limited_app);

    let next = AtomicUsize::new(0);
    // Warm up both: connections, prepared statements, the tables' first pages.
    round(&base, SEQUENCED, &next);
    round(&base, "/bare", &next);
    round(&limited_base, SEQUENCED, &next);
    let (mut ours, mut theirs, mut limited) =
        ((0.0, Vec::new()), (0.0, Vec::new()), (0.0, Vec::new()));
    for _ in 0..ROUNDS {
        for (arm, base, path) in [
            (&mut ours, &base, SEQUENCED),
            (&mut theirs, &base, "/bare"),
            (&mut limited, &limited_base, SEQUENCED),
        ] {
            let (rate, latencies) = round(base, path, &next);
            arm.0 += rate / f64::from(ROUNDS);
            arm.1.extend(latencies);
        }
    }
    let (ours_p99, theirs_p99, limited_p99) = (p99(ours.1), p99(theirs.1), p99(limited.1));
    println!(
        "send_sms over REST, {CLIENTS} clients, {} requests an arm, PostgreSQL:",
        CLIENTS * PER_CLIENT * ROUNDS as usize
    );
    println!(
        "  under the replay sequence: {:.0} requests/s, p99 {ours_p99:.2} ms",
        ours.0
    );
    println!(
        "  the same handler without:  {:.0} requests/s, p99 {theirs_p99:.2} ms",
        theirs.0
    );
    println!(
        "  throughput {:.2}x (goal at least 0.95x), p99 {:.2}x (goal at most 1.25x)",
        ours.0 / theirs.0,
        ours_p99 / theirs_p99
    );
    println!(
        "  with the account's rate limit counted in the database: {:.0} requests/s, p99 \
         {limited_p99:.2} ms: throughput {:.2}x, p99 {:.2}x of the sequence without",
        limited.0,
        limited.0 / ours.0,
        limited_p99 / ours_p99
    );
}
