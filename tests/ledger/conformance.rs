//! The ledger contract (see `agent_tool_result::replay`), checked against any store: every
//! check makes its own ledger with the lease and retention it needs.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use agent_tool_result::replay::{
    Begin, Completion, Fingerprint, IdempotencyKey, Ledger, Scope, StoredAnswer,
};
use serde_json::json;

/// A long lease, for checks where nothing should expire.
pub const LONG: Duration = Duration::from_secs(600);
/// A short lease, for checks that wait for one to expire.
pub const SHORT: Duration = Duration::from_millis(400);

fn key(text: &str) -> IdempotencyKey {
    IdempotencyKey::new(text).unwrap()
}

fn print(n: u32) -> Fingerprint {
    Fingerprint::of("send_sms", "acct", &json!({ "n": n }))
}

fn answer(text: &str) -> StoredAnswer {
    use agent_tool_result::guarantee::{Answer, GuaranteeResult};
    let result = GuaranteeResult::committed()
        .with_fields(serde_json::json!({ "note": text }))
        .expect("a note is no contract field");
    StoredAnswer::of(&Answer::from(result)).expect("an object")
}

/// Begins a key that must be new, and returns its lease.
async fn fresh(
    ledger: &impl Ledger,
    scope: &Scope,
    key: &IdempotencyKey,
    fingerprint: Fingerprint,
    context: &str,
) -> agent_tool_result::replay::Lease {
    match ledger
        .begin(scope, key, fingerprint, context)
        .await
        .unwrap()
    {
        Begin::Fresh(lease) => lease,
        other => panic!("a new key is fresh, not {other:?}"),
    }
}

async fn after_lease() {
    tokio::time::sleep(SHORT + Duration::from_millis(250)).await;
}

/// Runs every check; `make(lease, retention)` opens a fresh, empty ledger.
pub async fn run<L, F, M>(make: M)
where
    L: Ledger + 'static,
    F: Future<Output = L>,
    M: Fn(Duration, Duration) -> F,
{
    fresh_then_replay(make(LONG, LONG).await).await;
    another_request_is_a_mismatch(make(LONG, LONG).await).await;
    scopes_are_independent(make(LONG, LONG).await).await;
    in_flight_until_the_lease_expires(make(LONG, LONG).await).await;
    one_of_many_begins_is_fresh(Arc::new(make(LONG, LONG).await)).await;
    begins_made_together_answer_as_alone(Arc::new(make(LONG, LONG).await)).await;
    an_expired_lease_is_abandoned_once(Arc::new(make(SHORT, LONG).await)).await;
    a_lost_lease_cannot_complete(make(SHORT, LONG).await).await;
    fences_increase_across_takeovers(make(SHORT, LONG).await).await;
    a_passed_lease_cannot_complete_renew_or_release(make(SHORT, LONG).await).await;
    renewing_keeps_the_key(make(SHORT, LONG).await).await;
    releasing_frees_the_key(make(LONG, LONG).await).await;
    abandoned_keys_are_swept_in_batches(make(SHORT, LONG).await).await;
    purging_removes_old_answers_only(make(SHORT, Duration::from_millis(300)).await).await;
}

async fn fresh_then_replay(ledger: impl Ledger) {
    let scope = Scope::principal("acct_a");
    let lease = fresh(&ledger, &scope, &key("k1"), print(1), "msg_1").await;
    assert_eq!((lease.scope(), lease.key().as_str()), (&scope, "k1"));
    assert!(
        lease.expires() > SystemTime::now(),
        "a lease runs into the future"
    );
    let first = answer("first");
    assert_eq!(
        ledger.complete(&lease, &first).await.unwrap(),
        Completion::Recorded
    );
    for _ in 0..2 {
        let again = ledger
            .begin(&scope, &key("k1"), print(1), "msg_1")
            .await
            .unwrap();
        assert_eq!(again, Begin::Replay(first.clone()));
    }
    // A second complete with the same lease does not replace the first answer.
    let second = ledger.complete(&lease, &answer("second")).await.unwrap();
    assert_eq!(second, Completion::LeaseLost);
    let again = ledger
        .begin(&scope, &key("k1"), print(1), "msg_1")
        .await
        .unwrap();
    assert_eq!(again, Begin::Replay(first));
}

