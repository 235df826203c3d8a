//! The service's REST side with a real HTTP client: each outcome keeps the REST profile and
//! is classified back to what it is; replays are the first bytes with nothing sent again;
//! held recipients are sent by the service as windows open, never by a replay.

use crate::support;

use std::thread;
use std::time::{Duration, SystemTime};

use agent_tool_result::guarantee::{RefusalKind, SettlementState};
use agent_tool_result::http::classify::profile_breaches;
use agent_tool_result::http::header::IDEMPOTENT_REPLAYED;
use agent_tool_result::http::{RestOutcome, classify};

/// The kind of refusal a response reads back as, if it is one.
fn refused(response: &http::Response<Vec<u8>>) -> Option<RefusalKind> {
    match classify(response) {
        RestOutcome::Refused { refusal, .. } => Some(refusal.kind()),
        _ => None,
    }
}
use serde_json::{Value, json};
use support::{Scratch, Service, TOKEN, numbers, provider_sends, send};

const OPTED_OUT: &str = "+15559990000";

fn assert_keeps_profile(response: &http::Response<Vec<u8>>) {
    let breaches = profile_breaches(response.status(), response.headers(), response.body());
    assert!(breaches.is_empty(), "{breaches:?}");
}

#[test]
fn sms_is_sent_once_and_an_opted_out_number_is_denied_before_the_provider() {
    let scratch = Scratch::new("sms");
    let service = Service::start(scratch.db(), &["--opt-out", OPTED_OUT]);
    let sms = json!({ "to": "+15550100001", "body": "Your code is 4411" });

    let sent = service.call("send_sms", "sms-1", &sms);
    assert_eq!(sent.status(), 200);
    assert_keeps_profile(&sent);
    let RestOutcome::Settled(result) = classify(&sent) else {
        panic!("{sent:?}")
    };
    assert_eq!(result.settlement(), SettlementState::Committed);
    let message = support::named(&result, "messageId");

    let replay = service.call("send_sms", "sms-1", &sms);
    assert_eq!(replay.headers()[IDEMPOTENT_REPLAYED], "true");
    assert_eq!(replay.body(), sent.body());
    assert_eq!(provider_sends(&scratch.db()).len(), 1);

    let lookup = send(
        http::Request::get(format!("{}/v1/messages/{message}", service.base))
            .header("authorization", format!("Bearer {TOKEN}"))
            .body(Vec::new())
            .unwrap(),
    );
    let lookup: Value = serde_json::from_slice(lookup.body()).unwrap();
    assert_eq!(lookup["result"]["status"], "sent");

    let denied = service.call(
        "send_sms",
        "sms-2",
        &json!({ "to": OPTED_OUT, "body": "hi" }),
    );
    assert_eq!(denied.status(), 422);
    assert_keeps_profile(&denied);
    assert!(matches!(
        classify(&denied),
        RestOutcome::PolicyDenied { .. }
    ));
    assert_eq!(provider_sends(&scratch.db()).len(), 1);

    let mismatch = service.call(
        "send_sms",
        "sms-1",
        &json!({ "to": "+15550100002", "body": "x" }),
    );
    assert_eq!(refused(&mismatch), Some(RefusalKind::KeyMismatch));
}

