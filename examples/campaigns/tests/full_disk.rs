//! The service under a disk that fills, without a restart (feature `faults`, which injects
//! it: the service's writes fail with `SQLITE_FULL` for a while): a disk full mid-batch leaves
//! the answer the batch committed with its campaign standing and claims that are sent once
//! space is back, nobody twice; a disk full before the call answers 503 and burns no key.

#[cfg(feature = "faults")]
use crate::support;

/// The injected full disk is the `faults` feature's (the README's test command enables every
/// feature): without it, its tests say so rather than pass unseen.
#[cfg(not(feature = "faults"))]
#[test]
fn the_full_disk_tests_need_the_faults_feature() {
    panic!(
        "the full-disk tests inject a fault the service has with its `faults` feature only: \
         run `cargo test -p campaigns --features faults` (or the README's test command)"
    );
}

#[cfg(feature = "faults")]
mod injected {
    use std::collections::HashSet;
    use std::time::{Duration, Instant};

    use agent_tool_result::guarantee::{RefusalKind, SettlementState};
    use agent_tool_result::http::header::IDEMPOTENT_REPLAYED;
    use agent_tool_result::http::{RestOutcome, classify};
    use serde_json::json;

    use super::support::{Scratch, Service, numbers, provider_sends};

    #[test]
    fn a_disk_that_fills_mid_batch_is_recovered_without_a_restart() {
        let scratch = Scratch::new("full-disk");
        // Writes: a few at start (settling what a stopped process left), then the key, the
        // campaign (with its answer) and two per recipient sent (the claim renewed, the send):
        // the disk fills part way through the sends. The claims whose renewal failed are
        // taken again once their short lease has passed.
        let service = Service::start(
            scratch.db(),
            &[
                super::support::SHORT_LEASE[0],
                super::support::SHORT_LEASE[1],
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
        let campaign = super::support::named(&result, "campaignId");
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
}
