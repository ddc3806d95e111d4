//! Running provider calls under a time bound, for completion.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// Runs `work` on its own thread and waits at most `timeout` for its result.
///
/// `None` when the time-out passes first, when `work` panics, or when no thread can be started.
/// A call that overruns keeps running on its detached thread until the provider returns; its
/// result is dropped. That is the price of never blocking the caller on a hung provider.
pub(crate) fn run_bounded<T, F>(timeout: Duration, work: F) -> Option<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let (sender, receiver) = mpsc::sync_channel(1);
    thread::Builder::new()
        .name("rea-completion-source".to_owned())
        .spawn(move || {
            // The receiver is gone when the caller stopped waiting; nothing to do then.
            let _ = sender.send(work());
        })
        .ok()?;
    receiver.recv_timeout(timeout).ok()
}