async fn another_request_is_a_mismatch(ledger: impl Ledger) {
    let scope = Scope::principal("acct_a");
    let lease = fresh(&ledger, &scope, &key("k2"), print(1), "").await;
    // In flight, and after completion: another request with the key is a mismatch.
    assert_eq!(
        ledger
            .begin(&scope, &key("k2"), print(2), "")
            .await
            .unwrap(),
        Begin::Mismatch
    );
    let _ = ledger.complete(&lease, &answer("a")).await.unwrap();
    assert_eq!(
        ledger
            .begin(&scope, &key("k2"), print(2), "")
            .await
            .unwrap(),
        Begin::Mismatch
    );
    let refusal = Begin::Mismatch.refusal().unwrap();
    assert_eq!(refusal.kind().status(), 422);
}

async fn scopes_are_independent(ledger: impl Ledger) {
    let (a, b) = (Scope::principal("acct_a"), Scope::principal("acct_b"));
    let lease_a = fresh(&ledger, &a, &key("shared"), print(1), "a").await;
    // B's request with A's key, while A's is in flight and with other arguments: fresh, not
    // in flight, not a mismatch.
    let lease_b = fresh(&ledger, &b, &key("shared"), print(2), "b").await;
    let _ = ledger.complete(&lease_a, &answer("for a")).await.unwrap();
    let _ = ledger.complete(&lease_b, &answer("for b")).await.unwrap();
    assert_eq!(
        ledger
            .begin(&a, &key("shared"), print(1), "a")
            .await
            .unwrap(),
        Begin::Replay(answer("for a"))
    );
    assert_eq!(
        ledger
            .begin(&b, &key("shared"), print(2), "b")
            .await
            .unwrap(),
        Begin::Replay(answer("for b"))
    );
    // A lease of one scope does nothing in another.
    let lease_c = fresh(&ledger, &b, &key("other"), print(3), "").await;
    assert!(matches!(
        ledger.begin(&a, &key("other"), print(4), "").await.unwrap(),
        Begin::Fresh(_)
    ));
    assert_eq!(
        ledger.complete(&lease_c, &answer("c")).await.unwrap(),
        Completion::Recorded
    );
}

async fn in_flight_until_the_lease_expires(ledger: impl Ledger) {
    let scope = Scope::principal("acct_a");
    let lease = fresh(&ledger, &scope, &key("k3"), print(1), "").await;
    let Begin::InFlight { until } = ledger
        .begin(&scope, &key("k3"), print(1), "")
        .await
        .unwrap()
    else {
        panic!("in flight");
    };
    assert_eq!(
        until,
        lease.expires(),
        "in flight until the holder's lease expires"
    );
    let refusal = Begin::InFlight { until }.refusal().unwrap();
    assert_eq!(
        (refusal.kind().status(), refusal.retry_at()),
        (409, Some(until))
    );
}

async fn one_of_many_begins_is_fresh<L: Ledger + 'static>(ledger: Arc<L>) {
    let scope = Scope::principal("acct_a");
    let begins = (0..32).map(|_| {
        let (ledger, scope) = (Arc::clone(&ledger), scope.clone());
        tokio::spawn(async move {
            ledger
                .begin(&scope, &key("race"), print(1), "")
                .await
                .unwrap()
        })
    });
    let mut fresh = 0;
    for begin in begins {
        match begin.await.unwrap() {
            Begin::Fresh(_) => fresh += 1,
            Begin::InFlight { .. } => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(fresh, 1);
}

/// Many begins at once, of many keys, some of them repeated and some already answered (a
/// store may make begins that wait together, in one statement or transaction): each key is
/// fresh for exactly one of its begins, in flight for the others, replayed once answered,
/// and every fresh key has a fence of its own.
async fn begins_made_together_answer_as_alone<L: Ledger + 'static>(ledger: Arc<L>) {
    let scope = Scope::principal("acct_together");
    let done = fresh(&*ledger, &scope, &key("answered"), print(1), "").await;
    assert_eq!(
        ledger.complete(&done, &answer("kept")).await.unwrap(),
        Completion::Recorded
    );
    let begins: Vec<_> = (0..96)
        .map(|n| {
            let (ledger, scope) = (Arc::clone(&ledger), scope.clone());
            tokio::spawn(async move {
                let name = match n % 6 {
                    0 => "answered".to_owned(),
                    _ => format!("k{}", n % 24),
                };
                let begun = ledger.begin(&scope, &key(&name), print(1), "").await;
                (name, begun.unwrap())
            })
        })
        .collect();
    let mut fences = Vec::new();
    let mut fresh_keys = std::collections::BTreeMap::<String, usize>::new();
    for begin in begins {
        let (name, begun) = begin.await.unwrap();
        match begun {
            Begin::Replay(stored) => {
                assert_eq!(name, "answered");
                assert_eq!(stored, answer("kept"));
            }
            Begin::Fresh(lease) => {
                assert_ne!(name, "answered");
                fences.push(lease.fence());
                *fresh_keys.entry(name).or_default() += 1;
            }
            Begin::InFlight { .. } => assert_ne!(name, "answered"),
            other => panic!("{name}: {other:?}"),
        }
    }
    let expected: std::collections::BTreeMap<String, usize> = (0..24)
        .filter(|n| n % 6 != 0)
        .map(|n| (format!("k{n}"), 1))
        .collect();
    assert_eq!(fresh_keys, expected, "each key fresh once");
    fences.sort();
    fences.dedup();
    assert_eq!(fences.len(), expected.len(), "a fence a key");
}

