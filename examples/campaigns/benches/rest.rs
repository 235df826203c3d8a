//! `send_sms` through the campaign service's REST handler at 32 concurrent clients (keep-alive
//! HTTP/1.1 on 127.0.0.1), on each store in turn: PostgreSQL (a server of the bench's own, run
//! as deployed: `fsync` and `synchronous_commit` on) and SQLite (a file, as the service opens
//! it by default). On each, in one run, the arms interleaved round by round:
//! - the library: the service's own route, under the replay sequence;
//! - by hand: the same guarantee as a careful author writes it without the library (the key,
//!   its request's fingerprint and the stored response written beside the message's row, in
//!   one statement on PostgreSQL, one transaction on SQLite; a key found answers its stored
//!   response, or 422 for another request under it);
//! - by hand, the key claimed first: the same guarantee as Stripe's engineers published it for
//!   a request that calls another service (the key claimed with its request's fingerprint in
//!   a statement of its own before the work, 409 to a second caller meanwhile; the response
//!   written to the key's row beside the message's after it): the key's row written twice, as
//!   the library writes it;
//! - the floor: the same handler with no guarantee at all (no key kept);
//! - the library for an account with a rate limit (one it never reaches), counted in the
//!   shared database.
//!
//! The arms take turns round by round, in an order that changes each round (`ORDERS`).
//! Reports each arm's throughput, p99 latency, the service's CPU a call (this process's, less
//! its client threads'), and on PostgreSQL the database server's CPU a call (its processes')
//! and statements a call (by `pg_stat_statements`: each statement's count and execution time a
//! call), and the host's steal time over the arm's rounds (the CPU a virtual machine's host
//! took for others, which slows every arm it falls on), then
//! the ratios a script reads, one a line as `<store>, <what>: <ratio>x`: the library against
//! the hand-written arm (the goal: at least 0.97x) and against the one that claims its key
//! first, the library and each hand-written arm against the floor (the guarantee's price: the
//! key row each writes), and the limited account against the library (the goal: at least
//! 0.95x). Last, the sequence's own CPU: what
//! the library's arm spends in the service over the hand-written arm's, as a share of the
//! library's.
//!
//! `cargo bench -p campaigns --bench rest`
#[path = "rest/arms.rs"]
mod arms;
#[path = "../../../tests/support/postgres.rs"]
mod postgres;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use agent_tool_result::registry::Principal;
use campaigns::db::Target;
use campaigns::limits;
use campaigns::provider::{Provider, stand_in};
use campaigns::service::{Config, Service};
use campaigns::store::window::SendWindow;

/// Concurrent clients.
const CLIENTS: usize = 32;
/// Requests per client per round.
const PER_CLIENT: usize = 60;
/// Rounds of each arm.
const ROUNDS: u32 = 20;
/// The order of the arms in each round, in turn: over ten rounds each arm runs right after
/// each other arm twice, and first twice (Williams' design for five: a Latin square and its
/// rows reversed), so that what one arm leaves behind (dead rows, WAL to flush) weighs on
/// every arm alike.
const ORDERS: [[usize; ARMS]; 10] = [
    [0, 1, 4, 2, 3],
    [1, 2, 0, 3, 4],
    [2, 3, 1, 4, 0],
    [3, 4, 2, 0, 1],
    [4, 0, 3, 1, 2],
    [3, 2, 4, 1, 0],
    [4, 3, 0, 2, 1],
    [0, 4, 1, 3, 2],
    [1, 0, 2, 4, 3],
    [2, 1, 3, 0, 4],
];
/// The arms measured.
const ARMS: usize = 5;
/// An account with a rate limit it never reaches.
const LIMITED: &str = "acct_limited";
/// Where the service serves `send_sms`.
const SEQUENCED: &str = "/v1/tools/send_sms";

/// What one round of one arm measured.
struct Round {
    /// Requests a second.
    rate: f64,
    /// Every request's latency.
    latencies: Vec<Duration>,
    /// The CPU time the service spent on the round: this process's, less its clients'.
    service_cpu: Duration,
    /// The CPU time the database server spent on the round (zero without a server).
    server_cpu: Duration,
    /// The machine's CPU time over the round, and how much of it the host took for others
    /// (the steal time of a virtual machine), in ticks.
    host: (u64, u64),
}

