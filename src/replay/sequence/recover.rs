//! How the sequence answers a call that lost its hold on its key, or found it abandoned: by
//! reading the key again, so the reply is what the ledger holds, never an answer no replay
//! gives.

use std::time::{Duration, Instant, SystemTime};

use super::super::call::Call;
use super::super::lease::Lease;
use super::super::ledger::{Abandoned, Begin, Completion, Ledger};
use super::super::probe::EffectProbe;
use super::super::recovery::Examined;
use super::super::reply::{Reply, ReplyKind};
use super::super::stored::StoredAnswer;
use super::{Sequence, Unwritten, did_nothing};

impl<L: Ledger, P: EffectProbe> Sequence<L, P> {
    /// The reply to a call whose own record (or release) came back
    /// [`Completion::LeaseLost`], or whose effect did not commit under its lease (`mine` is
    /// `None`): what the ledger holds for the key, never an answer no replay gives. `mine` is
    /// the call's own reply, whose kind says how it came to it (its tool ran, or it recovered
    /// an abandoned key), and stays its kind if it becomes the key's answer. The key
    /// is read again: an answer recorded since is the reply (replaced by this call's, if it is
    /// the provisional `unknown` of a recovery); a key nobody answered is taken, and
    /// answered with this call's answer; a key someone holds is waited for, within the
    /// lease's length. When the ledger cannot tell, the reply is `unknown`, and the truth is
    /// owed to it.
    pub(super) async fn lost(&self, call: &Call, lease: &Lease, mine: Option<Reply>) -> Reply {
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
        if let Some(mine) = mine {
            self.keep_unwritten(Unwritten::Resolve(call.clone(), lease.clone(), mine.stored));
        }
        self.unknown(ReplyKind::Unrecorded, call.context(), true)
    }

    /// One attempt at [`Sequence::lost`]'s reading of the key, waiting for a key in flight
    /// until `deadline` (not at all without one): the reply (an answer found recorded is
    /// replied as `answered`), or `None` when the ledger failed or the key stayed in flight.
    pub(super) async fn settle_lost(
        &self,
        call: &Call,
        lease: &Lease,
        mine: Option<&Reply>,
        deadline: Option<Instant>,
        answered: ReplyKind,
    ) -> Option<Reply> {
        let mine_reply = || mine.cloned();
        loop {
            let began = self
                .ledger
                .begin(call.scope(), call.key(), call.fingerprint(), call.context())
                .await
                .ok()?;
            match began {
                Begin::Replay(stored) => {
                    let truth = mine
                        .map(Reply::stored)
                        .filter(|ours| !ours.is_provisional());
                    if stored.is_provisional()
                        && let Some(ours) = truth
                    {
                        let truth = (!ours.is_refusal()).then_some(ours);
                        match self.ledger.resolve(lease, truth).await.ok()? {
                            Completion::Recorded => return mine_reply(),
                            // Answered otherwise since: read it again.
                            Completion::LeaseLost => continue,
                        }
                    }
                    return Some(self.replayed(call, stored, answered));
                }
                Begin::Abandoned(abandoned) => {
                    let Some(Reply { stored, .. }) = mine else {
                        // This call's effect did not commit, and the key has no answer: had
                        // any typed transaction under it committed, the answer would be
                        // there, committed with it. Nothing was done; the key is freed.
                        let _ = self.ledger.release(abandoned.lease()).await;
                        return Some(did_nothing());
                    };
                    return match self.answer_under(abandoned.lease(), stored).await.ok()? {
                        Completion::Recorded => mine_reply(),
                        Completion::LeaseLost => continue,
                    };
                }
                Begin::Fresh(fresh) => {
                    // The key was released since: this call's answer is the truth.
                    let Some(Reply { stored, .. }) = mine else {
                        let _ = self.ledger.release(&fresh).await;
                        return Some(did_nothing());
                    };
                    return match self.answer_under(&fresh, stored).await.ok()? {
                        Completion::Recorded => mine_reply(),
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
    pub(super) async fn answer_under(
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

    /// The answer of an abandoned key whose operation may have started, from what was
    /// `found` of it: its outcome (final), or else `unknown`, naming the lookup of the tool
    /// that began it (provisional).
    pub(super) fn recovery_of(&self, abandoned: &Abandoned, found: Examined) -> Reply {
        match found {
            Examined::Settled(settled) => {
                let (stored, answer) = *settled;
                Reply::new(ReplyKind::Recovered, stored, answer)
            }
            Examined::Unknown | Examined::NotStarted => {
                self.unknown(ReplyKind::Recovered, abandoned.context(), true)
            }
        }
    }

    /// Answers an abandoned key from what was `found` of its operation (its outcome, or
    /// `unknown`) and completes it with that answer; should the completion come back lost,
    /// the key's answer is read again, as for any call.
    pub(super) async fn recover(
        &self,
        call: &Call,
        abandoned: &Abandoned,
        found: Examined,
    ) -> Reply {
        let reply = self.recovery_of(abandoned, found);
        match self
            .ledger
            .complete(abandoned.lease(), reply.stored())
            .await
        {
            Ok(Completion::Recorded) => reply,
            // The recovery's own answer, should it become the key's, is still a recovery:
            // nothing ran.
            Ok(Completion::LeaseLost) => self.lost(call, abandoned.lease(), Some(reply)).await,
            Err(_) => {
                self.keep_unwritten(Unwritten::Complete(
                    call.clone(),
                    abandoned.lease().clone(),
                    reply.stored.clone(),
                ));
                self.unknown(ReplyKind::Recovered, abandoned.context(), true)
            }
        }
    }
}
