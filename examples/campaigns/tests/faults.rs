//! The service under faults, without a restart: a disk that fills mid-batch (injected: the
//! service's writes fail with `SQLITE_FULL` for a while) leaves the answer the batch committed
//! with its campaign standing and claims that are sent once space is back, nobody twice; a
//! disk full before the call answers 503 and burns no key.
//! Arguments that cannot be sent are refused before any policy decision.

mod support;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use agent_tool_result::guarantee::{RefusalKind, SettlementState};
use agent_tool_result::http::header::IDEMPOTENT_REPLAYED;
use agent_tool_result::http::{RestOutcome, classify};
use serde_json::json;
use support::{Scratch, Service, numbers, provider_sends};

#[test]
fn a_disk_that_fills_mid_batch_is_recovered_without_a_restart() {
    let scratch = Scratch::new("full-disk");
    // Writes: a few at start (settling what a stopped process left), then the key, the
    // campaign (with its answer) and two per recipient sent (the claim renewed, the send):
    // the disk fills part way through the sends.
    let service = Service::start(
        scratch.db(),
        &[
            "--cap",
            "100",
            "--full-disk-after",
            "12",
            "--full-disk-ms",
            "1500",
        ],
    );
    let batch = json!({ "recipients": numbers(10), "message": "Winter sale" });
    let first = service.call("send_campaign_batch", "full-1", &batch);
    // The answer committed with the campaign, before the sends: all ten committed (claimed,
    // to be sent), whatever the disk did to the sends after.
    assert_eq!(
        first.status(),
        200,
        "{:?}",
        String::from_utf8_lossy(first.body())
    );
    let RestOutcome::Settled(result) = classify(&first) else {
        panic!("{first:?}")
    };
    assert_eq!(result.settlement(), SettlementState::Committed);
    assert_eq!(
        result
            .impact()
            .and_then(agent_tool_result::guarantee::Impact::committed),
        Some(10)
    );
    let before = provider_sends(&scratch.db()).len();
    assert!(
        (1..10).contains(&before),
        "{before} sends before the disk filled"
    );

    // Space comes back: the claims the call left are sent by the running service, nobody
    // twice.
    let campaign = support::named(&result, "campaignId");
    let status = service.lookup_until(&campaign, |status| {
        status["counts"]["sent"] == 10 && status["counts"]["sending"] == 0
    });
    assert_eq!(status["counts"]["held"], 0);
    let sends = provider_sends(&scratch.db());
    let phones: HashSet<&String> = sends.iter().map(|(_, phone)| phone).collect();
    assert_eq!(
        (sends.len(), phones.len()),
        (10, 10),
        "nobody sent twice: {sends:?}"
    );

    // The first reply is the recorded one: the key replays it, byte for byte, and sends
    // nothing.
    let replay = service.call("send_campaign_batch", "full-1", &batch);
    assert_eq!(replay.headers()[IDEMPOTENT_REPLAYED], "true");
    assert_eq!(replay.body(), first.body());
    assert_eq!(provider_sends(&scratch.db()).len(), 10);
}

