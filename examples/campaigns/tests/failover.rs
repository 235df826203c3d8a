//! The database fails under three running processes, mid-batch, and comes back; no process is
//! restarted by the test.
//!
//! - PostgreSQL restarted as a crash would (`pg_ctl restart -m immediate`): ten rounds.
//! - Every session of the service's database ended (`pg_terminate_backend`): ten rounds.
//!
//! In every round fresh SMS keys are sent to each process, one after another, from just before
//! the database fails until just after it is back: each is answered `unavailable` (503,
//! `Retry-After`), or runs, or is in flight; sent again after the outage it succeeds,
//! `committed` (or `unknown` only with its send made), and it is sent once. Every process serves a fresh key within five seconds of
//! the database being back. The batch cut by the outage answers the same from every process,
//! `committed` or `unknown`, and `unknown` only for an operation that took effect; its
//! campaign is sent in full, each recipient once.

use crate::support;

use crate::support::postgres;

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use agent_tool_result::guarantee::{RefusalKind, SettlementState};
use agent_tool_result::http::{RestOutcome, classify};
use postgres::Postgres;
use serde_json::{Value, json};
use support::provider::{Provider, Rounds, nobody_sent_twice};
use support::{Service, answered_everywhere};

/// One fault test at a time: their timings are the point.
static SERIAL: Mutex<()> = Mutex::new(());

/// Statements bounded at half the lease.
const FLAGS: [&str; 10] = support::fault_flags("500");
const BATCH: usize = 30;

/// What a round's outage keys came to.
#[derive(Default, Debug)]
struct Tally {
    /// Fresh SMS keys sent around the outage.
    keys: usize,
    /// Of those, answered 503 (the others ran, or were in flight).
    unavailable: usize,
    /// Batches that answered 503 (the outage cut them; the same key answered after).
    batch_unavailable: usize,
    /// Answered `unknown` in the end (each with a send of its own).
    unknown: usize,
    /// Batch keys answered `unknown` (each with its campaign sent).
    batch_unknown: usize,
}

/// One SMS key sent while the database failed: which process, the key, its arguments, and
/// the status it was first answered with.
type Sent = (usize, String, Value, u16);

/// Sends fresh SMS keys to each process, one after another, until `done`: what each was
/// first answered (a 503 checked to be the `unavailable` refusal with `Retry-After`).
fn traffic(services: &[Service], round: usize, tag: &str, done: &AtomicBool) -> Vec<Sent> {
    thread::scope(|scope| {
        let senders: Vec<_> = services
            .iter()
            .enumerate()
            .map(|(i, service)| {
                scope.spawn(move || {
                    let mut sent = Vec::new();
                    while !done.load(Ordering::SeqCst) {
                        let n = sent.len();
                        let key = format!("{tag}-{round}-{i}-{n}");
                        let sms =
                            json!({ "to": format!("+1559{round:03}{i:02}{n:04}"), "body": key });
                        let response = service.call("send_sms", &key, &sms);
                        let status = response.status().as_u16();
                        if status == 503 {
                            assert!(response.headers().get("retry-after").is_some(), "{key}");
                            let RestOutcome::Refused { refusal, .. } = classify(&response) else {
                                panic!("{key}: {response:?}")
                            };
                            assert_eq!(refusal.kind(), RefusalKind::Unavailable, "{key}");
                        } else {
                            assert!(
                                [200, 409].contains(&status),
                                "{key}: {status} {}",
                                String::from_utf8_lossy(response.body())
                            );
                        }
                        sent.push((i, key, sms, status));
                        thread::sleep(Duration::from_millis(10));
                    }
                    sent
                })
            })
            .collect();
        senders
            .into_iter()
            .flat_map(|sender| sender.join().unwrap())
            .collect()
    })
}

