//! One process of three stopped (SIGSTOP) past its lease, through PgBouncer in transaction
//! mode with fewer server connections than the processes keep: no transaction is open across
//! the provider's work, so the others go on.

use crate::support;

use crate::support::pgbouncer;
use crate::support::postgres;

use std::thread;
use std::time::{Duration, Instant};

use pgbouncer::PgBouncer;
use postgres::Postgres;
use serde_json::json;
use support::Service;
use support::provider::{Provider, nobody_sent_twice};

/// One process stopped (SIGSTOP) past its lease while it serves calls, through PgBouncer in
/// transaction mode with fewer server connections (5) than the three processes keep (8
/// each): no transaction of the stopped process is open across the provider's work (its key
/// is begun, the provider called with no connection held, the answer recorded), so the
/// others' calls go on, none delayed by more than a second while it is stopped; once it
/// resumes, every key is answered and nobody was sent twice, counted at the provider.
#[test]
fn a_stopped_process_holds_up_no_other_through_pgbouncer() {
    let server = Postgres::start();
    server.database("campaigns_stopped");
    let bouncer = PgBouncer::transaction_mode(server.port(), 5);
    let url = &bouncer.url("campaigns_stopped");
    {
        let flags = [
            "--lease-ms",
            "1500",
            "--provider-delay-ms",
            "100",
            "--db-connections",
            "8",
        ];
        let services: Vec<Service> = (0..3).map(|_| Service::start(url, &flags)).collect();
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .into();
        let call = |service: &Service, key: &str| {
            let started = Instant::now();
            let to = format!(
                "+1555{:07}",
                key.bytes().map(u32::from).sum::<u32>() % 10_000_000
            );
            let status = agent
                .post(format!("{}/v1/tools/send_sms", service.base))
                .header("authorization", format!("Bearer {}", support::TOKEN))
                .header("idempotency-key", format!("\"{key}\""))
                .send_json(json!({ "to": to, "body": "hi" }))
                .map_or(0, |response| response.status().as_u16());
            (started, started.elapsed(), status)
        };
        let stop_at = Instant::now() + Duration::from_secs(2);
        let stopped_for = Duration::from_secs(4);
        let (delays, keys) = thread::scope(|scope| {
            let mut keys = Vec::new();
            let mut clients = Vec::new();
            for (n, service) in services.iter().enumerate() {
                for client in 0..4 {
                    let prefix = format!("stop-{n}-{client}");
                    let keys_of: Vec<String> = (0..40).map(|i| format!("{prefix}-{i}")).collect();
                    keys.extend(keys_of.iter().cloned().map(|key| (n, key)));
                    let call = &call;
                    clients.push(scope.spawn(move || {
                        keys_of
                            .iter()
                            .map(|key| (n, call(service, key)))
                            .collect::<Vec<_>>()
                    }));
                }
            }
            let stopper = scope.spawn(|| {
                thread::sleep(stop_at.saturating_duration_since(Instant::now()));
                services[0].signal("STOP");
                thread::sleep(stopped_for);
                services[0].signal("CONT");
            });
            stopper.join().unwrap();
            let calls: Vec<_> = clients
                .into_iter()
                .flat_map(|client| client.join().unwrap())
                .collect();
            (calls, keys)
        });
        // The calls the other processes answered while the first was stopped.
        let stopped = stop_at..stop_at + stopped_for;
        let during: Vec<Duration> = delays
            .iter()
            .filter(|(n, (started, _, _))| *n != 0 && stopped.contains(started))
            .map(|(_, (_, took, _))| *took)
            .collect();
        assert!(
            during.len() >= 10,
            "the others kept answering: {}",
            during.len()
        );
        let slowest = during.iter().max().unwrap();
        println!(
            "{} calls on the other processes while one was stopped, the slowest in {slowest:?}",
            during.len()
        );
        assert!(
            *slowest <= Duration::from_secs(1),
            "a call on another process waited {slowest:?} while one was stopped"
        );
        // Every key is answered (a retry of the ones the stopped process held), and nobody
        // was sent twice, counted where the sends land.
        for (n, key) in &keys {
            until_answered(key, || call(&services[(*n + 1) % 3], key).2);
        }
        let provider = Provider::connect(url);
        let sends = provider.sends();
        nobody_sent_twice(&sends);
        assert_eq!(sends.len(), keys.len(), "one send a key");
    }
    let log = bouncer.log();
    assert!(!log.contains("ERROR"), "PgBouncer logged errors: {log}");
}

/// Asks `call` (its status) again until it answers 200, for at most 10 seconds: a key in
/// flight on the process that resumed (409), or a store not yet back (503).
fn until_answered(key: &str, call: impl Fn() -> u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let status = call();
        if status == 200 {
            return;
        }
        assert!(Instant::now() < deadline, "{key} answered {status}");
        thread::sleep(Duration::from_millis(100));
    }
}
