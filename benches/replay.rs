//! The ledgers' cost, measured side by side in one run against what a hand-written store
//! would do, on a PostgreSQL server this bench starts itself (as the tests do) and on SQLite:
//!
//! 1. PostgreSQL: `begin` + `complete` of a new key against a plain `INSERT` and `UPDATE` of
//!    the same row with prepared statements on the same server (goal: at most 1.5x).
//! 2. SQLite: `begin` + `complete` against one plain `INSERT` of the finished row (goal: at
//!    most 2x).
//! 3. `begin` with 1,000,000 keys in the ledger against an empty one (goal: median within
//!    1.5x), on both stores.
//! 4. PostgreSQL: a purge of 1,000,000 expired keys in bounded batches while begins run: the
//!    longest a begin waited (goal: under 100 ms).
//!
//! Run with `cargo bench -p agent-tool-result-tests --bench replay --features sqlite,postgres`. Each measurement
//! alternates its two sides call by call, so both see the same machine.

#[path = "../tests/support/postgres.rs"]
mod postgres;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use agent_tool_result::replay::{
    Begin, Fingerprint, IdempotencyKey, Ledger, PostgresLedger, Scope, SqliteLedger, StoredAnswer,
};

const CALLS: usize = 2_000;
const BULK: u64 = 1_000_000;

static NEXT: AtomicU64 = AtomicU64::new(0);

fn next_key() -> IdempotencyKey {
    IdempotencyKey::new(format!("key-{}", NEXT.fetch_add(1, Ordering::Relaxed))).unwrap()
}

fn print() -> Fingerprint {
    Fingerprint::of(
        "send_campaign_batch",
        "acct",
        &serde_json::json!({ "n": 1 }),
    )
}

fn response() -> StoredAnswer {
    use agent_tool_result::guarantee::{Answer, GuaranteeResult, Impact, PolicyCode};
    let held: GuaranteeResult = GuaranteeResult::deferred(PolicyCode::CAMPAIGN_SEND_WINDOW)
        .with_impact(
            Impact::new()
                .with_requested(2)
                .with_committed(1)
                .with_deferred(1),
        )
        .and_then(|held| held.with_retry_at(std::time::UNIX_EPOCH + Duration::from_secs(1 << 31)))
        .expect("1 + 1 of 2, with a retry time");
    StoredAnswer::of(&Answer::from(held)).expect("an object")
}

/// Median and 99th percentile, in microseconds.
fn stats(mut times: Vec<Duration>) -> (f64, f64) {
    times.sort();
    let at = |permille: usize| times[(times.len() - 1) * permille / 1000].as_secs_f64() * 1e6;
    (at(500), at(990))
}

fn report(name: &str, ours: Vec<Duration>, theirs: Vec<Duration>, goal: f64) {
    let ((ours_median, ours_p99), (theirs_median, theirs_p99)) = (stats(ours), stats(theirs));
    let ratio = ours_median / theirs_median;
    println!(
        "{name}: median {ours_median:.0} µs against {theirs_median:.0} µs = {ratio:.2}x \
         (goal {goal}x: {}); p99 {ours_p99:.0} µs against {theirs_p99:.0} µs",
        if ratio <= goal { "met" } else { "MISSED" }
    );
}

async fn round_trip(ledger: &impl Ledger, scope: &Scope, stored: &StoredAnswer) -> Duration {
    let key = next_key();
    let start = Instant::now();
    let Ok(Begin::Fresh(lease)) = ledger.begin(scope, &key, print(), "cmp_1").await else {
        panic!("a new key is fresh");
    };
    let _ = ledger.complete(&lease, stored).await.unwrap();
    start.elapsed()
}

async fn begin_only(ledger: &impl Ledger, scope: &Scope) -> Duration {
    let key = next_key();
    let start = Instant::now();
    let begun = ledger.begin(scope, &key, print(), "cmp_1").await.unwrap();
    assert!(matches!(begun, Begin::Fresh(_)));
    start.elapsed()
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is read.
    let server = postgres::Postgres::start();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        postgres_round_trip(&server).await;
        sqlite_round_trip().await;
        postgres_million(&server).await;
        sqlite_million().await;
        postgres_purge(&server).await;
    });
}

