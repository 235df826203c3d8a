//! [`Sequence`]: the replay sequence every guarantee tool runs around its ledger.

use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;

use super::fingerprint::Fingerprint;
use super::join;
use super::key::IdempotencyKey;
use super::ledger::{Abandoned, Begin, Completion, Lease, Ledger, Scope, StoredAnswer};
use super::probe::{AssumeStarted, Done, EffectProbe};
use super::reply::{Reply, ReplyKind};
use super::telemetry::{self, Timings};
use crate::guarantee::{Answer, GuaranteeResult, Refusal};

/// When a caller refused `unavailable` by the sequence (its store failed) is told to try the
/// same request again: a store that restarts or fails over is usually back within seconds.
const RETRY_UNAVAILABLE: Duration = Duration::from_secs(1);

/// One keyed call, as the sequence begins it: whose (the [`Scope`]), under which key, the
/// request's [`Fingerprint`], and the context stored with the key (the id of the operation
/// the call creates, say), which names the lookup if the call is ever found abandoned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    tool: String,
    scope: Scope,
    key: IdempotencyKey,
    fingerprint: Fingerprint,
    context: String,
    in_ledger: bool,
}

impl Call {
    /// A call with an empty context.
    #[must_use]
    pub fn new(scope: Scope, key: IdempotencyKey, fingerprint: Fingerprint) -> Self {
        Call {
            tool: String::new(),
            scope,
            key,
            fingerprint,
            context: String::new(),
            in_ledger: false,
        }
    }

    /// `principal`'s call of `tool` with `arguments` under `key`: scoped to the principal,
    /// fingerprinted over the tool, the principal and the canonical arguments.
    #[must_use]
    pub fn of(
        tool: &str,
        principal: &str,
        key: IdempotencyKey,
        arguments: &serde_json::Value,
    ) -> Self {
        Call {
            tool: tool.to_owned(),
            ..Call::new(
                Scope::principal(principal),
                key,
                Fingerprint::of(tool, principal, arguments),
            )
        }
    }

    /// The tool called: named by [`Call::of`], empty for [`Call::new`]. Telemetry names the
    /// call by it.
    #[must_use]
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The same call, storing `context` with its key.
    #[must_use]
    pub fn with_context(mut self, context: impl Into<String>) -> Self {
        self.context = context.into();
        self
    }

    /// The same call, for a tool whose every effect is a write in the typed transaction on
    /// the ledger's own database (`PostgresTransaction`, `SqliteTransaction`): the key is
    /// then begun inside that transaction and recorded with the answer at its commit, one
    /// round trip and one commit fewer than beginning it on its own. A crash leaves neither
    /// the effect nor the key. While the transaction is open, a second call with the same key
    /// is refused as in flight (PostgreSQL: an advisory lock on the key) or waits for it
    /// (SQLite: the file's write lock); after it, a second call replays its answer (on
    /// PostgreSQL its tool runs, and its writes roll back at its commit, which finds the key
    /// answered). The tool holds no lease while it runs, so it keeps the work it must not do
    /// twice inside that transaction, and makes no effect outside it.
    #[must_use]
    pub fn with_effect_in_ledger(mut self) -> Self {
        self.in_ledger = true;
        self
    }

    /// Whether the call's effect is in the ledger's database ([`Call::with_effect_in_ledger`]).
    #[must_use]
    pub fn effect_in_ledger(&self) -> bool {
        self.in_ledger
    }

    /// The scope.
    #[must_use]
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// The key.
    #[must_use]
    pub fn key(&self) -> &IdempotencyKey {
        &self.key
    }

    /// The fingerprint.
    #[must_use]
    pub fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }

    /// The context.
    #[must_use]
    pub fn context(&self) -> &str {
        &self.context
    }

    /// An id for the operation this call creates, `{prefix}_` and 16 hex digits: the same
    /// for the same scope, key and request, so a call found abandoned names it from its
    /// context alone, and different for any other.
    ///
    /// ```
    /// use agent_tool_result::replay::{Call, IdempotencyKey};
    ///
    /// let key = || IdempotencyKey::new("k").unwrap();
    /// let a = Call::of("send_sms", "acct_1", key(), &serde_json::json!({ "to": "1" }));
    /// let b = Call::of("send_sms", "acct_2", key(), &serde_json::json!({ "to": "1" }));
    /// assert_eq!(a.operation_id("msg"), a.clone().operation_id("msg"));
    /// assert_ne!(a.operation_id("msg"), b.operation_id("msg"));
    /// assert!(a.operation_id("msg").starts_with("msg_"));
    /// ```
    #[must_use]
    pub fn operation_id(&self, prefix: &str) -> String {
        use sha2::{Digest, Sha256};
        let mut hasher = Sha256::new();
        for part in [self.scope.as_str(), self.key.as_str()] {
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part.as_bytes());
        }
        hasher.update(self.fingerprint.to_hex());
        let head = hasher.finalize()[..8]
            .iter()
            .fold(0u64, |head, byte| head << 8 | u64::from(*byte));
        format!("{prefix}_{head:016x}")
    }
}

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
/// // The background step: owed writes, abandoned keys, and a purge, each bounded.
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

