//! A replay is the cheapest call there is: on PostgreSQL, replaying keys already answered
//! opens no connection of its own (the service's pool serves it, as it served the first
//! calls) and makes the server log no error; every replay is the first answer, and the
//! provider sent each message once.

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

#[test]
fn replays_on_postgres_open_no_connection_and_log_no_error() {
    const KEYS: usize = 40;
    let server = support::postgres::Postgres::start();
    let db = server.database("replays");
    let scratch = Scratch::new("replays-postgres");
    let service = Service::start(&db, &[]);
    let sms = |i: usize| json!({ "to": format!("+1555010{i:04}"), "body": "Your code is 4411" });
    let mut first = Vec::new();
    for i in 0..KEYS {
        let answer = service.call("send_sms", &format!("replay-{i}"), &sms(i));
        assert_eq!(answer.status(), 200);
        first.push(answer.into_body());
    }
    let before = backends(&server, "replays");
    for round in 0..3 {
        for (i, answer) in first.iter().enumerate() {
            let replay = service.call("send_sms", &format!("replay-{i}"), &sms(i));
            assert_eq!(replay.status(), 200, "round {round}");
            assert_eq!(replay.body(), answer, "round {round}");
        }
    }
    // The same backends serve the replays: none closed, none opened.
    assert_eq!(backends(&server, "replays"), before);
    let log = std::fs::read_to_string(server.dir().join("server.log")).unwrap();
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("ERROR")).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    drop(scratch);
}
