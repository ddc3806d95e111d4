//! Fixed pools of named threads for blocking work: [`start_workers`], which the provider pool
//! of completion (`session::bounded`) builds on, and [`WorkerPool`], the shell's pools for
//! tool calls and completion, which share their threads fairly among clients.
//!
//! tokio's `spawn_blocking` pool is shared with tokio's own stdin and stdout and grows to 512
//! threads; work that may block (reading a binary, walking a tree, waiting on a provider) runs
//! here instead, on threads started once. The queue is bounded by the shell: each in-flight
//! request submits at most one job, and the number of requests in flight is capped.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

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

/// Which client submitted a job: its connection over stdio, its MCP session (2025, HTTP), or
/// the TCP connection a 2026 request came on. The pools share their threads fairly among
/// clients ([`WorkerPool`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ClientId(u64);

tokio::task_local! {
    /// The client of the transport connection whose task this is (set over HTTP, where one
    /// TCP connection carries a 2026 client's requests).
    static CONNECTION_CLIENT: ClientId;
}

impl ClientId {
    /// A client no other has been, for the life of the process.
    pub(crate) fn fresh() -> ClientId {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        ClientId(NEXT.fetch_add(1, Ordering::Relaxed))
    }

    /// The client of the transport connection this task serves (see
    /// [`ClientId::serve_connection`]), or a fresh one outside such a task.
    pub(crate) fn of_this_connection() -> ClientId {
        CONNECTION_CLIENT
            .try_with(|client| *client)
            .unwrap_or_else(|_| ClientId::fresh())
    }

    /// Runs `connection` (the future that serves one transport connection) as one client.
    pub(crate) async fn serve_connection<F: std::future::Future>(connection: F) -> F::Output {
        CONNECTION_CLIENT.scope(ClientId::fresh(), connection).await
    }
}

/// How a [`WorkerPool`] shares its threads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PoolConfig {
    /// Threads named `name-N`, that run the job of the client served least lately.
    pub(crate) threads: usize,
    /// Further threads that run only jobs of light clients (none running, and whose jobs
    /// typically took less than [`LIGHT_JOB`]), so a client that asks for short work is
    /// answered while long work holds every other thread.
    pub(crate) light_threads: usize,
}

/// A client whose jobs typically (a moving average, each job half the weight) ran shorter
/// than this, with none running, counts as light. A client not served yet counts as light.
pub(crate) const LIGHT_JOB: Duration = Duration::from_millis(250);

/// Service time counted for a client halves every this long.
const SERVICE_HALF_LIFE: Duration = Duration::from_secs(2);

/// One client's place in the pool: its waiting jobs and what it was served lately.
struct Client {
    waiting: VecDeque<Job>,
    running: usize,
    /// Service time in seconds, decayed to `decayed_at`.
    service: f64,
    decayed_at: Instant,
    /// How long its jobs typically ran (none served yet: `None`).
    typical: Option<Duration>,
}

impl Client {
    fn new(now: Instant) -> Client {
        Client {
            waiting: VecDeque::new(),
            running: 0,
            service: 0.0,
            decayed_at: now,
            typical: None,
        }
    }

    /// Service time decayed to `now`.
    fn service_at(&self, now: Instant) -> f64 {
        let elapsed = now.saturating_duration_since(self.decayed_at).as_secs_f64();
        self.service * 0.5f64.powf(elapsed / SERVICE_HALF_LIFE.as_secs_f64())
    }

    fn charge(&mut self, now: Instant, served: Duration) {
        self.service = self.service_at(now) + served.as_secs_f64();
        self.decayed_at = now;
        self.typical = Some(match self.typical {
            Some(typical) => (typical + served) / 2,
            None => served,
        });
    }

    fn light(&self) -> bool {
        self.running == 0 && self.typical.is_none_or(|typical| typical < LIGHT_JOB)
    }

    /// Nothing waits or runs and what it was served has decayed away: it can be forgotten.
    fn forgettable(&self, now: Instant) -> bool {
        self.waiting.is_empty() && self.running == 0 && self.service_at(now) < 1e-3
    }
}

/// The waiting jobs of every client.
#[derive(Default)]
struct Queue {
    clients: HashMap<ClientId, Client>,
}