/// One round of one arm; `server`, the database server's postmaster, if there is one.
fn round(base: &str, path: &str, next: &AtomicUsize, server: Option<u32>) -> Round {
    let cpu_before = process_cpu();
    let host_before = host_ticks();
    let server_before = server.map_or(Duration::ZERO, server_cpu);
    let start = Instant::now();
    let (latencies, clients_cpu): (Vec<Duration>, Duration) = thread::scope(|scope| {
        let clients: Vec<_> = (0..CLIENTS)
            .map(|_| {
                scope.spawn(|| {
                    let cpu_before = thread_cpu();
                    let agent: ureq::Agent = ureq::Agent::config_builder()
                        .http_status_as_error(false)
                        .build()
                        .into();
                    let latencies = (0..PER_CLIENT)
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
                        .collect::<Vec<_>>();
                    (latencies, thread_cpu().saturating_sub(cpu_before))
                })
            })
            .collect();
        let mut all = Vec::with_capacity(CLIENTS * PER_CLIENT);
        let mut cpu = Duration::ZERO;
        for client in clients {
            let (latencies, used) = client.join().unwrap();
            all.extend(latencies);
            cpu += used;
        }
        (all, cpu)
    });
    let count = f64::from(u32::try_from(latencies.len()).expect("a few thousand"));
    let rate = count / start.elapsed().as_secs_f64();
    let service_cpu = process_cpu()
        .saturating_sub(cpu_before)
        .saturating_sub(clients_cpu);
    let host_after = host_ticks();
    Round {
        rate,
        latencies,
        service_cpu,
        host: (host_after.0 - host_before.0, host_after.1 - host_before.1),
        server_cpu: server
            .map_or(Duration::ZERO, server_cpu)
            .saturating_sub(server_before),
    }
}

/// The CPU time the database server `postmaster` and its processes (backends, WAL writer,
/// checkpointer) have used, each one's `/proc/<pid>/schedstat`, in nanoseconds. The bench's
/// connections are pooled, so no backend it uses exits mid-round.
fn server_cpu(postmaster: u32) -> Duration {
    let read = |path: std::path::PathBuf| std::fs::read_to_string(path).ok();
    let mut nanos = 0u64;
    for entry in std::fs::read_dir("/proc").expect("Linux's /proc").flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        // The parent is the 4th field of the stat line, the 2nd after the command's name.
        let parent = read(entry.path().join("stat")).and_then(|stat| {
            let (_, fields) = stat.rsplit_once(')')?;
            fields.split_whitespace().nth(1)?.parse::<u32>().ok()
        });
        if pid != postmaster && parent != Some(postmaster) {
            continue;
        }
        nanos += read(entry.path().join("schedstat"))
            .and_then(|stat| stat.split_whitespace().next()?.parse().ok())
            .unwrap_or(0);
    }
    Duration::from_nanos(nanos)
}

/// The machine's CPU time so far, every CPU's, and the part of it the host took for others
/// (steal time), in ticks: the first line of Linux's `/proc/stat`.
fn host_ticks() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").expect("Linux's /proc");
    let ticks: Vec<u64> = stat
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("cpu "))
        .expect("the machine's line")
        .split_whitespace()
        .map(|field| field.parse().expect("a count of ticks"))
        .collect();
    // user, nice, system, idle, iowait, irq, softirq, steal; guest time is counted in user.
    (ticks.iter().take(8).sum(), ticks[7])
}

/// The CPU time this process has used, every thread's, the exited ones' included (Linux's
/// `/proc/self/stat`, in its hundredths of a second).
fn process_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("Linux's /proc");
    // The fields after the command's name (which may hold spaces), from the state on: user
    // and system time are the 14th and 15th of the line.
    let (_, fields) = stat.rsplit_once(')').expect("a stat line");
    let ticks: Vec<u64> = fields
        .split_whitespace()
        .skip(11)
        .take(2)
        .map(|field| field.parse().expect("a count of ticks"))
        .collect();
    Duration::from_millis(10 * (ticks[0] + ticks[1]))
}

/// The CPU time the calling thread has used (`/proc/thread-self/schedstat`, in nanoseconds).
fn thread_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").expect("Linux's /proc");
    let nanos = stat
        .split_whitespace()
        .next()
        .and_then(|field| field.parse().ok())
        .expect("the time on CPU");
    Duration::from_nanos(nanos)
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
    let pid = std::fs::read_to_string(server.dir().join("data/postmaster.pid"))
        .ok()
        .and_then(|pid| pid.lines().next()?.trim().parse().ok())
        .expect("the server's postmaster.pid");
    let target = Target::Postgres(server.database("bench_rest"));
    measure(&target, "postgres", Some(pid));
    // SQLite as the service opens it by default: a file of its own.
    let dir = postgres::scratch_dir("bench-rest-sqlite");
    measure(&Target::Sqlite(dir.join("campaigns.db")), "sqlite", None);
}

