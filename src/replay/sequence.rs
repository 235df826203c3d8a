//! [`Sequence`]: the replay sequence every guarantee tool runs around its ledger.

use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::fingerprint::Fingerprint;
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

/// A write the sequence owes the ledger.
#[derive(Debug)]
enum Owed {
    Complete(Lease, StoredAnswer),
    Release(Lease),
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
/// The sequence does not renew a lease while the tool runs: choose a lease longer than the
/// longest call (`with_lease` on the store). A call that still runs past it is answered as it
/// ran ([`ReplyKind::LeaseLost`]), and the key keeps what the process that took it over
/// decided; the call's own writes, checked against its fence, land only while no one has.
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
            Ok(Begin::Replay(stored)) => {
                return match stored.answer() {
                    Ok(answer) => Reply::new(ReplyKind::Replayed, stored, answer),
                    // A row written by something else: the first call ran, so never
                    // "nothing was done"; what it did is looked up.
                    Err(_) => self.unknown(ReplyKind::Replayed, &call.context),
                };
            }
            Ok(Begin::Abandoned(abandoned)) => match self.probe.started(&abandoned).await {
                Ok(true) => return self.recover(&abandoned).await,
                // It never took effect, and under the new fence its first call never can:
                // run it now.
                Ok(false) => abandoned.into_lease(),
                Err(err) => {
                    return Reply::refused(
                        Refusal::unavailable(format!(
                            "whether the first call with this key took effect could not be \
                             told ({err}); nothing was run"
                        ))
                        .with_retry_after(RETRY_UNAVAILABLE),
                    );
                }
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
        let done = tool(lease.clone()).await;
        timings.tool = tool_started.elapsed();
        let answer = match done {
            Done::Answer(answer) => answer,
            Done::Recorded(stored) => {
                return match stored.answer() {
                    Ok(answer) => Reply::new(ReplyKind::Ran, stored, answer),
                    // Recorded, but not a result this crate reads: what it did is looked up,
                    // as a replay of it would be.
                    Err(_) => self.unknown(ReplyKind::Ran, &call.context),
                };
            }
        };
        let (reply, owed) = match round_trip(&answer) {
            Some((stored, answer)) if stored.is_refusal() => {
                let reply = Reply::new(ReplyKind::Ran, stored, answer);
                match timed("release", || self.ledger.release(&lease)).await {
                    Ok(_) => (reply, None),
                    Err(_) => (reply, Some(Owed::Release(lease))),
                }
            }
            Some((stored, answer)) => self.complete(lease, stored, answer).await,
            // The tool ran and its answer does not serialize: what it did is looked up.
            None => {
                let Reply { stored, answer, .. } = self.unknown(ReplyKind::Ran, &call.context);
                self.complete(lease, stored, answer).await
            }
        };
        if let Some(owed) = owed {
            self.lock_owed().push(owed);
        }
        reply
    }

    /// Completes a fresh key with its answer; what could not be written is owed.
    async fn complete(
        &self,
        lease: Lease,
        stored: StoredAnswer,
        answer: Answer,
    ) -> (Reply, Option<Owed>) {
        match timed("complete", || self.ledger.complete(&lease, &stored)).await {
            Ok(Completion::Recorded) => (Reply::new(ReplyKind::Ran, stored, answer), None),
            Ok(Completion::LeaseLost) => (Reply::new(ReplyKind::LeaseLost, stored, answer), None),
            Err(_) => (
                Reply::new(ReplyKind::Unrecorded, stored.clone(), answer),
                Some(Owed::Complete(lease, stored)),
            ),
        }
    }

    /// The `unknown` answer of `context`, in its stored form.
    fn unknown(&self, kind: ReplyKind, context: &str) -> Reply {
        let (stored, answer) = round_trip(&Answer::Result((self.recover)(context)))
            .or_else(|| {
                round_trip(&Answer::Result(
                    GuaranteeResult::<crate::JsonObject>::unknown(),
                ))
            })
            .expect("a bare unknown result serializes and reads back");
        Reply::new(kind, stored, answer)
    }

    /// Answers an abandoned key `unknown` and completes it with that answer.
    async fn recover(&self, abandoned: &Abandoned) -> Reply {
        let reply = self.unknown(ReplyKind::Recovered, abandoned.context());
        if self
            .ledger
            .complete(abandoned.lease(), reply.stored())
            .await
            .is_err()
        {
            self.lock_owed().push(Owed::Complete(
                abandoned.lease().clone(),
                reply.stored.clone(),
            ));
        }
        reply
    }

    /// The background step a process runs every little while: writes what earlier calls
    /// could not, answers up to `limit` abandoned keys `unknown` (so none waits for its next
    /// request), and purges up to `limit` answered keys older than the retention window.
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
            let done = match &write {
                Owed::Complete(lease, stored) => self.ledger.complete(lease, stored).await,
                Owed::Release(lease) => self.ledger.release(lease).await,
            };
            if let Err(err) = done {
                let mut still = self.lock_owed();
                still.push(write);
                still.extend(owed);
                return Err(err);
            }
            settled.recorded += 1;
        }
        for abandoned in self.ledger.abandoned(limit).await? {
            match self.probe.started(&abandoned).await {
                Ok(true) => {
                    let reply = self.unknown(ReplyKind::Recovered, abandoned.context());
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
