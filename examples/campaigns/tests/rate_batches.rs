//! One account's rate limit when its calls come fast, on three processes sharing one
//! PostgreSQL database: each process counts a batch of the account's calls at a time (one
//! statement for many calls), never admits more than the limit, holds at most a batch it does
//! not use (and hands it back once it has held it long enough), and counts by a limit changed
//! while it runs from its next count on.

use crate::support;

use crate::support::pgbouncer;
use crate::support::postgres;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use campaigns::limits::{HOLD, batch_cap};
use pgbouncer::PgBouncer;
use postgres::Postgres;
use serde_json::json;
use support::Service;
use support::provider::Provider;

/// The limit's window in these tests: long enough that no call is restored while one runs (a
/// call of a limit of 480 takes 150 s to be restored).
const WINDOW_SECS: u64 = 72_000;

/// Three processes on `url`, each limiting account `acct_a` to `calls` per [`WINDOW_SECS`].
fn three_limited(url: &str, calls: u32) -> Vec<Service> {
    let (calls, window) = (calls.to_string(), WINDOW_SECS.to_string());
    let flags = [
        "--token",
        "acct_a=token-a",
        "--rate-limit",
        &calls,
        "--rate-window-secs",
        &window,
        support::AMPLE_STATEMENTS[0],
        support::AMPLE_STATEMENTS[1],
    ];
    (0..3).map(|_| Service::start(url, &flags)).collect()
}

/// Sends one `send_sms` call of the account's to `service` under a key of its own: its
/// status, 200 (admitted and sent) or 429 (refused, nothing sent); anything else fails.
fn call(service: &Service, key: &str) -> u16 {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let sms = json!({ "to": format!("+1557{n:07}"), "body": "Your code is 4411" });
    let answer = service.call_as("token-a", "send_sms", key, &sms);
    let status = answer.status().as_u16();
    assert!(
        status == 200 || status == 429,
        "{key}: {status} {}",
        String::from_utf8_lossy(answer.body())
    );
    status
}

