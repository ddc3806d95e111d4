//! Providers in another process: [`ExternalProvider`] speaks the REA provider protocol
//! (`docs/PROVIDER_PROTOCOL.md`, docs/CONTRACT.md section 10) to an adapter over its stdin and
//! stdout, and [`Adapters`] declares one beside the native provider of every binary opened
//! from a file (`rea serve --provider angr`).
//!
//! Every adapter is bounded: a start-up time-out, a time bound per call (completion stops
//! waiting at its own deadline; the late answer is dropped by the next call, and the adapter
//! is killed only past its own bound), an address-space limit on the process (`RLIMIT_AS`), at
//! most one process per binary session and at most [`Adapters::max_adapters`] in the whole
//! server. An adapter that crashes, hangs, floods its output, answers garbage or exceeds a
//! bound is killed; the call that saw it fails with a [`ProviderError`] (a tool error;
//! completion answers empty), and the next call starts a fresh process. Nothing else in the
//! server notices.
//!
//! Completion never waits for an adapter to start: a completion request that needs a
//! provider whose process is not running starts it in the background (on one starter thread,
//! at most once per start-up time-out) and answers empty meanwhile; once the adapter is up,
//! completion is served from it, within completion's own bound.
//!
//! Slots are shared: an adapter whose process died frees its slot at once (its output closed),
//! an adapter idle for [`Adapters::idle_stop`] is stopped, and when every slot is taken, a
//! start stops the adapter idle longest (of any session) to make room, waiting up to its
//! start-up time-out for one to be idle before it is refused.
//!
//! The adapter never sees the client's path, nor a folder another user can write: it is given
//! a private copy of the bytes the server read and checked, written when the process starts
//! and removed when it stops, and it runs in the server's private folder with a cleared
//! environment (see `workspace.rs`).

mod process;
pub mod protocol;
mod workspace;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError, Weak};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub use self::process::CallFailure;
use self::process::{OnEnd, Process};
use self::protocol::{
    DecompiledCode, INVALID_CURSOR, Method, NO_PROCEDURE, Reply, UNKNOWN_DOCUMENT,
};
use self::workspace::PrivateCopy;
pub use self::workspace::remove_stale as remove_stale_folders;
use crate::base::pool::{Job, start_workers};
use crate::core::ProcedurePage;
use crate::session::{
    Address, Companions, Decompilation, DecompileBound, DecompileNames, DocumentInfo, NamedAddress,
    Operation, ProcedureInfo, ProcedureName, ProcedureSource, Provider, ProviderError,
    completion_deadline,
};
use crate::text::cut;

/// Default start-up time-out: `describe` and `open` must both be answered within it.
pub const DEFAULT_START_UP: Duration = Duration::from_secs(30);

/// Default time bound of one call other than `decompile` (which has its own).
pub const DEFAULT_CALL_TIME: Duration = Duration::from_secs(60);

/// Default address-space limit of one adapter process: 4 GiB.
pub const DEFAULT_MEMORY_BYTES: u64 = 4 << 30;

/// Default bound of one answer line: 4 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 4 << 20;

/// Default number of adapter processes in the whole server (`--max-adapters`).
pub const DEFAULT_MAX_ADAPTERS: usize = 2;

/// Default time after its last call that an adapter process is stopped
/// (`--adapter-idle-secs`): 5 minutes.
pub const DEFAULT_IDLE_STOP: Duration = Duration::from_secs(300);

/// How much longer than the time it is given an adapter may take to answer before it is
/// killed: the adapter keeps its own bound (it answers "not ready" or an incomplete
/// decompilation), and this margin covers its answer's way back.
pub const GRACE: Duration = Duration::from_secs(2);

/// Most of completion's time an adapter call keeps back: the adapter is asked to answer this
/// much before completion's bound (a quarter of what is left, when less), so that its own
/// "not ready" answer arrives in time and it is not killed for keeping its bound.
pub const COMPLETION_MARGIN: Duration = Duration::from_millis(200);

/// The margin kept back from `left`, what is left of completion's bound.
fn completion_margin(left: Duration) -> Duration {
    COMPLETION_MARGIN.min(left / 4)
}

/// Adapter starts that completion asked for and that wait for the starter thread.
const QUEUED_STARTS: usize = 4;

/// The queue of the one thread that starts adapters for completion. It is a thread that
/// never ends, because the adapter's parent-death signal (`PR_SET_PDEATHSIG`) fires when the
/// thread that started it ends; `None` when the thread could not be started.
fn starter() -> Option<&'static SyncSender<Job>> {
    static STARTER: OnceLock<Option<SyncSender<Job>>> = OnceLock::new();
    STARTER
        .get_or_init(|| {
            let (queue, jobs) = mpsc::sync_channel::<Job>(QUEUED_STARTS);
            (start_workers("rea-adapter-start", 1, jobs) == 1).then_some(queue)
        })
        .as_ref()
}

