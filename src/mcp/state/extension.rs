//! The extension point: an integrator's own tools, prompts and resources, served through the
//! same shell as the built-in ones (both eras, stdio and HTTP).
//!
//! An [`Extension`] lists its definitions (as MCP JSON) and answers the requests that name
//! them; the built-in catalog answers the rest. Its handlers get an [`ExtensionContext`] that
//! belongs to the one request:
//!
//! - [`ExtensionContext::progress`] and [`ExtensionContext::log`] send `notifications/progress`
//!   and `notifications/message` on the request's own stream (the connection's output on
//!   stdio, the request's SSE response over HTTP), before its answer;
//! - [`ExtensionContext::ask`] (2025 era) sends a request to the client
//!   (`sampling/createMessage`, `elicitation/create`, `roots/list`) on that stream and waits
//!   for its answer, which the client sends back as a line (stdio) or a POST (HTTP); at most
//!   [`MAX_PENDING_ASKS`] wait per connection, each at most [`ASK_TIMEOUT`];
//! - in the 2026 era a handler asks instead by answering [`Reply::InputRequired`]: the client
//!   retries with `inputResponses` ([`ExtensionContext::input_responses`]) and the state the
//!   handler kept ([`ExtensionContext::state`]), which travels sealed (see
//!   [`super::super::sealed`]) so a client cannot forge or move it to another request.
//!
//! ```no_run
//! use std::sync::Arc;
//! use rea::mcp::{Extension, ExtensionContext, Handled, Reply, Server, ServerConfig};
//! use serde_json::{Map, Value, json};
//!
//! #[derive(Debug)]
//! struct Hello;
//!
//! impl Extension for Hello {
//!     fn tools(&self) -> Vec<Value> {
//!         vec![json!({"name": "hello", "description": "Says hello",
//!                     "inputSchema": {"type": "object"}})]
//!     }
//!     fn call_tool<'a>(&'a self, name: &'a str, _: &'a Map<String, Value>,
//!                      _: &'a ExtensionContext) -> Handled<'a> {
//!         Box::pin(async move {
//!             (name == "hello").then(|| Ok(Reply::Complete(
//!                 json!({"content": [{"type": "text", "text": "hello"}]}))))
//!         })
//!     }
//! }
//!
//! let server = Server::new(ServerConfig::default()).with_extension(Arc::new(Hello));
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;

use serde_json::{Map, Value, json};

use super::super::era::{CLIENT_CAPABILITIES_KEY, Era, LogLevel};
use super::super::error::RequestError;
use super::super::sealed::{self, StateError};
use super::{RequestContext, Shared, cancelled};
use crate::mcp::tasks::{self, Owner, Tasks};
use crate::session::Cancel;
use std::sync::Arc;
use tokio::sync::oneshot;

pub use super::super::handler_error::{ASK_TIMEOUT, AskError, ExtensionError, MAX_PENDING_ASKS};

/// What an extension handler's future yields: `None` when the name is not the extension's
/// (the built-in catalog answers then), else its reply or error.
pub type Handled<'a> =
    Pin<Box<dyn Future<Output = Option<Result<Reply, ExtensionError>>> + Send + 'a>>;

/// An integrator's tools, prompts and resources (see the [module](self) documentation).
/// Every method has a default that offers nothing.
pub trait Extension: Send + Sync + std::fmt::Debug + 'static {
    /// Tool definitions (`name`, `description`, `inputSchema`, ...), listed after the
    /// built-in tools.
    fn tools(&self) -> Vec<Value> {
        Vec::new()
    }

    /// Prompt definitions (`name`, `description`, `arguments`), listed after the built-in
    /// prompts.
    fn prompts(&self) -> Vec<Value> {
        Vec::new()
    }

    /// Direct resources (`uri`, `name`, ...), listed after the built-in ones.
    fn resources(&self) -> Vec<Value> {
        Vec::new()
    }

    /// Resource templates (`uriTemplate`, `name`, ...), listed after the built-in ones.
    fn resource_templates(&self) -> Vec<Value> {
        Vec::new()
    }

    /// Whether 2025 clients may `resources/subscribe` (the `resources.subscribe`
    /// capability); the shell keeps each connection's subscriptions.
    fn subscribe(&self) -> bool {
        false
    }

    /// Answers `tools/call` for `name`; `None`: not one of this extension's tools.
    fn call_tool<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a Map<String, Value>,
        context: &'a ExtensionContext,
    ) -> Handled<'a> {
        let _ = (name, arguments, context);
        Box::pin(async { None })
    }

    /// Answers `prompts/get` for `name`; `None`: not one of this extension's prompts.
    fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a Map<String, Value>,
        context: &'a ExtensionContext,
    ) -> Handled<'a> {
        let _ = (name, arguments, context);
        Box::pin(async { None })
    }

    /// Answers `resources/read` for `uri`; `None`: not one of this extension's resources.
    fn read_resource<'a>(&'a self, uri: &'a str, context: &'a ExtensionContext) -> Handled<'a> {
        let _ = (uri, context);
        Box::pin(async { None })
    }

    /// Completion values for `argument` (typed so far: `value`) of the prompt or template
    /// `reference` (`{"type": "ref/prompt", "name"}` or `{"type": "ref/resource", "uri"}`);
    /// `None`: not one of this extension's.
    fn complete(
        &self,
        reference: &Map<String, Value>,
        argument: &str,
        value: &str,
    ) -> Option<Vec<String>> {
        let _ = (reference, argument, value);
        None
    }
}

