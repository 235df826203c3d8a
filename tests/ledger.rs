//! The ledger contract on every store: memory, SQLite, and a real PostgreSQL server that the
//! test starts itself (see `support/postgres.rs`).

#[path = "ledger/conformance.rs"]
mod conformance;
#[cfg(feature = "postgres")]
use crate::pgbouncer;
#[cfg(feature = "postgres")]
use crate::postgres;

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
    let server = postgres::Postgres::start();
    postgres_calls("call", |name| server.database(name)).await;
}

/// The keyed call's contract on PostgreSQL, each check on a database of its own: `made` makes
/// the one named (`<prefix><n>`) and gives the URL its ledger connects at.
#[cfg(feature = "postgres")]
async fn postgres_calls(prefix: &str, made: impl Fn(&str) -> String) {
    use agent_tool_result::replay::PostgresLedger;
    use std::sync::atomic::{AtomicU32, Ordering};
    let count = AtomicU32::new(0);
    conformance::call::run(|lease| {
        let url = made(&format!(
            "{prefix}{}",
            count.fetch_add(1, Ordering::Relaxed)
        ));
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

/// The ledger on a connection it shares with the application keeps the whole contract.
#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_sqlite_ledger_on_a_shared_connection_keeps_the_contract() {
    use agent_tool_result::replay::SqliteLedger;
    use std::sync::Arc;
    let shared = || {
        Arc::new(tokio::sync::Mutex::new(
            rusqlite::Connection::open_in_memory().unwrap(),
        ))
    };
    conformance::run(|lease, retention| async move {
        SqliteLedger::sharing(shared())
            .await
            .unwrap()
            .with_lease(lease)
            .with_retention(retention)
    })
    .await;
    conformance::call::run(|lease| async move {
        SqliteLedger::sharing(shared())
            .await
            .unwrap()
            .with_lease(lease)
    })
    .await;
}

/// The ledger and the application take turns on a shared connection: a begin made while the
/// application holds the connection waits for it (it is not refused; dropped meanwhile, it
/// begins nothing), and a transaction the
/// application left open when it let go is rolled back, its write with it, before the
/// ledger's next statement; the application's own writes, committed, stay.
#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_sqlite_ledger_takes_turns_with_the_application_on_a_shared_connection() {
    use agent_tool_result::replay::{
        Begin, Fingerprint, IdempotencyKey, Ledger, Scope, SqliteLedger,
    };
    use std::sync::Arc;
    let dir = std::env::temp_dir().join(format!("atr-ledger-shared-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let connection = rusqlite::Connection::open(dir.join("app.sqlite")).unwrap();
    let shared = Arc::new(tokio::sync::Mutex::new(connection));
    let ledger = Arc::new(SqliteLedger::sharing(Arc::clone(&shared)).await.unwrap());
    shared
        .lock()
        .await
        .execute_batch("CREATE TABLE sent (id TEXT PRIMARY KEY); INSERT INTO sent VALUES ('kept')")
        .unwrap();
    let (scope, print) = (
        Scope::principal("a"),
        Fingerprint::of("t", "a", &serde_json::json!({})),
    );
    let key = |text: &str| IdempotencyKey::new(text).unwrap();

    // Held by the application: the begin waits, then is made once it lets go.
    let held = shared.lock().await;
    let waiting = {
        let (ledger, scope) = (Arc::clone(&ledger), scope.clone());
        tokio::spawn(async move { ledger.begin(&scope, &key("k1"), print, "c").await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(
        !waiting.is_finished(),
        "the begin waits for the application"
    );
    drop(held);
    assert!(matches!(waiting.await.unwrap().unwrap(), Begin::Fresh(_)));

    // A begin whose caller stops waiting for the connection begins nothing: the key is
    // fresh for the next caller.
    let held = shared.lock().await;
    let dropped = {
        let (ledger, scope) = (Arc::clone(&ledger), scope.clone());
        tokio::spawn(async move { ledger.begin(&scope, &key("k3"), print, "c").await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    dropped.abort();
    assert!(dropped.await.unwrap_err().is_cancelled());
    drop(held);
    assert!(matches!(
        ledger.begin(&scope, &key("k3"), print, "c").await.unwrap(),
        Begin::Fresh(_)
    ));

    // The same for the first of two begins waiting, the one whose turn the second waits on:
    // the second is made all the same.
    let held = shared.lock().await;
    let spawn_begin = |name: &'static str| {
        let (ledger, scope) = (Arc::clone(&ledger), scope.clone());
        tokio::spawn(async move { ledger.begin(&scope, &key(name), print, "c").await })
    };
    let first = spawn_begin("k4");
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let second = spawn_begin("k5");
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    first.abort();
    assert!(first.await.unwrap_err().is_cancelled());
    drop(held);
    let second = tokio::time::timeout(std::time::Duration::from_secs(10), second)
        .await
        .expect("the second begin is made once the first is dropped");
    assert!(matches!(second.unwrap().unwrap(), Begin::Fresh(_)));
    assert!(matches!(
        ledger.begin(&scope, &key("k4"), print, "c").await.unwrap(),
        Begin::Fresh(_)
    ));

    // Left open by the application: rolled back before the ledger's next statement.
    {
        let app = shared.lock().await;
        app.execute_batch("BEGIN IMMEDIATE; INSERT INTO sent VALUES ('left open')")
            .unwrap();
    }
    assert!(matches!(
        ledger.begin(&scope, &key("k2"), print, "c").await.unwrap(),
        Begin::Fresh(_)
    ));
    let app = shared.lock().await;
    assert!(app.is_autocommit());
    let sent: Vec<String> = app
        .prepare("SELECT id FROM sent")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(sent, ["kept"]);
    drop(app);
    let _ = std::fs::remove_dir_all(&dir);
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

/// The ledger's busy handler on a second connection to a file whose write lock the first
/// holds: without a handler the second is refused at once; with it, it waits and takes the
/// lock once the first commits. It gives up after about five seconds of tries.
#[cfg(feature = "sqlite")]
#[test]
fn the_sqlite_ledgers_busy_handler_waits_for_another_connections_write() {
    use agent_tool_result::replay::SqliteLedger;
    let dir = std::env::temp_dir().join(format!("atr-ledger-busy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("busy.sqlite");
    let open = || {
        let connection = rusqlite::Connection::open(&path).unwrap();
        connection
            .pragma_update(None, "journal_mode", "WAL")
            .unwrap();
        connection
    };
    let (first, second) = (open(), open());
    first.execute_batch("CREATE TABLE t (n INTEGER)").unwrap();
    first.execute_batch("BEGIN IMMEDIATE").unwrap();
    second.busy_handler(None).unwrap();
    let refused = second.execute_batch("BEGIN IMMEDIATE").unwrap_err();
    assert_eq!(
        refused.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy)
    );
    second
        .busy_handler(Some(SqliteLedger::busy_handler))
        .unwrap();
    let committed = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(30));
        first
            .execute_batch("INSERT INTO t VALUES (1); COMMIT")
            .unwrap();
    });
    second
        .execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (2); COMMIT")
        .unwrap();
    committed.join().unwrap();
    let count: i64 = second
        .query_row("SELECT count(*) FROM t", [], |row| row.get(0))
        .unwrap();
    assert_eq!(count, 2);
    assert!(SqliteLedger::busy_handler(0));
    assert!(!SqliteLedger::busy_handler(5_000));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The conformance suite on `server`, each check on a database of its own (so that a purge
/// counts only its own keys), reached at the URL `reach` gives for its name.
#[cfg(feature = "postgres")]
async fn postgres_conformance(server: &postgres::Postgres, reach: impl Fn(&str) -> String) {
    use agent_tool_result::replay::PostgresLedger;
    use std::sync::atomic::{AtomicU32, Ordering};
    let made = AtomicU32::new(0);
    conformance::run(|lease, retention| {
        let name = format!("check{}", made.fetch_add(1, Ordering::Relaxed));
        server.database(&name);
        let url = reach(&name);
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

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_postgres_ledger_keeps_the_contract() {
    let server = postgres::Postgres::start();
    let port = server.port();
    postgres_conformance(&server, |name| {
        format!("postgres://postgres@127.0.0.1:{port}/{name}")
    })
    .await;
}

/// A role that may only read and write the ledger's table (no `CREATE` in the schema, as
/// PostgreSQL 15 gives no role by default): its connect fails, saying why, until the table's
/// owner has made the ledger with [`PostgresLedger::SCHEMA`]; then it connects (writing
/// nothing: it could not) and keeps the keyed call's contract.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_role_that_may_only_read_and_write_the_ledger_connects_once_its_owner_made_it() {
    use agent_tool_result::replay::PostgresLedger;
    let server = postgres::Postgres::start();
    let port = server.port();
    server.sql("CREATE ROLE atr_app LOGIN");
    let database = |name: &str| {
        server.database(name);
        server.sql_in(name, "REVOKE CREATE ON SCHEMA public FROM PUBLIC");
        format!("postgres://atr_app@127.0.0.1:{port}/{name}")
    };
    let err = PostgresLedger::connect(&database("unmade"))
        .await
        .expect_err("a role that may not create connects to no ledger");
    let mut why = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(cause) = source {
        why = format!("{why}: {cause}");
        source = cause.source();
    }
    assert!(why.contains("permission denied for schema public"), "{why}");

    postgres_calls("least", |name| {
        let url = database(name);
        server.sql_in(name, PostgresLedger::SCHEMA);
        server.sql_in(
            name,
            "GRANT SELECT, INSERT, UPDATE, DELETE ON atr_idempotency TO atr_app; \
             GRANT USAGE ON SEQUENCE atr_fence TO atr_app",
        );
        url
    })
    .await;
}

/// A ledger an earlier release made (no fence, no provisional mark, a B-tree on when keys were
/// answered, a column since dropped from use): the first connect brings it up to date, and a
/// key it answered replays that answer; a function dropped since is made again at the next
/// connect.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_earlier_releases_ledger_is_brought_up_to_date_and_its_answers_replay() {
    use agent_tool_result::replay::{
        Begin, Fingerprint, IdempotencyKey, Ledger, PostgresLedger, Scope,
    };
    let server = postgres::Postgres::start();
    let url = server.database("earlier");
    let print = Fingerprint::of("send_sms", "acct_1", &serde_json::json!({ "to": "+1555" }));
    let answer =
        r#"{"isError":false,"decision":"allow","policy":{"retryable":false},"effect":"committed"}"#;
    server.sql_in(
        "earlier",
        &format!(
            "CREATE TABLE atr_idempotency (scope text NOT NULL, key text NOT NULL, \
                 fingerprint text NOT NULL, context text NOT NULL, \
                 claims integer NOT NULL DEFAULT 0, owner text, lease_until timestamptz, \
                 completed_at timestamptz, refused boolean, answer text, \
                 PRIMARY KEY (scope, key)); \
             CREATE INDEX atr_idempotency_completed ON atr_idempotency (completed_at) \
                 WHERE completed_at IS NOT NULL; \
             INSERT INTO atr_idempotency (scope, key, fingerprint, context, completed_at, \
                 refused, answer) \
             VALUES ('acct_1', 'k1', '{}', '', now(), false, '{answer}')",
            print.to_hex()
        ),
    );
    let begin = async || {
        let ledger = PostgresLedger::connect(&url).await.unwrap();
        let key = IdempotencyKey::new("k1").unwrap();
        ledger
            .begin(&Scope::principal("acct_1"), &key, print, "")
            .await
            .unwrap()
    };
    match begin().await {
        Begin::Replay(stored) => assert_eq!(stored.json(), answer),
        other => panic!("the earlier answer is not replayed: {other:?}"),
    }
    let brought = server.sql_in(
        "earlier",
        "SELECT to_regclass('atr_idempotency_completed') IS NULL, \
             to_regclass('atr_idempotency_completed_brin') IS NOT NULL, \
             (SELECT count(*) FROM information_schema.columns \
              WHERE table_name = 'atr_idempotency' AND column_name IN ('fence', 'provisional'))",
    );
    assert_eq!(brought, "t|t|2");
    server.sql_in(
        "earlier",
        "DROP FUNCTION atr_begin_v1(text[], text[], text[], text[], bigint)",
    );
    assert!(matches!(begin().await, Begin::Replay(_)));
}

/// The same contract through PgBouncer in transaction mode, with fewer server connections than
/// the ledger's pool holds: each statement, and each transaction, may run on another server
/// connection than the last, so nothing may rest on a session's state or a named prepared
/// statement.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_postgres_ledger_keeps_the_contract_through_pgbouncer_in_transaction_mode() {
    let server = postgres::Postgres::start();
    let bouncer = pgbouncer::PgBouncer::transaction_mode(server.port(), 2);
    postgres_conformance(&server, |name| bouncer.url(name)).await;
    server.database("pooled_load");
    many_calls_at_once(&bouncer.url("pooled_load")).await;
    let log = bouncer.log();
    assert!(!log.contains("ERROR"), "PgBouncer logged errors: {log}");
}

/// 256 keys begun, answered and replayed at once by a ledger of 8 connections, which the
/// pooler spreads over its 2 server connections: each key runs once and replays its answer.
#[cfg(feature = "postgres")]
async fn many_calls_at_once(url: &str) {
    use agent_tool_result::guarantee::{Answer, GuaranteeResult};
    use agent_tool_result::replay::{
        Begin, Completion, DEFAULT_TIMEOUT, Fingerprint, IdempotencyKey, Ledger, PostgresLedger,
        Scope, StoredAnswer,
    };
    let pool = PostgresLedger::pool(url, 8, DEFAULT_TIMEOUT).unwrap();
    let ledger = std::sync::Arc::new(PostgresLedger::from_pool(pool).await.unwrap());
    let calls = (0..256).map(|n| {
        let ledger = std::sync::Arc::clone(&ledger);
        tokio::spawn(async move {
            let scope = Scope::principal(format!("acct_{}", n % 4));
            let key = IdempotencyKey::new(format!("key-{n}")).unwrap();
            let print = Fingerprint::of("send_sms", scope.as_str(), &serde_json::json!({ "n": n }));
            let note = GuaranteeResult::committed()
                .with_fields(serde_json::json!({ "n": n }))
                .unwrap();
            let stored = StoredAnswer::of(&Answer::from(note)).unwrap();
            let Begin::Fresh(lease) = ledger.begin(&scope, &key, print, "").await.unwrap() else {
                panic!("key {n} is new");
            };
            assert!(matches!(
                ledger.complete(&lease, &stored).await.unwrap(),
                Completion::Recorded
            ));
            match ledger.begin(&scope, &key, print, "").await.unwrap() {
                Begin::Replay(replayed) => assert_eq!(replayed.json(), stored.json()),
                other => panic!("key {n} replays its answer, not {other:?}"),
            }
        })
    });
    for call in calls.collect::<Vec<_>>() {
        call.await.expect("every call answered as it should");
    }
}
