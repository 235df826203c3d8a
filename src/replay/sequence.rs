//! [`Sequence`]: the replay sequence every guarantee tool runs around its ledger.

use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::call::Call;
use super::done::Done;
use super::join;
use super::lease::Lease;
use super::ledger::Abandoned;
use super::ledger::{Begin, Completion, Ledger};
use super::probe::{AssumeStarted, EffectProbe};
use super::recovery::{Examined, Tools, round_trip};
use super::reply::{Reply, ReplyKind};
use super::stored::StoredAnswer;
use super::telemetry::{self, Timings};
use crate::guarantee::{Answer, GuaranteeResult, Refusal};

mod recover;
mod settle;

/// When a caller refused `unavailable` by the sequence (its store failed) is told to try the
/// same request again: a store that restarts or fails over is usually back within seconds.
const RETRY_UNAVAILABLE: Duration = Duration::from_secs(1);

/// Awaits the ledger operation `op` that `run` starts, reporting its latency.
async fn timed<F: Future>(op: &'static str, run: impl FnOnce() -> F) -> F::Output {
    let started = Instant::now();
    let output = run().await;
    telemetry::ledger(op, started.elapsed());
    output
}

/// What [`Sequence::settle`] did.
///
/// ```
/// use agent_tool_result::replay::{MemoryLedger, Sequence};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let sequence = Sequence::new(MemoryLedger::new());
/// // The background step: unwritten writes, abandoned keys, and a purge, each bounded.
/// let settled = sequence.settle(100).await?;
/// assert_eq!((settled.recorded, settled.recovered, settled.purged), (0, 0, 0));
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Settled {
    /// Answers (and releases) written that had failed before.
    pub recorded: usize,
    /// Abandoned keys answered `unknown` (their operation may have taken effect).
    pub recovered: usize,
    /// Abandoned keys released: the probe found that their operation never took effect, and
    /// under the new fence it never can, so the key is free for the same request again.
    pub released: usize,
    /// Answered keys older than the retention window, removed.
    pub purged: usize,
}

/// A write the ledger did not take (it failed), kept with the call it is for until
/// [`Sequence::settle`] makes it.
#[derive(Debug)]
enum Unwritten {
    /// The call's answer, not recorded (the ledger failed).
    Complete(Call, Lease, StoredAnswer),
    /// The call's refusal: its key, not released.
    Release(Call, Lease, StoredAnswer),
    /// The call's answer, the truth owed to a caller answered `unknown`.
    Resolve(Call, Lease, StoredAnswer),
}

/// The `unknown` answer of an abandoned key, from the context its first call stored.
type Recovery = dyn Fn(&str) -> GuaranteeResult + Send + Sync;