#[test]
fn calls_without_a_token_or_a_key_are_refused_before_anything_runs() {
    let scratch = Scratch::new("refused");
    let service = Service::start(scratch.db(), &[]);
    let post = |token: Option<&str>, key: Option<&str>| {
        let mut request = http::Request::post(format!("{}/v1/tools/send_sms", service.base))
            .header("content-type", "application/json");
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        if let Some(key) = key {
            request = request.header("idempotency-key", key);
        }
        send(
            request
                .body(br#"{"to":"+15550100001","body":"hi"}"#.to_vec())
                .unwrap(),
        )
    };
    let anonymous = post(None, Some("\"k\""));
    assert_eq!(anonymous.status(), 401);
    assert!(matches!(
        classify(&anonymous),
        RestOutcome::Unauthorized { error: None, .. }
    ));
    let forged = post(Some("forged"), Some("\"k\""));
    assert!(matches!(
        classify(&forged),
        RestOutcome::Unauthorized { error: Some(e), .. } if e == "invalid_token"
    ));
    assert_eq!(
        refused(&post(Some(TOKEN), None)),
        Some(RefusalKind::KeyMissing)
    );
    let unquoted = post(Some(TOKEN), Some("k"));
    assert_eq!(refused(&unquoted), Some(RefusalKind::KeyInvalid));
    for response in [anonymous, forged, unquoted] {
        assert_keeps_profile(&response);
    }
    assert!(provider_sends(&scratch.db()).is_empty());
}

/// Each account has a send window of its own: one account filling its window defers only
/// its own sends, and an account may have a cap of its own (`--account-cap`).
#[test]
fn one_account_filling_its_window_defers_no_other_account() {
    let scratch = Scratch::new("windows");
    let flags = [
        "--cap",
        "2",
        "--window-secs",
        "3600",
        "--account-cap",
        "acct_b=3",
        "--token",
        "acct_a=token-a",
        "--token",
        "acct_b=token-b",
    ];
    let service = Service::start(scratch.db(), &flags);
    let batch = |n: usize, from: usize| {
        let recipients: Vec<String> = numbers(from + n).split_off(from);
        json!({ "recipients": recipients, "message": "Sale" })
    };
    let impact = |response: &http::Response<Vec<u8>>| {
        let body: Value = serde_json::from_slice(response.body()).unwrap();
        (
            response.status().as_u16(),
            body["impact"]["committed"].clone(),
            body["impact"]["deferred"].clone(),
        )
    };
    // A fills its window (2) and holds the rest.
    let a = service.call_as("token-a", "send_campaign_batch", "a-1", &batch(5, 0));
    assert_eq!(impact(&a), (202, json!(2), json!(3)));
    // B, with a cap of its own (3), sends all of its batch now: A's sends use none of its room.
    let b = service.call_as("token-b", "send_campaign_batch", "b-1", &batch(3, 10));
    assert_eq!(impact(&b), (200, json!(3), json!(0)));
    // B's own window is full now: its next batch is held, and A's sends are still 2.
    let b2 = service.call_as("token-b", "send_campaign_batch", "b-2", &batch(1, 20));
    assert_eq!(impact(&b2), (202, json!(0), json!(1)));
    assert_eq!(provider_sends(&scratch.db()).len(), 5);
}

/// How long `Retry-After` (an HTTP-date) says to wait from now.
fn retry_after(response: &http::Response<Vec<u8>>) -> Duration {
    let at = httpdate::parse_http_date(response.headers()["retry-after"].to_str().unwrap())
        .expect("an HTTP-date");
    at.duration_since(SystemTime::now()).unwrap_or_default()
}

/// Each account has a rate limit of its own: a burst over A's limit is refused (429,
/// `Retry-After`, the `RateLimit` fields) with nothing sent, B's calls meanwhile are all
/// admitted, and A's refused key is not used: the same call after `Retry-After` runs.
#[test]
fn a_burst_over_one_accounts_rate_limit_is_refused_and_no_other_account_is() {
    let scratch = Scratch::new("rates");
    let flags = [
        "--rate-limit",
        "2",
        "--account-rate",
        "acct_b=4",
        "--rate-window-secs",
        "2",
        "--token",
        "acct_a=token-a",
        "--token",
        "acct_b=token-b",
    ];
    let service = Service::start(scratch.db(), &flags);
    let sms = |n: usize| json!({ "to": numbers(n + 1)[n], "body": "Your code is 4411" });
    let a: Vec<_> = (0..4)
        .map(|n| service.call_as("token-a", "send_sms", &format!("a-{n}"), &sms(n)))
        .collect();
    let b: Vec<_> = (0..4)
        .map(|n| service.call_as("token-b", "send_sms", &format!("b-{n}"), &sms(10 + n)))
        .collect();
    let statuses = |responses: &[http::Response<Vec<u8>>]| {
        responses
            .iter()
            .map(|r| r.status().as_u16())
            .collect::<Vec<_>>()
    };
    assert_eq!(statuses(&a), [200, 200, 429, 429]);
    assert_eq!(statuses(&b), [200, 200, 200, 200]);
    for response in &a[2..] {
        assert_keeps_profile(response);
        support::assert_rate_limited(response, r#""per-account";q=2;w=2"#, Duration::from_secs(2));
    }
    assert_eq!(
        b[0].headers()["ratelimit-policy"],
        r#""per-account";q=4;w=2"#
    );
    assert_eq!(
        b[0].headers()["ratelimit"].to_str().unwrap(),
        r#""per-account";r=3;t=1"#
    );
    // Nothing of A's refused calls reached the provider.
    assert_eq!(provider_sends(&scratch.db()).len(), 6);
    // The refused key is not used: after Retry-After, the same call runs, once.
    thread::sleep(retry_after(&a[3]));
    let again = service.call_as("token-a", "send_sms", "a-2", &sms(2));
    assert_eq!(
        again.status(),
        200,
        "{:?}",
        String::from_utf8_lossy(again.body())
    );
    assert!(again.headers().get(IDEMPOTENT_REPLAYED).is_none());
    assert_eq!(provider_sends(&scratch.db()).len(), 7);
}

#[test]
fn a_held_batch_answers_202_and_the_service_sends_the_rest_as_windows_open() {
    let scratch = Scratch::new("held");
    let flags = ["--cap", "2", "--window-secs", "1", "--opt-out", OPTED_OUT];
    let service = Service::start(scratch.db(), &flags);
    let mut recipients = numbers(5);
    recipients.push(OPTED_OUT.to_owned());
    recipients.push(recipients[0].clone());
    let batch = json!({ "recipients": recipients, "message": "Flash sale" });

    let held = service.call("send_campaign_batch", "flash-1", &batch);
    assert_eq!(held.status(), 202);
    assert_keeps_profile(&held);
    assert!(held.headers().get("location").is_none());
    let RestOutcome::Deferred { result, retry_at } = classify(&held) else {
        panic!("{held:?}")
    };
    assert_eq!(retry_at, result.policy().retry_at());
    let impact = result.impact().unwrap();
    assert_eq!(
        impact.requested(),
        Some(6),
        "a number listed twice is one recipient"
    );
    assert_eq!(
        (impact.committed(), impact.deferred(), impact.denied()),
        (Some(2), Some(3), Some(1))
    );
    let campaign = support::named(&result, "campaignId");

    // Replays while the service works through the hold: the first bytes, never a send.
    for _ in 0..3 {
        let replay = service.call("send_campaign_batch", "flash-1", &batch);
        assert_eq!(replay.status(), 202);
        assert_eq!(replay.body(), held.body());
        assert_eq!(
            replay.headers()["retry-after"],
            held.headers()["retry-after"]
        );
    }
    let done = service.lookup_until(&campaign, |r| r["status"] == "completed");
    assert_eq!(
        done["counts"],
        json!({ "requested": 6, "sent": 5, "sending": 0, "held": 0, "denied": 1 })
    );
    assert!(done.get("nextAttemptAt").is_none());
    let sends = provider_sends(&scratch.db());
    let mut phones: Vec<_> = sends.iter().map(|(_, phone)| phone.clone()).collect();
    phones.sort();
    phones.dedup();
    assert_eq!(
        (sends.len(), phones.len()),
        (5, 5),
        "each recipient once: {sends:?}"
    );
}

#[test]
fn racing_clients_with_one_key_run_the_batch_once() {
    let scratch = Scratch::new("race");
    let service = Service::start(scratch.db(), &["--cap", "50", "--provider-delay-ms", "20"]);
    let batch = json!({ "recipients": numbers(10), "message": "Race" });
    let answers: Vec<http::Response<Vec<u8>>> = thread::scope(|scope| {
        let racers: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| service.call("send_campaign_batch", "race-1", &batch)))
            .collect();
        racers
            .into_iter()
            .map(|racer| racer.join().unwrap())
            .collect()
    });
    let executed = answers
        .iter()
        .filter(|a| a.headers().get(IDEMPOTENT_REPLAYED).is_none());
    let executed: Vec<_> = executed.filter(|a| a.status() == 200).collect();
    assert_eq!(executed.len(), 1, "exactly one execution");
    for answer in &answers {
        match classify(answer) {
            RestOutcome::Refused { refusal, .. } if refusal.kind() == RefusalKind::KeyInFlight => {}
            RestOutcome::Settled(_) => assert_eq!(answer.body(), executed[0].body()),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(provider_sends(&scratch.db()).len(), 10);
}

/// An opt-out: the number is sent one confirmation, its held recipients are denied rather
/// than sent in a later window, later sends to it are denied by contact policy, a replay is
/// the first bytes with nothing sent again, and a second opt-out of it sends nothing.
#[test]
fn an_opt_out_confirms_once_and_denies_the_numbers_held_and_later_sends() {
    let scratch = Scratch::new("opt-out");
    let flags = [
        "--cap",
        "2",
        "--window-secs",
        "3600",
        "--token",
        "acct_b=token-b",
    ];
    let service = Service::start(scratch.db(), &flags);
    let recipients = numbers(4);
    let batch = json!({ "recipients": recipients, "message": "Winter sale" });
    let held = service.call("send_campaign_batch", "winter-1", &batch);
    assert_eq!(held.status(), 202);
    let RestOutcome::Deferred { result, .. } = classify(&held) else {
        panic!("{held:?}")
    };
    let campaign = support::named(&result, "campaignId");
    let before = service.lookup_until(&campaign, |r| r["counts"]["sending"] == 0);
    let held_phone = recipients
        .iter()
        .find(|phone| {
            !provider_sends(&scratch.db())
                .iter()
                .any(|(_, sent)| sent == *phone)
        })
        .unwrap()
        .clone();
    assert_eq!(before["counts"]["held"], 2, "{before}");

    let opt_out = json!({ "phone": held_phone });
    let opted = service.call("opt_out", "stop-1", &opt_out);
    assert_eq!(opted.status(), 200);
    assert_keeps_profile(&opted);
    let RestOutcome::Settled(result) = classify(&opted) else {
        panic!("{opted:?}")
    };
    assert_eq!(result.settlement(), SettlementState::Committed);
    assert_eq!(result.impact().unwrap().committed(), Some(1));
    let id = support::named(&result, "optOutId");
    let confirmations = |phone: &str| {
        provider_sends(&scratch.db())
            .iter()
            .filter(|(campaign, sent)| campaign.is_none() && sent == phone)
            .count()
    };
    assert_eq!(confirmations(&held_phone), 1);

    let replay = service.call("opt_out", "stop-1", &opt_out);
    assert_eq!(replay.headers()[IDEMPOTENT_REPLAYED], "true");
    assert_eq!(replay.body(), opted.body());
    let again = service.call("opt_out", "stop-2", &opt_out);
    let RestOutcome::Settled(again) = classify(&again) else {
        panic!("{again:?}")
    };
    assert_eq!(
        again.impact().unwrap().committed(),
        Some(0),
        "no second confirmation"
    );
    assert_eq!(confirmations(&held_phone), 1);

    let status = service.lookup_as(TOKEN, "opt-outs", &id);
    assert_eq!(status["result"]["phone"], held_phone.as_str(), "{status}");
    assert_eq!(status["result"]["confirmed"], true);
    assert_eq!(status["result"]["withdrawn"], 1);
    let after = service.lookup_until(&campaign, |_| true);
    assert_eq!(
        (&after["counts"]["held"], &after["counts"]["denied"]),
        (&json!(1), &json!(1)),
        "{after}"
    );
    let denied = service.call(
        "send_sms",
        "sms-1",
        &json!({ "to": held_phone, "body": "hi" }),
    );
    assert_eq!(denied.status(), 422);
    assert!(matches!(
        classify(&denied),
        RestOutcome::PolicyDenied { .. }
    ));
    // Another account cannot read the opt-out.
    let other = send(
        http::Request::get(format!("{}/v1/opt-outs/{id}", service.base))
            .header("authorization", "Bearer token-b")
            .body(Vec::new())
            .unwrap(),
    );
    let other: Value = serde_json::from_slice(other.body()).unwrap();
    assert_eq!(other["error"]["code"], "opt-out-not-found", "{other}");
}
