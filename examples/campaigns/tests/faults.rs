//! The service under faults, without a restart: arguments that cannot be sent are refused
//! before any policy decision, and a replaced database file stops the service answering
//! success. (A disk that fills is `full_disk.rs`'s.)

use crate::support;

use agent_tool_result::guarantee::RefusalKind;
use agent_tool_result::http::{RestOutcome, classify};
use serde_json::json;
use support::{Scratch, Service, numbers, provider_sends};

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
