//! A replay is the cheapest call there is: on PostgreSQL, directly and through PgBouncer, a
//! thousand replays of keys already answered throw no connection away (every backend that
//! served the first calls still serves, and the service never opened more connections, as
//! the server or the pooler counts its logins, than it keeps) and make the server log no
//! error; every replay is the first answer.

use crate::support;

use std::collections::BTreeSet;

use serde_json::json;
use support::{Scratch, Service};

/// The most PostgreSQL connections a service keeps: its pool's (`--db-connections`, 8 by
/// default) and its stand-in provider's 4.
const POOL: usize = 8 + 4;

/// The backends serving `database` now, by process id.
fn backends(server: &support::postgres::Postgres, database: &str) -> BTreeSet<u32> {
    server
        .sql(&format!(
            "SELECT pid FROM pg_stat_activity WHERE datname = '{database}'"
        ))
        .lines()
        .map(|pid| pid.trim().parse().expect("a process id"))
        .collect()
}

/// The connections serving the service.
#[derive(Debug)]
struct Connections {
    /// The server's backends for the database now, by process id.
    open: BTreeSet<u32>,
    /// How many connections the service has opened so far, those closed since included.
    opened: usize,
}

/// A thousand replays: 100 keys answered, then each replayed ten times on `url`, every
/// replay the first answer byte for byte; `connections` says what connections serve the
/// service before and after the replays. No backend open before is closed after, and the
/// service never opened more than it keeps: its pool may grow while its own background work
/// (settling, its durability check) runs beside a call, but no replay replaced a connection.
fn a_thousand_replays(
    server: &support::postgres::Postgres,
    url: &str,
    connections: impl Fn() -> Connections,
) {
    const KEYS: usize = 100;
    const ROUNDS: usize = 10;
    let scratch = Scratch::new("replays-postgres");
    let service = Service::start(url, &[]);
    let sms = |i: usize| json!({ "to": format!("+1555010{i:04}"), "body": "Your code is 4411" });
    let mut first = Vec::new();
    for i in 0..KEYS {
        let answer = service.call("send_sms", &format!("replay-{i}"), &sms(i));
        assert_eq!(answer.status(), 200);
        first.push(answer.into_body());
    }
    let before = connections();
    for round in 0..ROUNDS {
        for (i, answer) in first.iter().enumerate() {
            let replay = service.call("send_sms", &format!("replay-{i}"), &sms(i));
            assert_eq!(replay.status(), 200, "round {round}");
            assert_eq!(replay.body(), answer, "round {round}");
        }
    }
    let after = connections();
    assert!(
        after.open.is_superset(&before.open) && after.opened <= POOL,
        "before the replays {before:?}, after {after:?}"
    );
    let log = std::fs::read_to_string(server.dir().join("server.log")).unwrap();
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("ERROR")).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    drop(scratch);
}

#[test]
fn a_thousand_replays_on_postgres_open_no_backend_and_log_no_error() {
    let server = support::postgres::Postgres::start();
    let db = server.database("replays");
    // The server logs each connection it authorizes, from the next one on.
    server.sql("ALTER SYSTEM SET log_connections = on");
    server.sql("SELECT pg_reload_conf()");
    while server.sql("SHOW log_connections").trim() != "on" {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let log = server.dir().join("server.log");
    a_thousand_replays(&server, &db, || {
        let log = std::fs::read_to_string(&log).unwrap();
        let opened = log
            .lines()
            .filter(|line| {
                line.contains("connection authorized")
                    && line
                        .split_whitespace()
                        .any(|word| word == "database=replays")
            })
            .count();
        Connections {
            open: backends(&server, "replays"),
            opened,
        }
    });
}

/// Through PgBouncer in transaction mode: the service's connections to the pooler are its
/// logins (PgBouncer logs each), and the pooler's to the server its backends.
#[test]
fn a_thousand_replays_through_pgbouncer_log_in_no_client_and_log_no_error() {
    let server = support::postgres::Postgres::start();
    server.database("replays_pooled");
    let bouncer = support::pgbouncer::PgBouncer::transaction_mode(server.port(), 2);
    let logins = || Connections {
        open: backends(&server, "replays_pooled"),
        opened: bouncer
            .log()
            .lines()
            .filter(|line| line.contains("login attempt"))
            .count(),
    };
    a_thousand_replays(&server, &bouncer.url("replays_pooled"), logins);
    let log = bouncer.log();
    assert!(
        log.contains("login attempt"),
        "PgBouncer logs each login: {log}"
    );
    assert!(!log.contains("ERROR"), "PgBouncer logged errors: {log}");
}
