//! Two independent computations on two threads when they are large enough to pay for one.

/// From this many instance nodes on, a plan uses a second thread where its work splits: two
/// independent O(V + E) stages run side by side ([`both`]), and the sync reduction walks on two
/// workers (`schedule::reduce`). Below it each takes a few milliseconds, and starting a thread
/// is a noticeable share of that.
pub(crate) const WORTH_A_THREAD_FROM: usize = 1 << 16;

/// `(a(), b())`, on two threads when `side_by_side` (`b` on this one), else one after the other.
/// A panic in either is resumed on this thread.
pub(crate) fn both<A: Send, B>(side_by_side: bool, a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B) -> (A, B) {
    if !side_by_side {
        return (a(), b());
    }
    std::thread::scope(|s| {
        let a = s.spawn(a);
        let b = b();
        (a.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), b)
    })
}