async fn postgres_round_trip(server: &postgres::Postgres) {
    let url = server.database("bench_round_trip");
    let ledger = PostgresLedger::connect(&url).await.unwrap();
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .batch_execute(
            "CREATE TABLE plain_keys (scope text, key text, fingerprint text, refused boolean, \
             answer text, PRIMARY KEY (scope, key))",
        )
        .await
        .unwrap();
    let insert = client
        .prepare("INSERT INTO plain_keys (scope, key, fingerprint) VALUES ($1, $2, $3)")
        .await
        .unwrap();
    let update = client
        .prepare("UPDATE plain_keys SET refused = $3, answer = $4 WHERE scope = $1 AND key = $2")
        .await
        .unwrap();
    let (scope, stored) = (Scope::principal("acct"), response());
    let fingerprint = print().to_hex();
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..CALLS {
        ours.push(round_trip(&ledger, &scope, &stored).await);
        let key = next_key();
        let start = Instant::now();
        client
            .execute(&insert, &[&"acct", &key.as_str(), &fingerprint])
            .await
            .unwrap();
        client
            .execute(&update, &[&"acct", &key.as_str(), &false, &stored.json()])
            .await
            .unwrap();
        theirs.push(start.elapsed());
    }
    report(
        "PostgreSQL begin + complete against INSERT + UPDATE (2 round trips each)",
        ours,
        theirs,
        1.5,
    );
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("atr-bench-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

async fn sqlite_round_trip() {
    let ledger = SqliteLedger::open(scratch("ledger.sqlite")).unwrap();
    drop(SqliteLedger::open(scratch("plain.sqlite")).unwrap());
    let plain = rusqlite::Connection::open(scratch_existing("plain.sqlite")).unwrap();
    plain
        .execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;")
        .unwrap();
    let (scope, stored) = (Scope::principal("acct"), response());
    let fingerprint = print().to_hex();
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..CALLS {
        ours.push(round_trip(&ledger, &scope, &stored).await);
        let key = next_key();
        let start = Instant::now();
        plain
            .prepare_cached(
                "INSERT INTO atr_idempotency (scope, key, fingerprint, context, completed_ms, \
                 refused, answer) VALUES ('acct', ?1, ?2, '', 0, 0, ?3)",
            )
            .unwrap()
            .execute(rusqlite::params![key.as_str(), fingerprint, stored.json()])
            .unwrap();
        theirs.push(start.elapsed());
    }
    report(
        "SQLite begin + complete against one INSERT of the finished row",
        ours,
        theirs,
        2.0,
    );
}

fn scratch_existing(name: &str) -> std::path::PathBuf {
    std::env::temp_dir()
        .join(format!("atr-bench-replay-{}", std::process::id()))
        .join(name)
}

/// Writes `BULK` answered keys into `database`'s ledger, answered at `completed_at` (SQL).
fn bulk_answered(server: &postgres::Postgres, database: &str, prefix: &str, completed_at: &str) {
    server.sql_in(
        database,
        &format!(
            "INSERT INTO atr_idempotency (scope, key, fingerprint, context, completed_at, refused, \
             answer) SELECT 'acct_' || (g % 1000), '{prefix}-' || g, md5(g::text), '', \
             {completed_at}, false, '{{}}' FROM generate_series(1, {BULK}) g"
        ),
    );
    server.sql_in(database, "VACUUM ANALYZE atr_idempotency");
}

async fn postgres_million(server: &postgres::Postgres) {
    let empty = PostgresLedger::connect(&server.database("bench_empty"))
        .await
        .unwrap();
    let url = server.database("bench_million");
    let full = PostgresLedger::connect(&url).await.unwrap();
    let start = Instant::now();
    bulk_answered(server, "bench_million", "bulk", "now()");
    println!("PostgreSQL: {BULK} keys written in {:.1?}", start.elapsed());
    let scope = Scope::principal("acct_7");
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..CALLS {
        ours.push(begin_only(&full, &scope).await);
        theirs.push(begin_only(&empty, &scope).await);
    }
    report(
        "PostgreSQL begin with 1,000,000 keys against an empty ledger",
        ours,
        theirs,
        1.5,
    );
}

async fn sqlite_million() {
    let empty = SqliteLedger::open(scratch("empty.sqlite")).unwrap();
    let path = scratch("million.sqlite");
    drop(SqliteLedger::open(&path).unwrap());
    let start = Instant::now();
    let bulk = rusqlite::Connection::open(&path).unwrap();
    bulk.execute_batch(&format!(
        "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < {BULK}) \
         INSERT INTO atr_idempotency (scope, key, fingerprint, context, completed_ms, refused, \
         answer) SELECT 'acct_' || (n % 1000), 'bulk-' || n, hex(randomblob(32)), '', 0, \
         0, '{{}}' FROM g; ANALYZE;"
    ))
    .unwrap();
    drop(bulk);
    println!("SQLite: {BULK} keys written in {:.1?}", start.elapsed());
    let full = SqliteLedger::open(&path).unwrap();
    let scope = Scope::principal("acct_7");
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..CALLS {
        ours.push(begin_only(&full, &scope).await);
        theirs.push(begin_only(&empty, &scope).await);
    }
    report(
        "SQLite begin with 1,000,000 keys against an empty ledger",
        ours,
        theirs,
        1.5,
    );
}

async fn postgres_purge(server: &postgres::Postgres) {
    let url = server.database("bench_purge");
    let ledger = Arc::new(
        PostgresLedger::connect(&url)
            .await
            .unwrap()
            .with_retention(Duration::from_secs(24 * 60 * 60)),
    );
    bulk_answered(server, "bench_purge", "old", "now() - interval '2 days'");
    let purging = Arc::new(AtomicBool::new(true));
    let purger = {
        let (ledger, purging) = (Arc::clone(&ledger), Arc::clone(&purging));
        tokio::spawn(async move {
            let start = Instant::now();
            let mut removed = 0;
            loop {
                let batch = ledger.purge(10_000).await.unwrap();
                if batch == 0 {
                    break;
                }
                removed += batch;
            }
            purging.store(false, Ordering::Relaxed);
            (removed, start.elapsed())
        })
    };
    let scope = Scope::principal("acct_7");
    let mut waits = Vec::new();
    while purging.load(Ordering::Relaxed) {
        waits.push(begin_only(&*ledger, &scope).await);
    }
    let (removed, took) = purger.await.unwrap();
    let longest = waits.iter().max().copied().unwrap_or_default();
    let (median, p99) = stats(waits.clone());
    println!(
        "PostgreSQL purge of {removed} expired keys in batches of 10,000 took {took:.1?}; \
         {} begins ran meanwhile: median {median:.0} µs, p99 {p99:.0} µs, longest {:.1} ms \
         (goal under 100 ms: {})",
        waits.len(),
        longest.as_secs_f64() * 1e3,
        if longest < Duration::from_millis(100) {
            "met"
        } else {
            "MISSED"
        }
    );
}
