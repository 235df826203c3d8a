//! What the replay sequence reports through `tracing`: a span per keyed call naming its tool,
//! scope and key digest, and an event for how each call ended (fresh, replayed, refused with
//! its kind, an abandoned key answered `unknown`), never the raw key or an argument.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_tool_result::JsonObject;
use agent_tool_result::guarantee::{Answer, GuaranteeResult};
use agent_tool_result::replay::telemetry::key_digest;
use agent_tool_result::replay::{
    Begin, Call, IdempotencyKey, Ledger, MemoryLedger, ReplyKind, Sequence,
};
use serde_json::json;

/// Everything the subscriber wrote.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

/// A subscriber for this thread, writing every event and its spans' fields as text.
fn capture() -> (Captured, tracing::subscriber::DefaultGuard) {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer({
            let captured = captured.clone();
            move || captured.clone()
        })
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .finish();
    (captured, tracing::subscriber::set_default(subscriber))
}

const KEY: &str = "order-7f3a-secret-key";
const OTHER_KEY: &str = "stopped-call-key-9b";
const NUMBER: &str = "+15550123456";
/// The message's body: its code in letters no timestamp, duration or hex digest in the log
/// holds, so that finding it there means an argument leaked (a code of digits alone was
/// found in a timestamp's microseconds).
const CODE: &str = "Your code is QUXW-4411";

fn committed() -> Answer<JsonObject> {
    GuaranteeResult::committed().into()
}

// The only test in this binary (a target of its own, not a module of `integration`): tracing
// caches whether a callsite is wanted, and a test without a subscriber running beside it would
// leave this one's callsites unwanted.
#[tokio::test]
async fn spans_and_events_name_each_outcome_and_never_the_key_or_arguments() {
    let (captured, _default) = capture();

    let ledger = MemoryLedger::new().with_lease(Duration::from_millis(50));
    let arguments = json!({ "to": NUMBER, "body": CODE });
    let call = |key: &str, arguments: &serde_json::Value| {
        Call::of(
            "send_sms",
            "acct_telemetry",
            IdempotencyKey::new(key).unwrap(),
            arguments,
        )
    };
    // A key a call began and abandoned.
    let stopped = call(OTHER_KEY, &arguments).with_context("msg_stopped");
    let Begin::Fresh(_) = ledger
        .begin(
            stopped.scope(),
            stopped.key(),
            stopped.fingerprint(),
            stopped.context(),
        )
        .await
        .unwrap()
    else {
        panic!("fresh");
    };
    tokio::time::sleep(Duration::from_millis(80)).await;
    let sequence = Sequence::new(ledger);

    let fresh = sequence
        .run(call(KEY, &arguments), |_| async { committed() })
        .await;
    let replay = sequence
        .run(call(KEY, &arguments), |_| async { committed() })
        .await;
    let other = json!({ "to": "+15550999999", "body": "Other" });
    let refused = sequence
        .run(call(KEY, &other), |_| async { committed() })
        .await;
    let abandoned = sequence
        .run(stopped.clone(), |_| async { committed() })
        .await;
    assert_eq!(
        [
            fresh.kind(),
            replay.kind(),
            refused.kind(),
            abandoned.kind()
        ],
        [
            ReplyKind::Ran,
            ReplyKind::Replayed,
            ReplyKind::Refused,
            ReplyKind::Recovered
        ]
    );

    let text = captured.text();
    let lines: Vec<&str> = text
        .lines()
        .filter(|line| line.contains("keyed_call"))
        .collect();
    let keyed = call(KEY, &arguments);
    let digest = key_digest(keyed.scope(), keyed.key());
    let span = format!("keyed_call{{tool=\"send_sms\" scope=\"acct_telemetry\" key=\"{digest}\"}}");
    let ended = |outcome: &str| {
        lines
            .iter()
            .filter(|line| line.contains(&format!("outcome=\"{outcome}\"")))
            .copied()
            .collect::<Vec<_>>()
    };
    let fresh = ended("fresh");
    assert_eq!(fresh.len(), 1, "{text}");
    assert!(
        fresh[0].contains(&span) && fresh[0].contains("INFO"),
        "{text}"
    );
    assert!(fresh[0].contains("overhead_us="), "{text}");
    assert_eq!(ended("replayed").len(), 1, "{text}");
    let refused = ended("refused");
    assert_eq!(refused.len(), 1, "{text}");
    assert!(refused[0].contains("refusal=\"key-mismatch\""), "{text}");
    let abandoned = ended("abandoned_unknown");
    assert_eq!(abandoned.len(), 1, "{text}");
    assert!(abandoned[0].contains("WARN"), "{text}");
    assert!(
        abandoned[0].contains(&key_digest(stopped.scope(), stopped.key())),
        "{text}"
    );
    // The ledger's latency, per operation, inside the call's span.
    assert!(
        lines
            .iter()
            .any(|line| line.contains("op=\"begin\"") && line.contains("took_us=")),
        "{text}"
    );
    assert!(
        lines.iter().any(|line| line.contains("op=\"complete\"")),
        "{text}"
    );

    for secret in [KEY, OTHER_KEY, NUMBER, "+15550999999", "Your code", "QUXW"] {
        assert!(!text.contains(secret), "`{secret}` appears in:\n{text}");
    }
}
