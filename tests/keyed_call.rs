//! The rule of a keyed call, checked over interleavings: callers of one key begin, run tools
//! that answer quickly, run long (kept alive), or stall past their lease (a pause the
//! keepalive cannot cover), answer a result, a refusal, or lose their effect; background
//! settles take abandoned keys over; the probe says the operation started or not; the key is
//! begun before the tool runs, or at its answer's record (an effect in the ledger). Whatever
//! the interleaving, every result any caller was given is the key's final answer, or
//! `unknown` (which only the truth may replace).

use crate::keyed_answers as answers;

use std::sync::Arc;
use std::time::Duration;

use agent_tool_result::guarantee::{Answer, Refusal, SettlementState};
use agent_tool_result::replay::{
    Abandoned, Call, Done, EffectProbe, IdempotencyKey, Ledger, MemoryLedger, Reply, ReplyKind,
    Sequence,
};
use proptest::prelude::*;
use serde_json::json;

/// The store's lease in these runs: short, so that stalls pass it.
const LEASE: Duration = Duration::from_millis(40);

/// What a tool answers.
#[derive(Clone, Copy, Debug)]
enum Outcome {
    /// A committed result, telling its run apart.
    Result(u8),
    /// A refusal: nothing was done.
    Refusal,
    /// Its effect did not commit under its lease.
    Lost,
}

/// How a tool runs before it answers.
#[derive(Clone, Copy, Debug)]
enum Pace {
    /// At once.
    Quick,
    /// Awaiting for this many milliseconds: the sequence keeps its lease alive.
    Long(u64),
    /// Blocking its thread for this many milliseconds: a pause, nothing renews the lease.
    Stalled(u64),
}

#[derive(Clone, Copy, Debug)]
enum Step {
    /// A caller, starting after this many milliseconds, with its tool.
    Call(u64, Pace, Outcome),
    /// A background settle, after this many milliseconds.
    Settle(u64),
}

fn outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        4 => any::<u8>().prop_map(Outcome::Result),
        1 => Just(Outcome::Refusal),
        1 => Just(Outcome::Lost),
    ]
}

fn pace() -> impl Strategy<Value = Pace> {
    prop_oneof![
        2 => Just(Pace::Quick),
        1 => (60u64..150).prop_map(Pace::Long),
        2 => (50u64..120).prop_map(Pace::Stalled),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0u64..150, pace(), outcome()).prop_map(|(at, pace, outcome)| Step::Call(at, pace, outcome)),
        1 => (0u64..200).prop_map(Step::Settle),
    ]
}

/// The application's probe, fixed for a run: whether an abandoned key's operation started.
struct Probe(bool);

impl EffectProbe for Probe {
    type Error = std::convert::Infallible;

    async fn started(&self, _: &Abandoned) -> Result<bool, Self::Error> {
        Ok(self.0)
    }
}

fn call(folded: bool) -> Call {
    let call = Call::of(
        "send_sms",
        "acct_rule",
        IdempotencyKey::new("the-key").unwrap(),
        &json!({ "to": "+15550100" }),
    )
    .with_context("msg_rule");
    if folded {
        call.with_effect_in_ledger()
    } else {
        call
    }
}

fn committed(note: u16) -> Answer {
    answers::committed_with("run", note)
}

async fn tool(pace: Pace, outcome: Outcome) -> Done {
    match pace {
        Pace::Quick => {}
        Pace::Long(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
        Pace::Stalled(ms) => {
            tokio::task::block_in_place(|| std::thread::sleep(Duration::from_millis(ms)));
        }
    }
    match outcome {
        Outcome::Result(run) => Done::Answer(committed(u16::from(run))),
        Outcome::Refusal => Done::Answer(Refusal::invalid_arguments("no").into()),
        Outcome::Lost => Done::Lost,
    }
}

/// Runs `steps` against `ledger`, then settles until the key is answered, and checks the
/// rule against every reply.
async fn check<L: Ledger + 'static>(ledger: L, started: bool, folded: bool, steps: Vec<Step>) {
    let sequence = Arc::new(Sequence::new(ledger).with_probe(Probe(started)));
    let tasks: Vec<_> = steps
        .into_iter()
        .map(|step| {
            let sequence = Arc::clone(&sequence);
            tokio::spawn(async move {
                match step {
                    Step::Call(at, pace, outcome) => {
                        tokio::time::sleep(Duration::from_millis(at)).await;
                        Some(
                            sequence
                                .run_recording(call(folded), |_| tool(pace, outcome))
                                .await,
                        )
                    }
                    Step::Settle(at) => {
                        tokio::time::sleep(Duration::from_millis(at)).await;
                        let _ = sequence.settle(16).await;
                        None
                    }
                }
            })
        })
        .collect();
    let mut replies: Vec<Reply> = Vec::new();
    for task in tasks {
        replies.extend(task.await.unwrap());
    }
    // Past every lease, settled: nothing is in flight any more.
    tokio::time::sleep(LEASE * 2).await;
    sequence.settle(16).await.unwrap();
    let last = sequence
        .run_recording(call(folded), |_| async { Done::Answer(committed(1000)) })
        .await;
    assert!(
        matches!(last.kind(), ReplyKind::Replayed | ReplyKind::Ran),
        "{last:?}"
    );
    for reply in &replies {
        let Some(result) = reply.answer().result() else {
            continue;
        };
        if result.settlement() == SettlementState::Unknown {
            continue;
        }
        assert_eq!(
            reply.stored().json(),
            last.stored().json(),
            "a caller was told {:?} ({:?}), the key keeps {:?}",
            reply.stored().json(),
            reply.kind(),
            last.stored().json()
        );
    }
    assert!(!last.stored().is_provisional() || last.kind() == ReplyKind::Replayed);
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(8)
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn every_result_a_caller_got_is_the_keys_final_answer_on_memory(
        started in any::<bool>(),
        folded in any::<bool>(),
        steps in proptest::collection::vec(step(), 1..7),
    ) {
        runtime().block_on(check(MemoryLedger::new().with_lease(LEASE), started, folded, steps));
    }
}

#[cfg(feature = "sqlite")]
proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn every_result_a_caller_got_is_the_keys_final_answer_on_sqlite(
        started in any::<bool>(),
        folded in any::<bool>(),
        steps in proptest::collection::vec(step(), 1..7),
    ) {
        use agent_tool_result::replay::SqliteLedger;
        let ledger = SqliteLedger::open_in_memory().unwrap().with_lease(LEASE);
        runtime().block_on(check(ledger, started, folded, steps));
    }
}
