//! A replay is the cheapest call there is: on PostgreSQL, directly and through PgBouncer, a
//! thousand replays of keys already answered open no connection of their own (the service's
//! pool serves them, as it served the first calls: no backend, no pooler login) and make the
//! server log no error; every replay is the first answer.

use crate::support;

use serde_json::json;
use support::{Scratch, Service};

/// The backends serving `database` now, by process id.
fn backends(server: &support::postgres::Postgres, database: &str) -> String {
    server
        .sql(&format!(
            "SELECT string_agg(pid::text, ',' ORDER BY pid) FROM pg_stat_activity \
             WHERE datname = '{database}'"
        ))
        .trim()
        .to_owned()
}

/// A thousand replays: 100 keys answered, then each replayed ten times on `url`, every
/// replay the first answer byte for byte; `connections` says what connections serve the
/// database before and after the replays, and must say the same.
fn a_thousand_replays(
    server: &support::postgres::Postgres,
    url: &str,
    connections: impl Fn() -> String,
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
    // The same connections serve the replays: none closed, none opened.
    assert_eq!(connections(), before);
    let log = std::fs::read_to_string(server.dir().join("server.log")).unwrap();
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("ERROR")).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    drop(scratch);
}

#[test]
fn a_thousand_replays_on_postgres_open_no_backend_and_log_no_error() {
    let server = support::postgres::Postgres::start();
    let db = server.database("replays");
    a_thousand_replays(&server, &db, || backends(&server, "replays"));
}

/// Through PgBouncer in transaction mode: the service's connections to the pooler are its
/// logins (PgBouncer logs each), and the pooler's to the server its backends.
#[test]
fn a_thousand_replays_through_pgbouncer_log_in_no_client_and_log_no_error() {
    let server = support::postgres::Postgres::start();
    server.database("replays_pooled");
    let bouncer = support::pgbouncer::PgBouncer::transaction_mode(server.port(), 2);
    let logins = || {
        let log = bouncer.log();
        let count = log
            .lines()
            .filter(|line| line.contains("login attempt"))
            .count();
        format!(
            "{count} logins; backends {}",
            backends(&server, "replays_pooled")
        )
    };
    a_thousand_replays(&server, &bouncer.url("replays_pooled"), logins);
    let log = bouncer.log();
    assert!(
        log.contains("login attempt"),
        "PgBouncer logs each login: {log}"
    );
    assert!(!log.contains("ERROR"), "PgBouncer logged errors: {log}");
}
