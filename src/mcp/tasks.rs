//! Long work as MCP tasks (docs/CONTRACT.md section 18): the `io.modelcontextprotocol/tasks` extension of
//! 2026-07-28 (SEP-2663) and the experimental tasks of 2025-11-25, written once for both
//! transports and both eras. The method handlers (`mcp::handlers`) and the extension
//! point ([`super::state::extension`]) call into it; nothing here knows stdio from HTTP.
//!
//! - **When a call answers a task.** A tool answers a task when the client supports tasks
//!   and the work is expected to outlast a short bound: for rea's own tools that is the long
//!   ones ([`LONG_TOOLS`]: `decompile`, `run_process_capture`, `inventory_artifacts`,
//!   `compare_procedures`, each of which can run for seconds to minutes) called by a 2026
//!   request whose `_meta` client capabilities declare the extension, or by a 2025-11-25
//!   request that asks for it (`params.task`). Every other call answers as before. An
//!   extension's tool says `execution.taskSupport` in its definition and its handler decides
//!   when to go asynchronous ([`super::ExtensionContext::escalate`]); a `required` tool
//!   called by a client that did not declare tasks is `-32021`.
//! - **Durable.** A task is written to the store ([`crate::session::durable::Durable::put_task`],
//!   synced) before the answer that names it, and again at each change of status, so after a
//!   restart `tasks/get` answers a finished task with its result for its ttl, and a task the
//!   restart cut is `failed` with a reason saying so ([`Tasks::new`]).
//! - **Cancellation** sets the task's [`Cancel`]: work that had not committed never commits,
//!   and the task is `cancelled` at once; work that had committed finishes and is `completed`.
//! - **Bounds** ([`MAX_TASKS_PER_SESSION`], [`MAX_TASKS_IN_FLIGHT`], [`MAX_TASKS_KEPT`],
//!   [`MAX_TTL_MS`]): each refusal is an error naming the bound.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use super::era::CLIENT_CAPABILITIES_KEY;
use super::error::RequestError;
use crate::base::Cancel;
use crate::session::durable::lease::Holder;
use crate::session::durable::{Durable, TaskRow, unix_now_ms};

pub use super::handler_error::TaskError;
pub use super::protocol::TASKS_EXTENSION;

/// The `_meta` key 2025-11-25 puts on a task's result (`tasks/result`).
pub const RELATED_TASK_KEY: &str = "io.modelcontextprotocol/related-task";

/// rea's tools whose work may run for seconds to minutes: they answer a task when the client
/// supports tasks.
pub const LONG_TOOLS: &[&str] = &[
    "decompile",
    "run_process_capture",
    "inventory_artifacts",
    "compare_procedures",
];

/// Most tasks in flight (`working` or `input_required`) per MCP session: a 2025 connection
/// (stdio, or one `Mcp-Session-Id` over HTTP). A 2026 request over HTTP has no session and
/// counts only against [`MAX_TASKS_IN_FLIGHT`].
pub const MAX_TASKS_PER_SESSION: usize = 16;

/// Most tasks in flight in the process.
pub const MAX_TASKS_IN_FLIGHT: usize = 64;

/// Most tasks the process keeps (in flight and finished, until their ttl passes).
pub const MAX_TASKS_KEPT: usize = 1024;

/// The ttl of a task when the client asks for none: how long after its last change
/// `tasks/get` still answers it.
pub const DEFAULT_TTL_MS: u64 = 3_600_000;

/// The longest ttl granted (a longer request is cut to this; the task says the ttl granted).
pub const MAX_TTL_MS: u64 = 86_400_000;

/// The poll interval the server suggests.
pub const POLL_INTERVAL_MS: u64 = 1_000;

