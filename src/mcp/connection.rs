//! The connection core: what each message asks of a connection, decided once for stdio and
//! HTTP, and the one way a request runs and is answered.
//!
//! A transport classifies a line ([`super::message::classify_line`]), picks the era (stdio
//! from the message; HTTP from the message and its `MCP-Protocol-Version` header) and the
//! connection (stdio has one; HTTP the MCP session a 2025 request names, or a connection of
//! one request for 2026), and hands the message to a [`ConnectionCore`]. The core decides:
//! a request becomes a [`Step`] (an answer at once, `initialize`, a 2026 listen stream, or a
//! request admitted in flight under its id, [`Admitted`]); a notification acts on the
//! connection ([`ConnectionCore::notification`]); a batch is accepted and admitted
//! ([`ConnectionCore::batch`]). What stays with each transport is only what CONTRACT section
//! 9 says differs: how a request waits for a running slot (stdio's wait list, HTTP's 503) and
//! how an answer is written (a line; a status, a body or an SSE stream).
//!
//! Every request runs through [`Dispatcher::run`], the server's one method table, and an
//! admitted one through [`Admitted::run`], which ends with the shutdown grace and frees its
//! id when its work has stopped.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jsonrpsee::types::Params;
use jsonrpsee::{ConnectionId, Extensions, MethodCallback, RpcModule};
use serde_json::Value;

use super::era::{self, Era, ListenFilter};
use super::error::RequestError;
use super::message::{Message, Notification, Request, RequestKey};
use super::method::Method;
use super::params::RequestParams;
use super::protocol::Offer;
use super::rules::{self, Answer, BatchEntry, ModernRoute, NotificationRule};
use super::state::{Connection, Listen, ModernAnswer, RequestContext, Shared};
use crate::session::Cancel;

/// The end of a shutdown grace, for the requests still running: each then answers with
/// [`RequestError::ShuttingDown`] and its work is cancelled.
#[derive(Clone, Debug)]
pub(crate) struct GraceOver {
    over: Arc<tokio::sync::watch::Sender<bool>>,
    grace: Duration,
}

impl GraceOver {
    pub(crate) fn new(grace: Duration) -> GraceOver {
        GraceOver {
            over: Arc::new(tokio::sync::watch::Sender::new(false)),
            grace,
        }
    }

    /// Ends the grace.
    pub(crate) fn end(&self) {
        self.over.send_replace(true);
    }

    /// Resolves once the grace is over.
    pub(crate) async fn over(&self) {
        let mut receiver = self.over.subscribe();
        let _ = receiver.wait_for(|over| *over).await;
    }

    /// Runs `work` (the answer of request `id`) unless the grace ends first; then `cancel` is
    /// cancelled and the answer says the server stopped the request.
    pub(crate) async fn run_or_stop(
        &self,
        work: impl std::future::Future<Output = Answer>,
        id: &Value,
        cancel: &Cancel,
    ) -> Answer {
        tokio::select! {
            answer = work => answer,
            () = self.over() => {
                cancel.cancel();
                Answer::refusal(&self.refusal(), id)
            }
        }
    }

    /// The error a request gets when the grace ends before it does.
    pub(crate) fn refusal(&self) -> RequestError {
        RequestError::ShuttingDown {
            grace_secs: self.grace.as_secs_f64(),
        }
    }
}

/// Requests running or waiting now, by id, for `notifications/cancelled` and duplicate ids.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    next_serial: AtomicU64,
    requests: Mutex<HashMap<RequestKey, (u64, Cancel)>>,
}

impl InFlight {
    /// Admits `request` as in flight under `cancel`, and gives its serial (for
    /// [`InFlight::finish`]); a request whose id is already in flight is refused
    /// ([`RequestError::DuplicateId`]), over either transport.
    pub(crate) fn admit(&self, request: &Request, cancel: Cancel) -> Result<u64, RequestError> {
        let mut requests = self.lock();
        if requests.contains_key(&request.key) {
            return Err(RequestError::DuplicateId {
                id: request.id.clone(),
            });
        }
        let serial = self.next_serial.fetch_add(1, Ordering::Relaxed);
        requests.insert(request.key.clone(), (serial, cancel));
        Ok(serial)
    }

