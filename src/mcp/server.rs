//! The connection loop: frames in, classification, dispatch through the `RpcModule`, answers
//! out through one bounded queue, with a fixed number of requests in flight.
//!
//! Bounded, and always listening: at most [`ShellConfig::max_in_flight`] requests run, and a
//! request keeps its slot until its work has really stopped (a cancelled request's blocking
//! work included). Requests beyond them wait on a list of at most [`ShellConfig::max_waiting`]
//! requests ([`ShellConfig::max_waiting_bytes`] bytes), and input is read on meanwhile, so a
//! cancellation is read whatever the slots hold (a cancelled waiting request is dropped and
//! never answered); a request beyond the list is answered at once with a `-32000` error
//! naming the limits. Answers go through a queue of [`ShellConfig::output_queue`] lines; a
//! client that stops reading fills it, which stops the requests and every answer the loop
//! itself sends, which stops the reading. A client that closes the output stops the loop at
//! once.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jsonrpsee::types::Params;
use jsonrpsee::{ConnectionId, Extensions, MethodCallback, RpcModule};
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinSet;

use super::era::{self, Era, ListenFilter};
use super::error::RequestError;
use super::framing::{DEFAULT_MAX_LINE_BYTES, Frame};
use super::message::{Line, Message, Notification, Request, RequestKey, classify_line};
use super::method::Method;
use super::outlet::Outlet;
use super::params::RequestParams;
use super::rules::{self, Answer, BatchEntry, ModernRoute, NotificationRule, refused_batch};
use super::state::{Connection, Listen, ModernAnswer, RequestContext, Shared};
use crate::session::Cancel;

/// Configuration of the stdio shell: framing, the caps of the execution model, shutdown.
#[derive(Clone, Debug)]
pub struct ShellConfig {
    /// Longest accepted line in bytes; longer lines are skipped and answered with `-32600`.
    pub max_line_bytes: usize,
    /// Requests (a batch counts as one) running at once per connection.
    pub max_in_flight: usize,
    /// Requests waiting for a running slot, per connection; a request beyond them is answered
    /// at once with a `-32000` error naming both limits. Input is read on while requests wait,
    /// so cancellations and notifications are never held behind a request.
    pub max_waiting: usize,
    /// Most bytes of request lines waiting for a slot, per connection (the wait list is full
    /// when either bound is reached).
    pub max_waiting_bytes: usize,
    /// Answers and notifications waiting for the client to read them; when full, requests
    /// wait (and so does reading).
    pub output_queue: usize,
    /// Longest answer in bytes; a larger one is replaced by a `-32603` error saying so.
    pub max_response_bytes: usize,
    /// Most messages in one batch; the members past it are answered with `-32600`.
    pub max_batch_messages: usize,
    /// How long in-flight requests may run after end of input or [`Server::shutdown`]
    /// (`--shutdown-grace-secs`); those still running then are answered with a `-32000`
    /// error saying the server stopped them.
    ///
    /// [`Server::shutdown`]: super::Server::shutdown
    pub shutdown_grace: Duration,
}

impl ShellConfig {
    /// Default [`ShellConfig::max_in_flight`].
    pub const DEFAULT_MAX_IN_FLIGHT: usize = 16;
    /// Default [`ShellConfig::max_waiting`].
    pub const DEFAULT_MAX_WAITING: usize = 64;
    /// Default [`ShellConfig::max_waiting_bytes`]: 16 MiB.
    pub const DEFAULT_MAX_WAITING_BYTES: usize = 16 * 1024 * 1024;
    /// Default [`ShellConfig::output_queue`].
    pub const DEFAULT_OUTPUT_QUEUE: usize = 16;
    /// Default [`ShellConfig::max_response_bytes`]: 4 MiB.
    pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;
    /// Default [`ShellConfig::max_batch_messages`].
    pub const DEFAULT_MAX_BATCH_MESSAGES: usize = 32;
    /// Default [`ShellConfig::shutdown_grace`]: 10 s, inside the stop time-outs of systemd
    /// (90 s) and Kubernetes (30 s).
    pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
    /// The least time the answers already queued get to be written at the end, whatever the
    /// grace: with a grace of 0 the answers of the requests it stopped still go out.
    pub const MIN_OUTPUT_FLUSH: Duration = Duration::from_secs(1);