/// A task's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Running.
    Working,
    /// Waiting for the client's answers (`tasks/update`).
    InputRequired,
    /// Finished: its result is kept (a tool error is a completed task with `isError`).
    Completed,
    /// Ended by a protocol-level error (or cut by a restart); its error is kept.
    Failed,
    /// Cancelled before it committed anything.
    Cancelled,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Working => "working",
            Status::InputRequired => "input_required",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }

    fn parse(text: &str) -> Option<Status> {
        Some(match text {
            "working" => Status::Working,
            "input_required" => Status::InputRequired,
            "completed" => Status::Completed,
            "failed" => Status::Failed,
            "cancelled" => Status::Cancelled,
            _ => return None,
        })
    }

    /// Whether the task has ended.
    pub fn is_terminal(self) -> bool {
        matches!(self, Status::Completed | Status::Failed | Status::Cancelled)
    }
}

/// Who created a task, for the per-session bound and `tasks/list`.
pub(crate) type Owner = Option<usize>;

/// One task's state (what the store keeps, and what the wire shows).
#[derive(Clone, Debug)]
pub(crate) struct State {
    id: String,
    status: Status,
    message: Option<String>,
    created_ms: u64,
    updated_ms: u64,
    ttl_ms: u64,
    result: Option<Value>,
    error: Option<Value>,
    input_requests: Option<Map<String, Value>>,
}

impl State {
    fn to_value(&self) -> Value {
        let mut value = json!({
            "taskId": self.id,
            "status": self.status.as_str(),
            "createdMs": self.created_ms,
            "updatedMs": self.updated_ms,
            "ttlMs": self.ttl_ms,
        });
        if let Some(message) = &self.message {
            value["statusMessage"] = json!(message);
        }
        if let Some(result) = &self.result {
            value["result"] = result.clone();
        }
        if let Some(error) = &self.error {
            value["error"] = error.clone();
        }
        if let Some(requests) = &self.input_requests {
            value["inputRequests"] = Value::Object(requests.clone());
        }
        value
    }

    fn from_value(id: &str, value: &Value) -> Option<State> {
        Some(State {
            id: id.to_owned(),
            status: Status::parse(value["status"].as_str()?)?,
            message: value["statusMessage"].as_str().map(str::to_owned),
            created_ms: value["createdMs"].as_u64()?,
            updated_ms: value["updatedMs"].as_u64()?,
            ttl_ms: value["ttlMs"].as_u64()?,
            result: value.get("result").cloned(),
            error: value.get("error").cloned(),
            input_requests: value["inputRequests"].as_object().cloned(),
        })
    }

    fn expires_ms(&self) -> u64 {
        if self.status.is_terminal() {
            self.updated_ms.saturating_add(self.ttl_ms)
        } else {
            // Work in flight is never forgotten; a restart fails it and its ttl starts then.
            u64::MAX >> 2
        }
    }

    /// The shared members of both eras' task objects.
    fn base(&self) -> Map<String, Value> {
        let mut task = Map::new();
        task.insert("taskId".into(), json!(self.id));
        task.insert("status".into(), json!(self.status.as_str()));
        if let Some(message) = &self.message {
            task.insert("statusMessage".into(), json!(message));
        }
        task.insert("createdAt".into(), json!(iso8601(self.created_ms)));
        task.insert("lastUpdatedAt".into(), json!(iso8601(self.updated_ms)));
        task
    }

    /// The 2026 `Task` (CreateTaskResult's members, flat): `ttlMs`, `pollIntervalMs`.
    fn modern(&self) -> Map<String, Value> {
        let mut task = self.base();
        task.insert("ttlMs".into(), json!(self.ttl_ms));
        task.insert("pollIntervalMs".into(), json!(POLL_INTERVAL_MS));
        task
    }

    /// The 2026 `DetailedTask` of `tasks/get`: the task and, by status, its `result`,
    /// `error` or `inputRequests`.
    fn detailed(&self) -> Value {
        let mut task = self.modern();
        match self.status {
            Status::Completed => {
                if let Some(result) = &self.result {
                    task.insert("result".into(), result.clone());
                }
            }
            Status::Failed => {
                if let Some(error) = &self.error {
                    task.insert("error".into(), error.clone());
                }
            }
            Status::InputRequired => {
                if let Some(requests) = &self.input_requests {
                    task.insert("inputRequests".into(), Value::Object(requests.clone()));
                }
            }
            Status::Working | Status::Cancelled => {}
        }
        Value::Object(task)
    }