#[test]
fn a_full_disk_before_the_call_is_refused_and_burns_no_key() {
    let scratch = Scratch::new("full-disk-first");
    // Full from the first write after the two the service makes as it starts (settling
    // what a stopped process left), for 1.5 s.
    let service = Service::start(
        scratch.db(),
        &["--full-disk-after", "2", "--full-disk-ms", "1500"],
    );
    let batch = json!({ "recipients": numbers(3), "message": "Winter sale" });
    let first = service.call("send_campaign_batch", "full-2", &batch);
    // The store failed: 503, try the same request again; nothing was sent.
    assert_eq!(
        first.status(),
        503,
        "{:?}",
        String::from_utf8_lossy(first.body())
    );
    assert!(first.headers().get("retry-after").is_some());
    let RestOutcome::Refused { refusal, .. } = classify(&first) else {
        panic!("{first:?}")
    };
    assert_eq!(refusal.kind(), RefusalKind::Unavailable);
    assert_eq!(provider_sends(&scratch.db()).len(), 0);

    // Space comes back: the same request with the same key runs, once.
    let deadline = Instant::now() + Duration::from_secs(10);
    let answered = loop {
        let again = service.call("send_campaign_batch", "full-2", &batch);
        if ![409, 503].contains(&again.status().as_u16()) {
            break again;
        }
        assert!(Instant::now() < deadline, "never answered: {again:?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(answered.status(), 200, "{answered:?}");
    assert!(answered.headers().get(IDEMPOTENT_REPLAYED).is_none());
    let replay = service.call("send_campaign_batch", "full-2", &batch);
    assert_eq!(replay.body(), answered.body());
    assert_eq!(provider_sends(&scratch.db()).len(), 3, "nobody sent twice");
}

#[test]
fn arguments_that_cannot_be_sent_are_refused_before_any_policy_decision() {
    let scratch = Scratch::new("bad-arguments");
    let service = Service::start(scratch.db(), &["--opt-out", "+15550100000"]);
    let long = format!("+{}", "1".repeat(1_000));
    // Each with the words its refusal names the argument by.
    for (tool, arguments, named) in [
        (
            "send_campaign_batch",
            json!({ "recipients": [], "message": "Sale" }),
            "`recipients`: empty",
        ),
        (
            "send_campaign_batch",
            json!({ "recipients": ["+15550100001", "abc"], "message": "Sale" }),
            "`recipients`: [1]: `abc`",
        ),
        (
            "send_campaign_batch",
            json!({ "recipients": ["+15550100001"], "message": " " }),
            "`message`: empty",
        ),
        (
            "send_campaign_batch",
            json!({ "recipients": numbers(10_001), "message": "Sale" }),
            "`recipients`: 10001 numbers",
        ),
        ("send_sms", json!({ "to": "", "body": "hi" }), "`to`: ``"),
        (
            "send_sms",
            json!({ "to": "abc", "body": "hi" }),
            "`to`: `abc`",
        ),
        (
            "send_sms",
            json!({ "to": long, "body": "hi" }),
            "`to`: `+1111",
        ),
        (
            "send_sms",
            json!({ "to": "+05550100001", "body": "hi" }),
            "`to`: `+0555",
        ),
        (
            "send_sms",
            json!({ "to": "+15550100001", "body": "" }),
            "`body`: empty",
        ),
        (
            "send_sms",
            json!({ "to": "+15550100001", "body": "x".repeat(1_601) }),
            "`body`: longer than 1600",
        ),
        (
            "send_sms",
            json!({ "to": "+15550100001" }),
            "missing field `body`",
        ),
    ] {
        let response = service.call(tool, "bad", &arguments);
        assert_eq!(response.status(), 400, "{arguments}");
        match classify(&response) {
            RestOutcome::Refused { refusal, .. } => {
                assert_eq!(refusal.kind(), RefusalKind::InvalidArguments, "{arguments}");
                assert!(refusal.detail().contains(named), "{}", refusal.detail());
            }
            other => panic!("{arguments}: {other:?}"),
        }
    }
    // Refused before anything: the key was never begun, so it serves a good call next.
    let sent = service.call(
        "send_sms",
        "bad",
        &json!({ "to": "+15550100001", "body": "hi" }),
    );
    assert_eq!(sent.status(), 200);
    assert_eq!(provider_sends(&scratch.db()).len(), 1);
}

/// The database file replaced under the running service (another file renamed over it): it
/// stops answering success, replays included, instead of writing where no restart
/// would look.
#[test]
fn a_replaced_database_file_stops_the_service_answering_success() {
    let scratch = Scratch::new("replaced");
    let service = Service::start(scratch.db(), &[]);
    let sms = json!({ "to": "+15550100001", "body": "hi" });
    assert_eq!(service.call("send_sms", "before", &sms).status(), 200);
    let other = scratch.db().with_extension("other");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    std::fs::rename(&other, scratch.db()).unwrap();
    let refused = service.call("send_sms", "after", &sms);
    assert_eq!(
        refused.status(),
        503,
        "{:?}",
        String::from_utf8_lossy(refused.body())
    );
    match classify(&refused) {
        RestOutcome::Refused { refusal, .. } => {
            assert_eq!(refusal.kind(), RefusalKind::Unavailable);
            assert!(
                refusal.detail().contains("replaced"),
                "{}",
                refusal.detail()
            );
        }
        other => panic!("{other:?}"),
    }
    // The replay of the key that ran before is no success either.
    assert_eq!(service.call("send_sms", "before", &sms).status(), 503);
}