    fn contains(&self, key: &RequestKey) -> bool {
        self.lock().contains_key(key)
    }

    pub(crate) fn finish(&self, key: &RequestKey, serial: u64) {
        let mut requests = self.lock();
        if requests.get(key).is_some_and(|(s, _)| *s == serial) {
            requests.remove(key);
        }
    }

    pub(crate) fn cancel(&self, key: &RequestKey) -> bool {
        match self.lock().remove(key) {
            Some((_, cancel)) => {
                cancel.cancel();
                true
            }
            None => false,
        }
    }

    pub(crate) fn cancel_all(&self) {
        for (_, (_, cancel)) in self.lock().drain() {
            cancel.cancel();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestKey, (u64, Cancel)>> {
        self.requests.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What runs requests: the server's one method table and the answer size limit.
#[derive(Clone)]
pub(crate) struct Dispatcher {
    pub(crate) module: Arc<RpcModule<Arc<Shared>>>,
    pub(crate) max_response_bytes: usize,
    /// Most messages in one batch ([`super::ShellConfig::max_batch_messages`]).
    pub(crate) max_batch_messages: usize,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher")
            .field("max_response_bytes", &self.max_response_bytes)
            .finish_non_exhaustive()
    }
}

/// The protocol side of one connection: its state ([`Connection`]), its requests in flight,
/// and the method table. Stdio keeps one for its connection; HTTP makes one per message, over
/// the MCP session a 2025 message names, or over a connection of one 2026 request.
#[derive(Clone, Debug)]
pub(crate) struct ConnectionCore {
    pub(crate) connection: Arc<Connection>,
    pub(crate) in_flight: Arc<InFlight>,
    pub(crate) dispatcher: Dispatcher,
}

/// What a request asks of its transport, as [`ConnectionCore::request`] decided.
pub(crate) enum Step {
    /// Refused before it ran: answer `error` to `id` at once.
    Refuse { error: RequestError, id: Value },
    /// Answered without the method table (`server/discover`): write it at once.
    Answer(Answer),
    /// A 2025 `initialize`: run it before anything else ([`ConnectionCore::initialize`]),
    /// since the version it settles decides how later messages are read.
    Initialize(Request),
    /// Admitted in flight: run it, in a running slot when it needs one.
    Run(Box<Admitted>),
    /// A 2026 `subscriptions/listen`, checked and counted: write its acknowledgement, then
    /// keep the stream open ([`Connection::add_listen`]).
    Listen(Listen),
}

impl Step {
    fn refuse(error: RequestError, id: Value) -> Step {
        Step::Refuse { error, id }
    }
}

/// A request checked for its era: ready to admit with the context it runs under, or
/// decided already.
type Checked = ControlFlow<Step, (Request, RequestContext)>;

/// What a notification did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Noted {
    /// It cancelled a request in flight (a waiting one is then never run nor answered).
    Cancelled,
    /// Anything else.
    Done,
}

impl ConnectionCore {
    /// A core over `connection`, with no request in flight yet.
    pub(crate) fn new(connection: Arc<Connection>, dispatcher: Dispatcher) -> ConnectionCore {
        ConnectionCore {
            connection,
            in_flight: Arc::new(InFlight::default()),
            dispatcher,
        }
    }

    /// Decides what `request` of `era` needs. A 2026 request is routed by its envelope and
    /// method ([`rules::route_modern`]); a 2025 one other than `initialize` and `ping` is
    /// refused before `initialize` (a method that does not exist is still `-32601`: clients
    /// probe with `server/discover` and fall back on it). Then it is admitted under its id,
    /// which no other request in flight nor listen stream of the connection may hold.
    pub(crate) fn request(&self, request: Request, era: Era) -> Step {
        let checked = match era {
            Era::Modern => self.modern(request),
            Era::Legacy => self.legacy(request),
        };
        let (request, context) = match checked {
            ControlFlow::Continue(admissible) => admissible,
            ControlFlow::Break(step) => return step,
        };
        if self.connection.has_listen(&request.key) {
            let id = request.id.clone();
            return Step::refuse(RequestError::DuplicateId { id: id.clone() }, id);
        }
        match self.in_flight.admit(&request, context.cancel.clone()) {
            Ok(serial) => Step::Run(Box::new(Admitted {
                request,
                context,
                serial,
                in_flight: Arc::clone(&self.in_flight),
            })),
            Err(error) => Step::refuse(error, request.id),
        }
    }

    fn legacy(&self, request: Request) -> Checked {
        let initialized = self.connection.version().is_some();
        if request.known == Some(Method::Initialize) {
            return ControlFlow::Break(if initialized {
                Step::refuse(RequestError::AlreadyInitialized, request.id)
            } else {
                Step::Initialize(request)
            });
        }
        let registered = self.dispatcher.module.method(&request.method).is_some();
        if !initialized && registered && request.known != Some(Method::Ping) {
            let error = RequestError::NotInitialized {
                method: request.method.into(),
            };
            return ControlFlow::Break(Step::refuse(error, request.id));
        }
        let mut context = RequestContext::new(&self.connection, Cancel::new());
        context.log_level = self.connection.log_threshold();
        ControlFlow::Continue((request, context))
    }

    /// A 2026 request: a method both eras share comes back with the context it runs under
    /// (its log level, and how its result is decorated); anything else is a step already.
    fn modern(&self, request: Request) -> Checked {
        let offer = self.connection.shared.offer();
        match rules::route_modern(&request, offer) {
            Ok(ModernRoute::Shared { envelope, caching }) => {
                let mut context = RequestContext::new(&self.connection, Cancel::new());
                context.log_level = envelope.log_level;
                context.modern = Some(ModernAnswer { caching });
                ControlFlow::Continue((request, context))
            }
            Ok(ModernRoute::Discover(answer)) => ControlFlow::Break(Step::Answer(answer)),
            Ok(ModernRoute::Listen) => ControlFlow::Break(self.listen(request, offer)),
            Err(error) => ControlFlow::Break(Step::refuse(error, request.id)),
        }
    }

    /// A `subscriptions/listen`: its id free, its filter valid, and a stream left in the
    /// server's count ([`era::MAX_LISTENS`]).
    fn listen(&self, request: Request, offer: Offer) -> Step {
        if self.in_flight.contains(&request.key) || self.connection.has_listen(&request.key) {
            let id = request.id.clone();
            return Step::refuse(RequestError::DuplicateId { id: id.clone() }, id);
        }
        let filter = match ListenFilter::requested(request.params.as_ref(), offer) {
            Ok(filter) => filter,
            Err(error) => return Step::refuse(error, request.id),
        };
        if !self.connection.shared.reserve_listen() {
            let error = RequestError::TooManyListens {
                limit: era::MAX_LISTENS,
            };
            return Step::refuse(error, request.id);
        }
        Step::Listen(Listen {
            id: request.id,
            key: request.key,
            filter,
        })
    }

    /// Runs a 2025 `initialize` ([`Step::Initialize`]): it settles the connection's version.
    pub(crate) async fn initialize(&self, request: Request) -> Answer {
        let context = RequestContext::new(&self.connection, Cancel::never());
        self.dispatcher.run(request, context).await
    }

    /// Acts on a notification ([`rules::notification_rule`]). A cancellation ends the listen
    /// stream or the request in flight with that id.
    pub(crate) async fn notification(&self, notification: &Notification) -> Noted {
        match rules::notification_rule(notification) {
            NotificationRule::Initialized => {
                self.connection.mark_ready();
                // Only a stdio client is asked ([`Connection::over_http`]).
                self.connection.ask_for_roots().await;
            }
            NotificationRule::RootsListChanged => self.connection.ask_for_roots().await,
            NotificationRule::Cancelled(key) => {
                if self.connection.end_listen(&key) {
                    tracing::debug!(?key, "ended a listen stream");
                } else if self.in_flight.cancel(&key) {
                    tracing::debug!(?key, "cancelled a request");
                    return Noted::Cancelled;
                } else {
                    tracing::debug!(?key, "cancellation for no in-flight request");
                }
            }
            NotificationRule::Ignored => {
                tracing::debug!(method = notification.method, "ignored notification");
            }
        }
        Noted::Done
    }

    /// Accepts a batch ([`rules::accept_batch`]) and admits its members
    /// ([`rules::admit_batch`]: at most [`Dispatcher::max_batch_messages`] run): its
    /// notifications and the client's responses are acted on now; what comes back is the
    /// members to answer, in order (none: nothing to answer), and whether a notification
    /// cancelled a request.
    pub(crate) async fn batch(
        &self,
        messages: Vec<Message>,
    ) -> Result<(Vec<BatchEntry>, Noted), RequestError> {
        rules::accept_batch(self.connection.version())?;
        let batch = rules::admit_batch(messages, self.dispatcher.max_batch_messages);
        let mut noted = Noted::Done;
        for notification in &batch.notifications {
            if self.notification(notification).await == Noted::Cancelled {
                noted = Noted::Cancelled;
            }
        }
        for response in &batch.responses {
            self.connection.take_response(response);
        }
        Ok((batch.entries, noted))
    }

    /// Answers a batch's members ([`Dispatcher::run_batch`]) unless the shutdown grace ends
    /// first. A batch is one unit of work: one slot; its requests run one after another,
    /// and its members are not individually cancellable.
    pub(crate) async fn run_batch(&self, entries: Vec<BatchEntry>, grace: &GraceOver) -> Answer {
        let run = self.dispatcher.run_batch(&self.connection, entries);
        grace.run_or_stop(run, &Value::Null, &Cancel::never()).await
    }
}

/// A request admitted in flight under its id ([`InFlight::admit`]), not run yet.
pub(crate) struct Admitted {
    request: Request,
    context: RequestContext,
    serial: u64,
    in_flight: Arc<InFlight>,
}

/// What an admitted request answered.
pub(crate) struct Ran {
    pub(crate) answer: Answer,
    /// Whether the client cancelled it before it answered (stdio then sends nothing).
    pub(crate) cancelled: bool,
}

impl Admitted {
    /// The client's id.
    pub(crate) fn id(&self) -> &Value {
        &self.request.id
    }

    /// Whether it waits for a running slot ([`rules::needs_slot`]): `ping` does not.
    pub(crate) fn needs_slot(&self) -> bool {
        rules::needs_slot(&self.request)
    }

    /// Whether it was cancelled while it waited.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.context.cancel.is_cancelled()
    }

    /// Where its messages before the answer go (HTTP gives each request a stream).
    pub(crate) fn set_stream(&mut self, stream: super::outlet::Outlet) {
        self.context.stream = stream;
    }

    /// A function that cancels it, as `notifications/cancelled` would (its id is free again
    /// at once): for HTTP, when the client closes the response.
    pub(crate) fn canceller(&self) -> impl FnOnce() + Send + 'static {
        let in_flight = Arc::clone(&self.in_flight);
        let key = self.request.key.clone();
        move || {
            in_flight.cancel(&key);
        }
    }