    /// The 2025-11-25 `Task`: `ttl`, `pollInterval`.
    fn legacy(&self) -> Value {
        let mut task = self.base();
        task.insert("ttl".into(), json!(self.ttl_ms));
        task.insert("pollInterval".into(), json!(POLL_INTERVAL_MS));
        Value::Object(task)
    }
}

/// A task's pending input (a task parked in `input_required`).
#[derive(Debug)]
struct Input {
    pending: Map<String, Value>,
    collected: Map<String, Value>,
    wake: Option<oneshot::Sender<Map<String, Value>>>,
}

/// A task as the process holds it.
#[derive(Debug)]
struct Entry {
    state: State,
    owner: Owner,
    cancel: Option<Cancel>,
    input: Option<Input>,
}

/// The tasks of one server: in memory, and in its store.
#[derive(Debug)]
pub struct Tasks {
    durable: Arc<dyn Durable>,
    entries: Mutex<HashMap<String, Entry>>,
}

/// The error object a task that a restart cut keeps.
fn restart_error(holder: Holder) -> (String, Value) {
    let message = format!(
        "the server restarted (process {} ended) while this task was in flight; its work was \
         cut short and nothing of it was committed; call the tool again",
        holder.pid
    );
    let error = json!({ "code": -32603, "message": message });
    (message, error)
}

