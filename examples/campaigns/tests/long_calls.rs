//! Calls that run longer than their lease, on one process and SQLite, with no fault: the
//! sequence keeps the key's lease alive while the tool runs, so the first reply is the answer
//! the key keeps, and every replay gives it byte for byte (never an `unknown` put in its
//! place by the process itself).

use crate::support;

use std::collections::HashSet;
use std::thread;
use std::time::{Duration, Instant};

use agent_tool_result::http::header::IDEMPOTENT_REPLAYED;
use serde_json::json;
use support::{Scratch, Service, numbers, provider_sends};

/// A two-second lease.
const LEASE: [&str; 2] = ["--lease-ms", "2000"];

#[test]
fn batches_three_to_four_leases_long_reply_what_every_replay_gives() {
    let scratch = Scratch::new("long-batches");
    let mut flags = vec!["--cap", "100000", "--provider-delay-ms", "30"];
    flags.extend(LEASE);
    let service = Service::start(scratch.db(), &flags);
    for (round, recipients) in [(0, 200), (1, 260)] {
        let key = format!("long-{round}");
        let all: Vec<String> = numbers(recipients)
            .into_iter()
            .map(|n| n.replacen("+1555", &format!("+1556{round}"), 1))
            .collect();
        let batch = json!({ "recipients": all, "message": "Long" });
        let started = Instant::now();
        let first = service.call("send_campaign_batch", &key, &batch);
        assert_eq!(first.status(), 200, "{first:?}");
        let answer: serde_json::Value = serde_json::from_slice(first.body()).unwrap();
        assert_eq!(answer["settlement"]["state"], "committed", "{answer}");
        assert_eq!(answer["impact"]["committed"], recipients, "{answer}");
        let id = answer["campaignId"].as_str().unwrap().to_owned();
        for _ in 0..3 {
            let again = service.call("send_campaign_batch", &key, &batch);
            assert_eq!(again.headers()[IDEMPOTENT_REPLAYED], "true");
            assert_eq!(
                String::from_utf8_lossy(again.body()),
                String::from_utf8_lossy(first.body()),
                "round {round}: the first reply is the key's answer"
            );
        }
        // The batch is sent in full, over three to four leases (30 ms a send); its key
        // answers the same all along, and after.
        service.lookup_until(&id, |status| status["counts"]["sent"] == recipients);
        let took = started.elapsed();
        assert!(
            took > Duration::from_secs(6) && took < Duration::from_secs(30),
            "round {round}: the batch ran {took:?}"
        );
        let later = service.call("send_campaign_batch", &key, &batch);
        assert_eq!(later.body(), first.body(), "round {round}");
    }
    let sends = provider_sends(&scratch.db());
    let distinct: HashSet<_> = sends.iter().map(|(_, phone)| phone).collect();
    assert_eq!((sends.len(), distinct.len()), (460, 460), "nobody twice");
}

#[test]
fn an_sms_whose_provider_outlasts_the_lease_keeps_its_key() {
    let scratch = Scratch::new("long-sms");
    let mut flags = vec!["--provider-delay-ms", "5000"];
    flags.extend(LEASE);
    let service = Service::start(scratch.db(), &flags);
    let sms = json!({ "to": "+15550100001", "body": "Slow" });
    let db = scratch.db().display().to_string();
    let first = thread::scope(|scope| {
        let first = scope.spawn(|| service.call("send_sms", "slow-1", &sms));
        // Past the lease (2 s) from its beginning, the call still holds its key: the same
        // request is in flight, the provider's 5 s not over.
        support::await_begun(&db, "slow-1");
        thread::sleep(Duration::from_secs(3));
        let during = service.call("send_sms", "slow-1", &sms);
        assert_eq!(during.status(), 409, "{during:?}");
        first.join().unwrap()
    });
    assert_eq!(first.status(), 200, "{first:?}");
    let body: serde_json::Value = serde_json::from_slice(first.body()).unwrap();
    assert_eq!(body["settlement"]["state"], "committed", "{body}");
    let again = service.call("send_sms", "slow-1", &sms);
    assert_eq!(again.body(), first.body());
    assert_eq!(provider_sends(&scratch.db()).len(), 1);
}