    /// How long the writer has, at the end, for the answers already queued: the grace, and at
    /// least [`ShellConfig::MIN_OUTPUT_FLUSH`] (a client that stops reading holds no longer).
    pub fn output_flush(&self) -> Duration {
        self.shutdown_grace.max(ShellConfig::MIN_OUTPUT_FLUSH)
    }
}

impl Default for ShellConfig {
    fn default() -> Self {
        ShellConfig {
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            max_in_flight: ShellConfig::DEFAULT_MAX_IN_FLIGHT,
            max_waiting: ShellConfig::DEFAULT_MAX_WAITING,
            max_waiting_bytes: ShellConfig::DEFAULT_MAX_WAITING_BYTES,
            output_queue: ShellConfig::DEFAULT_OUTPUT_QUEUE,
            max_response_bytes: ShellConfig::DEFAULT_MAX_RESPONSE_BYTES,
            max_batch_messages: ShellConfig::DEFAULT_MAX_BATCH_MESSAGES,
            shutdown_grace: ShellConfig::DEFAULT_SHUTDOWN_GRACE,
        }
    }
}

/// A server's stop signal ([`Server::shutdown`]): once given, stdio stops reading and HTTP
/// stops accepting; what runs gets the shutdown grace.
///
/// [`Server::shutdown`]: super::Server::shutdown
#[derive(Clone, Debug)]
pub(crate) struct Shutdown {
    stopping: Arc<tokio::sync::watch::Sender<bool>>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown {
            stopping: Arc::new(tokio::sync::watch::Sender::new(false)),
        }
    }
}

impl Shutdown {
    /// Gives the signal (again: no effect).
    pub(crate) fn begin(&self) {
        self.stopping.send_replace(true);
    }

    /// Whether the signal was given.
    pub(crate) fn is_stopping(&self) -> bool {
        *self.stopping.borrow()
    }

    /// Resolves once the signal is given.
    pub(crate) async fn stopping(&self) {
        let mut receiver = self.stopping.subscribe();
        // The sender lives as long as `self`, so this ends only with the signal.
        let _ = receiver.wait_for(|stopping| *stopping).await;
    }
}

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
    /// Most messages in one batch ([`ShellConfig::max_batch_messages`]).
    pub(crate) max_batch_messages: usize,
}

/// Work that needs a running slot: one request, or a whole batch.
enum Work {
    Request {
        request: Box<Request>,
        context: RequestContext,
        serial: u64,
    },
    Batch(Vec<BatchEntry>),
}

impl Work {
    fn is_cancelled(&self) -> bool {
        match self {
            Work::Request { context, .. } => context.cancel.is_cancelled(),
            Work::Batch(_) => false,
        }
    }
}

/// Work waiting for a slot, with the bytes of the line it came from.
struct Waiting {
    work: Work,
    bytes: usize,
}

/// One connection being served.
struct ConnectionLoop {
    connection: Arc<Connection>,
    dispatcher: Dispatcher,
    config: ShellConfig,
    permits: Arc<Semaphore>,
    in_flight: Arc<InFlight>,
    tasks: JoinSet<()>,
    /// Work waiting for a slot, oldest first (at most `max_waiting`, `max_waiting_bytes`).
    waiting: VecDeque<Waiting>,
    waiting_bytes: usize,
    /// The end of the shutdown grace, for the requests still running then.
    grace_over: GraceOver,
}