/// The replay sequence: the steps every guarantee tool takes around its ledger, owned by the library
/// so that a tool author writes the tool and nothing else. Given a [`Call`] (scope, key,
/// fingerprint, context) and the tool as an async closure, [`Sequence::run`]:
///
/// 1. begins the key; a ledger that fails answers [`Refusal::unavailable`] (nothing ran, the
///    same request with the same key later);
/// 2. replays a completed key's first answer and refuses a mismatch or a key in flight; an
///    abandoned key is held under a new fence and its operation probed ([`EffectProbe`]):
///    one that may have taken effect is answered `unknown` (the sequence's recovery, from the
///    key's context) and the key completed with that answer; one that certainly did not is
///    run now, under the new fence;
/// 3. runs the tool under a fresh lease, handing it the [`Lease`] (its [`Fence`] for the
///    tool's own writes, its effect keys); a result is completed, a refusal (which promises
///    that nothing was done) releases the key so it can be used again;
/// 4. keeps what it could not write (an answer not recorded, a key not released) to write
///    again in [`Sequence::settle`], which also takes abandoned keys in the background
///    (answering or releasing each as the probe says) and purges old ones.
///
/// While the tool runs, the sequence renews its lease at a third of the lease's length,
/// under the same fence, on the application's Tokio runtime (without one it cannot, and a
/// call must end within its lease); it stops when the tool ends. A call that loses its key
/// anyway (paused or cut off past its lease) sees it in [`Lease::is_held`], and its fenced
/// writes cannot land; its reply is then what the ledger holds for the key
/// ([`ReplyKind::LeaseLost`]), never an answer no replay gives (see [`crate::replay`], "Which
/// answers are final").
///
/// [`Fence`]: super::Fence
///
/// The ledger keeps the transport-neutral [`StoredAnswer`]; a [`Reply`] is projected per
/// transport (`RestProfile::reply_response` over REST, `IntoCallToolResult` over MCP), always
/// from the stored form, so the first answer and every replay, over either transport, are one
/// decision and the same bytes.
///
/// ```
/// use agent_tool_result::guarantee::{Answer, GuaranteeResult};
/// use agent_tool_result::replay::{Call, IdempotencyKey, MemoryLedger, ReplyKind, Sequence};
/// use serde_json::json;
///
/// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     let waker = std::task::Waker::noop();
/// #     let mut cx = std::task::Context::from_waker(&waker);
/// #     let mut f = std::pin::pin!(f);
/// #     loop { if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
/// # }
/// let sequence = Sequence::new(MemoryLedger::new());
/// let arguments = json!({ "to": "+15550100" });
/// let call = || Call::of("send_sms", "acct_1", IdempotencyKey::new("k-1").unwrap(), &arguments);
/// let send = |_lease| async { Answer::Result(GuaranteeResult::<agent_tool_result::JsonObject>::committed()) };
///
/// let first = block_on(sequence.run(call(), send));
/// let again = block_on(sequence.run(call(), send));
/// assert_eq!((first.kind(), again.kind()), (ReplyKind::Ran, ReplyKind::Replayed));
/// assert_eq!(first.stored(), again.stored());
/// ```
///
/// Share one per process (in an `Arc`); it is `Send + Sync`.
pub struct Sequence<L, P = AssumeStarted> {
    ledger: L,
    /// The tools it served, each asked about its own abandoned keys.
    pub(super) tools: Tools,
    /// For a key no served tool began (a hand-built call): the application's probe and
    /// recovery.
    probe: P,
    recover: Box<Recovery>,
    unwritten: Mutex<Vec<Unwritten>>,
}

impl<L: std::fmt::Debug, P> std::fmt::Debug for Sequence<L, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sequence")
            .field("ledger", &self.ledger)
            .field("tools", &self.tools.len())
            .field("unwritten", &self.lock_unwritten().len())
            .finish_non_exhaustive()
    }
}

impl<L: Ledger> Sequence<L> {
    /// The sequence over `ledger`. A key a served tool began ([`Sequence::serve`]) is
    /// recovered by that tool ([`GuaranteeTool::recover`](super::GuaranteeTool::recover));
    /// any other abandoned key is taken for one that may have taken effect and answered with
    /// a bare [`GuaranteeResult::unknown`] (see [`Sequence::with_probe`] and
    /// [`Sequence::with_recovery`], for hand-built calls).
    pub fn new(ledger: L) -> Self {
        Sequence {
            ledger,
            tools: Tools::default(),
            probe: AssumeStarted,
            recover: Box::new(|_| GuaranteeResult::unknown()),
            unwritten: Mutex::new(Vec::new()),
        }
    }
}

impl<L: Ledger, P: EffectProbe> Sequence<L, P> {
    /// The same sequence, asking `probe` whether the operation of an abandoned key took
    /// effect: one that did not is run (or, in [`Sequence::settle`], its key released)
    /// rather than answered `unknown`. A lower layer, for calls run by [`Sequence::run`]
    /// and [`Sequence::run_recording`]: a key begun by [`Sequence::serve`] is asked of the
    /// tool that began it, never of the probe.
    pub fn with_probe<Q: EffectProbe>(self, probe: Q) -> Sequence<L, Q> {
        let Sequence {
            ledger,
            tools,
            recover,
            unwritten,
            ..
        } = self;
        Sequence {
            ledger,
            tools,
            probe,
            recover,
            unwritten,
        }
    }