    /// Refuses it unrun (busy, or the server stopping): its id is free again.
    pub(crate) fn refuse(self, error: &RequestError) -> Answer {
        self.in_flight.finish(&self.request.key, self.serial);
        Answer::refusal(error, &self.request.id)
    }

    /// Runs it through the method table unless the shutdown grace ends first (then its work
    /// is cancelled and it answers that the server stopped it); its id is freed once its
    /// work has stopped.
    pub(crate) async fn run(self, dispatcher: &Dispatcher, grace: &GraceOver) -> Ran {
        let Admitted {
            request,
            context,
            serial,
            in_flight,
        } = self;
        let key = request.key.clone();
        let id = request.id.clone();
        let cancel = context.cancel.clone();
        let ran = tokio::select! {
            answer = dispatcher.run(request, context) => Ran {
                answer,
                cancelled: cancel.is_cancelled(),
            },
            // Stopped at the end of the shutdown grace: answered even so.
            () = grace.over() => {
                cancel.cancel();
                Ran {
                    answer: Answer::refusal(&grace.refusal(), &id),
                    cancelled: false,
                }
            }
        };
        in_flight.finish(&key, serial);
        ran
    }
}

impl Dispatcher {
    /// The answers of a batch as one JSON array line, within the response size limit: a
    /// member whose answer would pass it (with room kept for the refusals of the members
    /// after it) is answered with a `-32603` error instead, so the line stays within the
    /// limit whatever the members answer.
    pub(crate) async fn run_batch(
        &self,
        connection: &Arc<Connection>,
        entries: Vec<BatchEntry>,
    ) -> Answer {
        // The most each member's line may take when it is refused: its own error, or the
        // too-large error naming its id. The room these need is kept back for the members
        // still to come.
        let fallback: Vec<usize> = entries
            .iter()
            .map(|entry| match entry {
                BatchEntry::Answered(reply) => reply.to_string().len() + 1,
                BatchEntry::Run(request) => self.too_large(usize::MAX, &request.id).line.len() + 1,
            })
            .collect();
        let mut reserved: usize = fallback.iter().sum::<usize>() + 1;
        let mut line = String::from("[");
        for (entry, fallback) in entries.into_iter().zip(fallback) {
            reserved -= fallback;
            let answer = match entry {
                BatchEntry::Answered(reply) => reply.to_string(),
                BatchEntry::Run(request) => {
                    let id = request.id.clone();
                    let context = RequestContext::new(connection, Cancel::never());
                    let answer = self.run(request, context).await.line;
                    let bytes = line.len() + answer.len() + 1;
                    if bytes + reserved > self.max_response_bytes {
                        self.too_large(bytes, &id).line
                    } else {
                        answer
                    }
                }
            };
            if line.len() > 1 {
                line.push(',');
            }
            line.push_str(&answer);
        }
        line.push(']');
        Answer {
            line,
            error_code: None,
        }
    }

