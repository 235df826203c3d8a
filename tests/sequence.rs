//! The replay sequence (`replay::Sequence`) over a memory ledger, and over one that fails on
//! demand: each path of a keyed call, what it runs (counted), what it stores, and that REST
//! and MCP project one stored answer to one decision.
#![cfg(feature = "replay")]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use agent_tool_result::JsonObject;
use agent_tool_result::guarantee::{
    Answer, GuaranteeResult, PolicyCode, Refusal, RefusalKind, SettlementState,
};
use agent_tool_result::replay::{
    Abandoned, Begin, Call, Completion, Fingerprint, IdempotencyKey, Lease, Ledger, MemoryLedger,
    ReplyKind, Scope, Sequence, StoredAnswer,
};
use serde_json::{Value, json};

/// A memory ledger whose writes (complete, release) fail while `failing` is set.
#[derive(Default)]
struct Flaky {
    inner: MemoryLedger,
    failing: AtomicBool,
}

#[derive(Debug, thiserror::Error)]
#[error("the store is down")]
struct Down;

impl Flaky {
    fn check(&self) -> Result<(), Down> {
        if self.failing.load(Ordering::SeqCst) {
            Err(Down)
        } else {
            Ok(())
        }
    }
}

impl Ledger for Flaky {
    type Error = Down;

    async fn begin(
        &self,
        scope: &Scope,
        key: &IdempotencyKey,
        fingerprint: Fingerprint,
        context: &str,
    ) -> Result<Begin, Down> {
        Ok(self
            .inner
            .begin(scope, key, fingerprint, context)
            .await
            .unwrap())
    }

    async fn renew(&self, lease: &Lease) -> Result<Option<Lease>, Down> {
        Ok(self.inner.renew(lease).await.unwrap())
    }

    async fn complete(&self, lease: &Lease, answer: &StoredAnswer) -> Result<Completion, Down> {
        self.check()?;
        Ok(self.inner.complete(lease, answer).await.unwrap())
    }

    async fn release(&self, lease: &Lease) -> Result<Completion, Down> {
        self.check()?;
        Ok(self.inner.release(lease).await.unwrap())
    }

    async fn resolve(
        &self,
        lease: &Lease,
        truth: Option<&StoredAnswer>,
    ) -> Result<Completion, Down> {
        self.check()?;
        Ok(self.inner.resolve(lease, truth).await.unwrap())
    }

    async fn abandoned(&self, limit: usize) -> Result<Vec<Abandoned>, Down> {
        Ok(self.inner.abandoned(limit).await.unwrap())
    }

    async fn purge(&self, limit: usize) -> Result<usize, Down> {
        Ok(self.inner.purge(limit).await.unwrap())
    }
}

fn key(text: &str) -> IdempotencyKey {
    IdempotencyKey::new(text).unwrap()
}

fn call(principal: &str, text: &str, arguments: &Value) -> Call {
    let call = Call::of("send_sms", principal, key(text), arguments);
    let id = call.operation_id("msg");
    call.with_context(id)
}

/// The recovery a service gives: `unknown`, naming the message to look up.
fn recovery(context: &str) -> GuaranteeResult {
    GuaranteeResult::unknown()
        .with_next_tool("lookup_sms")
        .with_fields(object(json!({ "messageId": context })))
        .unwrap()
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        other => panic!("not an object: {other}"),
    }
}

fn committed(runs: &AtomicUsize, id: &str) -> Answer {
    runs.fetch_add(1, Ordering::SeqCst);
    GuaranteeResult::committed()
        .with_fields(object(json!({ "messageId": id })))
        .unwrap()
        .into()
}