async fn an_expired_lease_is_abandoned_once<L: Ledger + 'static>(ledger: Arc<L>) {
    let scope = Scope::principal("acct_a");
    let _stopped = fresh(&*ledger, &scope, &key("k4"), print(1), "cmp_7f3a").await;
    after_lease().await;
    // Whoever comes next finds it abandoned, exactly once, with its context; the others find
    // it in flight under the new lease.
    let begins = (0..16).map(|_| {
        let (ledger, scope) = (Arc::clone(&ledger), scope.clone());
        tokio::spawn(async move {
            ledger
                .begin(&scope, &key("k4"), print(1), "other")
                .await
                .unwrap()
        })
    });
    let mut abandoned = Vec::new();
    for begin in begins {
        match begin.await.unwrap() {
            Begin::Abandoned(found) => abandoned.push(found),
            Begin::InFlight { .. } => {}
            other => panic!("an abandoned key never runs again: {other:?}"),
        }
    }
    assert_eq!(abandoned.len(), 1);
    let found = abandoned.pop().unwrap();
    assert_eq!(found.context(), "cmp_7f3a", "the context stored at begin");
    let unknown = answer(r#"{"settlement":{"state":"unknown"}}"#);
    assert_eq!(
        ledger.complete(found.lease(), &unknown).await.unwrap(),
        Completion::Recorded
    );
    after_lease().await;
    assert_eq!(
        ledger
            .begin(&scope, &key("k4"), print(1), "")
            .await
            .unwrap(),
        Begin::Replay(unknown)
    );
    // Another request with the abandoned key is still a mismatch, never a takeover.
    let _ = fresh(&*ledger, &scope, &key("k5"), print(1), "").await;
    after_lease().await;
    assert_eq!(
        ledger
            .begin(&scope, &key("k5"), print(2), "")
            .await
            .unwrap(),
        Begin::Mismatch
    );
}

async fn a_lost_lease_cannot_complete(ledger: impl Ledger) {
    let scope = Scope::principal("acct_a");
    let slow = fresh(&ledger, &scope, &key("k6"), print(1), "").await;
    after_lease().await;
    let Begin::Abandoned(taken) = ledger
        .begin(&scope, &key("k6"), print(1), "")
        .await
        .unwrap()
    else {
        panic!("abandoned");
    };
    let unknown = answer("unknown");
    let _ = ledger.complete(taken.lease(), &unknown).await.unwrap();
    // The slow call comes back with its real answer: too late, the unknown stays.
    assert_eq!(
        ledger.complete(&slow, &answer("late")).await.unwrap(),
        Completion::LeaseLost
    );
    assert_eq!(ledger.renew(&slow).await.unwrap(), None);
    assert_eq!(
        ledger
            .begin(&scope, &key("k6"), print(1), "")
            .await
            .unwrap(),
        Begin::Replay(unknown)
    );
}