/// When one call stops waiting for its answer, and when the adapter is killed if the answer
/// has not come (later for a completion call, which waits only within completion's bound).
#[derive(Clone, Copy, Debug)]
struct Bounds {
    answer_by: Instant,
    kill_at: Instant,
    completion: bool,
}

/// The bounds of one adapter process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdapterLimits {
    /// Time for the process to start and answer `describe` and `open`.
    pub start_up: Duration,
    /// Time bound of a call other than `decompile`.
    pub call: Duration,
    /// The process's address-space limit (`RLIMIT_AS`), in bytes.
    pub memory_bytes: u64,
    /// Longest answer line, in bytes.
    pub max_line_bytes: usize,
}

impl Default for AdapterLimits {
    fn default() -> AdapterLimits {
        AdapterLimits {
            start_up: DEFAULT_START_UP,
            call: DEFAULT_CALL_TIME,
            memory_bytes: DEFAULT_MEMORY_BYTES,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
        }
    }
}

/// How to start one kind of adapter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterSpec {
    /// The provider identity the session declares (e.g. `angr`).
    pub id: String,
    /// The program to run.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// The operations the provider offers; the adapter's `describe` must list each of them.
    pub operations: Vec<Operation>,
    /// Its bounds.
    pub limits: AdapterLimits,
}

impl AdapterSpec {
    /// The reference angr adapter (`adapters/angr/`) with the Python of the virtual
    /// environment `venv` (see `adapters/angr/install.sh`), or [`AngrNotInstalled`] when that
    /// environment or the adapter script is missing.
    pub fn angr(adapter_dir: &Path, venv: &Path) -> Result<AdapterSpec, AngrNotInstalled> {
        let python = venv.join("bin").join("python");
        let script = adapter_dir.join("rea_angr_adapter.py");
        if !python.is_file() || !script.is_file() {
            return Err(AngrNotInstalled {
                venv: venv.to_owned(),
                install: adapter_dir.join("install.sh"),
            });
        }
        Ok(AdapterSpec {
            id: "angr".to_owned(),
            program: python,
            // Isolated mode: no PYTHON* variable, user site or script folder on the path.
            args: vec!["-I".into(), script.into_os_string()],
            operations: vec![
                Operation::ListDocuments,
                Operation::ListProcedures,
                Operation::ProcedureInfo,
                Operation::Decompile,
            ],
            limits: AdapterLimits::default(),
        })
    }
}

/// `--provider angr` without the adapter installed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the angr adapter is not installed (no {venv}); install it with `sh {install}` \
     (about 450 MB, a minute), then start again"
)]
pub struct AngrNotInstalled {
    /// The virtual environment looked for.
    pub venv: PathBuf,
    /// The install script.
    pub install: PathBuf,
}

