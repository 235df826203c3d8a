//! The service under faults, without a restart: a disk that fills mid-batch (injected: the
//! service's own writes fail with `SQLITE_FULL` for a while, the provider's do not) leaves an
//! answer that names the campaign, claims that are settled once space is back, an answer that
//! is recorded then so the key replays it, and nobody sent twice. Arguments that cannot be
//! sent are refused before any policy decision.

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
    // Writes: a few at start (settling what a stopped process left), then the operation, the
    // campaign and one per recipient sent: the disk fills part way through the batch.
    let service = Service::start(
        scratch.db(),
        &[
            "--cap",
            "100",
            "--full-disk-after",
            "8",
            "--full-disk-ms",
            "1500",
        ],
    );
    let batch = json!({ "recipients": numbers(10), "message": "Winter sale" });
    let first = service.call("send_campaign_batch", "full-1", &batch);
    assert_eq!(
        first.status(),
        200,
        "{:?}",
        String::from_utf8_lossy(first.body())
    );
    let RestOutcome::Settled(result) = classify(&first) else {
        panic!("{first:?}")
    };
    assert_eq!(result.settlement(), SettlementState::Unknown);
    let campaign = result.fields()["campaignId"]
        .as_str()
        .expect("an answer after a provider call names the operation")
        .to_owned();
    assert_eq!(
        result.suggested_next_tool(),
        Some("lookup_marketing_campaigns")
    );
    let before = provider_sends(&scratch.db()).len();
    assert!(
        (1..10).contains(&before),
        "{before} sends before the disk filled"
    );

    // Space comes back: the claims are settled and the rest sent by the running service.
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

    // The answer is recorded too: the key replays it, without a restart, and sends nothing.
    let deadline = Instant::now() + Duration::from_secs(10);
    let replay = loop {
        let replay = service.call("send_campaign_batch", "full-1", &batch);
        if replay.status() != 409 {
            break replay;
        }
        assert!(Instant::now() < deadline, "the key stayed in flight");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(replay.headers()[IDEMPOTENT_REPLAYED], "true");
    assert_eq!(replay.body(), first.body());
    assert_eq!(provider_sends(&scratch.db()).len(), 10);
}

#[test]
fn arguments_that_cannot_be_sent_are_refused_before_any_policy_decision() {
    let scratch = Scratch::new("bad-arguments");
    let service = Service::start(scratch.db(), &["--opt-out", "+15550100000"]);
    let long = format!("+{}", "1".repeat(1_000));
    for (tool, arguments) in [
        (
            "send_campaign_batch",
            json!({ "recipients": [], "message": "Sale" }),
        ),
        (
            "send_campaign_batch",
            json!({ "recipients": ["+15550100001", "abc"], "message": "Sale" }),
        ),
        (
            "send_campaign_batch",
            json!({ "recipients": ["+15550100001"], "message": " " }),
        ),
        (
            "send_campaign_batch",
            json!({ "recipients": numbers(10_001), "message": "Sale" }),
        ),
        ("send_sms", json!({ "to": "", "body": "hi" })),
        ("send_sms", json!({ "to": "abc", "body": "hi" })),
        ("send_sms", json!({ "to": long, "body": "hi" })),
        ("send_sms", json!({ "to": "+05550100001", "body": "hi" })),
        ("send_sms", json!({ "to": "+15550100001", "body": "" })),
        (
            "send_sms",
            json!({ "to": "+15550100001", "body": "x".repeat(1_601) }),
        ),
        ("send_sms", json!({ "to": "+15550100001" })),
    ] {
        let response = service.call(tool, "bad", &arguments);
        assert_eq!(response.status(), 400, "{arguments}");
        match classify(&response) {
            RestOutcome::Refused { refusal, .. } => {
                assert_eq!(refusal.kind(), RefusalKind::InvalidArguments, "{arguments}");
                assert!(!refusal.detail().is_empty());
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