    /// The same sequence, answering an abandoned key with `recover(context)`: an `unknown`
    /// result naming the lookup of the operation the context names. A lower layer, as
    /// [`Sequence::with_probe`] is: a served tool's keys answer the tool's own `unknown`.
    #[must_use]
    pub fn with_recovery(
        mut self,
        recover: impl Fn(&str) -> GuaranteeResult + Send + Sync + 'static,
    ) -> Self {
        self.recover = Box::new(recover);
        self
    }

    /// The ledger.
    pub fn ledger(&self) -> &L {
        &self.ledger
    }

    /// Runs `tool` for `call` under the sequence: see [`Sequence`]. Never fails: a
    /// ledger that fails before the tool ran is a refusal (`unavailable`), after it an
    /// [`ReplyKind::Unrecorded`] reply. A tool answer that does not serialize to an object
    /// and read back (a bug in the tool, after it ran) is answered as an abandoned key is,
    /// `unknown` with the lookup its context names.
    ///
    /// # Panics
    ///
    /// Only if a bare [`GuaranteeResult::unknown`] did not serialize and read back, a bug in
    /// this crate.
    pub async fn run<T, F, Fut>(&self, call: Call, tool: F) -> Reply
    where
        T: Serialize,
        F: FnOnce(Lease) -> Fut,
        Fut: Future<Output = Answer<T>>,
    {
        self.run_recording(call, |lease| async move { Done::Answer(tool(lease).await) })
            .await
    }

    /// [`Sequence::run`] for a tool that may record its answer with its key itself, in the
    /// transaction that performs its effect ([`Done::Recorded`]): the effect and the answer
    /// then commit together, so a crash leaves both or neither (never an effect whose key
    /// must be answered `unknown`), and the call costs the ledger one write fewer. A tool that
    /// did not ([`Done::Answer`]: a refusal, a deny, a failure before its transaction) is
    /// completed or released as [`Sequence::run`] does.
    ///
    /// # Panics
    ///
    /// As [`Sequence::run`].
    pub async fn run_recording<T, F, Fut>(&self, call: Call, tool: F) -> Reply
    where
        T: Serialize,
        F: FnOnce(Lease) -> Fut,
        Fut: Future<Output = Done<T>>,
    {
        self.run_admitted(call, || async { Ok(()) }, tool).await
    }

    /// [`Sequence::run_recording`], asking `admit` whether a call that would run may go on
    /// (an account's rate limit): a replay or a recovery does not ask, and a call it refuses
    /// is answered its refusal with its key released.
    pub(super) async fn run_admitted<T, F, Fut, A, AFut>(
        &self,
        call: Call,
        admit: A,
        tool: F,
    ) -> Reply
    where
        T: Serialize,
        F: FnOnce(Lease) -> Fut,
        Fut: Future<Output = Done<T>>,
        A: FnOnce() -> AFut,
        AFut: Future<Output = Result<(), Refusal>>,
    {
        // The outcome is reported inside the call's span, so its event carries the span's
        // fields.
        let run = async {
            let started = Instant::now();
            let mut timings = Timings::default();
            let reply = self.steps(&call, admit, tool, &mut timings).await;
            telemetry::answered(call.tool(), &reply, started.elapsed(), timings);
            reply
        };
        #[cfg(feature = "tracing")]
        let run = tracing::Instrument::instrument(
            run,
            telemetry::span(call.tool(), call.scope(), call.key()),
        );
        run.await
    }

