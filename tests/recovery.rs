//! A guarantee tool owns its operation: the key of a call that stopped midway (its task
//! aborted, as a killed process stops) is recovered by the tool that began it, whoever finds
//! it (a request with the key, or the background settle of another sequence on the same
//! store). A tool that declares nothing answers `unknown`, naming its lookup and its
//! operation, and its effect, counted where it lands, happens once.
#![cfg(feature = "replay")]

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_tool_result::guarantee::{GuaranteeResult, RefusalKind, SettlementState, Tally};
use agent_tool_result::replay::{
    Done, GuaranteeTool, IdempotencyKey, Ledger, MemoryLedger, Operation, OperationFields,
    Recovered, RecoveryError, Reply, ReplyKind, Sequence,
};
use serde_json::{Value, json};

/// How long a key's lease holds in these tests.
const LEASE: Duration = Duration::from_millis(60);

#[derive(serde::Deserialize)]
struct NoteArgs {
    to: String,
}

#[derive(serde::Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct Noted {
    note_id: String,
}

impl OperationFields for Noted {
    fn of_operation(id: &str) -> Self {
        Noted {
            note_id: id.to_owned(),
        }
    }
}

/// The outside provider: every effect it performed, by effect key, and how many it was asked
/// for (a second send of one effect would show in `sends`).
#[derive(Default)]
struct Provider {
    sends: AtomicUsize,
    effects: Mutex<HashSet<String>>,
    /// How many calls stopped (before or after their send), as a killed process stops.
    stops: AtomicUsize,
}

impl Provider {
    fn send(&self, effect: &str) {
        self.sends.fetch_add(1, Ordering::SeqCst);
        self.effects.lock().unwrap().insert(effect.to_owned());
    }

    fn sent(&self, effect: &str) -> bool {
        self.effects.lock().unwrap().contains(effect)
    }

    fn sends(&self) -> usize {
        self.sends.load(Ordering::SeqCst)
    }

    fn stopped(&self) -> usize {
        self.stops.load(Ordering::SeqCst)
    }

    /// A call stops here for good.
    async fn stop<T>(&self) -> T {
        self.stops.fetch_add(1, Ordering::SeqCst);
        std::future::pending().await
    }
}

/// What the tool does once it runs: sends and answers, sends and stops (its process killed
/// after the provider took the send), or stops before sending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Run {
    Answer,
    StopAfterSend,
    StopBeforeSend,
}

/// Sends a note through the outside provider, declaring no recovery.
struct Silent {
    provider: Arc<Provider>,
    run: Mutex<Run>,
}

/// Sends a note through the outside provider, and recovers an abandoned key by asking it.
struct Asking {
    provider: Arc<Provider>,
    run: Mutex<Run>,
    provider_down: AtomicBool,
}

/// The one body of both tools.
async fn send(provider: &Provider, run: Run, operation: &Operation) -> Done<Noted> {
    let effect = operation.lease().effect_key(operation.id());
    if run == Run::StopBeforeSend {
        return provider.stop().await;
    }
    provider.send(effect.as_str());
    if run == Run::StopAfterSend {
        return provider.stop().await;
    }
    GuaranteeResult::committed_with(Tally::sent(1), Noted::of_operation(operation.id())).into()
}

/// What both tools declare alike: the tool, its lookup, its types, and its run.
macro_rules! sends_a_note {
    () => {
        const NAME: &'static str = "send_note";
        const DESCRIPTION: &'static str = "Sends a note.";
        const OPERATION: &'static str = "note";
        const LOOKUP: &'static str = "lookup_note";
        type Arguments = NoteArgs;
        type Fields = Noted;

        async fn run(&self, args: NoteArgs, operation: Operation) -> Done<Noted> {
            let _ = args.to;
            let run = *self.run.lock().unwrap();
            send(&self.provider, run, &operation).await
        }
    };
}