/// Why an adapter call failed. Carried in [`ProviderError::Failed`], so a tool names it in
/// its error and completion answers empty.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AdapterError {
    /// The process did not start, or did not answer `describe` and `open` within the
    /// start-up time-out.
    #[error("the {provider} adapter did not start: {failure}; it is tried again on the next call")]
    StartUp {
        /// The provider.
        provider: String,
        /// What went wrong.
        failure: CallFailure,
    },
    /// The process broke a rule and was killed.
    #[error("the {provider} adapter was stopped: {failure}; a new one starts on the next call")]
    Stopped {
        /// The provider.
        provider: String,
        /// What went wrong.
        failure: CallFailure,
    },
    /// `describe` does not list an operation the provider offers.
    #[error("the {provider} adapter does not offer {operation}, which the server expects")]
    MissingOperation {
        /// The provider.
        provider: String,
        /// The missing operation.
        operation: Operation,
    },
    /// A completion call stopped waiting at completion's bound; the adapter keeps running
    /// and its late answer is dropped.
    #[error("the {provider} adapter is still working: {failure}")]
    Late {
        /// The provider.
        provider: String,
        /// What went wrong.
        failure: CallFailure,
    },
    /// The server already runs its most adapter processes, and none was idle before the
    /// start-up time-out.
    #[error(
        "the {provider} adapter cannot start: {limit} adapter processes already run \
         (--max-adapters) and none fell idle in time; try again when a call ends"
    )]
    TooMany {
        /// The provider.
        provider: String,
        /// The limit.
        limit: usize,
    },
    /// Another call held the adapter past this call's bound.
    #[error("the {provider} adapter was busy with another call until this call's bound")]
    Busy {
        /// The provider.
        provider: String,
    },
    /// A completion request found the adapter not running, or still starting (completion
    /// starts it in the background and never waits for it).
    #[error("the {provider} adapter is not running yet; completion answers empty until it is up")]
    NotRunning {
        /// The provider.
        provider: String,
    },
    /// The adapter answered with an error.
    #[error("the {provider} adapter answered {method} with error {code}: {message}")]
    Answered {
        /// The provider.
        provider: String,
        /// The method.
        method: &'static str,
        /// The error code.
        code: i64,
        /// Its message, cut to 64 characters and quoted.
        message: String,
    },
    /// The adapter answered another shape than the method's.
    #[error("the {provider} adapter answered {method} out of turn")]
    Unexpected {
        /// The provider.
        provider: String,
        /// The method.
        method: &'static str,
    },
    /// The server's private folder, or the private copy of the file in it, could not be
    /// written.
    #[error(
        "cannot write the private folder or copy of the binary for the {provider} adapter: \
         {source}"
    )]
    Copy {
        /// The provider.
        provider: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Adapter processes running in the whole server, the limit, the adapters that may hold
/// them, and the server's private folder.
#[derive(Debug)]
struct Slots {
    running: Mutex<usize>,
    /// Notified when a slot is freed or an adapter falls idle.
    changed: Condvar,
    limit: usize,
    idle_stop: Duration,
    members: Mutex<Vec<Weak<Adapter>>>,
    workspace: workspace::Shared,
    sweeper: OnceLock<()>,
}

/// One running process's share of [`Slots`]; given back when dropped.
struct SlotGuard(Arc<Slots>);

/// How a start gets a slot when all are taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Room {
    /// Reap the processes that exited, else stop the adapter idle longest, else wait for one
    /// to fall idle, until the start-up time-out (a tool's call).
    Make,
    /// Only reap the processes that exited (a start for completion, which must not cost
    /// another session its adapter).
    Reap,
}

/// Longest wait for a slot before the state is looked at again.
const SLOT_POLL: Duration = Duration::from_millis(100);

impl Slots {
    fn new(limit: usize, idle_stop: Duration) -> Slots {
        Slots {
            running: Mutex::new(0),
            changed: Condvar::new(),
            limit: limit.max(1),
            idle_stop,
            members: Mutex::new(Vec::new()),
            workspace: workspace::Shared::default(),
            sweeper: OnceLock::new(),
        }
    }

    fn running(&self) -> MutexGuard<'_, usize> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The adapters that may hold a slot.
    fn members(&self) -> Vec<Arc<Adapter>> {
        let mut members = self.members.lock().unwrap_or_else(PoisonError::into_inner);
        members.retain(|m| m.strong_count() > 0);
        members.iter().filter_map(Weak::upgrade).collect()
    }

    fn join(&self, adapter: &Arc<Adapter>) {
        let mut members = self.members.lock().unwrap_or_else(PoisonError::into_inner);
        members.retain(|m| m.strong_count() > 0);
        members.push(Arc::downgrade(adapter));
    }

    /// A slot: when all are taken, the processes of adapters that died are reaped, else (for
    /// [`Room::Make`]) the one idle longest is stopped, else this waits for one to fall idle
    /// or free its slot, until `until`.
    fn acquire(self: &Arc<Slots>, room: Room, until: Instant) -> Option<SlotGuard> {
        loop {
            {
                let mut running = self.running();
                if *running < self.limit {
                    *running += 1;
                    self.start_sweeper();
                    return Some(SlotGuard(Arc::clone(self)));
                }
            }
            let members = self.members();
            let mut freed: Vec<Running> = members.iter().filter_map(|a| a.take_dead()).collect();
            if room == Room::Reap {
                if freed.is_empty() {
                    return None;
                }
                drop(freed);
                continue;
            }
            if freed.is_empty()
                && let Some(longest) = members
                    .iter()
                    .filter_map(|a| a.idle_since().map(|since| (since, a)))
                    .min_by_key(|(since, _)| *since)
                    .map(|(_, a)| a)
                && let Some(stopped) = longest.take_idle(Duration::ZERO)
            {
                tracing::info!(
                    provider = longest.spec.id,
                    "stopped an idle adapter to make room for another"
                );
                freed.push(stopped);
            }
            drop(members);
            if !freed.is_empty() {
                drop(freed);
                continue;
            }
            let now = Instant::now();
            if now >= until {
                return None;
            }
            let running = self.running();
            if *running < self.limit {
                continue;
            }
            let wait = until.saturating_duration_since(now).min(SLOT_POLL);
            drop(self.changed.wait_timeout(running, wait));
        }
    }