    /// The steps of one call, timing the tool and the ledger into `timings`: the key begun
    /// (a replay, a refusal or a recovery answered at once), `admit` asked (a call it refuses
    /// releases its key: nothing ran), the tool run, its answer recorded.
    pub(super) async fn steps<T, F, Fut, A, AFut>(
        &self,
        call: &Call,
        admit: A,
        tool: F,
        timings: &mut Timings,
    ) -> Reply
    where
        T: Serialize,
        F: FnOnce(Lease) -> Fut,
        Fut: Future<Output = Done<T>>,
        A: FnOnce() -> AFut,
        AFut: Future<Output = Result<(), Refusal>>,
    {
        if call.effect_in_ledger() {
            return match admit().await {
                Ok(()) => self.effect_in_ledger(call, tool, timings).await,
                // Refused: but a settled key's replay (or an abandoned key's recovery) is
                // answered all the same, as it would have been before admission.
                Err(refusal) => match self.begin(call, || async { Err(refusal) }).await {
                    Err(reply) => reply,
                    Ok(lease) => {
                        let _ = self.ledger.release(&lease).await;
                        did_nothing()
                    }
                },
            };
        }
        let lease = match self.begin(call, admit).await {
            Ok(lease) => lease,
            Err(reply) => return reply,
        };
        let tool_started = Instant::now();
        // The tool's future is boxed: its size (a tool's store calls can be large) stays out of
        // every future that awaits the sequence.
        let done = join::beside(Box::pin(tool(lease.clone())), self.keep_alive(&lease)).await;
        timings.tool = tool_started.elapsed();
        let answer = match done {
            Done::Answer(answer) => answer,
            Done::Recorded(stored) => {
                return match stored.answer() {
                    Ok(answer) => Reply::new(ReplyKind::Ran, stored, answer),
                    // Recorded, but not a result this crate reads: what it did is looked up,
                    // as a replay of it would be.
                    Err(_) => self.unknown(ReplyKind::Ran, call.context(), false),
                };
            }
            Done::Lost => return Box::pin(self.lost(call, &lease, None)).await,
        };
        let (stored, answer) = round_trip(&answer).unwrap_or_else(|| {
            // The tool ran and its answer does not serialize: what it did is looked up, for
            // good (no truth will come to replace it).
            let Reply { stored, answer, .. } = self.unknown(ReplyKind::Ran, call.context(), false);
            (stored, answer)
        });
        if stored.is_refusal() {
            return match timed("release", || self.ledger.release(&lease)).await {
                Ok(Completion::Recorded) => Reply::new(ReplyKind::Ran, stored, answer),
                Ok(Completion::LeaseLost) => {
                    let mine = Reply::new(ReplyKind::Ran, stored, answer);
                    Box::pin(self.lost(call, &lease, Some(mine))).await
                }
                Err(_) => {
                    // Nothing was done: the refusal stands, and the key is released later.
                    self.keep_unwritten(Unwritten::Release(call.clone(), lease, stored.clone()));
                    Reply::new(ReplyKind::Ran, stored, answer)
                }
            };
        }
        match timed("complete", || self.ledger.complete(&lease, &stored)).await {
            Ok(Completion::Recorded) => Reply::new(ReplyKind::Ran, stored, answer),
            Ok(Completion::LeaseLost) => {
                let mine = Reply::new(ReplyKind::Ran, stored, answer);
                Box::pin(self.lost(call, &lease, Some(mine))).await
            }
            Err(_) => {
                self.keep_unwritten(Unwritten::Complete(call.clone(), lease, stored));
                self.unknown(ReplyKind::Unrecorded, call.context(), true)
            }
        }
    }