impl GuaranteeTool for Silent {
    sends_a_note!();
}

impl GuaranteeTool for Asking {
    sends_a_note!();

    async fn recover(&self, operation: Operation) -> Result<Recovered<Noted>, RecoveryError> {
        if self.provider_down.load(Ordering::SeqCst) {
            return Err("the provider did not answer".into());
        }
        let effect = operation.lease().effect_key(operation.id());
        Ok(if self.provider.sent(effect.as_str()) {
            Recovered::Settled(GuaranteeResult::committed_with(
                Tally::sent(1),
                Noted::of_operation(operation.id()),
            ))
        } else {
            Recovered::NotStarted
        })
    }
}

fn key(name: &str) -> IdempotencyKey {
    IdempotencyKey::new(name).unwrap()
}

fn args() -> Value {
    json!({ "to": "+15550199" })
}

/// Starts a call that stops midway, and stops it as a kill would once it has gone as far as
/// it goes; returns when its lease has passed.
async fn abandon<L, T>(sequence: &Arc<Sequence<L>>, tool: &Arc<T>, provider: &Provider, name: &str)
where
    L: Ledger + 'static,
    T: GuaranteeTool<Arguments = NoteArgs> + 'static,
{
    let stopped = provider.stopped();
    let (sequence, tool, key) = (Arc::clone(sequence), Arc::clone(tool), key(name));
    let call = tokio::spawn(async move { sequence.serve(&tool, "acct_1", key, args()).await });
    // Killed once the call has reached its stop (its send made or not), however slowly the
    // machine runs, and its lease left to pass.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while provider.stopped() == stopped {
        assert!(std::time::Instant::now() < deadline, "{name} never stopped");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    call.abort();
    let _ = call.await;
    tokio::time::sleep(LEASE * 2).await;
}

/// The provider, a tool that asks it about its abandoned keys (which runs as `run`, and
/// finds the provider down when `down`), and a sequence on a memory ledger.
fn asking(run: Run, down: bool) -> (Arc<Provider>, Arc<Asking>, Arc<Sequence<MemoryLedger>>) {
    let provider = Arc::new(Provider::default());
    let tool = Arc::new(Asking {
        provider: Arc::clone(&provider),
        run: Mutex::new(run),
        provider_down: AtomicBool::new(down),
    });
    let sequence = Arc::new(Sequence::new(MemoryLedger::new().with_lease(LEASE)));
    (provider, tool, sequence)
}

fn result_json(reply: &Reply) -> Value {
    serde_json::from_str(reply.stored().json()).unwrap()
}

#[tokio::test]
async fn a_tool_that_declares_nothing_answers_unknown_naming_its_lookup_and_never_runs_again() {
    let provider = Arc::new(Provider::default());
    let tool = Arc::new(Silent {
        provider: Arc::clone(&provider),
        run: Mutex::new(Run::StopAfterSend),
    });
    let sequence = Arc::new(Sequence::new(MemoryLedger::new().with_lease(LEASE)));
    abandon(&sequence, &tool, &provider, "k-1").await;
    assert_eq!(provider.sends(), 1);

    // The tool would answer now; it is not asked to run again.
    *tool.run.lock().unwrap() = Run::Answer;
    let found = sequence.serve(&tool, "acct_1", key("k-1"), args()).await;
    assert_eq!(found.kind(), ReplyKind::Recovered);
    let unknown = found.answer().result().unwrap();
    assert_eq!(unknown.settlement(), SettlementState::Unknown);
    assert_eq!(unknown.suggested_next_tool(), Some("lookup_note"));
    let id = result_json(&found)["noteId"].clone();
    assert!(id.as_str().unwrap().starts_with("note_"), "{id}");
    for _ in 0..3 {
        let again = sequence.serve(&tool, "acct_1", key("k-1"), args()).await;
        assert_eq!(again.kind(), ReplyKind::Replayed);
        assert_eq!(again.stored(), found.stored());
    }
    assert_eq!(provider.sends(), 1, "the outside effect happened once");
}

