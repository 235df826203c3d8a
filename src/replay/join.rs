//! Two futures polled together on one task, with no executor of their own: [`both`], for
//! statements sent together on one connection, and [`beside`], for a tool that runs while
//! its lease is kept alive.

use std::future::Future;
use std::pin::pin;
use std::task::Poll;

/// Both outputs, once both futures are done. Each is polled as soon as the task is woken, so
/// two statements on one connection are sent together, in the order given.
#[cfg(feature = "postgres")]
pub(super) async fn both<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let (mut a, mut b) = (pin!(a), pin!(b));
    let (mut left, mut right) = (None, None);
    std::future::poll_fn(|cx| {
        if left.is_none()
            && let Poll::Ready(out) = a.as_mut().poll(cx)
        {
            left = Some(out);
        }
        if right.is_none()
            && let Poll::Ready(out) = b.as_mut().poll(cx)
        {
            right = Some(out);
        }
        match (left.take(), right.take()) {
            (Some(l), Some(r)) => Poll::Ready((l, r)),
            (l, r) => {
                (left, right) = (l, r);
                Poll::Pending
            }
        }
    })
    .await
}

/// `work`'s output, with `side` polled beside it until either ends: `side` is dropped when
/// `work` is done, and once `side` ends, `work` goes on alone.
pub(super) async fn beside<W: Future, S: Future<Output = ()>>(work: W, side: S) -> W::Output {
    let (mut work, mut side) = (pin!(work), pin!(side));
    let mut side_done = false;
    std::future::poll_fn(|cx| {
        if let Poll::Ready(out) = work.as_mut().poll(cx) {
            return Poll::Ready(out);
        }
        if !side_done && side.as_mut().poll(cx).is_ready() {
            side_done = true;
        }
        Poll::Pending
    })
    .await
}