    /// Begins `call`'s key: the lease to run it under, once `admit` let it go on, or the
    /// reply when it does not run (a replay, a refusal, an abandoned key's recovery, a
    /// refusal of `admit`, which releases the key). Neither a replay nor a recovery asks
    /// `admit`: they do no work.
    async fn begin<A, AFut>(&self, call: &Call, admit: A) -> Result<Lease, Reply>
    where
        A: FnOnce() -> AFut,
        AFut: Future<Output = Result<(), Refusal>>,
    {
        let began = timed("begin", || {
            self.ledger
                .begin(call.scope(), call.key(), call.fingerprint(), call.context())
        })
        .await;
        let lease = match began {
            Err(err) => {
                return Err(Reply::refused(
                    Refusal::unavailable(format!(
                        "the idempotency ledger failed ({err}); nothing was run"
                    ))
                    .with_retry_after(RETRY_UNAVAILABLE),
                ));
            }
            Ok(Begin::Fresh(lease)) => lease,
            Ok(Begin::Replay(stored)) => {
                return Err(self.replayed(call, stored, ReplyKind::Replayed));
            }
            Ok(Begin::Abandoned(abandoned)) => match self.examine(&abandoned).await {
                // It never took effect, and under the new fence its first call never can:
                // run it now.
                Ok(Examined::NotStarted) => abandoned.into_lease(),
                Ok(found) => return Err(Box::pin(self.recover(call, &abandoned, found)).await),
                Err(err) => return Err(not_told(&err)),
            },
            Ok(refused) => {
                return Err(Reply::refused(
                    refused
                        .refusal()
                        .expect("neither fresh, replay nor abandoned is a refusal"),
                ));
            }
        };
        match admit().await {
            Ok(()) => Ok(lease),
            Err(refusal) => {
                // Nothing ran: the key is free for the same request later.
                if self.ledger.release(&lease).await.is_err()
                    && let Some((stored, _)) = round_trip(&Answer::<()>::Refused(refusal.clone()))
                {
                    self.keep_unwritten(Unwritten::Release(call.clone(), lease, stored));
                }
                Err(Reply::refused(refusal))
            }
        }
    }

    /// What the operation of `abandoned` came to: asked of the tool that began the key, when
    /// a served tool did, else of the application's probe.
    pub(super) async fn examine(&self, abandoned: &Abandoned) -> Result<Examined, String> {
        if let Some((tool, id)) = self.tools.of(abandoned.context()) {
            return tool.examine(abandoned, id).await;
        }
        match self.probe.started(abandoned).await {
            Ok(false) => Ok(Examined::NotStarted),
            Ok(true) => Ok(match self.probe.outcome(abandoned).await {
                Ok(Some(outcome)) => Examined::settled(outcome),
                _ => Examined::Unknown,
            }),
            Err(err) => Err(err.to_string()),
        }
    }

    /// A call whose effect is in the ledger's database ([`Call::with_effect_in_ledger`]): the
    /// tool runs under a lease whose key is not begun yet, which its typed transaction begins and records with
    /// its answer. What it did not record (a deny, say) is recorded as a lost call's answer
    /// is, where the key stands; a key found begun already is read as any lost call reads it.
    async fn effect_in_ledger<T, F, Fut>(
        &self,
        call: &Call,
        tool: F,
        timings: &mut Timings,
    ) -> Reply
    where
        T: Serialize,
        F: FnOnce(Lease) -> Fut,
        Fut: Future<Output = Done<T>>,
    {
        let lease = Lease::for_effect_in_ledger(
            call.scope().clone(),
            call.key().clone(),
            call.fingerprint(),
            call.context().to_owned(),
            super::ledger::DEFAULT_LEASE,
        );
        let tool_started = Instant::now();
        let done = Box::pin(tool(lease.clone())).await;
        timings.tool = tool_started.elapsed();
        let deadline = Some(Instant::now() + super::ledger::DEFAULT_LEASE);
        match done {
            Done::Recorded(stored) => match stored.answer() {
                Ok(answer) => Reply::new(ReplyKind::Ran, stored, answer),
                Err(_) => self.unknown(ReplyKind::Ran, call.context(), false),
            },
            // The key was begun by another call (or the commit's outcome is not known):
            // nothing of this call's stands, and the key answers what it holds.
            Done::Lost => {
                Box::pin(self.settle_lost(call, &lease, None, deadline, ReplyKind::Replayed))
                    .await
                    .unwrap_or_else(did_nothing)
            }
            Done::Answer(answer) => {
                let Some((stored, answer)) = round_trip(&answer) else {
                    return self.unknown(ReplyKind::Ran, call.context(), false);
                };
                if stored.is_refusal() {
                    // Nothing was done, and no key was begun.
                    return Reply::new(ReplyKind::Ran, stored, answer);
                }
                let mine = Some(Reply::new(ReplyKind::Ran, stored, answer));
                if let Some(reply) = Box::pin(self.settle_lost(
                    call,
                    &lease,
                    mine.as_ref(),
                    deadline,
                    ReplyKind::Replayed,
                ))
                .await
                {
                    return reply;
                }
                if let Some(mine) = mine {
                    self.keep_unwritten(Unwritten::Resolve(call.clone(), lease, mine.stored));
                }
                self.unknown(ReplyKind::Unrecorded, call.context(), true)
            }
        }
    }