#[tokio::test]
async fn a_declared_recovery_answers_what_the_provider_did() {
    let (provider, tool, sequence) = asking(Run::StopAfterSend, false);

    // Sent, then stopped: the provider's record is the answer, final.
    abandon(&sequence, &tool, &provider, "k-sent").await;
    *tool.run.lock().unwrap() = Run::Answer;
    let found = sequence.serve(&tool, "acct_1", key("k-sent"), args()).await;
    assert_eq!(found.kind(), ReplyKind::Recovered);
    assert_eq!(
        found.answer().result().unwrap().settlement(),
        SettlementState::Committed
    );
    assert!(!found.stored().is_provisional());
    assert!(result_json(&found)["noteId"].is_string());
    assert_eq!(provider.sends(), 1);

    // Stopped before sending: it never started, so the call runs now, once.
    *tool.run.lock().unwrap() = Run::StopBeforeSend;
    abandon(&sequence, &tool, &provider, "k-unsent").await;
    assert_eq!(provider.sends(), 1);
    *tool.run.lock().unwrap() = Run::Answer;
    let ran = sequence
        .serve(&tool, "acct_1", key("k-unsent"), args())
        .await;
    assert_eq!(ran.kind(), ReplyKind::Ran);
    assert_eq!(provider.sends(), 2);
    let again = sequence
        .serve(&tool, "acct_1", key("k-unsent"), args())
        .await;
    assert_eq!(again.stored(), ran.stored());
    assert_eq!(provider.sends(), 2);
}

#[tokio::test]
async fn a_recovery_that_cannot_tell_runs_nothing_and_is_asked_again() {
    let (provider, tool, sequence) = asking(Run::StopBeforeSend, true);
    abandon(&sequence, &tool, &provider, "k-2").await;
    *tool.run.lock().unwrap() = Run::Answer;
    let refused = sequence.serve(&tool, "acct_1", key("k-2"), args()).await;
    let refusal = refused.answer().refusal().unwrap();
    assert_eq!(refusal.kind(), RefusalKind::Unavailable);
    assert!(refusal.retry_at().is_some());
    assert_eq!(provider.sends(), 0, "nothing ran");

    // Once the provider answers (and the lease taken for the question has passed), the key
    // is asked about again: never started, so it runs.
    tool.provider_down.store(false, Ordering::SeqCst);
    tokio::time::sleep(LEASE * 2).await;
    let ran = sequence.serve(&tool, "acct_1", key("k-2"), args()).await;
    assert_eq!(ran.kind(), ReplyKind::Ran);
    assert_eq!(provider.sends(), 1);
}

#[tokio::test]
async fn the_background_settle_asks_the_tool_that_began_the_key() {
    let (provider, tool, sequence) = asking(Run::StopAfterSend, false);
    abandon(&sequence, &tool, &provider, "k-3").await;
    let settled = sequence.settle(10).await.unwrap();
    assert_eq!((settled.recovered, settled.released), (1, 0));
    // The request that comes later replays the tool's recovery: committed, from the provider.
    let replayed = sequence.serve(&tool, "acct_1", key("k-3"), args()).await;
    assert_eq!(replayed.kind(), ReplyKind::Replayed);
    assert_eq!(
        replayed.answer().result().unwrap().settlement(),
        SettlementState::Committed
    );
    assert_eq!(provider.sends(), 1);
}