/// What an extension handler answers.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// The complete result (a `CallToolResult`, `GetPromptResult` or `ReadResourceResult`).
    Complete(Value),
    /// 2026 era only: the client must first answer `requests` (keys of the handler's
    /// choosing, each `{"method", "params"}`), then retry with `inputResponses` under the same
    /// keys; `state`, if any, comes back sealed as the retry's `requestState`.
    InputRequired {
        /// The input requests, by key.
        requests: Map<String, Value>,
        /// What the handler needs to know on the retry.
        state: Option<Value>,
    },
}

/// The lists whose change [`ExtensionContext::list_changed`] announces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListKind {
    /// `notifications/tools/list_changed`.
    Tools,
    /// `notifications/prompts/list_changed`.
    Prompts,
    /// `notifications/resources/list_changed`.
    Resources,
}

/// What an extension handler knows about its request, and what it can send on its stream.
#[derive(Debug)]
pub struct ExtensionContext {
    request: RequestContext,
    era: Era,
    client_capabilities: Value,
    progress_token: Option<Value>,
    input_responses: Option<Map<String, Value>>,
    state: Option<Value>,
    /// Set when the call may go on as a task ([`ExtensionContext::escalate`]).
    task: Option<TaskLink>,
}

/// How a tool call that may become a task reaches the server's tasks.
#[derive(Debug)]
struct TaskLink {
    tasks: Arc<Tasks>,
    owner: Owner,
    ttl_ms: Option<u64>,
    /// The task's ID once the call escalated.
    id: std::sync::Mutex<Option<String>>,
    /// Tells the shell the task was made (or could not be), so it answers the task.
    escalated: std::sync::Mutex<Option<oneshot::Sender<Result<String, RequestError>>>>,
}

impl ExtensionContext {
    /// The era of the request.
    pub fn era(&self) -> Era {
        self.era
    }

    /// The client's capabilities: declared at `initialize` (2025 era) or in the request's
    /// `_meta` (2026 era).
    pub fn client_capabilities(&self) -> &Value {
        &self.client_capabilities
    }

    /// Whether the client declared the capability `name` (`sampling`, `elicitation`,
    /// `roots`, ...).
    pub fn has_client_capability(&self, name: &str) -> bool {
        self.client_capabilities
            .get(name)
            .is_some_and(Value::is_object)
    }

    /// The client's answers to an earlier [`Reply::InputRequired`] (2026 era), by key, as
    /// sent (each still to be checked).
    pub fn input_responses(&self) -> Option<&Map<String, Value>> {
        self.input_responses.as_ref()
    }

    /// The state an earlier [`Reply::InputRequired`] kept, once its seal was checked.
    pub fn state(&self) -> Option<&Value> {
        self.state.as_ref()
    }

    /// Whether the client cancelled the request.
    pub fn is_cancelled(&self) -> bool {
        self.request.cancel.is_cancelled()
    }

