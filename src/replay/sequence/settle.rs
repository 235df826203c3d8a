//! The writes the sequence owes its ledger, and the background step that makes them.

use super::super::ledger::{Completion, Ledger};
use super::super::probe::EffectProbe;
use super::super::recovery::Examined;
use super::super::reply::{Reply, ReplyKind};
use super::{Sequence, Settled, Unwritten};

impl<L: Ledger, P: EffectProbe> Sequence<L, P> {
    pub(super) fn keep_unwritten(&self, write: Unwritten) {
        self.lock_unwritten().push(write);
    }

    /// Makes one unwritten write; `false` when it must stay unwritten.
    pub(super) async fn write_unwritten(&self, write: &Unwritten) -> Result<bool, L::Error> {
        let (call, lease, stored, first) = match write {
            Unwritten::Complete(call, lease, stored) => (
                call,
                lease,
                stored,
                self.ledger.complete(lease, stored).await?,
            ),
            Unwritten::Release(call, lease, stored) => {
                (call, lease, stored, self.ledger.release(lease).await?)
            }
            Unwritten::Resolve(call, lease, stored) => (call, lease, stored, Completion::LeaseLost),
        };
        if first == Completion::Recorded {
            return Ok(true);
        }
        // The lease was lost meanwhile: the truth goes where the key stands now.
        let Ok(answer) = stored.answer() else {
            return Ok(true);
        };
        let mine = Some(Reply::new(ReplyKind::Ran, stored.clone(), answer));
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
    /// The ledger's error, at the first write that fails; what is still unwritten stays so.
    ///
    /// # Panics
    ///
    /// As [`Sequence::run`].
    pub async fn settle(&self, limit: usize) -> Result<Settled, L::Error> {
        let mut settled = Settled::default();
        let unwritten = std::mem::take(&mut *self.lock_unwritten());
        let mut unwritten = unwritten.into_iter();
        while let Some(write) = unwritten.next() {
            match self.write_unwritten(&write).await {
                Ok(true) => settled.recorded += 1,
                Ok(false) => self.keep_unwritten(write),
                Err(err) => {
                    let mut still = self.lock_unwritten();
                    still.push(write);
                    still.extend(unwritten);
                    return Err(err);
                }
            }
        }
        for abandoned in self.ledger.abandoned(limit).await? {
            match self.examine(&abandoned).await {
                Ok(Examined::NotStarted) => {
                    if self.ledger.release(abandoned.lease()).await? == Completion::Recorded {
                        settled.released += 1;
                    }
                }
                Ok(found) => {
                    let reply = self.recovery_of(&abandoned, found);
                    let _ = self
                        .ledger
                        .complete(abandoned.lease(), &reply.stored)
                        .await?;
                    settled.recovered += 1;
                }
                // Taken again once this lease passes.
                Err(_) => {}
            }
        }
        settled.purged = self.ledger.purge(limit).await?;
        Ok(settled)
    }
}
