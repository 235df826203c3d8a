//! The SQLite ledger's begin + complete round trip against a plain `INSERT` of the same row
//! in the same database, side by side. Run with `cargo bench --bench replay --features
//! sqlite` and compare `ledger_round_trip` with `plain_insert`.

use std::sync::atomic::{AtomicU64, Ordering};

use agent_tool_result::replay::{
    Begin, Fingerprint, IdempotencyKey, Ledger, Scope, SqliteLedger, StoredResponse,
};
use divan::Bencher;

fn main() {
    divan::main();
    let _ = std::fs::remove_dir_all(dir());
}

fn dir() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("atr-bench-replay-{}", std::process::id()))
}

static NEXT: AtomicU64 = AtomicU64::new(0);

fn path(name: &str) -> std::path::PathBuf {
    let dir = dir();
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn response() -> StoredResponse {
    StoredResponse::new(
        202,
        vec![("content-type".into(), "application/json".into())],
        br#"{"schemaVersion":1,"settlement":{"state":"committed"},"policy":{"decision":"defer","code":"campaign_hold"}}"#.to_vec(),
    )
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[divan::bench]
fn ledger_round_trip(bencher: Bencher) {
    let ledger = SqliteLedger::open(path("ledger.sqlite")).unwrap();
    let print = Fingerprint::of(
        "send_campaign_batch",
        "acct",
        &serde_json::json!({ "n": 1 }),
    );
    let (runtime, scope, stored) = (runtime(), Scope::principal("acct"), response());
    bencher.bench(|| {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let key = IdempotencyKey::new(format!("key-{n}")).unwrap();
        runtime.block_on(async {
            let Begin::Fresh(lease) = ledger.begin(&scope, &key, print, "").await.unwrap() else {
                panic!("a new key is fresh");
            };
            let _ = ledger.complete(&lease, &stored).await.unwrap();
        });
    });
}

#[divan::bench]
fn plain_insert(bencher: Bencher) {
    // The same database settings and the same row, written once with no checks.
    let _ = SqliteLedger::open(path("plain.sqlite")).unwrap();
    let connection = rusqlite::Connection::open(path("plain.sqlite")).unwrap();
    connection
        .execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;")
        .unwrap();
    let print = Fingerprint::of(
        "send_campaign_batch",
        "acct",
        &serde_json::json!({ "n": 1 }),
    );
    let body = response().body().to_vec();
    // Behind a mutex, as the ledger's own connection is.
    let connection = std::sync::Mutex::new(connection);
    bencher.bench(|| {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        connection
            .lock()
            .unwrap()
            .execute(
                "INSERT INTO atr_idempotency (scope, key, fingerprint, context, completed_ms, \
                 status, headers, body) \
                 VALUES ('acct', ?1, ?2, '', 0, 202, '[[\"content-type\",\"application/json\"]]', ?3)",
                rusqlite::params![format!("key-{n}"), print.to_hex(), body],
            )
            .unwrap();
    });
}