    /// Sends `notifications/progress` on the request's stream when the request carried a
    /// `_meta.progressToken` (nothing otherwise).
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(token) = &self.progress_token else {
            return;
        };
        let mut params = json!({ "progressToken": token, "progress": progress });
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
        let line =
            json!({ "jsonrpc": "2.0", "method": "notifications/progress", "params": params });
        self.request.stream.send(line.to_string()).await;
    }

    /// Sends `notifications/message` with `data` on the request's stream when `level` is at
    /// or above the request's log level (the 2025 connection's `logging/setLevel`, the 2026
    /// request's `_meta` level); nothing without one.
    pub async fn log(&self, level: LogLevel, data: Value) {
        if self
            .request
            .log_level
            .is_some_and(|threshold| level >= threshold)
        {
            let line = json!({
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": { "level": level.as_str(), "data": data },
            });
            self.request.stream.send(line.to_string()).await;
        }
    }

    /// Announces that a list changed to every connected client and listen stream that asked
    /// for it.
    pub fn list_changed(&self, list: ListKind) {
        self.request.connection.shared.broadcast(match list {
            ListKind::Tools => "notifications/tools/list_changed",
            ListKind::Prompts => "notifications/prompts/list_changed",
            ListKind::Resources => "notifications/resources/list_changed",
        });
    }

    /// Sends `method` with `params` to the client as a request on this request's stream
    /// (2025 era) and waits for its result.
    pub async fn ask(&self, method: &str, params: Value) -> Result<Value, AskError> {
        if self.era == Era::Modern {
            return Err(AskError::Modern);
        }
        self.request.ask(method, params).await
    }
}

impl ExtensionContext {
    /// Whether this call may answer a task: a tool whose definition says
    /// `execution.taskSupport` (`optional` or `required`), called by a client that supports
    /// tasks (2026: the extension in the request's `_meta`; 2025-11-25: `params.task`).
    pub fn can_escalate(&self) -> bool {
        self.task.is_some()
    }

    /// Goes on as a task: the task is made (in the store) and the client is answered with it
    /// at once, while this handler runs on; its reply becomes the task's result (an
    /// [`ExtensionError`] its error, `failed`). `false` when the call cannot be a task
    /// ([`ExtensionContext::can_escalate`]), or the task could not be made (the client then
    /// gets that error, and [`ExtensionContext::is_cancelled`] turns true). Calling it again
    /// changes nothing.
    pub fn escalate(&self) -> bool {
        let Some(link) = &self.task else {
            return false;
        };
        let mut id = link.id.lock().unwrap_or_else(|e| e.into_inner());
        if id.is_some() {
            return true;
        }
        let made = link
            .tasks
            .create(link.owner, link.ttl_ms, self.request.cancel.clone())
            .map_err(RequestError::Task);
        let sender = link
            .escalated
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let ok = made.is_ok();
        match &made {
            Ok(task) => *id = Some(task.clone()),
            Err(_) => self.request.cancel.cancel(),
        }
        if let Some(sender) = sender {
            let _ = sender.send(made);
        }
        ok
    }

    /// The task's ID, once [`ExtensionContext::escalate`] made it.
    pub fn task_id(&self) -> Option<String> {
        let link = self.task.as_ref()?;
        link.id.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// In a task: parks it in `input_required` with `requests` (keys of the handler's
    /// choosing, each `{"method", "params"}`, as [`Reply::InputRequired`]) until the client
    /// answered every one through `tasks/update`, and yields the answers by key. Outside a
    /// task, or when the task is cancelled meanwhile, an error.
    pub async fn request_input(
        &self,
        requests: Map<String, Value>,
    ) -> Result<Map<String, Value>, ExtensionError> {
        let (Some(link), Some(id)) = (&self.task, self.task_id()) else {
            return Err(ExtensionError::Failed(
                "request_input needs a task: call escalate first".into(),
            ));
        };
        let answered = link.tasks.request_input(&id, requests);
        let cancel = self.request.cancel.clone();
        tokio::select! {
            answers = answered => answers.map_err(|_| {
                ExtensionError::Failed("the task ended while it waited for input".into())
            }),
            () = cancelled(cancel) => Err(ExtensionError::Failed("the task was cancelled".into())),
        }
    }
}

/// Which request an extension is asked to answer.
pub(crate) enum Requested<'a> {
    Tool {
        name: &'a str,
        arguments: &'a Map<String, Value>,
    },
    Prompt {
        name: &'a str,
        arguments: &'a Map<String, Value>,
    },
    Resource {
        uri: &'a str,
    },
}

impl Requested<'_> {
    fn method(&self) -> &'static str {
        match self {
            Requested::Tool { .. } => "tools/call",
            Requested::Prompt { .. } => "prompts/get",
            Requested::Resource { .. } => "resources/read",
        }
    }

    fn name(&self) -> &str {
        match self {
            Requested::Tool { name, .. } | Requested::Prompt { name, .. } => name,
            Requested::Resource { uri } => uri,
        }
    }
}