    /// Starts, once, the thread that stops adapters idle for [`Slots::idle_stop`]; it ends
    /// when these slots are dropped.
    fn start_sweeper(self: &Arc<Slots>) {
        self.sweeper.get_or_init(|| {
            let slots = Arc::downgrade(self);
            let started = std::thread::Builder::new()
                .name("rea-adapter-idle".to_owned())
                .spawn(move || sweep(&slots));
            if let Err(error) = started {
                tracing::warn!(%error, "cannot start the thread that stops idle adapters");
            }
        });
    }
}

/// The idle sweeper: every quarter of the idle time (between 100 ms and 5 s), stops the
/// adapters idle for longer than it.
fn sweep(slots: &Weak<Slots>) {
    loop {
        let Some(strong) = slots.upgrade() else {
            return;
        };
        let idle = strong.idle_stop;
        let stopped: Vec<Running> = strong
            .members()
            .iter()
            .filter_map(|adapter| {
                let stopped = adapter.take_idle(idle);
                if stopped.is_some() {
                    tracing::info!(
                        provider = adapter.spec.id,
                        idle_secs = idle.as_secs_f64(),
                        "stopped an idle adapter"
                    );
                }
                stopped
            })
            .collect();
        drop(stopped);
        drop(strong);
        std::thread::sleep((idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(5)));
    }
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        let mut running = self.0.running();
        *running = running.saturating_sub(1);
        drop(running);
        self.0.changed.notify_all();
    }
}

/// The adapters `rea serve --provider` declares beside the native provider of every binary
/// opened from a file, and the process-wide limit on their processes. Set on a session with
/// [`crate::session::Session::set_companions`].
#[derive(Debug, Clone)]
pub struct Adapters {
    specs: Vec<Arc<AdapterSpec>>,
    slots: Arc<Slots>,
}

impl Adapters {
    /// `specs`, with at most `max_adapters` processes (at least 1) running at once, each
    /// stopped after [`DEFAULT_IDLE_STOP`] without a call.
    pub fn new(specs: Vec<AdapterSpec>, max_adapters: usize) -> Adapters {
        Adapters {
            specs: specs.into_iter().map(Arc::new).collect(),
            slots: Arc::new(Slots::new(max_adapters, DEFAULT_IDLE_STOP)),
        }
    }

    /// These adapters, with each process stopped `idle` after its last call ended. Set it
    /// before any binary is opened: the providers made before keep the earlier setting.
    #[must_use]
    pub fn with_idle_stop(self, idle: Duration) -> Adapters {
        Adapters {
            slots: Arc::new(Slots::new(self.slots.limit, idle)),
            specs: self.specs,
        }
    }

    /// The most adapter processes that run at once.
    pub fn max_adapters(&self) -> usize {
        self.slots.limit
    }

    /// How long after its last call an adapter process is stopped.
    pub fn idle_stop(&self) -> Duration {
        self.slots.idle_stop
    }

    /// Adapter processes running now.
    pub fn running(&self) -> usize {
        *self.slots.running()
    }

    /// An [`ExternalProvider`] for `spec` serving `bytes` as `document`, counted against
    /// these adapters' limit.
    pub fn provider(
        &self,
        spec: &AdapterSpec,
        document: &str,
        bytes: &Arc<Vec<u8>>,
    ) -> ExternalProvider {
        ExternalProvider::new(
            Arc::new(spec.clone()),
            Arc::clone(&self.slots),
            document,
            Arc::clone(bytes),
        )
    }
}

impl Companions for Adapters {
    fn companions(&self, document: &str, bytes: &Arc<Vec<u8>>) -> Vec<Arc<dyn Provider>> {
        self.specs
            .iter()
            .map(|spec| {
                let provider = ExternalProvider::new(
                    Arc::clone(spec),
                    Arc::clone(&self.slots),
                    document,
                    Arc::clone(bytes),
                );
                Arc::new(provider) as Arc<dyn Provider>
            })
            .collect()
    }

    fn operations(&self) -> Vec<Operation> {
        self.specs
            .iter()
            .flat_map(|spec| spec.operations.iter().copied())
            .collect()
    }
}

/// The adapter's process, and whether a call (or a start in the background) holds it.
struct Slot {
    busy: bool,
    /// A start in the background holds the slot.
    starting: bool,
    /// When completion last started the process in the background.
    started_for_completion: Option<Instant>,
    /// When the last call ended.
    last_used: Instant,
    running: Option<Running>,
}