/// Serves one connection from `frames` (ended by closing the channel, or by an error) and
/// answers through `outlet`; finishes in-flight work (bounded by `shutdown_grace`) at the end.
/// When the output is gone (the client closed its end) it stops reading at once and answers
/// a `BrokenPipe` error. When `shutdown` is given it stops reading too: what waits for a slot
/// is answered with [`RequestError::ShuttingDown`] at once, what runs gets the grace, and what
/// still runs after it is answered so.
pub(crate) async fn serve_frames(
    shared: Arc<Shared>,
    module: Arc<RpcModule<Arc<Shared>>>,
    config: &ShellConfig,
    mut frames: mpsc::Receiver<std::io::Result<Frame>>,
    outlet: Outlet,
    shutdown: &Shutdown,
) -> std::io::Result<()> {
    let connection = Arc::new(Connection::new(shared.clone(), outlet));
    shared.attach(&connection);
    let mut served = ConnectionLoop {
        dispatcher: Dispatcher {
            module,
            max_response_bytes: config.max_response_bytes,
            max_batch_messages: config.max_batch_messages,
        },
        connection,
        config: config.clone(),
        permits: Arc::new(Semaphore::new(config.max_in_flight.max(1))),
        in_flight: Arc::new(InFlight::default()),
        tasks: JoinSet::new(),
        waiting: VecDeque::new(),
        waiting_bytes: 0,
        grace_over: GraceOver::new(config.shutdown_grace),
    };
    let outlet = served.connection.outlet.clone();
    let read_result = loop {
        tokio::select! {
            biased;
            () = outlet.closed() => break Err(output_gone()),
            () = shutdown.stopping() => break Ok(()),
            permit = Arc::clone(&served.permits).acquire_owned(), if !served.waiting.is_empty() => {
                let Ok(permit) = permit else { break Ok(()) };
                served.start_waiting(permit);
            }
            frame = frames.recv() => match frame {
                None => break Ok(()),
                Some(Err(error)) => break Err(error),
                Some(Ok(Frame::TooLong { bytes })) => {
                    let error = RequestError::LineTooLong {
                        bytes,
                        limit: config.max_line_bytes,
                    };
                    served.send(error.to_response(&Value::Null)).await;
                }
                Some(Ok(Frame::Line(bytes))) => served.handle_line(&bytes).await,
            },
        }
        // Reap finished tasks so the set does not grow with the number of requests served.
        while served.tasks.try_join_next().is_some() {}
    };
    drop(frames);
    if read_result.is_ok() && shutdown.is_stopping() {
        tracing::info!(
            running = served.tasks.len(),
            waiting = served.waiting.len(),
            "stopping: what runs gets the shutdown grace, what waits is refused"
        );
        served.refuse_waiting().await;
    } else if read_result.is_ok() {
        // End of input: what waits still runs, within the same grace as what runs.
        let drained = tokio::time::timeout(config.shutdown_grace, async {
            while !served.waiting.is_empty() {
                tokio::select! {
                    biased;
                    () = outlet.closed() => return,
                    permit = Arc::clone(&served.permits).acquire_owned() => match permit {
                        Ok(permit) => served.start_waiting(permit),
                        Err(_) => return,
                    },
                }
            }
        });
        let _ = drained.await;
    } else {
        tracing::error!(error = ?read_result, "stopped reading: the connection is gone");
        served.waiting.clear();
        served.in_flight.cancel_all();
    }
    let grace = tokio::time::timeout(config.shutdown_grace, async {
        while served.tasks.join_next().await.is_some() {}
    });
    if grace.await.is_err() {
        // Each request still running answers that it was stopped, then what does not stop
        // within a moment (an answer the client does not read) is abandoned.
        tracing::warn!(
            running = served.tasks.len(),
            "requests stopped at the end of the shutdown grace"
        );
        served.grace_over.end();
        let answered = tokio::time::timeout(STOPPED_ANSWERS, async {
            while served.tasks.join_next().await.is_some() {}
        });
        if answered.await.is_err() {
            served.in_flight.cancel_all();
            served.tasks.abort_all();
        }
    }
    // Listen streams still open end gracefully: their result, then the cancellation that
    // closes a stdio stream.
    for listen in served.connection.take_listens() {
        served.send(era::listen_end(&listen.id)).await;
        served.send(era::listen_cancelled(&listen.id)).await;
    }
    shared.detach(&served.connection);
    served.connection.outlet.close(config.output_flush()).await;
    read_result
}

