//! Provider calls made for completion: a small fixed pool of threads, a time bound per call,
//! and no new calls to a provider whose last call overran until that call returns.
//!
//! The pool is process-wide ([`PROVIDER_THREADS`] threads, started on first use, never more):
//! whatever clients send, completion never starts a thread per request and never piles up
//! threads behind a hung provider. A call that overruns its bound keeps its thread until the
//! provider returns; meanwhile completion for that provider answers empty at once, and calls
//! for other providers use the remaining threads. Work waiting for a thread is bounded too
//! ([`QUEUED_CALLS`]); past it the call is refused (an empty completion).

use std::cell::Cell;
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::provider::Provider;
use crate::base::notices::{self, Notice};
use crate::base::pool::{Job, start_workers};
use crate::text::Quoted;

/// Threads that run provider calls for completion, for the whole process.
pub const PROVIDER_THREADS: usize = 2;

/// Provider calls that may wait for a thread; more are refused.
pub const QUEUED_CALLS: usize = 16;

/// The process-wide pool.
struct ProviderPool {
    queue: SyncSender<Job>,
    /// Providers (by address of their shared allocation) with a call that overran its bound.
    overrunning: Arc<Mutex<Vec<usize>>>,
}

fn pool() -> Option<&'static ProviderPool> {
    static POOL: OnceLock<Option<ProviderPool>> = OnceLock::new();
    POOL.get_or_init(ProviderPool::start).as_ref()
}

impl ProviderPool {
    fn start() -> Option<ProviderPool> {
        let (queue, jobs) = mpsc::sync_channel::<Job>(QUEUED_CALLS);
        let started = start_workers("rea-provider", PROVIDER_THREADS, jobs);
        (started > 0).then(|| ProviderPool {
            queue,
            overrunning: Arc::default(),
        })
    }
}

fn provider_key(provider: &Arc<dyn Provider>) -> usize {
    Arc::as_ptr(provider).cast::<()>() as usize
}

/// Runs `work` (a call of `provider`) on the provider pool and waits at most `timeout`.
///
/// `None` when the time-out passes first (the provider is then marked overrunning until the
/// call returns), when `work` panics, when the provider is still overrunning from an earlier
/// call, or when the pool's queue is full.
pub(crate) fn call_provider<T, F>(
    provider: &Arc<dyn Provider>,
    timeout: Duration,
    work: F,
) -> Option<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    // Within one completion request, every call shares the request's bound: the second call
    // waits only for what the first left, so the answer keeps to the bound end to end.
    let bound = timeout;
    let timeout = match REQUEST_DEADLINE.with(Cell::get) {
        Some(deadline) => timeout.min(deadline.saturating_duration_since(Instant::now())),
        None => timeout,
    };
    if timeout.is_zero() {
        notices::note(Notice::ProviderTimedOut {
            provider: Quoted::new(provider.id()),
            timeout: bound,
        });
        return None;
    }
    let pool = pool()?;
    let key = provider_key(provider);
    if pool
        .overrunning
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&key)
    {
        notices::note(Notice::ProviderOverrunning {
            provider: Quoted::new(provider.id()),
        });
        return None;
    }
    let (sender, receiver) = mpsc::sync_channel(1);
    let overrunning = Arc::clone(&pool.overrunning);
    let job: Job = Box::new(move || {
        let deadline = Instant::now() + timeout;
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            within_deadline(deadline, work)
        }));
        // Mark the end of the call before answering, so an overrun mark set by the waiter
        // (under the same lock) is always cleared here.
        let mut marks = overrunning.lock().unwrap_or_else(|e| e.into_inner());
        if let Ok(result) = result {
            // The waiter is gone when it stopped waiting; the result is dropped then.
            let _ = sender.send(result);
        }
        if let Some(at) = marks.iter().position(|&k| k == key) {
            marks.swap_remove(at);
        }
    });
    match pool.queue.try_send(job) {
        Ok(()) => {}
        Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => return None,
    }
    match receiver.recv_timeout(timeout) {
        Ok(result) => Some(result),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            let mut marks = pool.overrunning.lock().unwrap_or_else(|e| e.into_inner());
            // The call may have finished while the lock was awaited: then take its result.
            match receiver.try_recv() {
                Ok(result) => Some(result),
                Err(mpsc::TryRecvError::Empty) => {
                    marks.push(key);
                    notices::note(Notice::ProviderTimedOut {
                        provider: Quoted::new(provider.id()),
                        timeout: bound,
                    });
                    None
                }
                Err(mpsc::TryRecvError::Disconnected) => None,
            }
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => None,
    }
}

thread_local! {
    /// The deadline of the completion call running on this thread, if any.
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
    /// The deadline of the completion request whose provider calls this thread makes, if any.
    static REQUEST_DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Runs `work` (the answer of one completion request) with every provider call it makes on
/// this thread bounded by `deadline` as a whole: a call waits at most until `deadline` (and
/// at most its own bound), and a call that would start after it is not made (a time-out
/// notice, its candidates missing). The shell sets `deadline` when the request arrives, so
/// waiting for a completion thread counts too.
pub fn within_request_deadline<T>(deadline: Instant, work: impl FnOnce() -> T) -> T {
    struct Restore(Option<Instant>);
    impl Drop for Restore {
        fn drop(&mut self) {
            REQUEST_DEADLINE.with(|cell| cell.set(self.0));
        }
    }
    let _restore = Restore(REQUEST_DEADLINE.with(|cell| cell.replace(Some(deadline))));
    work()
}

/// Runs `work` with [`completion_deadline`] answering `deadline` on this thread.
fn within_deadline<T>(deadline: Instant, work: impl FnOnce() -> T) -> T {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            DEADLINE.with(|cell| cell.set(None));
        }
    }
    DEADLINE.with(|cell| cell.set(Some(deadline)));
    let _reset = Reset;
    work()
}

/// When the provider call running on this thread was made for completion, the instant its
/// time bound ends; `None` for every other call (tools). A provider that can stop a call of
/// its own (an adapter process it may kill) uses it as that call's bound, so a completion
/// call never outlives the completion's bound by much.
pub fn completion_deadline() -> Option<Instant> {
    DEADLINE.with(Cell::get)
}