impl Default for Slot {
    fn default() -> Slot {
        Slot {
            busy: false,
            starting: false,
            started_for_completion: None,
            last_used: Instant::now(),
            running: None,
        }
    }
}

/// A running process, the private copy it was given and its share of the slots, dropped in
/// this order: the process is killed before its copy is removed and its slot given back.
struct Running {
    process: Process,
    /// Which process of the adapter this is (its `on_end` names it).
    serial: u64,
    _copy: PrivateCopy,
    _slot: SlotGuard,
}

/// A provider served by an adapter process (see the [module documentation](self)). The process
/// starts on the first call, lazily, and is killed when the provider is dropped (the binary
/// session closes).
pub struct ExternalProvider {
    adapter: Arc<Adapter>,
}

/// The state of one [`ExternalProvider`], shared with a start in the background
/// ([`Adapter::start_in_background`]), which outlives no process it started: when the
/// provider is gone, the last holder drops the process and the copy.
struct Adapter {
    spec: Arc<AdapterSpec>,
    slots: Arc<Slots>,
    document: String,
    /// The bytes the server read (shared with the native provider), copied to a private
    /// file for each process.
    bytes: Arc<Vec<u8>>,
    slot: Mutex<Slot>,
    freed: Condvar,
    /// The adapter's `describe` name and version, once it started.
    described: Mutex<Option<String>>,
}

impl std::fmt::Debug for ExternalProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalProvider")
            .field("id", &self.adapter.spec.id)
            .field("document", &self.adapter.document)
            .finish_non_exhaustive()
    }
}

impl ExternalProvider {
    fn new(
        spec: Arc<AdapterSpec>,
        slots: Arc<Slots>,
        document: &str,
        bytes: Arc<Vec<u8>>,
    ) -> ExternalProvider {
        let adapter = Arc::new(Adapter {
            slots: Arc::clone(&slots),
            spec,
            document: document.to_owned(),
            bytes,
            slot: Mutex::new(Slot::default()),
            freed: Condvar::new(),
            described: Mutex::new(None),
        });
        slots.join(&adapter);
        ExternalProvider { adapter }
    }

    /// Whether the adapter process is running now.
    pub fn is_running(&self) -> bool {
        self.adapter.lock().running.is_some()
    }
}

impl Adapter {
    fn lock(&self) -> MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn failed(&self, error: AdapterError) -> ProviderError {
        ProviderError::Failed(Box::new(error))
    }

    /// The process, when no call holds it and it has exited.
    fn take_dead(&self) -> Option<Running> {
        let mut slot = self.lock();
        let dead = !slot.busy
            && slot
                .running
                .as_mut()
                .is_some_and(|running| running.process.has_exited());
        if dead {
            tracing::info!(provider = self.spec.id, "reaped an adapter that had exited");
            return slot.running.take();
        }
        None
    }

    /// Process `serial`, which closed its output, when no call holds it.
    fn take_ended(&self, serial: u64) -> Option<Running> {
        let mut slot = self.lock();
        let ended = !slot.busy && slot.running.as_ref().is_some_and(|r| r.serial == serial);
        if ended {
            tracing::info!(provider = self.spec.id, "an adapter exited between calls");
            return slot.running.take();
        }
        None
    }

    /// Since when the process has been idle, when one runs and no call holds it.
    fn idle_since(&self) -> Option<Instant> {
        let slot = self.lock();
        (!slot.busy && slot.running.is_some()).then_some(slot.last_used)
    }

    /// The process, when no call holds it and none has for `at_least`.
    fn take_idle(&self, at_least: Duration) -> Option<Running> {
        let mut slot = self.lock();
        if slot.busy || slot.last_used.elapsed() < at_least {
            return None;
        }
        slot.running.take()
    }

    /// Calls `method`, giving the adapter `budget` and killing it at the budget plus
    /// [`GRACE`]. For completion, the adapter is given what is left of completion's bound
    /// less [`completion_margin`], and the call waits no longer than that bound: an answer
    /// still due then is awaited (and dropped) by the next call, and only an adapter that
    /// has not answered by its own bound plus [`GRACE`] is killed, so a "not ready" answer
    /// that is a little late never costs the analysis the adapter has done.
    fn call(
        self: &Arc<Self>,
        method: Method,
        params: Value,
        budget: Duration,
    ) -> Result<Reply, ProviderError> {
        let completion = completion_deadline();
        let now = Instant::now();
        let (budget, bounds) = match completion {
            Some(end) => {
                let left = end.saturating_duration_since(now);
                let given = left.saturating_sub(completion_margin(left)).min(budget);
                (
                    given,
                    Bounds {
                        answer_by: end.min(now + given + GRACE),
                        kill_at: now + given + GRACE,
                        completion: true,
                    },
                )
            }
            None => (
                budget,
                Bounds {
                    answer_by: now + budget + GRACE,
                    kill_at: now + budget + GRACE,
                    completion: false,
                },
            ),
        };
        let mut running = self.take(bounds.answer_by, bounds.completion)?;
        let outcome = self.attempt(&mut running, method, params, budget, bounds);
        self.give_back(running);
        match outcome? {
            Reply::Error { code, message } => Err(self.answered(method, code, message)),
            reply => Ok(reply),
        }
    }