/// How long requests stopped at the end of the shutdown grace have to send their answers.
const STOPPED_ANSWERS: Duration = Duration::from_secs(1);

fn output_gone() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::BrokenPipe,
        "the client closed the server's output",
    )
}

impl ConnectionLoop {
    async fn send(&self, message: Value) {
        self.connection.outlet.send(message.to_string()).await;
    }

    async fn handle_line(&mut self, bytes: &[u8]) {
        match classify_line(bytes) {
            Line::Unparsable { id, error } => self.send(error.to_response(&id)).await,
            Line::Single(Message::Request(request))
                if request.known == Some(Method::Initialize)
                    && era::classify(request.params.as_ref()) == Era::Legacy =>
            {
                // `initialize` settles the protocol version that later lines (batches) depend
                // on, so it is answered before the next line is read.
                let answer = self.initialize(request).await;
                self.connection.outlet.send(answer.line).await;
            }
            Line::Single(message) => self.handle_message(message, bytes.len()).await,
            Line::Batch(messages) => self.handle_batch(messages, bytes.len()).await,
        }
    }

    async fn initialize(&self, request: Request) -> Answer {
        if self.connection.version().is_some() {
            return Answer::refusal(&RequestError::AlreadyInitialized, &request.id);
        }
        self.dispatcher
            .run(
                request,
                RequestContext::new(&self.connection, Cancel::never()),
            )
            .await
    }

    async fn handle_message(&mut self, message: Message, bytes: usize) {
        match message {
            Message::Request(request) => self.start_request(request, bytes).await,
            Message::Notification(notification) => self.handle_notification(notification).await,
            Message::ClientResponse(response) => self.connection.take_response(&response),
            Message::MalformedResponse { reason } => {
                tracing::warn!(reason, "dropped a malformed response from the client");
            }
            Message::Invalid { id, error } => self.send(error.to_response(&id)).await,
        }
    }

    async fn handle_notification(&mut self, notification: Notification) {
        match rules::notification_rule(&notification) {
            NotificationRule::Initialized => {
                self.connection.mark_ready();
                self.connection.ask_for_roots().await;
            }
            NotificationRule::RootsListChanged => self.connection.ask_for_roots().await,
            NotificationRule::Cancelled(key) => {
                if self.connection.end_listen(&key) {
                    tracing::debug!(?key, "ended a listen stream");
                } else if self.in_flight.cancel(&key) {
                    tracing::debug!(?key, "cancelled a request");
                    self.drop_cancelled_waiting();
                } else {
                    tracing::debug!(?key, "cancellation for no in-flight request");
                }
            }
            NotificationRule::Ignored => {
                tracing::debug!(method = notification.method, "ignored notification");
            }
        }
    }

    /// Answers every waiting request (and a batch's members) with
    /// [`RequestError::ShuttingDown`]; none of them runs.
    async fn refuse_waiting(&mut self) {
        let refusal = self.grace_over.refusal();
        while let Some(waiting) = self.waiting.pop_front() {
            self.waiting_bytes -= waiting.bytes;
            match waiting.work {
                Work::Request {
                    request, serial, ..
                } => {
                    self.in_flight.finish(&request.key, serial);
                    self.send(refusal.to_response(&request.id)).await;
                }
                Work::Batch(entries) => {
                    let answers = refused_batch(entries, &refusal);
                    self.send(answers).await;
                }
            }
        }
    }

    /// Forgets waiting requests that were cancelled: they are never run nor answered.
    fn drop_cancelled_waiting(&mut self) {
        let before = self.waiting.len();
        let mut freed = 0;
        self.waiting.retain(|waiting| {
            let keep = !waiting.work.is_cancelled();
            if !keep {
                freed += waiting.bytes;
            }
            keep
        });
        self.waiting_bytes -= freed;
        if self.waiting.len() != before {
            tracing::debug!(
                dropped = before - self.waiting.len(),
                "cancelled waiting requests"
            );
        }
    }

