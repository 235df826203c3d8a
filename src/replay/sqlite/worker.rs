//! A thread that owns a blocking resource (a SQLite connection) and runs jobs on it one at a
//! time, each answered through a future: the blocking pool of one that lets a synchronous
//! store implement the async [`Ledger`](super::Ledger) without blocking an executor's thread,
//! and without a runtime of its own.

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

type Job<S> = Box<dyn FnOnce(&mut S) + Send>;

/// The thread, and the way to hand it jobs. Dropping it lets the thread finish its jobs and
/// stop, dropping what it owns.
pub(super) struct Worker<S> {
    jobs: mpsc::Sender<Job<S>>,
}

impl<S> std::fmt::Debug for Worker<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Worker")
    }
}

impl<S: Send + 'static> Worker<S> {
    /// Starts the thread, which owns `state`.
    pub(super) fn spawn(name: &str, mut state: S) -> std::io::Result<Self> {
        let (jobs, queue) = mpsc::channel::<Job<S>>();
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                for job in queue {
                    job(&mut state);
                }
            })?;
        Ok(Worker { jobs })
    }

    /// Runs `job` on the thread; the future resolves to its value, or to `None` when the
    /// thread stopped before running it (it panicked in an earlier job).
    pub(super) fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut S) -> T + Send + 'static,
    ) -> Reply<T> {
        let slot = Arc::new(Mutex::new(Slot {
            value: None,
            done: false,
            waker: None,
        }));
        let deliver = Deliver(Arc::clone(&slot));
        // A job the thread never runs is dropped with its `Deliver`, which says so.
        let _ = self.jobs.send(Box::new(move |state: &mut S| {
            let value = job(state);
            deliver.send(value);
        }));
        Reply(slot)
    }
}

struct Slot<T> {
    value: Option<T>,
    done: bool,
    waker: Option<Waker>,
}

/// The sending half, inside the job: delivers the value, or on drop without one, the news
/// that there will be none.
struct Deliver<T>(Arc<Mutex<Slot<T>>>);

impl<T> Deliver<T> {
    fn send(self, value: T) {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        slot.value = Some(value);
        // `Drop` marks it done and wakes.
    }
}

impl<T> Drop for Deliver<T> {
    fn drop(&mut self) {
        let waker = {
            let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            slot.done = true;
            slot.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// The value of a job, to await.
pub(super) struct Reply<T>(Arc<Mutex<Slot<T>>>);

impl<T> Future for Reply<T> {
    type Output = Option<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.done {
            return Poll::Ready(slot.value.take());
        }
        slot.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}