async fn renewing_keeps_the_key(ledger: impl Ledger) {
    let scope = Scope::principal("acct_a");
    let lease = fresh(&ledger, &scope, &key("k7"), print(1), "").await;
    let mut lease = lease;
    for _ in 0..3 {
        tokio::time::sleep(SHORT / 2).await;
        lease = ledger
            .renew(&lease)
            .await
            .unwrap()
            .expect("the lease is still held");
    }
    // Past the first expiry, still in flight under the renewed lease.
    let Begin::InFlight { until } = ledger
        .begin(&scope, &key("k7"), print(1), "")
        .await
        .unwrap()
    else {
        panic!("still in flight");
    };
    assert_eq!(until, lease.expires());
    assert_eq!(
        ledger.complete(&lease, &answer("done")).await.unwrap(),
        Completion::Recorded
    );
}

async fn releasing_frees_the_key(ledger: impl Ledger) {
    let scope = Scope::principal("acct_a");
    let lease = fresh(&ledger, &scope, &key("k8"), print(1), "").await;
    assert_eq!(ledger.release(&lease).await.unwrap(), Completion::Recorded);
    // Usable again, even with other arguments.
    let again = fresh(&ledger, &scope, &key("k8"), print(2), "").await;
    // The old lease releases nothing of the new call; a completed key is never released.
    assert_eq!(ledger.release(&lease).await.unwrap(), Completion::LeaseLost);
    let _ = ledger.complete(&again, &answer("done")).await.unwrap();
    assert_eq!(ledger.release(&again).await.unwrap(), Completion::LeaseLost);
    assert_eq!(
        ledger
            .begin(&scope, &key("k8"), print(2), "")
            .await
            .unwrap(),
        Begin::Replay(answer("done"))
    );
}

async fn abandoned_keys_are_swept_in_batches(ledger: impl Ledger) {
    let scope = Scope::principal("acct_sweep");
    for n in 0..5 {
        let begun = ledger
            .begin(&scope, &key(&format!("s{n}")), print(n), &format!("ctx{n}"))
            .await
            .unwrap();
        assert!(matches!(begun, Begin::Fresh(_)));
    }
    assert!(
        ledger.abandoned(10).await.unwrap().is_empty(),
        "no lease has expired yet"
    );
    after_lease().await;
    let first = ledger.abandoned(3).await.unwrap();
    let second = ledger.abandoned(10).await.unwrap();
    assert_eq!(
        (first.len(), second.len()),
        (3, 2),
        "at most the limit, each key once"
    );
    assert!(ledger.abandoned(10).await.unwrap().is_empty());
    for found in first.iter().chain(&second) {
        let n = &found.lease().key().as_str()[1..];
        assert_eq!(found.context(), format!("ctx{n}"));
        let _ = ledger
            .complete(found.lease(), &answer("unknown"))
            .await
            .unwrap();
    }
}

async fn purging_removes_old_answers_only(ledger: impl Ledger) {
    let scope = Scope::principal("acct_purge");
    for n in 0..5 {
        let lease = fresh(&ledger, &scope, &key(&format!("p{n}")), print(n), "").await;
        let _ = ledger.complete(&lease, &answer("done")).await.unwrap();
    }
    // Never answered, and older than the window by the time of the purge.
    let _ = fresh(&ledger, &scope, &key("unanswered"), print(9), "ctx").await;
    assert_eq!(
        ledger.purge(100).await.unwrap(),
        0,
        "nothing is older than the window yet"
    );
    after_lease().await;
    assert_eq!(ledger.purge(2).await.unwrap(), 2, "bounded batches");
    assert_eq!(ledger.purge(100).await.unwrap(), 3);
    assert_eq!(
        ledger.purge(100).await.unwrap(),
        0,
        "the unanswered key is kept"
    );
    assert!(matches!(
        ledger
            .begin(&scope, &key("p0"), print(0), "")
            .await
            .unwrap(),
        Begin::Fresh(_)
    ));
    let Begin::Abandoned(found) = ledger
        .begin(&scope, &key("unanswered"), print(9), "")
        .await
        .unwrap()
    else {
        panic!("an unanswered key older than the window is answered unknown, never run again");
    };
    assert_eq!(found.context(), "ctx");
}