/// Every arm on `target` (served by `server`, a postmaster's pid, if by a server),
/// interleaved round by round, reported as `store`'s.
fn measure(target: &Target, store: &str, server: Option<u32>) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // The stand-in provider, as the service starts it by default (no delay: what is measured
    // is the service's own cost).
    let provider = runtime
        .block_on(stand_in::start(
            target,
            Duration::ZERO,
            8,
            Duration::from_secs(5),
        ))
        .expect("the stand-in provider starts");
    let provider = Provider::new(&provider, Duration::from_secs(5)).unwrap();
    let service = Arc::new(
        runtime
            .block_on(Service::open(target, config(provider)))
            .unwrap(),
    );
    let postgres = matches!(target, Target::Postgres(_));
    runtime.block_on(async {
        let mut conn = service.store().db().conn().await.unwrap();
        for table in arms::TABLES {
            conn.execute(table, &[]).await.unwrap();
        }
        if postgres {
            let sql = "CREATE EXTENSION IF NOT EXISTS pg_stat_statements";
            conn.execute(sql, &[]).await.unwrap();
        }
    });
    // The service's own routes, from its registry, as the account the bearer gate would name.
    let app = campaigns::rest::router(&campaigns::tools::registry(&service))
        .route(
            "/claimed-by-hand",
            axum::routing::post(arms::claimed_by_hand).with_state(Arc::clone(&service)),
        )
        .route(
            "/bare",
            axum::routing::post(arms::bare).with_state(Arc::clone(&service)),
        )
        .route(
            "/by-hand",
            axum::routing::post(arms::by_hand).with_state(Arc::clone(&service)),
        )
        .layer(axum::Extension(Principal::new(arms::PRINCIPAL)));
    let base = serve(&runtime, app);
    // The same routes as the limited account.
    let limited_app = campaigns::rest::router(&campaigns::tools::registry(&service))
        .layer(axum::Extension(Principal::new(LIMITED)));
    let limited_base = serve(&runtime, limited_app);

    let next = AtomicUsize::new(0);
    let arms = [
        ("the library", &base, SEQUENCED),
        ("by hand", &base, "/by-hand"),
        ("by hand, the key claimed first", &base, "/claimed-by-hand"),
        ("the floor (no key kept)", &base, "/bare"),
        ("the library, one account's limit", &limited_base, SEQUENCED),
    ];
    // Warm up every arm: connections, prepared statements, the tables' first pages.
    for (_, base, path) in &arms {
        round(base, path, &next, server);
    }
    let mut measured: Vec<Arm> = arms.iter().map(|_| Arm::default()).collect();
    // The statements the server ran so far, each with how many times (each reading counts
    // itself once); none on SQLite.
    let statements = || {
        postgres.then(|| {
            runtime.block_on(async {
                let mut conn = service.store().db().conn().await.unwrap();
                let sql = "SELECT query, calls, (total_exec_time * 1000)::bigint \
                           FROM pg_stat_statements";
                conn.query(sql, &[])
                    .await
                    .unwrap()
                    .iter()
                    .map(|row| (row.text(0), (row.int(1), row.int(2))))
                    .collect::<HashMap<String, (i64, i64)>>()
            })
        })
    };
    for round_number in 0..ROUNDS as usize {
        for i in ORDERS[round_number % ORDERS.len()] {
            let ((_, base, path), arm) = (&arms[i], &mut measured[i]);
            let before = statements();
            arm.add(round(base, path, &next, server));
            if let (Some(before), Some(after)) = (before, statements()) {
                arm.ran(&before, after);
            }
        }
    }
    report(store, &arms.map(|(name, _, _)| name), measured);
}

/// The service's settings: one account limited, to a billion calls a second (counted, never
/// refused).
fn config(provider: Provider) -> Config {
    Config {
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
    }
}

/// What one arm measured over its rounds.
#[derive(Default)]
struct Arm {
    /// Requests a second, averaged over the rounds.
    rate: f64,
    /// Every request's latency.
    latencies: Vec<Duration>,
    /// Each statement the server ran for the arm's requests, with how many times and the
    /// microseconds it ran in all, by the server's count (the stand-in provider's included:
    /// one send a request, in every arm); none on SQLite.
    statements: HashMap<String, (i64, i64)>,
    /// The CPU time the service spent on the arm's requests: the handler, the sequence, the
    /// database driver, HTTP and the stand-in provider (the same in every arm), not the
    /// clients'.
    service_cpu: Duration,
    /// The CPU time the database server spent on the arm's requests (zero on SQLite, which
    /// runs in the service).
    server_cpu: Duration,
    /// The machine's CPU time over the arm's rounds, and the host's steal time of it, in ticks.
    host: (u64, u64),
}