impl Queue {
    /// The client whose job runs next on a thread of `lane`: among those with a job waiting,
    /// the one with fewest jobs running, then least served lately (then the lowest id, so
    /// the choice is deterministic).
    fn next(&mut self, lane: Lane, now: Instant) -> Option<(ClientId, Job)> {
        let chosen = self
            .clients
            .iter()
            .filter(|(_, client)| !client.waiting.is_empty())
            .filter(|(_, client)| lane == Lane::Any || client.light())
            .map(|(id, client)| (client.running, client.service_at(now), id.0))
            .min_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)))
            .map(|(_, _, id)| ClientId(id))?;
        let client = self.clients.get_mut(&chosen)?;
        let job = client.waiting.pop_front()?;
        client.running += 1;
        Some((chosen, job))
    }

    fn finished(&mut self, id: ClientId, now: Instant, served: Duration) {
        if let Some(client) = self.clients.get_mut(&id) {
            client.running = client.running.saturating_sub(1);
            client.charge(now, served);
        }
        self.clients.retain(|_, client| !client.forgettable(now));
    }
}

/// Which jobs a thread takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lane {
    /// Any client's.
    Any,
    /// Only light clients' (see [`PoolConfig::light_threads`]).
    Light,
}

struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
}

/// A fixed set of named worker threads that share their time fairly among clients: each
/// free thread runs the waiting job of the client with fewest jobs running and least served
/// lately (a decayed sum of its jobs' run times), so a client that floods the pool with long
/// work waits behind itself, not in front of everyone.
pub(crate) struct WorkerPool {
    shared: Arc<Shared>,
    started: usize,
}

impl fmt::Debug for WorkerPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkerPool")
            .field("started", &self.started)
            .finish_non_exhaustive()
    }
}

/// The pool has no thread left to run work (every thread failed to start).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no worker thread is available")]
pub(crate) struct PoolUnavailable;

impl WorkerPool {
    /// Starts the threads of `config` (at least one of the first kind) named `name-N`.
    pub(crate) fn start(name: &str, config: PoolConfig) -> WorkerPool {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            ready: Condvar::new(),
        });
        let lanes = std::iter::repeat_n(Lane::Any, config.threads.max(1))
            .chain(std::iter::repeat_n(Lane::Light, config.light_threads));
        let mut started = 0;
        for (index, lane) in lanes.enumerate() {
            let worker = Arc::clone(&shared);
            let spawned = thread::Builder::new()
                .name(format!("{name}-{index}"))
                .spawn(move || serve(&worker, lane));
            match spawned {
                Ok(_) => started += 1,
                Err(error) => tracing::error!(%error, "cannot start a worker thread"),
            }
        }
        WorkerPool { shared, started }
    }

    /// Runs `work` for `client` on a worker and waits (asynchronously) for its result. A
    /// panic in `work` is reported as `Err`, and the worker lives on.
    pub(crate) async fn run<T, F>(&self, client: ClientId, work: F) -> Result<T, PoolUnavailable>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        if self.started == 0 {
            return Err(PoolUnavailable);
        }
        let (sender, receiver) = oneshot::channel();
        let job: Job = Box::new(move || {
            if let Ok(result) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
                // The waiter is gone when its request was cancelled; the result is dropped.
                let _ = sender.send(result);
            }
        });
        {
            let mut queue = lock(&self.shared.queue);
            queue
                .clients
                .entry(client)
                .or_insert_with(|| Client::new(Instant::now()))
                .waiting
                .push_back(job);
        }
        // Light threads wait for light clients only: wake every thread, each looks.
        self.shared.ready.notify_all();
        receiver.await.map_err(|_| PoolUnavailable)
    }
}

fn lock(queue: &Mutex<Queue>) -> MutexGuard<'_, Queue> {
    // Every update is a whole step under the lock (jobs run outside it).
    queue.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A worker: runs the next job its lane may take, for ever.