    /// Renews `lease` at a third of its length for as long as it is polled (beside the
    /// tool), under the same fence; ends once the store says the lease is lost, or it passes
    /// with every renewal failing, marking it lost. It needs a Tokio runtime with its timer
    /// (every axum and rmcp server has one); without a runtime it does nothing.
    async fn keep_alive(&self, lease: &Lease) {
        if tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let every = (lease.length() / 3).max(Duration::from_millis(1));
        loop {
            tokio::time::sleep(every).await;
            // A store that is down for now is asked again, while the lease lasts.
            let lost = match timed("renew", || self.ledger.renew(lease)).await {
                Ok(renewed) => renewed.is_none(),
                Err(_) => !lease.is_held(),
            };
            if lost {
                lease.lose();
                return;
            }
        }
    }

    /// A replay of `stored`, as `kind`.
    fn replayed(&self, call: &Call, stored: StoredAnswer, kind: ReplyKind) -> Reply {
        match stored.answer() {
            Ok(answer) => Reply::new(kind, stored, answer),
            // A row written by something else: the first call ran, so never "nothing was
            // done"; what it did is looked up.
            Err(_) => self.unknown(kind, call.context(), false),
        }
    }

    /// The `unknown` answer of `context`, in its stored form: provisional when the truth may
    /// still replace it.
    fn unknown(&self, kind: ReplyKind, context: &str, provisional: bool) -> Reply {
        let declared = self
            .tools
            .of(context)
            .and_then(|(tool, id)| tool.unknown(&id));
        let (stored, answer) = declared
            .or_else(|| round_trip(&Answer::Result((self.recover)(context))))
            .or_else(|| {
                round_trip(&Answer::Result(
                    GuaranteeResult::<crate::JsonObject>::unknown(),
                ))
            })
            .expect("a bare unknown result serializes and reads back");
        Reply::new(kind, stored.with_provisional(provisional), answer)
    }
}

/// The reply to a call that made nothing under its lease (its effect did not commit), with
/// its key released: send the same request again.
fn did_nothing() -> Reply {
    Reply::refused(
        Refusal::unavailable(
            "the call lost its hold on its key before its effect committed; nothing was done: \
             send the same request with the same key again",
        )
        .with_retry_after(RETRY_UNAVAILABLE),
    )
}

/// The reply when the probe could not tell whether an abandoned key's operation started.
fn not_told(err: &dyn std::fmt::Display) -> Reply {
    Reply::refused(
        Refusal::unavailable(format!(
            "whether the first call with this key took effect could not be told ({err}); \
             nothing was run"
        ))
        .with_retry_after(RETRY_UNAVAILABLE),
    )
}

impl<L, P> Sequence<L, P> {
    /// How many writes the ledger has not taken yet (answers not recorded, keys not
    /// released), for the next [`Sequence::settle`] to make.
    #[must_use]
    pub fn unwritten(&self) -> usize {
        self.lock_unwritten().len()
    }

    fn lock_unwritten(&self) -> std::sync::MutexGuard<'_, Vec<Unwritten>> {
        self.unwritten
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}