    /// Starts the process if `running` holds none (a call for a tool also replaces one that
    /// failed to give the answer of an abandoned call), then sends `method`; a failure stops
    /// the process (`running` is left empty), except a completion call abandoned at its
    /// bound.
    fn attempt(
        self: &Arc<Self>,
        running: &mut Option<Running>,
        method: Method,
        mut params: Value,
        budget: Duration,
        bounds: Bounds,
    ) -> Result<Reply, ProviderError> {
        let stopped = |failure| {
            self.failed(AdapterError::Stopped {
                provider: self.spec.id.clone(),
                failure,
            })
        };
        if let Some(active) = running {
            match active.process.settle(bounds.answer_by) {
                Ok(true) => {}
                Ok(false) => {
                    return Err(self.failed(AdapterError::Busy {
                        provider: self.spec.id.clone(),
                    }));
                }
                Err(failure) if bounds.completion => {
                    *running = None;
                    return Err(stopped(failure));
                }
                Err(failure) => {
                    tracing::info!(
                        provider = self.spec.id,
                        %failure,
                        "the adapter was stopped; starting a new one"
                    );
                    *running = None;
                }
            }
        }
        let active = match running {
            Some(active) => active,
            None => running.insert(self.start(Room::Make)?),
        };
        if let Value::Object(fields) = &mut params {
            let millis = u64::try_from(budget.as_millis()).unwrap_or(u64::MAX);
            fields.insert("timeout_ms".to_owned(), millis.into());
        }
        let result = active
            .process
            .call_until(method, params, bounds.answer_by, bounds.kill_at);
        result.map_err(|failure| match failure {
            CallFailure::Abandoned { .. } => self.failed(AdapterError::Late {
                provider: self.spec.id.clone(),
                failure,
            }),
            failure => {
                *running = None;
                stopped(failure)
            }
        })
    }

