//! The writes the sequence owes its ledger, and the background step that makes them.

use super::super::ledger::{Completion, Ledger};
use super::super::probe::EffectProbe;
use super::super::reply::ReplyKind;
use super::{Owed, Sequence, Settled};

impl<L: Ledger, P: EffectProbe> Sequence<L, P> {
    pub(super) fn owe(&self, owed: Owed) {
        self.lock_owed().push(owed);
    }

    /// Makes one owed write; `false` when it must stay owed.
    pub(super) async fn pay(&self, owed: &Owed) -> Result<bool, L::Error> {
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