    /// Runs one request through the `RpcModule` and answers with the client's id, verbatim
    /// (jsonrpsee's `Id` cannot hold negative integers). The answer is one JSON line, with
    /// its error code when it is an error.
    pub(crate) async fn run(&self, request: Request, context: RequestContext) -> Answer {
        let Some(callback) = self.module.method(&request.method) else {
            let error = RequestError::MethodNotFound {
                method: request.method.into(),
            };
            return Answer::refusal(&error, &request.id);
        };
        // The handler reads the params parsed with the message from the extensions; jsonrpsee
        // is given none, so they are never encoded and parsed again.
        let params = Params::new(None);
        let modern = context.modern;
        let input_required = Arc::clone(&context.input_required);
        let task_created = Arc::clone(&context.task_created);
        let mut extensions = Extensions::new();
        extensions.insert(context);
        extensions.insert(RequestParams::new(request.params));
        let internal_id = jsonrpsee::types::Id::Number(0);
        let response = match callback {
            MethodCallback::Sync(method) => method(internal_id, params, usize::MAX, extensions),
            MethodCallback::Async(method) => {
                method(
                    internal_id,
                    params.into_owned(),
                    ConnectionId(0),
                    usize::MAX,
                    extensions,
                )
                .await
            }
            MethodCallback::Subscription(_) | MethodCallback::Unsubscription(_) => {
                return Answer::refusal(&RequestError::Subscription, &request.id);
            }
        };
        let error_code = response.as_error_code();
        let raw = response.into_json();
        let kind = if task_created.load(Ordering::Acquire) {
            Some("task")
        } else if input_required.load(Ordering::Acquire) {
            Some("input_required")
        } else {
            None
        };
        let answer = match modern.and_then(|modern| decorated(raw.get(), modern.caching, kind)) {
            Some(decorated) => with_client_id(&decorated, &request.id),
            None => with_client_id(raw.get(), &request.id),
        };
        if answer.len() > self.max_response_bytes {
            return self.too_large(answer.len(), &request.id);
        }
        Answer {
            line: answer,
            error_code,
        }
    }