/// An answer in its stored form and read back from it, or `None` when it does not
/// serialize to an object or does not read back.
fn round_trip<T: Serialize>(answer: &Answer<T>) -> Option<(StoredAnswer, Answer)> {
    let stored = StoredAnswer::of(answer).ok()?;
    let read = stored.answer().ok()?;
    Some((stored, read))
}

/// A write the sequence owes the ledger, with the call it is for.
#[derive(Debug)]
enum Owed {
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
    probe: P,
    recover: Box<Recovery>,
    owed: Mutex<Vec<Owed>>,
}

impl<L: std::fmt::Debug, P> std::fmt::Debug for Sequence<L, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sequence")
            .field("ledger", &self.ledger)
            .field("owed", &self.lock_owed().len())
            .finish_non_exhaustive()
    }
}

impl<L: Ledger> Sequence<L> {
    /// The sequence over `ledger`, answering an abandoned key with a bare
    /// [`GuaranteeResult::unknown`], and taking every abandoned key for one that may have
    /// taken effect (see [`Sequence::with_probe`]).
    pub fn new(ledger: L) -> Self {
        Sequence {
            ledger,
            probe: AssumeStarted,
            recover: Box::new(|_| GuaranteeResult::unknown()),
            owed: Mutex::new(Vec::new()),
        }
    }
}

impl<L: Ledger, P: EffectProbe> Sequence<L, P> {
    /// The same sequence, asking `probe` whether the operation of an abandoned key took
    /// effect: one that did not is run (or, in [`Sequence::settle`], its key released)
    /// rather than answered `unknown`.
    pub fn with_probe<Q: EffectProbe>(self, probe: Q) -> Sequence<L, Q> {
        let Sequence {
            ledger,
            recover,
            owed,
            ..
        } = self;
        Sequence {
            ledger,
            probe,
            recover,
            owed,
        }
    }