#[tokio::test]
async fn a_key_runs_once_replays_after_and_refuses_a_mismatch() {
    let sequence = Sequence::new(MemoryLedger::new());
    let runs = AtomicUsize::new(0);
    let args = json!({ "to": "+15550100" });
    let first = sequence
        .run(call("acct_1", "k", &args), |_| async {
            committed(&runs, "m1")
        })
        .await;
    let again = sequence
        .run(
            call("acct_1", "k", &json!({ "to": "+15550100" })),
            |_| async { committed(&runs, "m2") },
        )
        .await;
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(
        (first.kind(), again.kind()),
        (ReplyKind::Ran, ReplyKind::Replayed)
    );
    assert_eq!(again.stored(), first.stored());
    assert_eq!(
        again.answer().result().unwrap().field("messageId").unwrap(),
        "m1"
    );

    let other = sequence
        .run(
            call("acct_1", "k", &json!({ "to": "+15550199" })),
            |_| async { committed(&runs, "m3") },
        )
        .await;
    assert_eq!(other.kind(), ReplyKind::Refused);
    assert_eq!(
        other.answer().refusal().map(Refusal::kind),
        Some(RefusalKind::KeyMismatch)
    );
    // Another account's same key with other arguments: its own key, run once.
    let theirs = sequence
        .run(
            call("acct_2", "k", &json!({ "to": "+15550199" })),
            |_| async { committed(&runs, "m4") },
        )
        .await;
    assert_eq!(theirs.kind(), ReplyKind::Ran);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_refusal_releases_the_key_and_a_deny_is_kept() {
    let sequence = Sequence::new(MemoryLedger::new());
    let args = json!({});
    let refused = sequence
        .run(call("acct", "r", &args), |_| async {
            Answer::<()>::from(Refusal::invalid_arguments("no number"))
        })
        .await;
    assert_eq!(refused.kind(), ReplyKind::Ran);
    assert!(refused.stored().is_refusal());
    // Released: the same key runs, fresh.
    let runs = AtomicUsize::new(0);
    let then = sequence
        .run(call("acct", "r", &args), |_| async {
            committed(&runs, "m")
        })
        .await;
    assert_eq!(
        (then.kind(), runs.load(Ordering::SeqCst)),
        (ReplyKind::Ran, 1)
    );

    let deny = |_| async {
        Answer::from(GuaranteeResult::<JsonObject>::denied(
            PolicyCode::CONTACT_OPTED_OUT,
        ))
    };
    let first = sequence.run(call("acct", "d", &args), deny).await;
    let again = sequence.run(call("acct", "d", &args), deny).await;
    assert_eq!(again.kind(), ReplyKind::Replayed);
    assert!(again.answer().is_error());
    assert_eq!(first.stored(), again.stored());
}

#[tokio::test]
async fn a_key_in_flight_is_refused_and_runs_nothing() {
    let sequence = Arc::new(Sequence::new(MemoryLedger::new()));
    let runs = Arc::new(AtomicUsize::new(0));
    let (started, start) = tokio::sync::oneshot::channel::<()>();
    let (finish, finished) = tokio::sync::oneshot::channel::<()>();
    let slow = {
        let (sequence, runs) = (Arc::clone(&sequence), Arc::clone(&runs));
        tokio::spawn(async move {
            sequence
                .run(call("acct", "slow", &json!({})), |_| async {
                    started.send(()).unwrap();
                    finished.await.unwrap();
                    committed(&runs, "m")
                })
                .await
        })
    };
    start.await.unwrap();
    let during = sequence
        .run(call("acct", "slow", &json!({})), |_| async {
            committed(&runs, "x")
        })
        .await;
    assert_eq!(
        during.answer().refusal().map(Refusal::kind),
        Some(RefusalKind::KeyInFlight)
    );
    assert!(during.answer().refusal().unwrap().retry_at().is_some());
    finish.send(()).unwrap();
    assert_eq!(slow.await.unwrap().kind(), ReplyKind::Ran);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_abandoned_key_is_answered_unknown_with_its_lookup_never_run() {
    let ledger = MemoryLedger::new().with_lease(Duration::from_millis(50));
    let args = json!({ "to": "+1555" });
    let stopped = call("acct", "cut", &args);
    let id = stopped.context().to_owned();
    // A call that began its key and stopped.
    let Begin::Fresh(_) = ledger
        .begin(stopped.scope(), stopped.key(), stopped.fingerprint(), &id)
        .await
        .unwrap()
    else {
        panic!("fresh");
    };
    tokio::time::sleep(Duration::from_millis(80)).await;
    let sequence = Sequence::new(ledger).with_recovery(recovery);
    let runs = AtomicUsize::new(0);
    let found = sequence
        .run(call("acct", "cut", &args), |_| async {
            committed(&runs, "again")
        })
        .await;
    assert_eq!(found.kind(), ReplyKind::Recovered);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let unknown = found.answer().result().unwrap();
    assert_eq!(unknown.suggested_next_tool(), Some("lookup_sms"));
    assert_eq!(unknown.field("messageId").unwrap(), id.as_str());
    let later = sequence
        .run(call("acct", "cut", &args), |_| async {
            committed(&runs, "again")
        })
        .await;
    assert_eq!(
        (later.kind(), runs.load(Ordering::SeqCst)),
        (ReplyKind::Replayed, 0)
    );
    assert_eq!(later.stored(), found.stored());

    // In the background: `settle` answers it before any request comes.
    let quiet = call("acct", "quiet", &args);
    let _ = sequence
        .ledger()
        .begin(
            quiet.scope(),
            quiet.key(),
            quiet.fingerprint(),
            quiet.context(),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(80)).await;
    assert_eq!(sequence.settle(10).await.unwrap().recovered, 1);
    let replay = sequence
        .run(call("acct", "quiet", &args), |_| async {
            committed(&runs, "again")
        })
        .await;
    assert_eq!(replay.kind(), ReplyKind::Replayed);
    assert_eq!(
        replay
            .answer()
            .result()
            .unwrap()
            .field("messageId")
            .unwrap(),
        quiet.context()
    );
}

#[tokio::test]
async fn what_a_failing_ledger_could_not_take_is_owed_and_settled() {
    let sequence = Sequence::new(Flaky::default()).with_recovery(recovery);
    let runs = AtomicUsize::new(0);
    let args = json!({});
    sequence.ledger().failing.store(true, Ordering::SeqCst);
    let ran = sequence
        .run(call("acct", "down", &args), |_| async {
            committed(&runs, "m")
        })
        .await;
    // Not recorded, so not told as done: `unknown`, which the truth replaces once written.
    assert_eq!(ran.kind(), ReplyKind::Unrecorded);
    assert_eq!(
        ran.answer().result().map(GuaranteeResult::settlement),
        Some(SettlementState::Unknown)
    );
    assert!(ran.stored().is_provisional());
    let refused = sequence
        .run(call("acct", "down-refused", &args), |_| async {
            Answer::<()>::from(Refusal::invalid_arguments("no"))
        })
        .await;
    assert_eq!(refused.kind(), ReplyKind::Ran);
    assert_eq!(sequence.unwritten(), 2);
    // While owed, the key is in flight: never run again.
    let during = sequence
        .run(call("acct", "down", &args), |_| async {
            committed(&runs, "x")
        })
        .await;
    assert_eq!(during.kind(), ReplyKind::Refused);
    assert!(sequence.settle(10).await.is_err());
    assert_eq!(sequence.unwritten(), 2);

    sequence.ledger().failing.store(false, Ordering::SeqCst);
    assert_eq!(sequence.settle(10).await.unwrap().recorded, 2);
    assert_eq!(sequence.unwritten(), 0);
    let replay = sequence
        .run(call("acct", "down", &args), |_| async {
            committed(&runs, "x")
        })
        .await;
    assert_eq!(replay.kind(), ReplyKind::Replayed);
    assert_eq!(replay.answer(), &committed(&AtomicUsize::new(0), "m"));
    let fresh = sequence
        .run(call("acct", "down-refused", &args), |_| async {
            committed(&runs, "y")
        })
        .await;
    assert_eq!(fresh.kind(), ReplyKind::Ran);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

/// One stored answer, two transports: the REST response and the MCP result carry the same
/// decision, and a replay is the first REST response's bytes, marked as a replay.
#[cfg(all(feature = "http", feature = "rmcp"))]
#[tokio::test]
async fn rest_and_mcp_project_one_stored_answer_to_one_decision() {
    use agent_tool_result::http::{RestOutcome, RestProfile, classify};
    use agent_tool_result::mcp::CallToolResult;
    use rmcp::handler::server::tool::IntoCallToolResult;

    let sequence = Sequence::new(MemoryLedger::new());
    let profile = RestProfile::default();
    let held = |_| async {
        Answer::from(
            GuaranteeResult::deferred(PolicyCode::CAMPAIGN_SEND_WINDOW)
                .with_retry_at(std::time::UNIX_EPOCH + Duration::from_secs(1_796_115_600))
                .unwrap()
                .with_fields(json!({ "campaignId": "cmp_1", "z": 1, "a": 2 }))
                .unwrap(),
        )
    };
    let args = json!({ "n": 1 });
    let first = sequence.run(call("acct", "h", &args), held).await;
    let again = sequence.run(call("acct", "h", &args), held).await;
    let (rest_first, rest_again) = (
        profile.reply_response(&first),
        profile.reply_response(&again),
    );
    assert_eq!(
        (rest_first.status().as_u16(), rest_again.status().as_u16()),
        (202, 202)
    );
    assert_eq!(rest_first.body(), rest_again.body());
    assert_eq!(
        rest_first.headers()["retry-after"],
        rest_again.headers()["retry-after"]
    );
    assert_eq!(rest_again.headers()["idempotent-replayed"], "true");
    let RestOutcome::Deferred { result, .. } = classify(&rest_again) else {
        panic!("a hold over REST");
    };
    let rmcp::model::CallToolResponse::Complete(over_mcp) =
        again.clone().into_call_tool_result().unwrap()
    else {
        panic!("a complete result");
    };
    let json = serde_json::to_value(&over_mcp).unwrap();
    let read = CallToolResult::from_json(&json.to_string()).unwrap();
    assert_eq!(
        read.answer::<agent_tool_result::JsonObject>().unwrap(),
        Answer::Result(result)
    );
    assert_eq!(json["isError"], false);
}

/// A row the ledger cannot read back (written by something else): the first call ran, so the
/// replay is never "nothing was done"; it is `unknown`, naming the operation to look up.
#[cfg(feature = "sqlite")]
#[tokio::test]
async fn an_unreadable_stored_answer_replays_as_unknown() {
    use agent_tool_result::replay::SqliteLedger;

    let dir = std::env::temp_dir().join(format!("atr-sequence-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ledger.sqlite");
    let sequence = Sequence::new(SqliteLedger::open(&path).unwrap()).with_recovery(recovery);
    let runs = AtomicUsize::new(0);
    let args = json!({ "to": "+1555" });
    let first = sequence
        .run(call("acct", "garbled", &args), |_| async {
            committed(&runs, "m")
        })
        .await;
    assert_eq!(first.kind(), ReplyKind::Ran);
    for garbage in ["not json", r#"{"settlement":{"state":"sideways"}}"#] {
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute("UPDATE atr_idempotency SET answer = ?1", [garbage])
            .unwrap();
        let replay = sequence
            .run(call("acct", "garbled", &args), |_| async {
                committed(&runs, "again")
            })
            .await;
        assert_eq!(replay.kind(), ReplyKind::Replayed);
        let unknown = replay.answer().result().expect("a result, not a refusal");
        assert_eq!(unknown.suggested_next_tool(), Some("lookup_sms"));
        assert_eq!(
            unknown.field("messageId").unwrap(),
            call("acct", "garbled", &args).context()
        );
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A probe over a set of operations that "took effect", failing while `down` is set.
#[derive(Default)]
struct Effects {
    started: std::sync::Mutex<Vec<String>>,
    down: AtomicBool,
}

impl agent_tool_result::replay::EffectProbe for Effects {
    type Error = Down;

    async fn started(&self, abandoned: &Abandoned) -> Result<bool, Down> {
        if self.down.load(Ordering::SeqCst) {
            return Err(Down);
        }
        let started = self.started.lock().unwrap();
        Ok(started.iter().any(|op| op == abandoned.context()))
    }
}

/// With a probe, an abandoned key whose operation never took effect is run after all (under a
/// greater fence), or released in the background; one whose operation did is answered
/// `unknown`; a probe that fails answers `unavailable` and runs nothing.
#[tokio::test]
async fn a_probe_runs_an_abandoned_key_that_did_nothing_and_answers_unknown_for_one_that_did() {
    let effects = Arc::new(Effects::default());
    let sequence = Sequence::new(MemoryLedger::new().with_lease(Duration::from_millis(50)))
        .with_probe(Arc::clone(&effects));
    let runs = AtomicUsize::new(0);
    let args = json!({ "to": "+1555" });
    let abandon = async |key: &str| {
        let call = call("acct", key, &args);
        let ledger = sequence.ledger();
        let Begin::Fresh(lease) = ledger
            .begin(call.scope(), call.key(), call.fingerprint(), call.context())
            .await
            .unwrap()
        else {
            panic!("fresh")
        };
        tokio::time::sleep(Duration::from_millis(80)).await;
        (call, lease)
    };

    // Nothing took effect: the next request runs it, under a greater fence.
    let (stopped, first) = abandon("quiet-1").await;
    let ran = sequence
        .run(stopped.clone(), |lease| {
            assert!(lease.fence() > first.fence());
            async { committed(&runs, "m") }
        })
        .await;
    assert_eq!(ran.kind(), ReplyKind::Ran);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let again = sequence
        .run(stopped, |_| async { committed(&runs, "x") })
        .await;
    assert_eq!(again.kind(), ReplyKind::Replayed);

    // It took effect: unknown, never run.
    let (started, _) = abandon("loud").await;
    effects
        .started
        .lock()
        .unwrap()
        .push(started.context().to_owned());
    let unknown = sequence
        .run(started, |_| async { committed(&runs, "y") })
        .await;
    assert_eq!(unknown.kind(), ReplyKind::Recovered);
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    // The probe fails: unavailable, nothing run; the key is asked about again later.
    let (unsure, _) = abandon("unsure").await;
    effects.down.store(true, Ordering::SeqCst);
    let refused = sequence
        .run(unsure.clone(), |_| async { committed(&runs, "z") })
        .await;
    assert_eq!(
        refused.answer().refusal().map(Refusal::kind),
        Some(RefusalKind::Unavailable)
    );
    effects.down.store(false, Ordering::SeqCst);

    // In the background: the quiet key is released (free for the same request again), as is
    // the unsure one once its new lease passes.
    let (_quiet, _) = abandon("quiet-2").await;
    let settled = sequence.settle(10).await.unwrap();
    assert_eq!((settled.released, settled.recovered), (2, 0), "{settled:?}");
    let retried = sequence
        .run(unsure, |_| async { committed(&runs, "z") })
        .await;
    assert_eq!(retried.kind(), ReplyKind::Ran);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}