/// Every process serves a fresh key within five seconds of the database being back.
fn served_within_five_seconds(services: &[Service], round: usize, tag: &str) {
    let back = Instant::now();
    for (i, service) in services.iter().enumerate() {
        let key = format!("{tag}-back-{round}-{i}");
        let sms = json!({ "to": format!("+1559{round:03}{i:02}1"), "body": key });
        loop {
            let status = service.call("send_sms", &key, &sms).status();
            if status == 200 {
                break;
            }
            assert!(
                back.elapsed() < Duration::from_secs(5),
                "process {i} still answers {status} {:?} after the database came back",
                back.elapsed()
            );
            thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Runs `rounds` rounds of `outage` (which returns once the database is back) under a batch
/// on three processes; returns the tally.
fn rounds_of(server: &Postgres, url: &str, tag: &str, outage: impl Fn(&Postgres) + Sync) -> Tally {
    let services: Vec<Service> = (0..3).map(|_| Service::start(url, &FLAGS)).collect();
    let pids: Vec<u32> = services.iter().map(Service::pid).collect();
    let provider = Provider::connect(url);
    let mut rounds = Rounds::new(tag);
    let mut tally = Tally::default();
    for round in 0..10 {
        let key = format!("{tag}-{round}");
        let recipients: Vec<String> = (0..BATCH)
            .map(|i| format!("+1558{round:03}{i:05}"))
            .collect();
        let batch = json!({ "recipients": recipients, "message": key });
        let before = provider.sends().len();
        let request = services[rounds.index(3)].batch_in_background(&key, &batch);
        provider.until(before + 1 + rounds.index(20));
        // Fresh keys from just before the database fails until just after it is back.
        let done = AtomicBool::new(false);
        let during = thread::scope(|scope| {
            let sending = scope.spawn(|| traffic(&services, round, tag, &done));
            thread::sleep(Duration::from_millis(100));
            outage(server);
            thread::sleep(Duration::from_millis(100));
            done.store(true, Ordering::SeqCst);
            sending.join().unwrap()
        });
        served_within_five_seconds(&services, round, tag);
        let first = request.join().unwrap();
        tally.batch_unavailable += usize::from(first.as_ref().is_some_and(|f| f.status == 503));

        // Each key, sent again: committed (or unknown with its send), sent once.
        for (i, key, sms, status) in during {
            tally.keys += 1;
            tally.unavailable += usize::from(status == 503);
            let again = services[i].call_after_lease("send_sms", &key, &sms);
            let RestOutcome::Settled(result) = classify(&again) else {
                panic!("{key}: {again:?}")
            };
            let message = support::named(&result, "messageId");
            let sends = provider.sends();
            let of_message = sends.iter().filter(|(_, m, ..)| *m == message).count();
            match result.settlement() {
                SettlementState::Committed => {}
                SettlementState::Unknown => tally.unknown += 1,
                SettlementState::NotStarted => panic!("{key}: not started"),
            }
            assert_eq!(of_message, 1, "{key}: sent once, whatever it answered");
        }
        // The batch: the same answer everywhere; sent in full, each recipient once.
        let (id, settlement) = answered_everywhere(&services, &key, &batch, round, first.as_ref());
        tally.batch_unknown += usize::from(settlement == SettlementState::Unknown);
        services[rounds.index(3)].lookup_until(&id, |status| {
            status["counts"]["sent"] == BATCH && status["counts"]["sending"] == 0
        });
        let sends = provider.sends();
        nobody_sent_twice(&sends);
        assert_eq!(sends.iter().filter(|(c, ..)| *c == id).count(), BATCH);
    }
    // The same processes throughout.
    assert_eq!(services.iter().map(Service::pid).collect::<Vec<_>>(), pids);
    let messages: HashSet<String> = provider
        .sends()
        .into_iter()
        .filter(|(_, m, ..)| !m.is_empty())
        .map(|(_, m, ..)| m)
        .collect();
    assert_eq!(
        messages.len(),
        tally.keys + 10 * 3,
        "every SMS key sent once"
    );
    eprintln!("{tag}: {tally:?}");
    tally
}

#[test]
fn a_database_restarted_mid_batch_burns_no_key_and_sends_nobody_twice() {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let server = Postgres::start();
    let url = server.database("campaigns_restart");
    let tally = rounds_of(&server, &url, "restart", Postgres::restart_immediate);
    assert!(tally.unavailable > 0, "the outage was hit: {tally:?}");
}

#[test]
fn sessions_terminated_mid_batch_burn_no_key_and_send_nobody_twice() {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let server = Postgres::start();
    let url = server.database("campaigns_terminate");
    rounds_of(&server, &url, "terminate", |server| {
        assert!(server.terminate_backends("campaigns_terminate") > 0);
    });
}