/// Every lease on one key, fresh, taken over by a request or in the background, and begun
/// again after a release, has a greater fence than the one before; a stale holder's complete,
/// renew and release are refused at every step.
async fn fences_increase_across_takeovers(ledger: impl Ledger) {
    let scope = Scope::principal("acct_fence");
    let first = fresh(&ledger, &scope, &key("f1"), print(1), "ctx").await;
    let mut leases = vec![first];
    // Taken over by a request, then twice in the background.
    after_lease().await;
    let Begin::Abandoned(taken) = ledger
        .begin(&scope, &key("f1"), print(1), "")
        .await
        .unwrap()
    else {
        panic!("abandoned");
    };
    leases.push(taken.into_lease());
    for _ in 0..2 {
        after_lease().await;
        let swept = ledger.abandoned(10).await.unwrap();
        let mine: Vec<_> = swept
            .into_iter()
            .filter(|found| found.lease().key().as_str() == "f1")
            .collect();
        assert_eq!(mine.len(), 1, "taken once");
        assert_eq!(mine[0].context(), "ctx");
        leases.push(mine[0].lease().clone());
    }
    // Released by its holder, then begun again: still greater.
    let current = leases.last().unwrap().clone();
    assert_eq!(
        ledger.release(&current).await.unwrap(),
        Completion::Recorded
    );
    leases.push(fresh(&ledger, &scope, &key("f1"), print(1), "ctx").await);
    // Another key's lease, taken meanwhile, is greater too: one order for the store.
    let other = fresh(&ledger, &scope, &key("f2"), print(1), "").await;
    for pair in leases.windows(2) {
        assert!(
            pair[1].fence() > pair[0].fence(),
            "{} then {}",
            pair[0].fence(),
            pair[1].fence()
        );
    }
    assert!(other.fence() > leases.last().unwrap().fence());
    let holder = leases.pop().unwrap();
    for stale in &leases {
        assert_eq!(
            ledger.renew(stale).await.unwrap(),
            None,
            "{}",
            stale.fence()
        );
        assert_eq!(
            ledger.complete(stale, &answer("stale")).await.unwrap(),
            Completion::LeaseLost
        );
        assert_eq!(ledger.release(stale).await.unwrap(), Completion::LeaseLost);
    }
    // The stale holders changed nothing: the current one completes.
    assert_eq!(
        ledger.complete(&holder, &answer("current")).await.unwrap(),
        Completion::Recorded
    );
    assert_eq!(
        ledger
            .begin(&scope, &key("f1"), print(1), "")
            .await
            .unwrap(),
        Begin::Replay(answer("current"))
    );
}

/// A holder whose lease has passed can neither renew, complete nor release, even while no one
/// has taken the key over yet (a process paused past its lease learns it lost the key here);
/// the key is then abandoned for the next comer.
async fn a_passed_lease_cannot_complete_renew_or_release(ledger: impl Ledger) {
    let scope = Scope::principal("acct_passed");
    for (n, step) in ["renew", "complete", "release"].into_iter().enumerate() {
        let k = key(&format!("passed-{step}"));
        let n = u32::try_from(n).unwrap();
        let lease = fresh(&ledger, &scope, &k, print(n), "ctx").await;
        assert!(lease.remaining() > Duration::ZERO);
        after_lease().await;
        assert_eq!(
            lease.remaining(),
            Duration::ZERO,
            "passed by this clock too"
        );
        match step {
            "renew" => assert_eq!(ledger.renew(&lease).await.unwrap(), None),
            "complete" => assert_eq!(
                ledger.complete(&lease, &answer("late")).await.unwrap(),
                Completion::LeaseLost
            ),
            _ => assert_eq!(ledger.release(&lease).await.unwrap(), Completion::LeaseLost),
        }
        let Begin::Abandoned(next) = ledger.begin(&scope, &k, print(n), "").await.unwrap() else {
            panic!("{step}: the key is abandoned, untouched by the passed lease");
        };
        assert!(next.lease().fence() > lease.fence());
    }
}

/// The checks of the keyed call end to end, on the same store: the sequence over it.
pub mod call {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use agent_tool_result::JsonObject;
    use agent_tool_result::guarantee::{Answer, GuaranteeResult, Refusal, SettlementState};
    use agent_tool_result::replay::{
        Abandoned, Call, EffectProbe, IdempotencyKey, Ledger, Reply, ReplyKind, Sequence,
    };
    use serde_json::json;

    use super::{LONG, SHORT};

    fn call(key: &str) -> Call {
        Call::of(
            "send_sms",
            "acct_call",
            IdempotencyKey::new(key).unwrap(),
            &json!({ "to": "+15550100" }),
        )
        .with_context("msg_1")
    }

