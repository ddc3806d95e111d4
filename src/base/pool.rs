//! Fixed pools of named threads for blocking work: [`start_workers`], which the provider pool
//! of completion (`session::bounded`) builds on, and [`WorkerPool`], the shell's pools for
//! tool calls and completion.
//!
//! tokio's `spawn_blocking` pool is shared with tokio's own stdin and stdout and grows to 512
//! threads; work that may block (reading a binary, walking a tree, waiting on a provider) runs
//! here instead, on threads started once. The queue is bounded by the shell: each in-flight
//! request submits at most one job, and the number of requests in flight is capped.

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;

use tokio::sync::oneshot;

/// Work for a worker thread.
pub(crate) type Job = Box<dyn FnOnce() + Send>;

/// Starts `threads` workers named `name-N` that run the jobs of `jobs` until every sender is
/// gone; returns how many started.
pub(crate) fn start_workers(name: &str, threads: usize, jobs: Receiver<Job>) -> usize {
    let jobs = Arc::new(Mutex::new(jobs));
    let mut started = 0;
    for index in 0..threads {
        let jobs = Arc::clone(&jobs);
        let spawned = thread::Builder::new()
            .name(format!("{name}-{index}"))
            .spawn(move || run_jobs(&jobs));
        match spawned {
            Ok(_) => started += 1,
            Err(error) => tracing::error!(%error, "cannot start a worker thread"),
        }
    }
    started
}

fn run_jobs(jobs: &Mutex<Receiver<Job>>) {
    loop {
        let job = match jobs.lock().unwrap_or_else(|e| e.into_inner()).recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        job();
    }
}

/// A fixed set of named worker threads fed from one queue.
#[derive(Debug)]
pub(crate) struct WorkerPool {
    queue: Mutex<Sender<Job>>,
}

/// The pool has no thread left to run work (every thread failed to start).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no worker thread is available")]
pub(crate) struct PoolUnavailable;

impl WorkerPool {
    /// Starts `threads` workers (at least one) named `name-N`.
    pub(crate) fn start(name: &str, threads: usize) -> WorkerPool {
        let (queue, jobs) = mpsc::channel::<Job>();
        start_workers(name, threads.max(1), jobs);
        WorkerPool {
            queue: Mutex::new(queue),
        }
    }

    /// Runs `work` on a worker and waits (asynchronously) for its result. A panic in `work`
    /// is reported as `Err`, and the worker lives on.
    pub(crate) async fn run<T, F>(&self, work: F) -> Result<T, PoolUnavailable>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let (sender, receiver) = oneshot::channel();
        let job: Job = Box::new(move || {
            if let Ok(result) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
                // The waiter is gone when its request was cancelled; the result is dropped.
                let _ = sender.send(result);
            }
        });
        self.queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(job)
            .map_err(|_| PoolUnavailable)?;
        receiver.await.map_err(|_| PoolUnavailable)
    }
}