    /// Waits until no other call holds the process (or `deadline`), then holds it. For
    /// completion, a process that is not running (or still starting) is never waited for:
    /// it is started in the background ([`Adapter::start_in_background`]) and this call
    /// fails at once, so completion answers empty until the adapter is up.
    fn take(
        self: &Arc<Self>,
        deadline: Instant,
        completion: bool,
    ) -> Result<Option<Running>, ProviderError> {
        let mut slot = self.lock();
        let not_running = |adapter: &Adapter| {
            adapter.failed(AdapterError::NotRunning {
                provider: adapter.spec.id.clone(),
            })
        };
        while slot.busy {
            if completion && slot.starting {
                return Err(not_running(self));
            }
            let wait = deadline.saturating_duration_since(Instant::now());
            if wait.is_zero() {
                return Err(self.failed(AdapterError::Busy {
                    provider: self.spec.id.clone(),
                }));
            }
            slot = self
                .freed
                .wait_timeout(slot, wait)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        if completion && slot.running.is_none() {
            self.start_in_background(&mut slot);
            return Err(not_running(self));
        }
        slot.busy = true;
        Ok(slot.running.take())
    }

    /// Starts the process on the starter thread, holding `slot` (free, with no process)
    /// meanwhile; at most once per start-up time-out, so an adapter that fails to start is
    /// not started again for every completion request.
    fn start_in_background(self: &Arc<Self>, slot: &mut Slot) {
        let now = Instant::now();
        let recent = slot
            .started_for_completion
            .is_some_and(|at| now.saturating_duration_since(at) < self.spec.limits.start_up);
        if recent {
            return;
        }
        let adapter = Arc::clone(self);
        let job: Job = Box::new(move || {
            // Completion never waits for a slot, nor stops another session's adapter.
            let started = adapter.start(Room::Reap);
            if let Err(error) = &started {
                tracing::info!(
                    provider = adapter.spec.id,
                    %error,
                    "the adapter started for completion did not start"
                );
            }
            adapter.give_back(started.ok());
        });
        if starter().is_some_and(|queue| queue.try_send(job).is_ok()) {
            slot.busy = true;
            slot.starting = true;
            slot.started_for_completion = Some(now);
        }
    }

    fn give_back(&self, running: Option<Running>) {
        let mut slot = self.lock();
        slot.busy = false;
        slot.starting = false;
        slot.last_used = Instant::now();
        slot.running = running;
        drop(slot);
        self.freed.notify_one();
        self.slots.changed.notify_all();
    }

    /// Takes a slot (as `room` says), writes the private copy, starts the process in the
    /// server's private folder and has it `describe` itself and `open` the copy, all within
    /// the start-up time-out.
    fn start(self: &Arc<Self>, room: Room) -> Result<Running, ProviderError> {
        static SERIAL: AtomicU64 = AtomicU64::new(0);
        let provider = self.spec.id.clone();
        let limits = self.spec.limits;
        let deadline = Instant::now() + limits.start_up;
        let slot = self.slots.acquire(room, deadline).ok_or_else(|| {
            self.failed(AdapterError::TooMany {
                provider: provider.clone(),
                limit: self.slots.limit,
            })
        })?;
        let copy_failed = |source| {
            self.failed(AdapterError::Copy {
                provider: provider.clone(),
                source,
            })
        };
        let workspace = self.slots.workspace.get().map_err(copy_failed)?;
        let copy = workspace.copy(&self.bytes).map_err(copy_failed)?;
        let start_up = |failure| {
            self.failed(AdapterError::StartUp {
                provider: provider.clone(),
                failure,
            })
        };
        let mut command = Command::new(&self.spec.program);
        command.args(&self.spec.args);
        workspace.confine(&mut command);
        let serial = SERIAL.fetch_add(1, Ordering::Relaxed);
        let adapter = Arc::downgrade(self);
        let on_end: OnEnd = Box::new(move || {
            if let Some(adapter) = adapter.upgrade() {
                drop(adapter.take_ended(serial));
            }
        });
        let mut process = Process::start(
            command,
            limits.memory_bytes,
            limits.max_line_bytes,
            &provider,
            on_end,
        )
        .map_err(start_up)?;
        let described = process
            .call(
                Method::Describe,
                json!({"protocol": protocol::PROTOCOL_VERSION}),
                deadline,
            )
            .map_err(start_up)?;
        let Reply::Described(description) = described else {
            return Err(self.unexpected_or_answered(Method::Describe, described));
        };
        *self
            .described
            .lock()
            .unwrap_or_else(PoisonError::into_inner) =
            Some(format!("{} {}", description.name, description.version));
        if let Some(&operation) = self
            .spec
            .operations
            .iter()
            .find(|op| !description.operations.contains(op))
        {
            return Err(self.failed(AdapterError::MissingOperation {
                provider,
                operation,
            }));
        }
        let opened = process
            .call(
                Method::Open,
                json!({"path": copy.file(), "document": self.document}),
                deadline,
            )
            .map_err(start_up)?;
        match opened {
            Reply::Documents(_) => Ok(Running {
                process,
                serial,
                _copy: copy,
                _slot: slot,
            }),
            other => Err(self.unexpected_or_answered(Method::Open, other)),
        }
    }

    fn unexpected_or_answered(&self, method: Method, reply: Reply) -> ProviderError {
        match reply {
            Reply::Error { code, message } => self.answered(method, code, message),
            _ => self.failed(AdapterError::Unexpected {
                provider: self.spec.id.clone(),
                method: method.name(),
            }),
        }
    }

    fn answered(&self, method: Method, code: i64, message: String) -> ProviderError {
        self.failed(AdapterError::Answered {
            provider: self.spec.id.clone(),
            method: method.name(),
            code,
            message: Value::String(cut(&message)).to_string(),
        })
    }

    fn unexpected(&self, method: Method) -> ProviderError {
        self.failed(AdapterError::Unexpected {
            provider: self.spec.id.clone(),
            method: method.name(),
        })
    }

    /// Maps the adapter's documented error codes to the provider errors they mean.
    fn documented_error(
        &self,
        error: ProviderError,
        document: &str,
        address: Option<Address>,
        cursor: Option<&str>,
    ) -> ProviderError {
        let ProviderError::Failed(source) = &error else {
            return error;
        };
        let Some(AdapterError::Answered { code, .. }) = source.downcast_ref::<AdapterError>()
        else {
            return error;
        };
        match (*code, address, cursor) {
            (UNKNOWN_DOCUMENT, _, _) => ProviderError::UnknownDocument {
                document: document.into(),
            },
            (NO_PROCEDURE, Some(address), _) => ProviderError::NoProcedure {
                document: document.into(),
                address,
            },
            (INVALID_CURSOR, _, Some(cursor)) => ProviderError::InvalidCursor {
                cursor: cursor.into(),
            },
            _ => error,
        }
    }
}

impl Provider for ExternalProvider {
    fn id(&self) -> &str {
        &self.adapter.spec.id
    }