impl Arm {
    /// Adds what one of the arm's rounds measured.
    fn add(&mut self, round: Round) {
        self.rate += round.rate / f64::from(ROUNDS);
        self.latencies.extend(round.latencies);
        self.service_cpu += round.service_cpu;
        self.server_cpu += round.server_cpu;
        self.host = (self.host.0 + round.host.0, self.host.1 + round.host.1);
    }

    /// Adds the statements the server ran between two readings of its counts (`before` and
    /// `after`, each statement with its calls and microseconds), less the readings' own.
    fn ran(&mut self, before: &HashMap<String, (i64, i64)>, after: HashMap<String, (i64, i64)>) {
        for (query, (calls, micros)) in after {
            let (calls_before, micros_before) = before.get(&query).copied().unwrap_or((0, 0));
            let ran = calls - calls_before;
            if ran > 0 && !query.contains("pg_stat_statements") {
                let entry = self.statements.entry(query).or_insert((0, 0));
                entry.0 += ran;
                entry.1 += micros - micros_before;
            }
        }
    }
}

/// Prints each arm's throughput, p99 and statements a call, then the ratios, one a line as
/// `<store>, <what>: <ratio>x`.
fn report(store: &str, names: &[&str; ARMS], measured: Vec<Arm>) {
    println!(
        "send_sms over REST, {CLIENTS} clients, {} requests an arm, {}:",
        CLIENTS * PER_CLIENT * ROUNDS as usize,
        if store == "postgres" {
            "PostgreSQL as deployed (fsync on)"
        } else {
            "SQLite (the service's own file)"
        }
    );
    let requests =
        f64::from(u32::try_from(CLIENTS * PER_CLIENT).expect("a few thousand")) * f64::from(ROUNDS);
    let summary: Vec<(f64, f64, f64)> = measured
        .into_iter()
        .zip(names)
        .map(|(arm, name)| {
            let p99 = p99(arm.latencies);
            #[allow(clippy::cast_precision_loss)] // counts of a few hundred thousand
            let per_call = |n: i64| n as f64 / requests;
            let total: i64 = arm.statements.values().map(|(calls, _)| calls).sum();
            let statements = if arm.statements.is_empty() {
                String::new()
            } else {
                format!(", {:.2} statements a call", per_call(total))
            };
            let cpu = arm.service_cpu.as_secs_f64() * 1e6 / requests;
            let server = if arm.server_cpu.is_zero() {
                String::new()
            } else {
                let server = arm.server_cpu.as_secs_f64() * 1e6 / requests;
                format!(", {server:.0} µs of the database server's")
            };
            #[allow(clippy::cast_precision_loss)] // ticks of a few minutes
            let stolen = 100.0 * arm.host.1 as f64 / arm.host.0.max(1) as f64;
            println!(
                "  {name}: {:.0} requests/s, p99 {p99:.2} ms, {cpu:.0} µs of the service's CPU \
                 a call{server}{statements}; the host's steal time {stolen:.1}% of the CPU",
                arm.rate
            );
            // Where the statements go: each one run at least once in ten calls.
            let mut each: Vec<(&String, &(i64, i64))> = arm.statements.iter().collect();
            each.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            for (query, (calls, micros)) in each.into_iter().filter(|(_, n)| per_call(n.0) >= 0.1) {
                let query: String = query.split_whitespace().collect::<Vec<_>>().join(" ");
                let shown: String = query.chars().take(100).collect();
                println!(
                    "      {:.2} a call, {:.0} µs of execution a call: {shown}",
                    per_call(*calls),
                    per_call(*micros)
                );
            }
            (arm.rate, p99, cpu)
        })
        .collect();
    let [library, by_hand, claimed, floor, limited] = [0, 1, 2, 3, 4].map(|i| summary[i]);
    println!(
        "Goals: the library at least 0.97x the throughput by hand; one account's limit at \
         least 0.95x the library's. The floor keeps no key: against it, each arm's price is \
         its key row (written once by hand; twice by the library and by hand with the key \
         claimed first)."
    );
    let ratio = |what: &str, a: (f64, f64, f64), b: (f64, f64, f64)| {
        println!("{store}, {what}: {:.2}x", a.0 / b.0);
        println!("{store}, {what} p99: {:.2}x", a.1 / b.1);
    };
    ratio("library / by hand", library, by_hand);
    ratio("library / by hand, the key claimed first", library, claimed);
    ratio("library / floor", library, floor);
    ratio("by hand / floor", by_hand, floor);
    ratio("by hand, the key claimed first / floor", claimed, floor);
    ratio("one account's limit / library", limited, library);
    // What the sequence adds to the service's CPU over the same guarantee by hand, as a share
    // of all the service spends on a call of the library's.
    println!(
        "{store}, the sequence's own CPU / the library's: {:.1}%",
        100.0 * (library.2 - by_hand.2) / library.2
    );
}