fn serve(shared: &Shared, lane: Lane) {
    let mut queue = lock(&shared.queue);
    loop {
        let Some((client, job)) = queue.next(lane, Instant::now()) else {
            queue = match shared.ready.wait(queue) {
                Ok(queue) => queue,
                Err(poisoned) => poisoned.into_inner(),
            };
            continue;
        };
        drop(queue);
        let began = Instant::now();
        job();
        let now = Instant::now();
        queue = lock(&shared.queue);
        queue.finished(client, now, now.saturating_duration_since(began));
        // What this client was served changed who is light: other threads look again.
        shared.ready.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Job {
        Box::new(|| {})
    }

    fn queue_with(entries: &[(u64, usize)], now: Instant) -> Queue {
        let mut queue = Queue::default();
        for &(id, jobs) in entries {
            let client = queue
                .clients
                .entry(ClientId(id))
                .or_insert_with(|| Client::new(now));
            for _ in 0..jobs {
                client.waiting.push_back(job());
            }
        }
        queue
    }

    #[test]
    fn a_client_that_was_served_less_goes_first_whatever_the_order_of_arrival() {
        let now = Instant::now();
        let mut queue = queue_with(&[(1, 100), (2, 1)], now);
        // Client 1 ran a long job a moment ago; client 2 asked once.
        queue
            .clients
            .get_mut(&ClientId(1))
            .expect("client 1 waits")
            .charge(now, Duration::from_secs(3));
        let (first, _) = queue.next(Lane::Any, now).expect("a job waits");
        assert_eq!(first, ClientId(2));
        let (second, _) = queue.next(Lane::Any, now).expect("a job waits");
        assert_eq!(second, ClientId(1));
    }

    #[test]
    fn clients_with_fewer_jobs_running_go_first() {
        let now = Instant::now();
        let mut queue = queue_with(&[(1, 3), (2, 3)], now);
        let picked: Vec<ClientId> = (0..4)
            .map(|_| queue.next(Lane::Any, now).expect("a job waits").0)
            .collect();
        // Round robin while nothing finished: 1, 2, 1, 2.
        assert_eq!(picked, [ClientId(1), ClientId(2), ClientId(1), ClientId(2)]);
    }

    #[test]
    fn light_threads_take_only_clients_whose_jobs_are_short() {
        let now = Instant::now();
        let mut queue = queue_with(&[(1, 6)], now);
        // Not served yet: light.
        let (client, _) = queue.next(Lane::Light, now).expect("a newcomer is light");
        // With a job running it is not light.
        assert!(queue.next(Lane::Light, now).is_none());
        queue.finished(client, now, Duration::from_secs(3));
        assert!(
            queue.next(Lane::Light, now).is_none(),
            "its jobs are long: it waits"
        );
        // However long it waits, its jobs are still long (service decays, lightness does not).
        let later = now + SERVICE_HALF_LIFE * 100;
        assert!(queue.next(Lane::Light, later).is_none());
        // Short jobs bring it back: 3 s, then 1 ms four times averages under the bound.
        for _ in 0..4 {
            let (client, _) = queue.next(Lane::Any, later).expect("a job waits");
            queue.finished(client, later, Duration::from_millis(1));
        }
        assert!(
            queue.next(Lane::Light, later).is_some(),
            "short jobs: light again"
        );
    }

    #[test]
    fn a_client_is_forgotten_once_nothing_of_it_is_left() {
        let now = Instant::now();
        let mut queue = queue_with(&[(7, 1)], now);
        let (client, _) = queue.next(Lane::Any, now).expect("a job waits");
        queue.finished(client, now, Duration::from_millis(5));
        assert!(
            queue.clients.contains_key(&client),
            "its service still counts"
        );
        queue.finished(client, now + SERVICE_HALF_LIFE * 20, Duration::ZERO);
        assert!(queue.clients.is_empty());
    }

    #[tokio::test]
    async fn the_pool_runs_jobs_and_survives_a_panic() {
        let pool = WorkerPool::start(
            "rea-test",
            PoolConfig {
                threads: 1,
                light_threads: 1,
            },
        );
        let client = ClientId::fresh();
        assert_eq!(pool.run(client, || 6 * 7).await, Ok(42));
        let panicked = pool.run(client, || -> u8 { panic!("a job panics") }).await;
        assert_eq!(panicked, Err(PoolUnavailable));
        assert_eq!(pool.run(ClientId::fresh(), || "alive").await, Ok("alive"));
    }
}