    /// The same sequence, answering an abandoned key with `recover(context)`: an `unknown`
    /// result naming the lookup of the operation the context names.
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
        // The outcome is reported inside the call's span, so its event carries the span's
        // fields.
        let run = async {
            let started = Instant::now();
            let mut timings = Timings::default();
            let reply = self.sequence(&call, tool, &mut timings).await;
            telemetry::answered(&call.tool, &reply, started.elapsed(), timings);
            reply
        };
        #[cfg(feature = "tracing")]
        let run = tracing::Instrument::instrument(
            run,
            telemetry::span(&call.tool, &call.scope, &call.key),
        );
        run.await
    }

    /// The sequence itself, timing the tool and the ledger into `timings`.
    async fn sequence<T, F, Fut>(&self, call: &Call, tool: F, timings: &mut Timings) -> Reply
    where
        T: Serialize,
        F: FnOnce(Lease) -> Fut,
        Fut: Future<Output = Done<T>>,
    {
        if call.in_ledger {
            return self.folded(call, tool, timings).await;
        }
        let began = timed("begin", || {
            self.ledger
                .begin(&call.scope, &call.key, call.fingerprint, &call.context)
        })
        .await;
        let lease = match began {
            Err(err) => {
                return Reply::refused(
                    Refusal::unavailable(format!(
                        "the idempotency ledger failed ({err}); nothing was run"
                    ))
                    .with_retry_after(RETRY_UNAVAILABLE),
                );
            }
            Ok(Begin::Fresh(lease)) => lease,
            Ok(Begin::Replay(stored)) => return self.replayed(call, stored, ReplyKind::Replayed),
            Ok(Begin::Abandoned(abandoned)) => match self.probe.started(&abandoned).await {
                Ok(true) => return Box::pin(self.recover(call, &abandoned)).await,
                // It never took effect, and under the new fence its first call never can:
                // run it now.
                Ok(false) => abandoned.into_lease(),
                Err(err) => return not_told(&err),
            },
            Ok(refused) => {
                return Reply::refused(
                    refused
                        .refusal()
                        .expect("neither fresh, replay nor abandoned is a refusal"),
                );
            }
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
                    Err(_) => self.unknown(ReplyKind::Ran, &call.context, false),
                };
            }
            Done::Lost => return Box::pin(self.lost(call, &lease, None)).await,
        };
        let (stored, answer) = round_trip(&answer).unwrap_or_else(|| {
            // The tool ran and its answer does not serialize: what it did is looked up, for
            // good (no truth will come to replace it).
            let Reply { stored, answer, .. } = self.unknown(ReplyKind::Ran, &call.context, false);
            (stored, answer)
        });
        if stored.is_refusal() {
            return match timed("release", || self.ledger.release(&lease)).await {
                Ok(Completion::Recorded) => Reply::new(ReplyKind::Ran, stored, answer),
                Ok(Completion::LeaseLost) => {
                    Box::pin(self.lost(call, &lease, Some((stored, answer)))).await
                }
                Err(_) => {
                    // Nothing was done: the refusal stands, and the key is released later.
                    self.owe(Owed::Release(call.clone(), lease, stored.clone()));
                    Reply::new(ReplyKind::Ran, stored, answer)
                }
            };
        }
        match timed("complete", || self.ledger.complete(&lease, &stored)).await {
            Ok(Completion::Recorded) => Reply::new(ReplyKind::Ran, stored, answer),
            Ok(Completion::LeaseLost) => {
                Box::pin(self.lost(call, &lease, Some((stored, answer)))).await
            }
            Err(_) => {
                self.owe(Owed::Complete(call.clone(), lease, stored));
                self.unknown(ReplyKind::Unrecorded, &call.context, true)
            }
        }
    }

    /// A call whose effect is in the ledger's database ([`Call::with_effect_in_ledger`]): the
    /// tool runs under a pending lease, which its typed transaction begins and records with
    /// its answer. What it did not record (a deny, say) is recorded as a lost call's answer
    /// is, where the key stands; a key found begun already is read as any lost call reads it.
    async fn folded<T, F, Fut>(&self, call: &Call, tool: F, timings: &mut Timings) -> Reply
    where
        T: Serialize,
        F: FnOnce(Lease) -> Fut,
        Fut: Future<Output = Done<T>>,
    {
        let lease = Lease::pending(
            call.scope.clone(),
            call.key.clone(),
            call.fingerprint,
            call.context.clone(),
            super::ledger::DEFAULT_LEASE,
        );
        let tool_started = Instant::now();
        let done = Box::pin(tool(lease.clone())).await;
        timings.tool = tool_started.elapsed();
        let deadline = Some(Instant::now() + super::ledger::DEFAULT_LEASE);
        match done {
            Done::Recorded(stored) => match stored.answer() {
                Ok(answer) => Reply::new(ReplyKind::Ran, stored, answer),
                Err(_) => self.unknown(ReplyKind::Ran, &call.context, false),
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
                    return self.unknown(ReplyKind::Ran, &call.context, false);
                };
                if stored.is_refusal() {
                    // Nothing was done, and no key was begun.
                    return Reply::new(ReplyKind::Ran, stored, answer);
                }
                let mine = Some((stored, answer));
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
                if let Some((stored, _)) = mine {
                    self.owe(Owed::Resolve(call.clone(), lease, stored));
                }
                self.unknown(ReplyKind::Unrecorded, &call.context, true)
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

    /// The reply to a call whose own record (or release) came back
    /// [`Completion::LeaseLost`], or whose effect did not commit under its lease (`mine` is
    /// `None`): what the ledger holds for the key, never an answer no replay gives. The key
    /// is read again: an answer recorded since is the reply (replaced by this call's, if it is
    /// the provisional `unknown` of a recovery); a key nobody answered is taken, and
    /// answered with this call's answer; a key someone holds is waited for, within the
    /// lease's length. When the ledger cannot tell, the reply is `unknown`, and the truth is
    /// owed to it.
    async fn lost(
        &self,
        call: &Call,
        lease: &Lease,
        mine: Option<(StoredAnswer, Answer)>,
    ) -> Reply {
        if mine.is_none()
            && let Ok(Completion::Recorded) = self.ledger.release(lease).await
        {
            // The lease still held, and nothing committed under it.
            return did_nothing();
        }
        let deadline = Instant::now() + lease.length().max(Duration::from_millis(500));
        if let Some(reply) = self
            .settle_lost(
                call,
                lease,
                mine.as_ref(),
                Some(deadline),
                ReplyKind::LeaseLost,
            )
            .await
        {
            return reply;
        }
        if let Some((stored, _)) = mine {
            self.owe(Owed::Resolve(call.clone(), lease.clone(), stored));
        }
        self.unknown(ReplyKind::Unrecorded, &call.context, true)
    }

    /// One attempt at [`Sequence::lost`]'s reading of the key, waiting for a key in flight
    /// until `deadline` (not at all without one): the reply (an answer found recorded is
    /// replied as `answered`), or `None` when the ledger failed or the key stayed in flight.
    async fn settle_lost(
        &self,
        call: &Call,
        lease: &Lease,
        mine: Option<&(StoredAnswer, Answer)>,
        deadline: Option<Instant>,
        answered: ReplyKind,
    ) -> Option<Reply> {
        let mine_reply =
            |kind| mine.map(|(stored, answer)| Reply::new(kind, stored.clone(), answer.clone()));
        loop {
            let began = self
                .ledger
                .begin(&call.scope, &call.key, call.fingerprint, &call.context)
                .await
                .ok()?;
            match began {
                Begin::Replay(stored) => {
                    let truth = mine.filter(|(ours, _)| !ours.is_provisional());
                    if stored.is_provisional()
                        && let Some((ours, _)) = truth
                    {
                        let truth = (!ours.is_refusal()).then_some(ours);
                        match self.ledger.resolve(lease, truth).await.ok()? {
                            Completion::Recorded => return mine_reply(ReplyKind::Ran),
                            // Answered otherwise since: read it again.
                            Completion::LeaseLost => continue,
                        }
                    }
                    return Some(self.replayed(call, stored, answered));
                }
                Begin::Abandoned(abandoned) => {
                    let Some((stored, _)) = mine else {
                        // This call's effect did not commit, and the key has no answer: had
                        // any typed transaction under it committed, the answer would be
                        // there, committed with it. Nothing was done; the key is freed.
                        let _ = self.ledger.release(abandoned.lease()).await;
                        return Some(did_nothing());
                    };
                    return match self.answer_under(abandoned.lease(), stored).await.ok()? {
                        Completion::Recorded => mine_reply(ReplyKind::Ran),
                        Completion::LeaseLost => continue,
                    };
                }
                Begin::Fresh(fresh) => {
                    // The key was released since: this call's answer is the truth.
                    let Some((stored, _)) = mine else {
                        let _ = self.ledger.release(&fresh).await;
                        return Some(did_nothing());
                    };
                    return match self.answer_under(&fresh, stored).await.ok()? {
                        Completion::Recorded => mine_reply(ReplyKind::Ran),
                        Completion::LeaseLost => continue,
                    };
                }
                Begin::InFlight { until } => {
                    let deadline = deadline?;
                    let now = Instant::now();
                    if now >= deadline || tokio::runtime::Handle::try_current().is_err() {
                        return None;
                    }
                    let left = until
                        .duration_since(SystemTime::now())
                        .unwrap_or_default()
                        .clamp(Duration::from_millis(5), Duration::from_millis(100));
                    tokio::time::sleep(left.min(deadline - now)).await;
                }
                refused @ Begin::Mismatch => {
                    return Some(Reply::refused(refused.refusal()?));
                }
            }
        }
    }

    /// Records `stored` under `lease` (a key this call took again): a result completes the
    /// key, a refusal releases it.
    async fn answer_under(
        &self,
        lease: &Lease,
        stored: &StoredAnswer,
    ) -> Result<Completion, L::Error> {
        if stored.is_refusal() {
            self.ledger.release(lease).await
        } else {
            self.ledger.complete(lease, stored).await
        }
    }

    /// A replay of `stored`, as `kind`.
    fn replayed(&self, call: &Call, stored: StoredAnswer, kind: ReplyKind) -> Reply {
        match stored.answer() {
            Ok(answer) => Reply::new(kind, stored, answer),
            // A row written by something else: the first call ran, so never "nothing was
            // done"; what it did is looked up.
            Err(_) => self.unknown(kind, &call.context, false),
        }
    }

    /// The `unknown` answer of `context`, in its stored form: provisional when the truth may
    /// still replace it.
    fn unknown(&self, kind: ReplyKind, context: &str, provisional: bool) -> Reply {
        let (stored, answer) = round_trip(&Answer::Result((self.recover)(context)))
            .or_else(|| {
                round_trip(&Answer::Result(
                    GuaranteeResult::<crate::JsonObject>::unknown(),
                ))
            })
            .expect("a bare unknown result serializes and reads back");
        Reply::new(kind, stored.with_provisional(provisional), answer)
    }

    /// The answer of an abandoned key whose operation may have started: the probe's outcome
    /// of the operation (final), or else `unknown` with the lookup its context names
    /// (provisional).
    async fn recovery_of(&self, abandoned: &Abandoned) -> Reply {
        if let Ok(Some(outcome)) = self.probe.outcome(abandoned).await
            && let Some((stored, answer)) = round_trip(&Answer::Result(outcome))
        {
            return Reply::new(ReplyKind::Recovered, stored, answer);
        }
        self.unknown(ReplyKind::Recovered, abandoned.context(), true)
    }

    /// Answers an abandoned key from the probe (its operation's outcome, or `unknown`) and
    /// completes it with that answer; should the completion come back lost, the key's answer
    /// is read again, as for any call.
    async fn recover(&self, call: &Call, abandoned: &Abandoned) -> Reply {
        let reply = self.recovery_of(abandoned).await;
        match self
            .ledger
            .complete(abandoned.lease(), reply.stored())
            .await
        {
            Ok(Completion::Recorded) => reply,
            Ok(Completion::LeaseLost) => {
                let Reply { stored, answer, .. } = reply;
                self.lost(call, abandoned.lease(), Some((stored, answer)))
                    .await
            }
            Err(_) => {
                self.owe(Owed::Complete(
                    call.clone(),
                    abandoned.lease().clone(),
                    reply.stored.clone(),
                ));
                self.unknown(ReplyKind::Recovered, abandoned.context(), true)
            }
        }
    }

    fn owe(&self, owed: Owed) {
        self.lock_owed().push(owed);
    }

    /// Makes one owed write; `false` when it must stay owed.
    async fn pay(&self, owed: &Owed) -> Result<bool, L::Error> {
        let (call, lease, stored, first) = match owed {
            Owed::Complete(call, lease, stored) => (
                call,
                lease,
                stored,
                self.ledger.complete(lease, stored).await?,
            ),
            Owed::Release(call, lease, stored) => {
                (call, lease, stored, self.ledger.release(lease).await?)
            }
            Owed::Resolve(call, lease, stored) => (call, lease, stored, Completion::LeaseLost),
        };
        if first == Completion::Recorded {
            return Ok(true);
        }
        // The lease was lost meanwhile: the truth goes where the key stands now.
        let Ok(answer) = stored.answer() else {
            return Ok(true);
        };
        let mine = Some((stored.clone(), answer));
        Ok(self
            .settle_lost(call, lease, mine.as_ref(), None, ReplyKind::LeaseLost)
            .await
            .is_some())
    }

    /// The background step a process runs every little while: writes what earlier calls
    /// could not (an answer not recorded, a key not released, the truth owed to an
    /// `unknown`), answers up to `limit` abandoned keys (so none waits for its next request),
    /// and purges up to `limit` answered keys older than the retention window.
    ///
    /// # Errors
    ///
    /// The ledger's error, at the first write that fails; what is still owed stays owed.
    ///
    /// # Panics
    ///
    /// As [`Sequence::run`].
    pub async fn settle(&self, limit: usize) -> Result<Settled, L::Error> {
        let mut settled = Settled::default();
        let owed = std::mem::take(&mut *self.lock_owed());
        let mut owed = owed.into_iter();
        while let Some(write) = owed.next() {
            match self.pay(&write).await {
                Ok(true) => settled.recorded += 1,
                Ok(false) => self.owe(write),
                Err(err) => {
                    let mut still = self.lock_owed();
                    still.push(write);
                    still.extend(owed);
                    return Err(err);
                }
            }
        }
        for abandoned in self.ledger.abandoned(limit).await? {
            match self.probe.started(&abandoned).await {
                Ok(true) => {
                    let reply = self.recovery_of(&abandoned).await;
                    let _ = self
                        .ledger
                        .complete(abandoned.lease(), &reply.stored)
                        .await?;
                    settled.recovered += 1;
                }
                Ok(false) => {
                    if self.ledger.release(abandoned.lease()).await? == Completion::Recorded {
                        settled.released += 1;
                    }
                }
                // Taken again once this lease passes.
                Err(_) => {}
            }
        }
        settled.purged = self.ledger.purge(limit).await?;
        Ok(settled)
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
    /// How many writes are owed to the ledger (answers not recorded, keys not released).
    #[must_use]
    pub fn owed(&self) -> usize {
        self.lock_owed().len()
    }

    fn lock_owed(&self) -> std::sync::MutexGuard<'_, Vec<Owed>> {
        self.owed.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
