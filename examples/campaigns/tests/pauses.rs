//! Processes paused and cut off past their leases, then let go on: nobody is sent twice.
//!
//! - Three processes on one PostgreSQL: twenty rounds, each SIGSTOPs the process serving a
//!   batch of thirty part way through it, for longer than its lease, then SIGCONTs it. The
//!   others settle its claims and send the rest meanwhile; the resumed process (its request
//!   and its background task both) finds its fences stale.
//! - One process on SQLite: ten rounds of the same; the resumed process's background task and
//!   its own request path race for the same recipients.
//! - A partition: one of three processes reaches PostgreSQL through a TCP proxy the test
//!   freezes (both directions) for longer than the lease mid-batch, then thaws: ten rounds.
//!   Its statements are bounded by more than the cut, so what it sent lands after it, and
//!   it goes on with its batch as a process that never noticed would.
//!
//! After every round the key answers the same from every process, the campaign is sent in
//! full, and no recipient is in the provider's log twice.
//!
//! The three run side by side, each on a server of its own: what they promise holds whatever
//! else the machine is doing (a process starved of CPU past its lease is one more pause).

use crate::support;

use crate::support::postgres;

use std::path::Path;
use std::thread;
use std::time::Duration;

use postgres::Postgres;
use serde_json::{Value, json};
use support::provider::{Provider, Rounds, Send, nobody_sent_twice};
use support::proxy::Proxy;
use support::{Scratch, Service, answered_everywhere, fault_flags};

/// Statements bounded at half the lease.
const FLAGS: [&str; 10] = fault_flags("500");

/// How long a fault lasts: past the lease, by 100 to 900 milliseconds, so that it ends at
/// any point of the others' settling and sending what the paused process held.
fn fault(rounds: &mut Rounds) -> Duration {
    Duration::from_millis(1100 + rounds.below(800))
}
const BATCH: usize = 30;

fn batch(round: usize, what: u8) -> Value {
    let recipients: Vec<String> = (0..BATCH)
        .map(|i| format!("+1{what}{round:03}{i:06}"))
        .collect();
    json!({ "recipients": recipients, "message": format!("Round {round}") })
}

/// The round's campaign is sent in full, each recipient once, and nobody anywhere twice.
fn sent_in_full(looker: &Service, sends: impl Fn() -> Vec<Send>, id: &str, round: usize) {
    let status = looker.lookup_until(id, |status| {
        status["counts"]["sent"] == BATCH && status["counts"]["sending"] == 0
    });
    assert_eq!(status["counts"]["held"], 0, "round {round}");
    let sends = sends();
    nobody_sent_twice(&sends);
    let of_campaign = sends.iter().filter(|(c, ..)| c == id).count();
    assert_eq!(of_campaign, BATCH, "round {round}");
}

#[test]
fn processes_paused_past_their_lease_send_nobody_twice() {
    let server = Postgres::start();
    let url = server.database("campaigns_paused");
    let services: Vec<Service> = (0..3).map(|_| Service::start(&url, &FLAGS)).collect();
    let provider = Provider::connect(&url);
    let mut rounds = Rounds::new("the pause rounds");
    let mut unknown = 0;
    for round in 0..20 {
        let key = format!("pause-{round}");
        let batch = batch(round, 5);
        let before = provider.sends().len();
        let target = rounds.index(3);
        let request = services[target].batch_in_background(&key, &batch);
        // Paused with 1 to 20 of its thirty sent.
        provider.until(before + 1 + rounds.index(20));
        services[target].signal("STOP");
        thread::sleep(fault(&mut rounds));
        services[target].signal("CONT");
        let first = request.join().unwrap();
        let (id, settlement) = answered_everywhere(&services, &key, &batch, round, first.as_ref());
        unknown +=
            usize::from(settlement == agent_tool_result::guarantee::SettlementState::Unknown);
        sent_in_full(&services[rounds.index(3)], || provider.sends(), &id, round);
    }
    let sends = provider.sends();
    nobody_sent_twice(&sends);
    assert_eq!(sends.len(), 20 * BATCH);
    eprintln!(
        "20 pauses on PostgreSQL: {} sends, none twice; {unknown} keys unknown",
        sends.len()
    );
}

#[test]
fn one_process_on_sqlite_paused_past_its_lease_sends_nobody_twice() {
    let scratch = Scratch::new("paused-sqlite");
    let service = Service::start(scratch.db(), &FLAGS);
    let sends = || -> Vec<Send> { sqlite_sends(&scratch.db()) };
    let mut rounds = Rounds::new("the SQLite pause rounds");
    for round in 0..10 {
        let key = format!("pause-{round}");
        let batch = batch(round, 6);
        let before = sends().len();
        let request = service.batch_in_background(&key, &batch);
        let cut = before + 1 + rounds.index(20);
        while sends().len() < cut {
            thread::sleep(Duration::from_millis(2));
        }
        service.signal("STOP");
        thread::sleep(fault(&mut rounds));
        service.signal("CONT");
        let first = request.join().unwrap();
        let (id, _) = answered_everywhere(
            std::slice::from_ref(&service),
            &key,
            &batch,
            round,
            first.as_ref(),
        );
        sent_in_full(&service, sends, &id, round);
    }
    let all = sends();
    nobody_sent_twice(&all);
    assert_eq!(all.len(), 10 * BATCH);
}

/// The provider's log in a SQLite file, as [`Send`]s.
fn sqlite_sends(db: &Path) -> Vec<Send> {
    let connection = rusqlite::Connection::open(db).unwrap();
    connection.busy_timeout(Duration::from_secs(5)).unwrap();
    let Ok(mut rows) = connection.prepare(
        "SELECT coalesce(campaign_id, ''), coalesce(message_id, ''), phone, sender \
         FROM provider_sends ORDER BY seq",
    ) else {
        return Vec::new();
    };
    rows.query_map([], |row| {
        let sender: String = row.get(3)?;
        let pid = sender.split('-').next().unwrap().parse().unwrap();
        Ok((row.get(0)?, row.get(1)?, row.get(2)?, pid))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

#[test]
fn a_process_cut_off_from_its_database_past_its_lease_sends_nobody_twice() {
    let server = Postgres::start();
    let url = server.database("campaigns_partition");
    let proxy = Proxy::to(([127, 0, 0, 1], server.port()).into());
    let cut_off_url = url.replace(
        &format!(":{}/", server.port()),
        &format!(":{}/", proxy.port()),
    );
    // The cut-off process waits out the partition (its statements are bounded at three
    // seconds, longer than the cut), so that its statements land after it, as a process
    // would whose bound is longer than the partition.
    let services = vec![
        Service::start(&cut_off_url, &fault_flags("3000")),
        Service::start(&url, &FLAGS),
        Service::start(&url, &FLAGS),
    ];
    let provider = Provider::connect(&url);
    let mut rounds = Rounds::new("the partition rounds");
    for round in 0..10 {
        let key = format!("partition-{round}");
        let batch = batch(round, 7);
        let before = provider.sends().len();
        let request = services[0].batch_in_background(&key, &batch);
        provider.until(before + 1 + rounds.index(20));
        proxy.freeze();
        thread::sleep(fault(&mut rounds));
        proxy.thaw();
        let first = request.join().unwrap();
        let (id, _) = answered_everywhere(&services, &key, &batch, round, first.as_ref());
        sent_in_full(&services[rounds.index(3)], || provider.sends(), &id, round);
    }
    let sends = provider.sends();
    nobody_sent_twice(&sends);
    assert_eq!(sends.len(), 10 * BATCH);
}