    fn supports(&self, operation: Operation) -> bool {
        self.adapter.spec.operations.contains(&operation)
    }

    fn list_documents(&self) -> Result<Vec<DocumentInfo>, ProviderError> {
        match self.adapter.call(
            Method::ListDocuments,
            json!({}),
            self.adapter.spec.limits.call,
        )? {
            Reply::Documents(documents) => Ok(documents),
            _ => Err(self.adapter.unexpected(Method::ListDocuments)),
        }
    }

    fn list_procedures(
        &self,
        document: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<ProcedurePage, ProviderError> {
        let params = json!({"document": document, "cursor": cursor, "limit": limit.max(1)});
        let reply = self
            .adapter
            .call(
                Method::ListProcedures,
                params,
                self.adapter.spec.limits.call,
            )
            .map_err(|e| self.adapter.documented_error(e, document, None, cursor))?;
        match reply {
            Reply::Procedures(page) if page.entries.len() <= limit.max(1) => Ok(page),
            Reply::Procedures(page) => Err(ProviderError::Malformed {
                reason: format!(
                    "the {} adapter answered {} procedures for a page of {}",
                    self.adapter.spec.id,
                    page.entries.len(),
                    limit.max(1)
                ),
            }),
            _ => Err(self.adapter.unexpected(Method::ListProcedures)),
        }
    }

    fn procedure_info(
        &self,
        document: &str,
        address: Address,
    ) -> Result<ProcedureInfo, ProviderError> {
        let params = json!({"document": document, "address": address.to_string()});
        let reply = self
            .adapter
            .call(Method::ProcedureInfo, params, self.adapter.spec.limits.call)
            .map_err(|e| {
                self.adapter
                    .documented_error(e, document, Some(address), None)
            })?;
        let Reply::Procedure(record) = reply else {
            return Err(self.adapter.unexpected(Method::ProcedureInfo));
        };
        if record.address != address {
            return Err(self.adapter.unexpected(Method::ProcedureInfo));
        }
        Ok(ProcedureInfo {
            address,
            name: record.name.map(|name| ProcedureName {
                raw_name: name.clone(),
                name,
            }),
            aliases: Vec::new(),
            size: record.size,
            segment: record.segment,
            sources: vec![ProcedureSource::Adapter],
        })
    }

    fn decompile(
        &self,
        document: &str,
        procedure: Address,
        bound: DecompileBound,
        names: &DecompileNames,
    ) -> Result<Decompilation, ProviderError> {
        let mut params = json!({
            "document": document,
            "address": procedure.to_string(),
            "max_chars": bound.max_chars(),
        });
        if !names.is_empty() {
            params["names"] = names
                .as_slice()
                .iter()
                .map(|(address, name)| json!({"address": address.to_string(), "name": name}))
                .collect();
        }
        let reply = self
            .adapter
            .call(Method::Decompile, params, bound.time())
            .map_err(|e| {
                self.adapter
                    .documented_error(e, document, Some(procedure), None)
            })?;
        let Reply::Decompiled(decompiled) = reply else {
            return Err(self.adapter.unexpected(Method::Decompile));
        };
        if decompiled.address != procedure {
            return Err(self.adapter.unexpected(Method::Decompile));
        }
        Ok(self.adapter.decompilation(decompiled, bound))
    }
}

impl Adapter {
    /// The answer as a [`Decompilation`], cut to the bound's characters.
    fn decompilation(&self, decompiled: DecompiledCode, bound: DecompileBound) -> Decompilation {
        let DecompiledCode {
            address,
            name,
            mut code,
            warnings,
            mut complete,
            mut reason,
        } = decompiled;
        if let Some((cut_at, _)) = code.char_indices().nth(bound.max_chars()) {
            code.truncate(cut_at);
            if complete {
                complete = false;
                reason = Some(format!(
                    "the output was cut to {} characters (max_chars)",
                    bound.max_chars()
                ));
            }
        }
        Decompilation {
            procedure: NamedAddress { address, name },
            decompiler: self
                .described
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
                .unwrap_or_else(|| self.spec.id.clone()),
            code,
            warnings,
            complete,
            incomplete_reason: reason,
        }
    }
}