    /// Classifies `request` by era: a 2026 request is checked ([`Self::modern_context`]); a
    /// 2025 one is refused before `initialize`. Then registers it as in flight, and runs it at
    /// once when a slot is free and nothing waits before it, else puts it on the wait list,
    /// else answers that the server is busy.
    async fn start_request(&mut self, request: Request, bytes: usize) {
        let context = match era::classify(request.params.as_ref()) {
            Era::Modern => match self.modern_context(request).await {
                Some((request, context)) => (request, context),
                None => return,
            },
            Era::Legacy => {
                // Before `initialize` only `ping` runs; a method that does not exist is still
                // `-32601` (clients probe with `server/discover` and fall back on it).
                let registered = self.dispatcher.module.method(&request.method).is_some();
                let before_initialize = self.connection.version().is_none();
                if before_initialize && registered && request.known != Some(Method::Ping) {
                    let error = RequestError::NotInitialized {
                        method: request.method.into(),
                    };
                    self.send(error.to_response(&request.id)).await;
                    return;
                }
                if !rules::needs_slot(&request) && !self.in_flight.contains(&request.key) {
                    // Nothing to do and nothing to wait for: answered at once, without a slot,
                    // so a client can always tell the server is alive.
                    let answer = self
                        .dispatcher
                        .run(
                            request,
                            RequestContext::new(&self.connection, Cancel::never()),
                        )
                        .await;
                    self.connection.outlet.send(answer.line).await;
                    return;
                }
                let mut context = RequestContext::new(&self.connection, Cancel::new());
                context.log_level = self.connection.log_threshold();
                (request, context)
            }
        };
        let (request, context) = context;
        if self.connection.has_listen(&request.key) {
            let error = RequestError::DuplicateId {
                id: request.id.clone(),
            };
            self.send(error.to_response(&request.id)).await;
            return;
        }
        let serial = match self.in_flight.admit(&request, context.cancel.clone()) {
            Ok(serial) => serial,
            Err(error) => {
                self.send(error.to_response(&request.id)).await;
                return;
            }
        };
        let work = Work::Request {
            request: Box::new(request),
            context,
            serial,
        };
        if let Err(Work::Request {
            request, serial, ..
        }) = self.run_or_wait(work, bytes)
        {
            self.in_flight.finish(&request.key, serial);
            self.send(self.busy().to_response(&request.id)).await;
        }
    }

    /// Routes a 2026 request ([`rules::route_modern`]). `server/discover`,
    /// `subscriptions/listen` and every refusal are answered here (`None`); a method both eras
    /// share comes back with the context it runs under (its log level, and how its result is
    /// decorated).
    async fn modern_context(&mut self, request: Request) -> Option<(Request, RequestContext)> {
        let offer = self.connection.shared.offer();
        match rules::route_modern(&request, offer) {
            Ok(ModernRoute::Shared { envelope, caching }) => {
                let mut context = RequestContext::new(&self.connection, Cancel::new());
                context.log_level = envelope.log_level;
                context.modern = Some(ModernAnswer { caching });
                Some((request, context))
            }
            Ok(ModernRoute::Discover(answer)) => {
                self.connection.outlet.send(answer.line).await;
                None
            }
            Ok(ModernRoute::Listen) => {
                self.listen(request, offer).await;
                None
            }
            Err(error) => {
                self.send(error.to_response(&request.id)).await;
                None
            }
        }
    }

    /// Opens a `subscriptions/listen` stream: acknowledged first, then kept open (it holds no
    /// request slot) until the client cancels it or the input ends.
    async fn listen(&mut self, request: Request, offer: super::protocol::Offer) {
        if self.in_flight.contains(&request.key) || self.connection.has_listen(&request.key) {
            let error = RequestError::DuplicateId {
                id: request.id.clone(),
            };
            self.send(error.to_response(&request.id)).await;
            return;
        }
        let filter = match ListenFilter::requested(request.params.as_ref(), offer) {
            Ok(filter) => filter,
            Err(error) => {
                self.send(error.to_response(&request.id)).await;
                return;
            }
        };
        if !self.connection.shared.reserve_listen() {
            let error = RequestError::TooManyListens {
                limit: era::MAX_LISTENS,
            };
            self.send(error.to_response(&request.id)).await;
            return;
        }
        self.send(filter.acknowledgement(&request.id)).await;
        self.connection.add_listen(Listen {
            id: request.id,
            key: request.key,
            filter,
        });
    }