impl Tasks {
    /// The tasks `durable` holds: finished ones as they were, and those a previous process
    /// left in flight (its process is gone) as `failed` with a reason saying the server
    /// restarted, written back so. Tasks another live process runs are left to it.
    pub fn new(durable: Arc<dyn Durable>) -> Tasks {
        let now = unix_now_ms();
        let rows = durable.load_tasks(now).unwrap_or_else(|error| {
            tracing::warn!(%error, "the store's tasks could not be read; starting without them");
            Vec::new()
        });
        let mut entries = HashMap::new();
        for row in rows {
            let Some(mut state) = State::from_value(&row.id, &row.state) else {
                tracing::warn!(task = %row.id, "a stored task has an unreadable state; skipped");
                continue;
            };
            if !state.status.is_terminal() {
                if row.holder != Holder::me() && row.holder.alive() {
                    continue;
                }
                let (message, error) = restart_error(row.holder);
                state.status = Status::Failed;
                state.message = Some(message);
                state.error = Some(error);
                state.result = None;
                state.input_requests = None;
                state.updated_ms = now;
                let row = TaskRow {
                    id: state.id.clone(),
                    holder: Holder::me(),
                    expires_ms: state.expires_ms(),
                    state: state.to_value(),
                };
                if let Err(error) = durable.put_task(&row) {
                    tracing::warn!(%error, task = %row.id, "could not mark a cut task failed");
                }
            }
            entries.insert(
                state.id.clone(),
                Entry {
                    state,
                    owner: None,
                    cancel: None,
                    input: None,
                },
            );
        }
        Tasks {
            durable,
            entries: Mutex::new(entries),
        }
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn persist(&self, state: &State) -> Result<(), TaskError> {
        let row = TaskRow {
            id: state.id.clone(),
            holder: Holder::me(),
            expires_ms: state.expires_ms(),
            state: state.to_value(),
        };
        self.durable
            .put_task(&row)
            .map_err(|error| TaskError::Store(error.to_string()))
    }

    /// Forgets the finished tasks whose ttl passed.
    fn sweep(entries: &mut HashMap<String, Entry>, now: u64) {
        entries.retain(|_, entry| entry.state.expires_ms() >= now);
    }

    /// Makes a task in flight for `owner` with the ttl the client asked for (if any), running
    /// under `cancel`; it is in the store when this returns.
    pub(crate) fn create(
        &self,
        owner: Owner,
        ttl_ms: Option<u64>,
        cancel: Cancel,
    ) -> Result<String, TaskError> {
        let id = crate::session::random_token("task_").map_err(|_| TaskError::NoRandom)?;
        let now = unix_now_ms();
        let ttl_ms = ttl_ms.unwrap_or(DEFAULT_TTL_MS).clamp(1, MAX_TTL_MS);
        let state = State {
            id: id.clone(),
            status: Status::Working,
            message: None,
            created_ms: now,
            updated_ms: now,
            ttl_ms,
            result: None,
            error: None,
            input_requests: None,
        };
        let mut entries = self.entries();
        Tasks::sweep(&mut entries, now);
        if entries.len() >= MAX_TASKS_KEPT {
            return Err(TaskError::KeptBound {
                limit: MAX_TASKS_KEPT,
            });
        }
        let in_flight = entries
            .values()
            .filter(|entry| !entry.state.status.is_terminal());
        let (mut all, mut own) = (0, 0);
        for entry in in_flight {
            all += 1;
            if owner.is_some() && entry.owner == owner {
                own += 1;
            }
        }
        if all >= MAX_TASKS_IN_FLIGHT {
            return Err(TaskError::InFlightBound {
                limit: MAX_TASKS_IN_FLIGHT,
            });
        }
        if own >= MAX_TASKS_PER_SESSION {
            return Err(TaskError::SessionBound {
                limit: MAX_TASKS_PER_SESSION,
            });
        }
        // In the store before anyone can learn its ID.
        self.persist(&state)?;
        entries.insert(
            id.clone(),
            Entry {
                state,
                owner,
                cancel: Some(cancel),
                input: None,
            },
        );
        Ok(id)
    }

    /// Changes task `id` with `change` unless it has ended, then keeps it in the store; says
    /// whether it changed.
    fn change(&self, id: &str, change: impl FnOnce(&mut Entry)) -> bool {
        let mut entries = self.entries();
        let Some(entry) = entries.get_mut(id) else {
            return false;
        };
        if entry.state.status.is_terminal() {
            return false;
        }
        change(entry);
        entry.state.updated_ms = unix_now_ms().max(entry.state.updated_ms);
        if entry.state.status.is_terminal() {
            entry.cancel = None;
            entry.input = None;
        }
        if let Err(error) = self.persist(&entry.state) {
            tracing::warn!(%error, task = id, "a task's change could not be kept in the store");
        }
        true
    }

    /// The 2025-11-25 `notifications/tasks/status` line for task `id` as it is now.
    pub(crate) fn status_notification(&self, id: &str) -> Option<String> {
        let state = self.snapshot(id).ok()?;
        let notification = json!({
            "jsonrpc": "2.0",
            "method": "notifications/tasks/status",
            "params": state.legacy(),
        });
        Some(notification.to_string())
    }

    /// Ends task `id` with a tool result (`completed`; a result with `isError` included),
    /// or `cancelled` when it was cancelled before it committed; says whether it had not
    /// ended before (`tasks/cancel` may have ended it).
    pub(crate) fn complete(&self, id: &str, result: Value) -> bool {
        self.change(id, |entry| {
            if entry.cancel.as_ref().is_some_and(Cancel::is_cancelled) {
                entry.state.status = Status::Cancelled;
            } else {
                entry.state.status = Status::Completed;
                entry.state.result = Some(result);
            }
        })
    }

    /// Ends task `id` with a protocol-level error (`failed`), or `cancelled` when it was
    /// cancelled before it committed; says whether it had not ended before.
    pub(crate) fn fail(&self, id: &str, error: &RequestError) -> bool {
        let object = error.to_object();
        self.change(id, |entry| {
            if entry.cancel.as_ref().is_some_and(Cancel::is_cancelled) {
                entry.state.status = Status::Cancelled;
            } else {
                entry.state.status = Status::Failed;
                entry.state.message = object["message"].as_str().map(str::to_owned);
                entry.state.error = Some(object);
            }
        })
    }

    /// Parks task `id` in `input_required` with `requests`; the receiver yields every answer
    /// once all of them arrived through `tasks/update`.
    pub(crate) fn request_input(
        &self,
        id: &str,
        requests: Map<String, Value>,
    ) -> oneshot::Receiver<Map<String, Value>> {
        let (wake, answered) = oneshot::channel();
        self.change(id, |entry| {
            entry.state.status = Status::InputRequired;
            entry.state.input_requests = Some(requests.clone());
            entry.input = Some(Input {
                pending: requests,
                collected: Map::new(),
                wake: Some(wake),
            });
        });
        answered
    }

    /// Whether the task `id` exists (for the strong-consistency rule: answered only after
    /// creation).
    pub(crate) fn snapshot(&self, id: &str) -> Result<State, TaskError> {
        let mut entries = self.entries();
        Tasks::sweep(&mut entries, unix_now_ms());
        entries
            .get(id)
            .map(|entry| entry.state.clone())
            .ok_or_else(|| TaskError::Unknown(id.into()))
    }

    /// `tasks/update`: the answers in `responses` whose keys the task waits for are taken
    /// (others are ignored); once none is pending the task works again.
    pub(crate) fn update(&self, id: &str, responses: &Map<String, Value>) -> Result<(), TaskError> {
        self.snapshot(id)?;
        self.change(id, |entry| {
            let Some(input) = entry.input.as_mut() else {
                return;
            };
            for (key, response) in responses {
                if input.pending.remove(key).is_some() {
                    input.collected.insert(key.clone(), response.clone());
                }
            }
            if input.pending.is_empty() {
                let collected = std::mem::take(&mut input.collected);
                if let Some(wake) = input.wake.take() {
                    let _ = wake.send(collected);
                }
                entry.input = None;
                entry.state.status = Status::Working;
                entry.state.input_requests = None;
            } else {
                entry.state.input_requests = Some(input.pending.clone());
            }
        });
        Ok(())
    }

    /// `tasks/cancel`: sets the task's cancellation; a task whose work had not committed is
    /// `cancelled` at once (and its work never commits). A finished task is left as it is;
    /// returns its state after.
    pub(crate) fn cancel(&self, id: &str) -> Result<State, TaskError> {
        self.snapshot(id)?;
        self.change(id, |entry| {
            let won = match &entry.cancel {
                Some(cancel) => {
                    cancel.cancel();
                    cancel.is_cancelled()
                }
                None => true,
            };
            if won {
                entry.state.status = Status::Cancelled;
                entry.state.message = Some("cancelled by the client (tasks/cancel)".into());
                entry.state.input_requests = None;
            }
        });
        self.snapshot(id)
    }

    /// The tasks `owner` created that the process still keeps (2025 `tasks/list`), newest
    /// last.
    fn owned_by(&self, owner: Owner) -> Vec<State> {
        let mut entries = self.entries();
        Tasks::sweep(&mut entries, unix_now_ms());
        let mut states: Vec<State> = entries
            .values()
            .filter(|entry| owner.is_some() && entry.owner == owner)
            .map(|entry| entry.state.clone())
            .collect();
        states.sort_by_key(|state| state.created_ms);
        states
    }

    /// Waits until task `id` has ended (or `cancel` is set), polling.
    async fn ended(&self, id: &str, cancel: &Cancel) -> Result<State, TaskError> {
        loop {
            let state = self.snapshot(id)?;
            if state.status.is_terminal() || cancel.is_cancelled() {
                return Ok(state);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Whether a 2026 request's `_meta` client capabilities declare the tasks extension.
pub(crate) fn modern_client_declares(params: &Map<String, Value>) -> bool {
    params
        .get("_meta")
        .and_then(|meta| meta.get(CLIENT_CAPABILITIES_KEY))
        .and_then(|capabilities| capabilities.get("extensions"))
        .and_then(|extensions| extensions.get(TASKS_EXTENSION))
        .is_some_and(Value::is_object)
}

/// The ttl a 2025-11-25 request asks for in `params.task` (`Some(None)`: a task without a
/// ttl; `None`: no task asked for).
pub(crate) fn legacy_task_request(params: &Map<String, Value>) -> Option<Option<u64>> {
    let task = params.get("task")?.as_object()?;
    Some(task.get("ttl").and_then(Value::as_u64))
}

/// The answer that creates task `id`: 2026's flat `CreateTaskResult` (its `resultType:
/// "task"` is put by the shell), or 2025's `{task}`.
pub(crate) fn created(tasks: &Tasks, id: &str, modern: bool) -> Result<Value, RequestError> {
    let state = tasks.snapshot(id).map_err(RequestError::Task)?;
    Ok(if modern {
        Value::Object(state.modern())
    } else {
        json!({ "task": state.legacy() })
    })
}

/// The `taskId` of a tasks method's params.
fn task_id(params: &Map<String, Value>) -> Result<&str, RequestError> {
    super::params::required_str(params, "params", "taskId")
}

/// 2026 tasks methods need the extension declared in the request's `_meta`.
fn gate(params: &Map<String, Value>) -> Result<(), RequestError> {
    if modern_client_declares(params) {
        Ok(())
    } else {
        Err(RequestError::TasksNotNegotiated)
    }
}

/// `tasks/get`.
pub(crate) fn get(
    tasks: &Tasks,
    params: &Map<String, Value>,
    modern: bool,
) -> Result<Value, RequestError> {
    if modern {
        gate(params)?;
    }
    let state = tasks
        .snapshot(task_id(params)?)
        .map_err(RequestError::Task)?;
    Ok(if modern {
        state.detailed()
    } else {
        state.legacy()
    })
}

/// `tasks/update` (2026 only): an empty acknowledgement.
pub(crate) fn update(
    tasks: &Tasks,
    params: &Map<String, Value>,
    modern: bool,
) -> Result<Value, RequestError> {
    if !modern {
        return Err(RequestError::MethodNotFound {
            method: "tasks/update".into(),
        });
    }
    gate(params)?;
    let id = task_id(params)?;
    let responses = super::params::optional_object(params, "params", "inputResponses")?
        .cloned()
        .unwrap_or_default();
    tasks.update(id, &responses).map_err(RequestError::Task)?;
    Ok(json!({}))
}

/// `tasks/cancel`: 2026 answers an empty acknowledgement (also for a finished task); 2025
/// answers the task, and refuses a finished one.
pub(crate) fn cancel(
    tasks: &Tasks,
    params: &Map<String, Value>,
    modern: bool,
) -> Result<Value, RequestError> {
    if modern {
        gate(params)?;
    }
    let id = task_id(params)?;
    if !modern {
        let before = tasks.snapshot(id).map_err(RequestError::Task)?;
        if before.status.is_terminal() {
            return Err(RequestError::Task(TaskError::Terminal {
                id: id.into(),
                status: before.status.as_str(),
            }));
        }
    }
    let state = tasks.cancel(id).map_err(RequestError::Task)?;
    Ok(if modern { json!({}) } else { state.legacy() })
}

/// `tasks/list` (2025-11-25 only; removed in 2026): this session's tasks, one page.
pub(crate) fn list(tasks: &Tasks, owner: Owner, modern: bool) -> Result<Value, RequestError> {
    if modern {
        return Err(RequestError::MethodNotFound {
            method: "tasks/list".into(),
        });
    }
    let tasks: Vec<Value> = tasks.owned_by(owner).iter().map(State::legacy).collect();
    Ok(json!({ "tasks": tasks }))
}

/// `tasks/result` (2025-11-25 only; removed in 2026): waits for the task to end, then
/// answers its result (with the related-task `_meta`) or its error.
pub(crate) async fn result(
    tasks: &Tasks,
    params: &Map<String, Value>,
    modern: bool,
    cancel: &Cancel,
) -> Result<Value, RequestError> {
    if modern {
        return Err(RequestError::MethodNotFound {
            method: "tasks/result".into(),
        });
    }
    let id = task_id(params)?;
    let state = tasks.ended(id, cancel).await.map_err(RequestError::Task)?;
    match (state.status, state.result, state.error) {
        (Status::Completed, Some(mut result), _) => {
            if let Some(object) = result.as_object_mut() {
                let meta = object.entry("_meta").or_insert_with(|| json!({}));
                if let Some(meta) = meta.as_object_mut() {
                    meta.insert(RELATED_TASK_KEY.into(), json!({ "taskId": id }));
                }
            }
            Ok(result)
        }
        (status, _, error) => Err(RequestError::TaskEnded {
            id: id.into(),
            status: status.as_str(),
            message: error
                .as_ref()
                .and_then(|e| e["message"].as_str())
                .unwrap_or("")
                .to_owned(),
        }),
    }
}

/// An ISO-8601 UTC time (`2026-12-03T06:15:00.123Z`) of `ms` since the Unix epoch.
pub fn iso8601(ms: u64) -> String {
    format!(
        "{}.{:03}Z",
        crate::text::utc_date_time(ms / 1000),
        ms % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::durable::MemoryStore;

    #[test]
    fn times_are_iso8601() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_780_000_000_123), "2026-05-28T20:26:40.123Z");
    }

    #[test]
    fn a_restart_fails_what_was_in_flight_and_keeps_what_finished() {
        let store: Arc<dyn Durable> = Arc::new(MemoryStore::retaining());
        let tasks = Tasks::new(Arc::clone(&store));
        let running = tasks.create(Some(1), None, Cancel::new()).unwrap();
        let done = tasks.create(Some(1), Some(60_000), Cancel::new()).unwrap();
        tasks.complete(&done, json!({"content": [{"type": "text", "text": "ok"}]}));
        // A row another process left: its holder is gone.
        let mut row = store
            .load_tasks(0)
            .unwrap()
            .into_iter()
            .find(|row| row.id == running)
            .unwrap();
        row.holder = Holder {
            pid: u32::MAX,
            start: 1,
        };
        store.put_task(&row).unwrap();
        drop(tasks);
        let restarted = Tasks::new(store);
        let cut = restarted.snapshot(&running).unwrap();
        assert_eq!(cut.status, Status::Failed);
        assert!(cut.message.unwrap().contains("restarted"));
        let finished = restarted.snapshot(&done).unwrap();
        assert_eq!(finished.status, Status::Completed);
        assert_eq!(finished.result.unwrap()["content"][0]["text"], "ok");
    }

    #[test]
    fn cancel_before_commit_wins_and_the_bounds_name_themselves() {
        let tasks = Tasks::new(Arc::new(MemoryStore::new()));
        let cancel = Cancel::new();
        let id = tasks.create(Some(7), None, cancel.clone()).unwrap();
        assert_eq!(tasks.cancel(&id).unwrap().status, Status::Cancelled);
        assert!(cancel.commit().is_err());
        tasks.complete(&id, json!({}));
        assert_eq!(tasks.snapshot(&id).unwrap().status, Status::Cancelled);
        for _ in 0..MAX_TASKS_PER_SESSION {
            tasks.create(Some(8), None, Cancel::new()).unwrap();
        }
        let refused = tasks.create(Some(8), None, Cancel::new()).unwrap_err();
        assert!(refused.to_string().contains("MAX_TASKS_PER_SESSION"));
        assert!(matches!(tasks.snapshot("nope"), Err(TaskError::Unknown(_))));
    }
}