/// `calls` calls sent by `clients` clients at once to `services` in turn: how many were
/// admitted.
fn burst(services: &[&Service], calls: usize, clients: usize, name: &str) -> usize {
    let next = AtomicUsize::new(0);
    let admitted = AtomicUsize::new(0);
    thread::scope(|scope| {
        for _ in 0..clients {
            scope.spawn(|| {
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if n >= calls {
                        break;
                    }
                    let service = services[n % services.len()];
                    if call(service, &format!("{name}-{n}")) == 200 {
                        admitted.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    admitted.into_inner()
}

/// Calls `service` one at a time until it refuses: how many it admitted first.
fn until_refused(service: &Service, name: &str) -> usize {
    (0..100_000)
        .find(|n| call(service, &format!("{name}-{n}")) == 429)
        .expect("a refusal within the limit")
}

/// How many times the count's statement ran on `database` of `server`.
fn counts_made(server: &Postgres, database: &str) -> usize {
    server
        .sql_in(
            database,
            "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements \
             WHERE query LIKE 'UPDATE rate_counts%'",
        )
        .trim()
        .parse()
        .expect("a count")
}

/// 360 calls of one account from 24 clients at once over three processes, with a limit of 480
/// per window: all admitted, counted in batches (a statement for four calls or more); then
/// 240 more, and every process called until it refuses: exactly 480 admitted between them,
/// and 480 sent.
#[test]
fn a_busy_account_is_counted_in_batches_and_admits_exactly_its_limit() {
    let server = Postgres::start_as_deployed();
    let url = server.database("campaigns_batches");
    server.sql_in("campaigns_batches", "CREATE EXTENSION pg_stat_statements");
    let services = three_limited(&url, 480);
    let provider = Provider::connect(&url);
    let all: Vec<&Service> = services.iter().collect();

    // 360, with at most three batches held unused (3 x 29 below 120): all admitted.
    assert!(3 * (batch_cap(480) as usize - 1) < 120);
    let before = counts_made(&server, "campaigns_batches");
    assert_eq!(burst(&all, 360, 24, "first"), 360);
    let counts = counts_made(&server, "campaigns_batches") - before;
    assert!(counts * 4 <= 360, "{counts} counts for 360 calls");

    // Past the limit: some refused while others hold calls; never more than the limit.
    let more = burst(&all, 240, 24, "more");
    assert!(360 + more <= 480, "{more}");
    // Each process's held calls go back with its next count once held for HOLD: called in
    // turn until each refuses, the processes admit the rest of the limit, and no more.
    thread::sleep(HOLD + Duration::from_millis(100));
    let mut rest = 0;
    for (i, service) in services.iter().chain(&services).enumerate() {
        rest += until_refused(service, &format!("rest-{i}"));
    }
    assert_eq!(360 + more + rest, 480, "{more} + {rest}");
    assert_eq!(provider.sends().len(), 480);
}

/// A limit of 64 (batches of four at most): one process busy with four clients at once, then
/// another called until it refuses. Between them they admitted the limit less what the first
/// still holds, three calls at most; once it has held them for HOLD, the first admits exactly
/// those with its next calls, and the limit is whole: 64. The same through PgBouncer.
fn held_calls_are_a_batch_at_most_and_go_back(url: &str) {
    let services = three_limited(url, 64);
    let cap = batch_cap(64) as usize;
    assert_eq!(cap, 4);
    let busy = burst(&[&services[0]], 40, 4, "busy");
    assert_eq!(busy, 40);
    let other = until_refused(&services[1], "other");
    let held = 64 - (busy + other);
    assert!(held < cap, "{held} held by the busy process");
    assert_eq!(call(&services[2], "third"), 429);
    // Not back before the busy process counts again.
    thread::sleep(HOLD + Duration::from_millis(100));
    assert_eq!(call(&services[1], "other-again"), 429);
    assert_eq!(until_refused(&services[0], "busy-again"), held);
    for (i, service) in services.iter().enumerate() {
        assert_eq!(call(service, &format!("after-{i}")), 429);
    }
}

#[test]
fn held_calls_are_a_batch_at_most_and_go_back_directly() {
    let server = Postgres::start();
    held_calls_are_a_batch_at_most_and_go_back(&server.database("campaigns_held"));
}

#[test]
fn held_calls_are_a_batch_at_most_and_go_back_through_pgbouncer() {
    let server = Postgres::start();
    server.database("campaigns_held_pooled");
    let bouncer = PgBouncer::transaction_mode(server.port(), 2);
    held_calls_are_a_batch_at_most_and_go_back(&bouncer.url("campaigns_held_pooled"));
    let log = bouncer.log();
    assert!(!log.contains("ERROR"), "PgBouncer logged errors: {log}");
}

/// Three processes limited to 1,000 calls, each busy with a batch in hand; the account's limit
/// set to 30 while they run (60 made): once HOLD has passed, every process refuses the
/// account's next call under the new limit, for one call's restoring time at most; the setting
/// removed, every process admits again under its own.
#[test]
fn a_limit_changed_while_the_service_runs_reaches_every_process_within_hold() {
    let server = Postgres::start();
    let url = server.database("campaigns_lowered");
    let services = three_limited(&url, 1000);
    for (i, service) in services.iter().enumerate() {
        assert_eq!(burst(&[service], 20, 4, &format!("busy-{i}")), 20);
    }
    server.sql_in(
        "campaigns_lowered",
        "INSERT INTO rate_settings (account, calls) VALUES ('acct_a', 30)",
    );
    thread::sleep(HOLD + Duration::from_millis(100));
    for (i, service) in services.iter().enumerate() {
        let sms = json!({ "to": format!("+1558000000{i}"), "body": "Your code is 4411" });
        let refused = service.call_as("token-a", "send_sms", &format!("lowered-{i}"), &sms);
        let wait = support::assert_rate_limited(
            &refused,
            &format!(r#""per-account";q=30;w={WINDOW_SECS}"#),
            Duration::from_secs(WINDOW_SECS),
        );
        // One call of the new limit restores in 2,400 s: the refusal waits no longer (its
        // Retry-After counts whole seconds, rounded up, and its HTTP-date names a whole
        // second: two seconds more at most).
        assert!(wait <= Duration::from_secs(2_402), "{wait:?}");
    }
    server.sql_in(
        "campaigns_lowered",
        "DELETE FROM rate_settings WHERE account = 'acct_a'",
    );
    for (i, service) in services.iter().enumerate() {
        assert_eq!(call(service, &format!("raised-{i}")), 200);
    }
}