/// Offers what a request with `params` asks for (`requested`) to the server's extension: `None` when there
/// is none or it does not answer that name (the built-in catalog answers then).
pub(crate) async fn answer(
    shared: &Shared,
    params: &Map<String, Value>,
    requested: Requested<'_>,
    request: &RequestContext,
) -> Option<Result<Value, RequestError>> {
    let extension = shared.extension()?;
    let era = if request.modern.is_some() {
        Era::Modern
    } else {
        Era::Legacy
    };
    let meta = params.get("_meta").and_then(Value::as_object);
    let client_capabilities = match era {
        Era::Modern => meta
            .and_then(|meta| meta.get(CLIENT_CAPABILITIES_KEY))
            .cloned()
            .unwrap_or_else(|| json!({})),
        Era::Legacy => request.connection.client_capabilities(),
    };
    let (input_responses, state) = match era {
        Era::Modern => match retry_members(params, &requested) {
            Ok(members) => members,
            Err(error) => return Some(Err(error)),
        },
        Era::Legacy => (None, None),
    };
    let progress_token = meta.and_then(|meta| meta.get("progressToken")).cloned();
    if let Requested::Tool { name, arguments } = &requested
        && let Some(support) = task_support(extension.as_ref(), name)
    {
        let supported = match era {
            Era::Modern => tasks::modern_client_declares(params),
            Era::Legacy => tasks::legacy_task_request(params).is_some(),
        };
        if !supported {
            if support == "required" {
                return Some(Err(RequestError::TasksNotNegotiated));
            }
        } else {
            let ttl_ms = match era {
                Era::Modern => None,
                Era::Legacy => tasks::legacy_task_request(params).flatten(),
            };
            let context = ExtensionContext {
                request: request.clone(),
                era,
                client_capabilities,
                progress_token,
                input_responses,
                state,
                task: None,
            };
            return as_task(
                shared, extension, name, arguments, context, ttl_ms, &requested, request,
            )
            .await;
        }
    }
    let context = ExtensionContext {
        request: request.clone(),
        era,
        client_capabilities,
        progress_token,
        input_responses,
        state,
        task: None,
    };
    let replied = match requested {
        Requested::Tool { name, arguments } => extension.call_tool(name, arguments, &context).await,
        Requested::Prompt { name, arguments } => {
            extension.get_prompt(name, arguments, &context).await
        }
        Requested::Resource { uri } => extension.read_resource(uri, &context).await,
    }?;
    Some(match replied {
        Ok(Reply::Complete(result)) => Ok(result),
        Ok(Reply::InputRequired { requests, state }) => {
            input_required(&requested, request, era, requests, state.as_ref())
        }
        Err(error) => Err(RequestError::Extension(error)),
    })
}

/// The `execution.taskSupport` of the extension's tool `name` when it is `optional` or
/// `required`.
fn task_support(extension: &dyn Extension, name: &str) -> Option<&'static str> {
    let tools = extension.tools();
    let tool = tools.iter().find(|tool| tool["name"] == name)?;
    match tool["execution"]["taskSupport"].as_str()? {
        "optional" => Some("optional"),
        "required" => Some("required"),
        _ => None,
    }
}