    fn committed(note: &str) -> Answer {
        crate::keyed_answers::committed_with("note", note)
    }

    /// A tool that must not run.
    fn never(why: &str) -> Answer {
        panic!("{why}")
    }

    fn settlement(reply: &Reply) -> Option<SettlementState> {
        reply.answer().result().map(GuaranteeResult::settlement)
    }

    /// A probe that says no abandoned key's operation started: the taker runs the call.
    struct NothingStarted;

    impl EffectProbe for NothingStarted {
        type Error = std::convert::Infallible;

        async fn started(&self, _: &Abandoned) -> Result<bool, Self::Error> {
            Ok(false)
        }
    }

    /// Runs every check; `make(lease)` opens a fresh, empty ledger.
    pub async fn run<L, F, M>(make: M)
    where
        L: Ledger + 'static,
        F: std::future::Future<Output = L>,
        M: Fn(Duration) -> F,
    {
        a_call_longer_than_its_lease_keeps_its_key(make(SHORT).await).await;
        a_lost_record_answers_the_ledgers_state(make(SHORT).await).await;
        an_unknown_is_replaced_by_the_truth_and_nothing_else_changes(make(SHORT).await).await;
        a_refusal_whose_release_was_lost_frees_the_key(make(SHORT).await).await;
        a_key_recovered_by_two_callers_answers_both_alike(make(SHORT).await).await;
        let _ = LONG;
    }