    fn too_large(&self, bytes: usize, id: &Value) -> Answer {
        let error = RequestError::ResponseTooLarge {
            bytes,
            limit: self.max_response_bytes,
        };
        Answer::refusal(&error, id)
    }
}

/// jsonrpsee's answer to internal id 0 with the members of a 2026 result put first in its
/// result ([`era::decorate_result`]); `None` for an error answer.
fn decorated(raw: &str, caching: Option<era::Caching>, kind: Option<&str>) -> Option<String> {
    const HEAD: &str = r#"{"jsonrpc":"2.0","id":0,"result":"#;
    let result = raw.strip_prefix(HEAD)?.strip_suffix('}')?;
    let result = match kind {
        Some(kind) => era::decorate_typed(result, kind)?,
        None => era::decorate_result(result, caching)?,
    };
    let mut line = String::with_capacity(HEAD.len() + result.len() + 1);
    line.push_str(HEAD);
    line.push_str(&result);
    line.push('}');
    Some(line)
}

/// jsonrpsee's answer to internal id 0, with the client's id in its place. jsonrpsee writes
/// `{"jsonrpc":"2.0","id":0,...}`; the rest is copied as it is, never re-parsed (so answers
/// nest as deep as their results do).
fn with_client_id(answer: &str, id: &Value) -> String {
    const HEAD: &str = r#"{"jsonrpc":"2.0","id":0,"#;
    match answer.strip_prefix(HEAD) {
        Some(rest) => {
            let id = id.to_string();
            let mut line = String::with_capacity(answer.len() + id.len());
            line.push_str(r#"{"jsonrpc":"2.0","id":"#);
            line.push_str(&id);
            line.push(',');
            line.push_str(rest);
            line
        }
        None => match serde_json::from_str::<Value>(answer) {
            Ok(mut response) => {
                response["id"] = id.clone();
                response.to_string()
            }
            Err(_) => RequestError::Unencodable.to_response(id).to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::mcp::message::fixtures::{envelope, message, request};
    use crate::mcp::protocol::ProtocolVersion;
    use crate::session::{SessionStore, SourceConfig, StoreConfig};

    /// A core over a fresh stdio connection of a server without sessions (batches of at
    /// most two members), and the drain of its output.
    fn core() -> (ConnectionCore, super::super::outlet::Drain) {
        let store = Arc::new(SessionStore::new(StoreConfig::default()));
        let shared = Arc::new(Shared::new(store, None, SourceConfig::default()));
        let module = Arc::new(super::super::handlers::module(Arc::clone(&shared)));
        let (outlet, drain) = super::super::outlet::outlet(4);
        let dispatcher = Dispatcher {
            module,
            max_response_bytes: 1 << 20,
            max_batch_messages: 2,
        };
        let connection = Arc::new(Connection::new(shared, outlet));
        (ConnectionCore::new(connection, dispatcher), drain)
    }

    /// A 2026 `subscriptions/listen` for prompt list changes.
    fn listen(id: i64) -> Request {
        let mut params = envelope();
        params["notifications"] = json!({"promptsListChanged": true});
        request(id, "subscriptions/listen", params)
    }

    /// What the step is: a refusal by its error's name, or what else it was.
    fn kind(step: &Step) -> String {
        match step {
            Step::Refuse { error, .. } => {
                let name = format!("{error:?}");
                let end = name.find([' ', '(', '{']).unwrap_or(name.len());
                name[..end].to_owned()
            }
            Step::Answer(_) => "answer".into(),
            Step::Initialize(_) => "initialize".into(),
            Step::Run(_) => "run".into(),
            Step::Listen(_) => "listen".into(),
        }
    }

    fn admitted(step: Step) -> Box<Admitted> {
        match step {
            Step::Run(admitted) => admitted,
            other => panic!("not admitted: {}", kind(&other)),
        }
    }

    #[test]
    fn every_step_of_a_2025_request_is_decided_by_the_core() {
        let (core, _output) = core();
        let legacy = |id, method: &str| core.request(request(id, method, json!({})), Era::Legacy);
        // Before `initialize`: only `ping` runs; a method the table lacks is still run (and
        // answered -32601 there).
        assert_eq!(kind(&legacy(1, "tools/list")), "NotInitialized");
        assert!(!admitted(legacy(2, "ping")).needs_slot());
        assert!(admitted(legacy(3, "no/such/method")).needs_slot());
        assert_eq!(kind(&legacy(4, "initialize")), "initialize");

        assert!(core.connection.settle_version(ProtocolVersion::V2025_03_26));
        assert_eq!(kind(&legacy(5, "initialize")), "AlreadyInitialized");
        // An id in flight is refused until its request ends, whichever way.
        let first = admitted(legacy(6, "tools/list"));
        assert!(first.needs_slot());
        assert_eq!(kind(&legacy(6, "prompts/list")), "DuplicateId");
        let answer = first.refuse(&RequestError::Busy {
            in_flight: 1,
            waiting: 0,
        });
        assert!(answer.error_code.is_some());
        assert_eq!(kind(&legacy(6, "prompts/list")), "run");
    }

    #[test]
    fn every_step_of_a_2026_request_is_decided_by_the_core() {
        let (core, _output) = core();
        let modern = |id, method: &str| core.request(request(id, method, envelope()), Era::Modern);
        let run = admitted(modern(1, "tools/list"));
        assert!(run.context.modern.is_some());
        assert_eq!(kind(&modern(2, "server/discover")), "answer");
        assert_eq!(kind(&modern(3, "ping")), "RemovedIn2026");
        assert_eq!(kind(&modern(4, "no/such/method")), "MethodNotFound");
        let without_envelope = core.request(request(5, "tools/list", json!({})), Era::Modern);
        assert_eq!(kind(&without_envelope), "MissingEnvelopeKey");
        // A listen stream holds its id like a request in flight, and the other way round.
        let step = core.request(listen(6), Era::Modern);
        let Step::Listen(listen_six) = step else {
            panic!("not a listen stream: {}", kind(&step));
        };
        core.connection.add_listen(listen_six);
        assert_eq!(kind(&modern(6, "tools/list")), "DuplicateId");
        assert_eq!(kind(&core.request(listen(1), Era::Modern)), "DuplicateId");
        assert_eq!(kind(&modern(8, "subscriptions/listen")), "MissingField");
        // No 2025 rule applies: nothing needs `initialize`.
        assert_eq!(core.connection.version(), None);
    }

    #[tokio::test]
    async fn a_cancellation_reaches_the_request_or_the_stream_it_names() {
        let (core, _output) = core();
        assert!(core.connection.settle_version(ProtocolVersion::V2025_03_26));
        let running = admitted(core.request(request(1, "tools/list", json!({})), Era::Legacy));
        let cancelled = |id: i64| Notification {
            method: "notifications/cancelled".into(),
            params: Some(json!({"requestId": id})),
        };
        assert_eq!(core.notification(&cancelled(1)).await, Noted::Cancelled);
        assert!(running.is_cancelled());
        // Its id is free again at once.
        let again = core.request(request(1, "tools/list", json!({})), Era::Legacy);
        assert_eq!(kind(&again), "run");
        assert_eq!(core.notification(&cancelled(99)).await, Noted::Done);
        let step = core.request(listen(7), Era::Modern);
        let Step::Listen(stream) = step else {
            panic!("not a listen stream: {}", kind(&step));
        };
        core.connection.add_listen(stream);
        assert_eq!(core.notification(&cancelled(7)).await, Noted::Done);
        assert!(
            !core
                .connection
                .has_listen(&RequestKey::of(&json!(7)).unwrap())
        );
    }

    #[tokio::test]
    async fn a_batch_is_accepted_only_under_2025_03_26_and_admitted_to_its_bound() {
        let (core, _output) = core();
        let members = || -> Vec<Message> {
            (1..=3)
                .map(|id| message(id, "tools/list", json!({})))
                .collect()
        };
        let refused = core.batch(members()).await.map(|_| ()).unwrap_err();
        assert!(matches!(refused, RequestError::BatchNotAccepted));
        assert!(core.connection.settle_version(ProtocolVersion::V2025_03_26));
        let (entries, noted) = core.batch(members()).await.unwrap();
        assert_eq!(noted, Noted::Done);
        let run = entries
            .iter()
            .filter(|entry| matches!(entry, BatchEntry::Run(_)))
            .count();
        assert_eq!((entries.len(), run), (3, 2));
    }

    #[test]
    fn client_id_replaces_the_internal_one_verbatim() {
        let answer = r#"{"jsonrpc":"2.0","id":0,"result":{}}"#;
        assert_eq!(
            with_client_id(answer, &json!(-7)),
            r#"{"jsonrpc":"2.0","id":-7,"result":{}}"#
        );
        assert_eq!(
            with_client_id(r#"{"id":0,"jsonrpc":"2.0","result":1}"#, &json!("a")),
            r#"{"id":"a","jsonrpc":"2.0","result":1}"#
        );
    }
}