/// Runs the extension's tool call in `context` so that it may go on as a task: the handler
/// runs in a task of its own, under a cancellation of its own; when it escalates, the client
/// is answered with the task (`CreateTaskResult`) and the handler's reply becomes the task's
/// result; when it answers first, that is the answer, as for any call.
#[allow(clippy::too_many_arguments)]
async fn as_task(
    shared: &Shared,
    extension: Arc<dyn Extension>,
    name: &str,
    arguments: &Map<String, Value>,
    mut context: ExtensionContext,
    ttl_ms: Option<u64>,
    requested: &Requested<'_>,
    request: &RequestContext,
) -> Option<Result<Value, RequestError>> {
    let modern = context.era == Era::Modern;
    let (escalated, made) = oneshot::channel();
    let owner = if modern {
        None
    } else {
        request.connection.task_owner()
    };
    let tasks = Arc::clone(&shared.tasks);
    context.task = Some(TaskLink {
        tasks: Arc::clone(&tasks),
        owner,
        ttl_ms,
        id: std::sync::Mutex::new(None),
        escalated: std::sync::Mutex::new(Some(escalated)),
    });
    // The task's own cancellation: the request's ends with its answer.
    context.request.cancel = Cancel::new();
    let request_cancel = request.cancel.clone();
    let (done, replied) = oneshot::channel();
    let name = name.to_owned();
    let arguments = arguments.clone();
    tokio::spawn(async move {
        let reply = extension.call_tool(&name, &arguments, &context).await;
        match context.task_id() {
            // An extension's task is a 2026 one: no status notification to send.
            Some(id) => {
                let _ended = match reply {
                    Some(Ok(Reply::Complete(result))) => tasks.complete(&id, result),
                    Some(Ok(Reply::InputRequired { .. })) => tasks.fail(
                        &id,
                        &RequestError::Extension(ExtensionError::Failed(
                            "the task answered input_required; a task asks with request_input"
                                .into(),
                        )),
                    ),
                    Some(Err(error)) => tasks.fail(&id, &RequestError::Extension(error)),
                    None => tasks.fail(
                        &id,
                        &RequestError::Extension(ExtensionError::Failed(format!("no tool {name}"))),
                    ),
                };
            }
            None => {
                let _ = done.send((reply, context));
            }
        }
    });
    let mut made = made;
    let mut replied = replied;
    /// The handler's reply and its context, when it answered without escalating.
    type Finished = (Option<Result<Reply, ExtensionError>>, ExtensionContext);
    /// What the call came to first.
    enum First {
        Escalated(Result<String, RequestError>),
        Replied(Option<Box<Finished>>),
    }
    let first = tokio::select! {
        made = &mut made => match made {
            Ok(made) => First::Escalated(made),
            // The handler ended without escalating: its reply is on the way.
            Err(_) => First::Replied(replied.await.ok().map(Box::new)),
        },
        reply = &mut replied => First::Replied(reply.ok().map(Box::new)),
    };
    drop(request_cancel);
    match first {
        First::Escalated(Ok(id)) => {
            if modern {
                request.task_created.store(true, Ordering::Release);
            }
            Some(tasks::created(&shared.tasks, &id, modern))
        }
        First::Escalated(Err(error)) => Some(Err(error)),
        First::Replied(None) => Some(Err(RequestError::Extension(ExtensionError::Failed(
            "the tool's handler ended without a reply".into(),
        )))),
        First::Replied(Some(replied)) => {
            let (reply, context) = *replied;
            let era = context.era;
            Some(match reply? {
                Ok(Reply::Complete(result)) => Ok(result),
                Ok(Reply::InputRequired { requests, state }) => {
                    input_required(requested, request, era, requests, state.as_ref())
                }
                Err(error) => Err(RequestError::Extension(error)),
            })
        }
    }
}

/// The `inputResponses` and the opened `requestState` of a 2026 retry.
type RetryMembers = (Option<Map<String, Value>>, Option<Value>);

/// The `inputResponses` and the opened `requestState` of a 2026 retry.
fn retry_members(
    params: &Map<String, Value>,
    requested: &Requested<'_>,
) -> Result<RetryMembers, RequestError> {
    let input_responses = match params.get("inputResponses") {
        None | Some(Value::Null) => None,
        Some(Value::Object(responses)) => Some(responses.clone()),
        Some(_) => {
            return Err(RequestError::NotAnObjectField {
                path: "params",
                field: "inputResponses",
            });
        }
    };
    let state = match params.get("requestState") {
        None | Some(Value::Null) => None,
        Some(Value::String(sealed)) => Some(
            sealed::open(sealed, requested.method(), requested.name())
                .map_err(|reason| RequestError::RequestState { reason })?,
        ),
        Some(_) => {
            return Err(RequestError::RequestState {
                reason: StateError::Malformed,
            });
        }
    };
    Ok((input_responses, state))
}

/// The `input_required` result of a 2026 request (its `resultType` is set by the shell).
fn input_required(
    requested: &Requested<'_>,
    request: &RequestContext,
    era: Era,
    requests: Map<String, Value>,
    state: Option<&Value>,
) -> Result<Value, RequestError> {
    if era == Era::Legacy {
        return Err(RequestError::Extension(ExtensionError::Failed(format!(
            "{} {} answered input_required, which only 2026 requests can receive",
            requested.method(),
            crate::text::cut(requested.name())
        ))));
    }
    let mut result = json!({ "inputRequests": requests });
    if let Some(state) = state {
        let sealed = sealed::seal(requested.method(), requested.name(), state)
            .ok_or(RequestError::NoRandom)?;
        result["requestState"] = json!(sealed);
    }
    request.input_required.store(true, Ordering::Release);
    Ok(result)
}