    /// The keepalive: a tool that runs three leases long keeps its key (a second caller
    /// meanwhile is refused as in flight, never takes it over), and its reply is recorded.
    async fn a_call_longer_than_its_lease_keeps_its_key<L: Ledger + 'static>(ledger: L) {
        let sequence = Arc::new(Sequence::new(ledger));
        let long = {
            let sequence = Arc::clone(&sequence);
            tokio::spawn(async move {
                sequence
                    .run(call("long"), |lease| async move {
                        tokio::time::sleep(SHORT * 3).await;
                        assert!(lease.is_held(), "the keepalive kept the lease");
                        committed("long")
                    })
                    .await
            })
        };
        tokio::time::sleep(SHORT * 2).await;
        let during = sequence
            .run(call("long"), |_| async { never("never run twice") })
            .await;
        assert_eq!(during.kind(), ReplyKind::Refused, "{:?}", during.answer());
        let first = long.await.unwrap();
        assert_eq!(first.kind(), ReplyKind::Ran);
        assert_eq!(first.answer(), &committed("long"));
        let again = sequence
            .run(call("long"), |_| async { never("never run twice") })
            .await;
        assert_eq!(
            again.stored(),
            first.stored(),
            "the first reply is the recorded one"
        );
    }

    /// A tool paused past its lease (the keepalive cannot run), whose key another caller took
    /// and ran meanwhile: its record comes back lost, and it answers what the ledger holds.
    async fn a_lost_record_answers_the_ledgers_state<L: Ledger + 'static>(ledger: L) {
        let sequence = Arc::new(Sequence::new(ledger).with_probe(NothingStarted));
        let (started, running) = tokio::sync::oneshot::channel();
        let paused = {
            let sequence = Arc::clone(&sequence);
            tokio::spawn(async move {
                sequence
                    .run(call("paused"), |_| async {
                        let _ = started.send(());
                        // A pause: the task does not yield, so nothing renews the lease.
                        // Blocks this call's task (its keepalive too), not the
                        // runtime's other tasks.
                        tokio::task::block_in_place(|| std::thread::sleep(SHORT * 3));
                        committed("paused")
                    })
                    .await
            })
        };
        // Its lease is timed from its begin, which ends before its tool starts.
        running.await.unwrap();
        tokio::time::sleep(SHORT + Duration::from_millis(200)).await;
        let taker = sequence
            .run(call("paused"), |_| async { committed("taker") })
            .await;
        assert_eq!(taker.kind(), ReplyKind::Ran, "{:?}", taker.stored());
        let first = paused.await.unwrap();
        assert_eq!(first.kind(), ReplyKind::LeaseLost);
        assert_eq!(
            first.stored(),
            taker.stored(),
            "the ledger's answer, not its own"
        );
        let again = sequence
            .run(call("paused"), |_| async { committed("never") })
            .await;
        assert_eq!(again.stored(), taker.stored());
    }

    /// A tool paused past its lease whose key a caller meanwhile answered `unknown`: when it
    /// comes back, its answer replaces the `unknown`; every later replay is that answer.
    async fn an_unknown_is_replaced_by_the_truth_and_nothing_else_changes<L: Ledger + 'static>(
        ledger: L,
    ) {
        let sequence = Arc::new(Sequence::new(ledger));
        let (started, running) = tokio::sync::oneshot::channel();
        let paused = {
            let sequence = Arc::clone(&sequence);
            tokio::spawn(async move {
                sequence
                    .run(call("truth"), |_| async {
                        let _ = started.send(());
                        // Blocks this call's task (its keepalive too), not the
                        // runtime's other tasks.
                        tokio::task::block_in_place(|| std::thread::sleep(SHORT * 3));
                        committed("truth")
                    })
                    .await
            })
        };
        // Its lease is timed from its begin, which ends before its tool starts.
        running.await.unwrap();
        tokio::time::sleep(SHORT + Duration::from_millis(200)).await;
        let recovered = sequence
            .run(call("truth"), |_| async {
                never("an abandoned key never runs")
            })
            .await;
        assert_eq!(recovered.kind(), ReplyKind::Recovered);
        assert_eq!(settlement(&recovered), Some(SettlementState::Unknown));
        assert!(recovered.stored().is_provisional());
        let first = paused.await.unwrap();
        assert_eq!(first.kind(), ReplyKind::Ran);
        assert_eq!(first.answer(), &committed("truth"));
        for _ in 0..2 {
            let again = sequence
                .run(call("truth"), |_| async { committed("never") })
                .await;
            assert_eq!(again.stored(), first.stored(), "the truth, for good");
            assert!(!again.stored().is_provisional());
        }
    }

    /// A tool that refuses after its lease passed: its release comes back lost, the key is
    /// still freed (nothing was done), and the next call with it runs.
    async fn a_refusal_whose_release_was_lost_frees_the_key<L: Ledger + 'static>(ledger: L) {
        let sequence = Sequence::new(ledger);
        let refused = sequence
            .run(call("refused"), |_| async {
                tokio::task::block_in_place(|| {
                    std::thread::sleep(SHORT + Duration::from_millis(200));
                });
                Answer::<JsonObject>::from(Refusal::invalid_arguments("no"))
            })
            .await;
        assert!(refused.answer().refusal().is_some());
        let runs = AtomicUsize::new(0);
        let next = sequence
            .run(call("refused"), |_| async {
                runs.fetch_add(1, Ordering::SeqCst);
                committed("next")
            })
            .await;
        assert_eq!(
            (next.kind(), runs.load(Ordering::SeqCst)),
            (ReplyKind::Ran, 1)
        );
    }

    /// An abandoned key found by two callers at once: whatever each is told, no result
    /// either gets differs from the key's final answer.
    async fn a_key_recovered_by_two_callers_answers_both_alike<L: Ledger + 'static>(ledger: L) {
        let sequence = Arc::new(Sequence::new(ledger));
        // A call that stops between beginning and answering.
        let stopped = sequence.run(call("twice"), |_| async {
            std::thread::sleep(SHORT + Duration::from_millis(200));
            Answer::<JsonObject>::from(GuaranteeResult::unknown())
        });
        drop(stopped);
        let _ = sequence
            .ledger()
            .begin(
                call("twice").scope(),
                call("twice").key(),
                call("twice").fingerprint(),
                "msg_1",
            )
            .await
            .unwrap();
        tokio::time::sleep(SHORT + Duration::from_millis(200)).await;
        let both: Vec<Reply> = {
            let (a, b) = (Arc::clone(&sequence), Arc::clone(&sequence));
            let a = tokio::spawn(async move {
                a.run(call("twice"), |_| async { never("never run") }).await
            });
            let b = tokio::spawn(async move {
                b.run(call("twice"), |_| async { never("never run") }).await
            });
            vec![a.await.unwrap(), b.await.unwrap()]
        };
        let last = sequence
            .run(call("twice"), |_| async { never("never run") })
            .await;
        assert_eq!(last.kind(), ReplyKind::Replayed);
        for reply in &both {
            if reply.answer().result().is_some() {
                assert_eq!(reply.stored().json(), last.stored().json());
            }
        }
    }
}
