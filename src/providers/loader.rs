//! Files are loaded one at a time, on one thread of their own.
//!
//! Loading holds a file whole while it is parsed (a catalog about 2.8 times its size at the
//! peak, a binary a little over its size), so concurrent `open_binary` calls would add their
//! peaks. And glibc's allocator gives each thread that allocates its own arena, which keeps
//! what is freed in it for that arena: four loads on four pool threads left four peaks
//! resident after their tables were dropped. Loads therefore run in turn on one loader thread:
//! the process's peak is one load's peak plus the tables it holds, and what one load frees is
//! what the next one reuses. Sniffing a file's first 4 KiB happens before, on the caller's
//! thread. A caller waiting its turn watches its [`Cancel`] and gives up when it is set; its
//! load, if not started yet, never starts.
//!
//! ```
//! use rea::providers::loader;
//! use rea::session::Cancel;
//!
//! let answer = loader::run(&Cancel::never(), || 6 * 7).unwrap();
//! assert_eq!(answer, 42);
//! let cancelled = Cancel::new();
//! cancelled.cancel();
//! assert!(loader::run(&cancelled, || 1).is_err());
//! ```

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::thread;
use std::time::Duration;

use crate::session::{Cancel, Cancelled};

/// How often a waiting caller looks at its cancel.
const CANCEL_POLL: Duration = Duration::from_millis(20);

type Job = Box<dyn FnOnce() + Send>;

/// The loader thread's queue, started on first use.
fn queue() -> Option<Sender<Job>> {
    static QUEUE: OnceLock<Option<Mutex<Sender<Job>>>> = OnceLock::new();
    QUEUE
        .get_or_init(|| {
            let (sender, receiver) = mpsc::channel::<Job>();
            thread::Builder::new()
                .name("rea-loader".to_owned())
                .spawn(move || {
                    for job in receiver {
                        job();
                    }
                })
                .ok()
                .map(|_| Mutex::new(sender))
        })
        .as_ref()
        .map(|sender| {
            sender
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
        })
}

/// Runs `work` on the loader thread after the loads queued before it, and returns its
/// result; [`Cancelled`] if `cancel` is set first (then `work` never runs, unless it had
/// started). A panic in `work` is resumed in the caller. Should the loader thread be
/// unavailable, `work` runs on the caller's thread.
pub fn run<T: Send + 'static>(
    cancel: &Cancel,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Cancelled> {
    cancel.check()?;
    let Some(queue) = queue() else {
        return Ok(work());
    };
    let (answer, answered) = mpsc::sync_channel(1);
    let watched = cancel.clone();
    let job: Job = Box::new(move || {
        if watched.is_cancelled() {
            return;
        }
        let _ = answer.send(catch_unwind(AssertUnwindSafe(work)));
    });
    if let Err(mpsc::SendError(job)) = queue.send(job) {
        // The loader thread is gone: run here rather than not at all.
        job();
    }
    loop {
        match answered.recv_timeout(CANCEL_POLL) {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(panic)) => resume_unwind(panic),
            Err(RecvTimeoutError::Timeout) => cancel.check()?,
            Err(RecvTimeoutError::Disconnected) => return Err(Cancelled),
        }
    }
}
