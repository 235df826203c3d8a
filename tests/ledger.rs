//! The ledger contract on every store: memory, SQLite, and a real PostgreSQL server that the
//! test starts itself (see `support/postgres.rs`).

#[path = "support/answers.rs"]
mod answers;
#[path = "ledger/conformance.rs"]
mod conformance;
#[cfg(feature = "postgres")]
#[path = "support/postgres.rs"]
mod postgres;

use agent_tool_result::replay::MemoryLedger;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_keyed_call_on_the_memory_ledger_answers_what_the_key_keeps() {
    conformance::call::run(|lease| async move { MemoryLedger::new().with_lease(lease) }).await;
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_keyed_call_on_the_sqlite_ledger_answers_what_the_key_keeps() {
    use agent_tool_result::replay::SqliteLedger;
    conformance::call::run(|lease| async move {
        SqliteLedger::open_in_memory().unwrap().with_lease(lease)
    })
    .await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_keyed_call_on_the_postgres_ledger_answers_what_the_key_keeps() {
    use agent_tool_result::replay::PostgresLedger;
    use std::sync::atomic::{AtomicU32, Ordering};
    let server = postgres::Postgres::start();
    let made = AtomicU32::new(0);
    conformance::call::run(|lease| {
        let url = server.database(&format!("call{}", made.fetch_add(1, Ordering::Relaxed)));
        async move {
            PostgresLedger::connect(&url)
                .await
                .unwrap()
                .with_lease(lease)
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_memory_ledger_keeps_the_contract() {
    conformance::run(|lease, retention| async move {
        MemoryLedger::new()
            .with_lease(lease)
            .with_retention(retention)
    })
    .await;
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_sqlite_ledger_keeps_the_contract() {
    use agent_tool_result::replay::SqliteLedger;
    conformance::run(|lease, retention| async move {
        SqliteLedger::open_in_memory()
            .unwrap()
            .with_lease(lease)
            .with_retention(retention)
    })
    .await;
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_sqlite_ledger_keeps_its_keys_in_its_file() {
    use agent_tool_result::replay::{
        Begin, Fingerprint, IdempotencyKey, Ledger, Scope, SqliteLedger,
    };
    let dir = std::env::temp_dir().join(format!("atr-ledger-file-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ledger.sqlite");
    let (scope, key) = (Scope::principal("a"), IdempotencyKey::new("k").unwrap());
    let print = Fingerprint::of("t", "a", &serde_json::json!({}));
    {
        let ledger = SqliteLedger::open(&path).unwrap();
        assert!(matches!(
            ledger.begin(&scope, &key, print, "c").await.unwrap(),
            Begin::Fresh(_)
        ));
    }
    // Another process (here, another ledger on the file) sees the key in flight.
    let other = SqliteLedger::open(&path).unwrap();
    assert!(matches!(
        other.begin(&scope, &key, print, "c").await.unwrap(),
        Begin::InFlight { .. }
    ));
    drop(other);
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_postgres_ledger_keeps_the_contract() {
    use agent_tool_result::replay::PostgresLedger;
    use std::sync::atomic::{AtomicU32, Ordering};
    let server = postgres::Postgres::start();
    let made = AtomicU32::new(0);
    conformance::run(|lease, retention| {
        // Each check on a database of its own, so that a purge counts only its own keys.
        let url = server.database(&format!("check{}", made.fetch_add(1, Ordering::Relaxed)));
        async move {
            PostgresLedger::connect(&url)
                .await
                .unwrap()
                .with_lease(lease)
                .with_retention(retention)
        }
    })
    .await;
}