/// Another process on the same SQLite file, which knows the tool from its registration
/// (`Sequence::declare`) but never served it, recovers the key the first one abandoned.
#[cfg(feature = "sqlite")]
#[tokio::test]
async fn another_process_on_the_same_store_recovers_with_the_tool() {
    use agent_tool_result::replay::SqliteLedger;

    let dir = std::env::temp_dir().join(format!("atr-recovery-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ledger.sqlite");
    let _ = std::fs::remove_file(&path);
    let provider = Arc::new(Provider::default());
    let silent = Arc::new(Silent {
        provider: Arc::clone(&provider),
        run: Mutex::new(Run::StopAfterSend),
    });
    let first = Arc::new(Sequence::new(
        SqliteLedger::open(&path).unwrap().with_lease(LEASE),
    ));
    abandon(&first, &silent, &provider, "k-4").await;
    drop(first);

    let second = Sequence::new(SqliteLedger::open(&path).unwrap().with_lease(LEASE));
    second.declare(&silent);
    assert_eq!(second.settle(10).await.unwrap().recovered, 1);
    *silent.run.lock().unwrap() = Run::Answer;
    let replayed = second.serve(&silent, "acct_1", key("k-4"), args()).await;
    assert_eq!(replayed.kind(), ReplyKind::Replayed);
    let unknown = replayed.answer().result().unwrap();
    assert_eq!(unknown.suggested_next_tool(), Some("lookup_note"));
    assert!(result_json(&replayed)["noteId"].is_string());
    assert_eq!(provider.sends(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sends nothing itself; its recovery takes longer than the lease its finder holds.
struct SlowToRecover(Arc<Provider>);

impl GuaranteeTool for SlowToRecover {
    const NAME: &'static str = "send_note";
    const DESCRIPTION: &'static str = "Sends a note.";
    const OPERATION: &'static str = "note";
    const LOOKUP: &'static str = "lookup_note";
    type Arguments = NoteArgs;
    type Fields = Noted;

    async fn run(&self, _: NoteArgs, _: Operation) -> Done<Noted> {
        self.0.stop().await
    }

    async fn recover(&self, _: Operation) -> Result<Recovered<Noted>, RecoveryError> {
        tokio::time::sleep(LEASE * 2).await;
        Ok(Recovered::Unknown)
    }
}

/// The case a differential fuzzer found (SQLite, leases of a few milliseconds): a caller that
/// found a key abandoned, and whose recovery outlasted its own hold on the key, took the key
/// again and recorded its `unknown`, and was told its tool had run (`Ran`). Nothing ran: it is
/// a recovery, whichever hold recorded it, and the key answers it from then on.
#[tokio::test]
async fn a_recovery_that_outlasts_its_lease_is_still_a_recovery() {
    let tool = Arc::new(SlowToRecover(Arc::default()));
    let memory = Arc::new(Sequence::new(MemoryLedger::new().with_lease(LEASE)));
    assert_recovered_after_a_slow_recovery(&memory, &tool).await;
    #[cfg(feature = "sqlite")]
    {
        let dir = std::env::temp_dir().join(format!("atr-slow-recovery-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ledger.sqlite");
        let _ = std::fs::remove_file(&path);
        let ledger = agent_tool_result::replay::SqliteLedger::open(&path).unwrap();
        let sqlite = Arc::new(Sequence::new(ledger.with_lease(LEASE)));
        assert_recovered_after_a_slow_recovery(&sqlite, &tool).await;
        let _ = std::fs::remove_dir_all(&dir);
    }
}

async fn assert_recovered_after_a_slow_recovery<L: Ledger + 'static>(
    sequence: &Arc<Sequence<L>>,
    tool: &Arc<SlowToRecover>,
) {
    abandon(sequence, tool, &tool.0, "k-slow").await;
    let found = sequence.serve(tool, "acct_1", key("k-slow"), args()).await;
    assert_eq!(found.kind(), ReplyKind::Recovered, "nothing ran");
    assert_eq!(
        found.answer().result().unwrap().settlement(),
        SettlementState::Unknown
    );
    let again = sequence.serve(tool, "acct_1", key("k-slow"), args()).await;
    assert_eq!(again.kind(), ReplyKind::Replayed);
    assert_eq!(again.stored(), found.stored());
}