    fn busy(&self) -> RequestError {
        RequestError::Busy {
            in_flight: self.config.max_in_flight,
            waiting: self.config.max_waiting,
        }
    }

    /// Runs `work` now, or queues it; gives it back when the wait list is full.
    fn run_or_wait(&mut self, work: Work, bytes: usize) -> Result<(), Work> {
        if self.waiting.is_empty()
            && let Ok(permit) = Arc::clone(&self.permits).try_acquire_owned()
        {
            self.spawn(work, permit);
            return Ok(());
        }
        let fits = self.waiting.len() < self.config.max_waiting
            && self.waiting_bytes.saturating_add(bytes) <= self.config.max_waiting_bytes;
        if !fits {
            return Err(work);
        }
        self.waiting_bytes += bytes;
        self.waiting.push_back(Waiting { work, bytes });
        Ok(())
    }

    /// Runs the oldest waiting work that was not cancelled meanwhile with `permit`.
    fn start_waiting(&mut self, permit: OwnedSemaphorePermit) {
        while let Some(waiting) = self.waiting.pop_front() {
            self.waiting_bytes -= waiting.bytes;
            if !waiting.work.is_cancelled() {
                self.spawn(waiting.work, permit);
                return;
            }
        }
    }

    /// Runs `work` in its own task, which keeps `permit` until the work has stopped and
    /// answers unless a request was cancelled before it committed.
    fn spawn(&mut self, work: Work, permit: OwnedSemaphorePermit) {
        let dispatcher = self.dispatcher.clone();
        let connection = self.connection.clone();
        match work {
            Work::Request {
                request,
                context,
                serial,
            } => {
                let in_flight = self.in_flight.clone();
                let grace_over = self.grace_over.clone();
                self.tasks.spawn(async move {
                    let key = request.key.clone();
                    let id = request.id.clone();
                    let cancel = context.cancel.clone();
                    let run = dispatcher.run(*request, context);
                    let answer = tokio::select! {
                        answer = run => (!cancel.is_cancelled()).then_some(answer),
                        // Stopped at the end of the shutdown grace: answered even so.
                        () = grace_over.over() => {
                            cancel.cancel();
                            Some(Answer::refusal(&grace_over.refusal(), &id))
                        }
                    };
                    in_flight.finish(&key, serial);
                    if let Some(answer) = answer {
                        connection.outlet.send(answer.line).await;
                    }
                    drop(permit);
                });
            }
            Work::Batch(entries) => {
                let grace_over = self.grace_over.clone();
                self.tasks.spawn(async move {
                    let run = dispatcher.run_batch(&connection, entries);
                    let answer = grace_over
                        .run_or_stop(run, &Value::Null, &Cancel::never())
                        .await;
                    connection.outlet.send(answer.line).await;
                    drop(permit);
                });
            }
        }
    }

    async fn handle_batch(&mut self, messages: Vec<Message>, bytes: usize) {
        if let Err(error) = rules::accept_batch(self.connection.version()) {
            self.send(error.to_response(&Value::Null)).await;
            return;
        }
        let batch = rules::admit_batch(messages, self.config.max_batch_messages);
        for notification in batch.notifications {
            self.handle_notification(notification).await;
        }
        for response in &batch.responses {
            self.connection.take_response(response);
        }
        let entries = batch.entries;
        if entries.is_empty() {
            return;
        }
        // A batch is one unit of work: one slot; its requests run one after another, and its
        // members are not individually cancellable.
        if let Err(Work::Batch(entries)) = self.run_or_wait(Work::Batch(entries), bytes) {
            let answers = refused_batch(entries, &self.busy());
            self.send(answers).await;
        }
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
