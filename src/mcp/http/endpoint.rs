//! The `/mcp` endpoint: POST, GET and DELETE for both eras, through the server's one method
//! table.
//!
//! A POST body is one line of the stdio protocol and is classified the same way, body first:
//! `initialize` is 2025; a request whose `_meta` claims a version, or that comes with
//! `MCP-Protocol-Version: 2026-07-28`, is 2026; anything else is 2025 and must carry the
//! `Mcp-Session-Id` that `initialize` returned. A request's answer is JSON, or an SSE stream
//! when messages that belong to the request (`notifications/message`) come before it. When
//! the client closes the response, the request is cancelled.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::header::{CONNECTION, CONTENT_TYPE, RETRY_AFTER};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

use super::super::connection::{Admitted, ConnectionCore, Dispatcher, GraceOver, Step};
use super::super::era::{self, Era};
use super::super::error::{ErrorCode, RequestError};
use super::super::message::{Line, Message, Notification, Request, classify_line};
use super::super::method::Method;
use super::super::outlet::{self, Drain, Outlet};
use super::super::protocol::{MODERN_VERSION, ProtocolVersion};
use super::super::rules::Answer;
use super::super::server::Shutdown;
use super::super::state::{Connection, Listen, Shared};
use super::headers::{self, MCP_SESSION_ID, PROTOCOL_VERSION};
use super::sessions::{Activity, ProtocolSession, ProtocolSessions};
use crate::session::random_token;

/// What the endpoint serves with: the server's state and method table, the MCP sessions of
/// 2025 clients, and the process-wide cap on requests in flight.
#[derive(Debug)]
pub(crate) struct Endpoint {
    pub(crate) shared: Arc<Shared>,
    pub(crate) dispatcher: Dispatcher,
    pub(crate) sessions: ProtocolSessions,
    /// Slots for requests in flight, for the whole process; none free: 503.
    pub(crate) slots: Arc<Semaphore>,
    pub(crate) max_in_flight: usize,
    /// Slots for open GET streams, for the whole process (half the connections); none
    /// free: 503.
    pub(crate) get_streams: Arc<Semaphore>,
    /// Lines one response stream holds before the request producing them waits.
    pub(crate) stream_queue: usize,
    /// How often an idle SSE stream sends a comment.
    pub(crate) keep_alive: Duration,
    /// Longest request body, in bytes (413 past it).
    pub(crate) max_body_bytes: usize,
    /// How long a request's body may take to arrive after its headers (408 past it).
    pub(crate) body_timeout: Duration,
    /// The server's stop signal: GET and listen streams end with it.
    pub(crate) shutdown: Shutdown,
    /// The end of the shutdown grace: requests still running then answer that they stopped.
    pub(crate) grace_over: GraceOver,
}

/// A JSON-RPC answer (or error) as an HTTP response.
fn json_response(status: StatusCode, body: String) -> Response {
    (
        status,
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body,
    )
        .into_response()
}

fn error_response(status: StatusCode, error: &RequestError, id: &Value) -> Response {
    json_response(status, error.to_response(id).to_string())
}

/// A refusal that is about HTTP rather than a JSON-RPC request: a JSON-RPC error without id.
pub(crate) fn refusal(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": -32600, "message": message },
    });
    json_response(status, body.to_string())
}

/// `POST /mcp`. The body must arrive whole within [`Endpoint::body_timeout`] of the headers
/// (else 408, and the connection closes) and hold at most [`Endpoint::max_body_bytes`] bytes
/// (else 413).
pub(crate) async fn post(
    State(endpoint): State<Arc<Endpoint>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if !headers::is_json(&headers) {
        return refusal(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported media type: a POST to /mcp carries one JSON-RPC message as Content-Type: application/json",
        );
    }
    if !headers::accepts(&headers, "application/json") {
        return refusal(
            StatusCode::NOT_ACCEPTABLE,
            "Not acceptable: the client must accept application/json (and text/event-stream, for answers that come with messages)",
        );
    }
    let body = match read_body(body, endpoint.max_body_bytes, endpoint.body_timeout).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let form = Form::of(&headers);
    match classify_line(&body) {
        Line::Unparsable { id, error } => error_response(StatusCode::BAD_REQUEST, &error, &id),
        Line::Batch(messages) => endpoint.batch(&headers, messages).await,
        Line::Single(message) => endpoint.message(&headers, message, form).await,
    }
}

/// The whole body, within `limit` bytes (413 past it) and `deadline` (408, closing the
/// connection: a body that trickles or never comes must not hold it).
async fn read_body(body: Body, limit: usize, deadline: Duration) -> Result<Vec<u8>, Response> {
    use futures_util::StreamExt;
    let read = async {
        let mut bytes = Vec::new();
        let mut chunks = body.into_data_stream();
        while let Some(chunk) = chunks.next().await {
            let Ok(chunk) = chunk else {
                return Err(refusal(
                    StatusCode::BAD_REQUEST,
                    "Bad request: the request body could not be read",
                ));
            };
            if bytes.len() + chunk.len() > limit {
                return Err(refusal(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &format!(
                        "Payload too large: a request body holds at most {limit} bytes (--max-line-bytes)"
                    ),
                ));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    };
    match tokio::time::timeout(deadline, read).await {
        Ok(read) => read,
        Err(_) => {
            let mut response = refusal(
                StatusCode::REQUEST_TIMEOUT,
                &format!(
                    "Request timeout: the body did not arrive within {} s of the headers",
                    deadline.as_secs_f64()
                ),
            );
            response
                .headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
            Err(response)
        }
    }
}

/// How a request's answer may be sent, from the client's `Accept`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// JSON only (`Accept: application/json`): messages of the request before its answer are
    /// dropped, never turned into a stream the client did not ask for.
    Json,
    /// Both: JSON, or SSE when the request sent messages before its answer.
    Either,
}

impl Form {
    fn of(headers: &HeaderMap) -> Form {
        if headers::accepts(headers, "text/event-stream") {
            Form::Either
        } else {
            Form::Json
        }
    }
}

impl Endpoint {
    async fn message(
        self: &Arc<Self>,
        headers: &HeaderMap,
        message: Message,
        form: Form,
    ) -> Response {
        match message {
            Message::Request(request) => match http_era(headers, &request) {
                Era::Modern => self.modern(headers, request, form).await,
                // Each `initialize` starts an MCP session of its own.
                Era::Legacy if request.known == Some(Method::Initialize) => {
                    self.initialize(request).await
                }
                Era::Legacy => self.legacy(headers, request, form).await,
            },
            Message::Notification(notification) => self.notification(headers, notification).await,
            Message::ClientResponse(response) => match self.session_of(headers, &Value::Null) {
                Ok(session) => {
                    session.connection.take_response(&response);
                    StatusCode::ACCEPTED.into_response()
                }
                Err(refused) => *refused,
            },
            Message::MalformedResponse { reason } => {
                tracing::warn!(reason, "dropped a malformed response from an HTTP client");
                StatusCode::ACCEPTED.into_response()
            }
            Message::Invalid { id, error } => error_response(StatusCode::BAD_REQUEST, &error, &id),
        }
    }

    /// The live MCP session the request's `Mcp-Session-Id` names: 400 without the header,
    /// 404 when it names none.
    fn session_of(
        &self,
        headers: &HeaderMap,
        id: &Value,
    ) -> Result<Arc<ProtocolSession>, Box<Response>> {
        let Some(session_id) = headers::text(headers, MCP_SESSION_ID) else {
            let error = RequestError::McpSessionRequired {
                method: "this request".into(),
            };
            return Err(Box::new(error_response(
                StatusCode::BAD_REQUEST,
                &error,
                id,
            )));
        };
        self.sessions.get(session_id).ok_or_else(|| {
            let error = RequestError::UnknownMcpSession {
                session: session_id.into(),
            };
            Box::new(error_response(StatusCode::NOT_FOUND, &error, id))
        })
    }

    /// A 2025 `initialize`: a new MCP session, whose id the answer carries.
    async fn initialize(self: &Arc<Self>, request: Request) -> Response {
        let Ok(session_id) = random_token("mcp_") else {
            return error_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                &RequestError::NoWorker,
                &request.id,
            );
        };
        let (outlet, drain) = outlet::outlet(self.stream_queue);
        let connection = Arc::new(Connection::over_http(Arc::clone(&self.shared), outlet));
        let core = ConnectionCore::new(connection, self.dispatcher.clone());
        let id = request.id.clone();
        let answer = core.initialize(request).await;
        if core.connection.version().is_none() {
            // The params were refused: no session starts.
            return json_response(StatusCode::OK, answer.line);
        }
        let session = Arc::new(ProtocolSession::new(
            session_id.clone(),
            core.connection,
            drain,
        ));
        match self.sessions.insert(session) {
            Ok(None) => {}
            Ok(Some(evicted)) => {
                tracing::info!("an unused MCP session gave way to a new one");
                self.end_session(&evicted).await;
            }
            Err(session) => {
                drop(session);
                let limit = self.sessions.limit();
                return busy(&RequestError::TooManyMcpSessions { limit }, &id);
            }
        }
        if let Some(session) = self.sessions.get(&session_id) {
            self.shared.attach(&session.connection);
        }
        let mut response = json_response(StatusCode::OK, answer.line);
        if let Ok(value) = HeaderValue::from_str(&session_id) {
            response.headers_mut().insert(MCP_SESSION_ID, value);
        }
        response
    }

    /// A 2025 request after `initialize`, in the MCP session it names.
    async fn legacy(
        self: &Arc<Self>,
        headers: &HeaderMap,
        request: Request,
        form: Form,
    ) -> Response {
        let session = match self.session_of(headers, &request.id) {
            Ok(session) => session,
            Err(refused) => return *refused,
        };
        if let Some(version) = headers::text(headers, PROTOCOL_VERSION)
            && ProtocolVersion::parse(version).is_none()
        {
            let error = RequestError::ProtocolVersionHeader {
                version: version.into(),
            };
            return error_response(StatusCode::BAD_REQUEST, &error, &request.id);
        }
        let step = session.core(&self.dispatcher).request(request, Era::Legacy);
        // What belongs to the request before its answer goes on a stream of its own.
        let stream = outlet::outlet(self.stream_queue);
        // The session is not idle while the request runs.
        let active = Some(session.activity());
        self.take_step(step, (Era::Legacy, form), stream, active)
            .await
    }

    /// A 2026 request: its headers checked, then served on a connection of its own (no
    /// state of an MCP session), whose messages go on the request's stream.
    async fn modern(
        self: &Arc<Self>,
        headers: &HeaderMap,
        request: Request,
        form: Form,
    ) -> Response {
        if let Err(error) = headers::check_modern(headers, &request) {
            return error_response(StatusCode::BAD_REQUEST, &error, &request.id);
        }
        let (stream, drain) = outlet::outlet(self.stream_queue);
        let connection = Connection::one_request(Arc::clone(&self.shared), stream.clone());
        let core = ConnectionCore::new(Arc::new(connection), self.dispatcher.clone());
        let step = core.request(request, Era::Modern);
        self.take_step(step, (Era::Modern, form), (stream, drain), None)
            .await
    }

    /// Acts on what the core decided for a request, over HTTP: a refusal with its status
    /// ([`refused`]), an answer as JSON, a listen stream, or the request run with `stream`
    /// for what comes before its answer ([`Self::respond`]), `active` held until it ends.
    async fn take_step(
        self: &Arc<Self>,
        step: Step,
        (era, form): (Era, Form),
        (stream, drain): (Outlet, Drain),
        active: Option<Activity>,
    ) -> Response {
        match step {
            Step::Refuse { error, id } => refused(era, &error, &id),
            Step::Answer(answer) => answer_response(era, answer),
            Step::Initialize(request) => self.initialize(request).await,
            Step::Listen(listen) => self.listen(listen),
            Step::Run(mut admitted) => {
                admitted.set_stream(stream);
                self.respond(admitted, drain, (era, form), active).await
            }
        }
    }

    /// Runs an admitted request in a slot of its own (503 without one; `ping` needs none, so
    /// a client can always tell the server is alive) and answers with JSON, or, when the
    /// client accepts it ([`Form::Either`]), with an SSE stream when `drain` yields messages
    /// before the answer. Dropping the response before the answer (the client closed it)
    /// cancels the request.
    async fn respond(
        self: &Arc<Self>,
        admitted: Box<Admitted>,
        mut drain: Drain,
        (era, form): (Era, Form),
        active: Option<Activity>,
    ) -> Response {
        if !admitted.needs_slot() {
            let ran = admitted.run(&self.dispatcher, &self.grace_over).await;
            drop(active);
            return answer_response(era, ran.answer);
        }
        let Ok(slot) = Arc::clone(&self.slots).try_acquire_owned() else {
            let error = RequestError::HttpBusy {
                in_flight: self.max_in_flight,
            };
            return with_retry_after(StatusCode::SERVICE_UNAVAILABLE, admitted.refuse(&error));
        };
        let id = admitted.id().clone();
        let guard = CancelOnDrop::new(Box::new(admitted.canceller()));
        let mut task = self.spawn(admitted, slot, active);
        if form == Form::Json {
            // Messages before the answer are read and dropped, so the request never waits on
            // a stream nobody reads, and the answer is always JSON.
            let answer = loop {
                tokio::select! {
                    biased;
                    answer = &mut task => break answered(answer, &id),
                    lines = drain.next() => if lines.is_none() {
                        break answered((&mut task).await, &id);
                    },
                }
            };
            guard.disarm();
            return answer_response(era, answer);
        }
        tokio::select! {
            biased;
            answer = &mut task => {
                let answer = answered(answer, &id);
                let early = drain.queued();
                if early.is_empty() {
                    guard.disarm();
                    return answer_response(era, answer);
                }
                let mut lines = VecDeque::from(early);
                lines.push_back(answer.line);
                guard.disarm();
                self.sse(Streaming { lines, drain, task: None, id, guard: None })
            }
            first = drain.next() => {
                let lines = VecDeque::from(first.unwrap_or_default());
                self.sse(Streaming { lines, drain, task: Some(task), id, guard: Some(guard) })
            }
        }
    }

    /// Runs `admitted` in a task that keeps `slot` (and `active`) until its work has really
    /// stopped.
    fn spawn(
        &self,
        admitted: Box<Admitted>,
        slot: OwnedSemaphorePermit,
        active: Option<Activity>,
    ) -> JoinHandle<Answer> {
        let dispatcher = self.dispatcher.clone();
        let grace_over = self.grace_over.clone();
        tokio::spawn(async move {
            let ran = admitted.run(&dispatcher, &grace_over).await;
            drop(active);
            drop(slot);
            ran.answer
        })
    }

    fn sse(&self, streaming: Streaming) -> Response {
        let events = futures_util::stream::unfold(streaming, Streaming::next_event);
        event_stream(events, self.keep_alive)
    }

    /// A 2026 `subscriptions/listen` the core accepted: the acknowledgement, then the change
    /// notifications it asked for, on one SSE stream (a connection of its own) that ends
    /// when the client closes it.
    fn listen(&self, listen: Listen) -> Response {
        let (outlet, drain) = outlet::outlet(self.stream_queue);
        let connection = Arc::new(Connection::one_request(Arc::clone(&self.shared), outlet));
        let acknowledgement = listen.filter.acknowledgement(&listen.id).to_string();
        connection.add_listen(listen);
        self.shared.attach(&connection);
        let listening = Listening {
            lines: VecDeque::from([acknowledgement]),
            drain,
            connection,
        };
        let events = futures_util::stream::unfold(listening, Listening::next_event);
        event_stream(self.until_stopping(events), self.keep_alive)
    }

    /// `events` until the server stops: a stream that lasts as long as the client wants
    /// (GET, listen) must not hold the shutdown.
    fn until_stopping<S>(&self, events: S) -> impl Stream<Item = S::Item> + Send + 'static
    where
        S: Stream + Send + 'static,
    {
        use futures_util::StreamExt;
        let shutdown = self.shutdown.clone();
        events.take_until(Box::pin(async move { shutdown.stopping().await }))
    }

    /// A notification: 202 once handled. 2025 ones act on the MCP session they name
    /// ([`ConnectionCore::notification`]).
    async fn notification(&self, headers: &HeaderMap, notification: Notification) -> Response {
        if era::classify(notification.params.as_ref()) == Era::Modern
            || headers::text(headers, PROTOCOL_VERSION) == Some(MODERN_VERSION)
        {
            // A 2026 client cancels by closing the response stream; nothing else is sent.
            return StatusCode::ACCEPTED.into_response();
        }
        let session = match self.session_of(headers, &Value::Null) {
            Ok(session) => session,
            Err(refused) => return *refused,
        };
        session
            .core(&self.dispatcher)
            .notification(&notification)
            .await;
        StatusCode::ACCEPTED.into_response()
    }

    /// A batch, in the MCP session it names, accepted and admitted by the core
    /// ([`ConnectionCore::batch`]); its requests run one after another in one slot and are
    /// answered together within the response limit.
    async fn batch(self: &Arc<Self>, headers: &HeaderMap, messages: Vec<Message>) -> Response {
        let session = match self.session_of(headers, &Value::Null) {
            Ok(session) => session,
            Err(refused) => return *refused,
        };
        let core = session.core(&self.dispatcher);
        let entries = match core.batch(messages).await {
            Ok((entries, _)) => entries,
            Err(error) => return error_response(StatusCode::BAD_REQUEST, &error, &Value::Null),
        };
        if entries.is_empty() {
            return StatusCode::ACCEPTED.into_response();
        }
        let Ok(_slot) = Arc::clone(&self.slots).try_acquire_owned() else {
            let error = RequestError::HttpBusy {
                in_flight: self.max_in_flight,
            };
            return busy(&error, &Value::Null);
        };
        let _active = session.activity();
        let answer = core.run_batch(entries, &self.grace_over).await;
        json_response(StatusCode::OK, answer.line)
    }

    /// Ends every MCP session (at shutdown).
    pub(crate) async fn end_all_sessions(&self) {
        for session in self.sessions.remove_all() {
            self.end_session(&session).await;
        }
    }

    /// Ends an MCP session: its requests are cancelled, its GET stream closes, and the binary
    /// sessions it opened or named end unless another live MCP session named them too.
    pub(crate) async fn end_session(&self, session: &ProtocolSession) {
        session.in_flight.cancel_all();
        self.shared.detach(&session.connection);
        session
            .connection
            .outlet
            .close(Duration::from_millis(10))
            .await;
        for handle in session.connection.sessions.known() {
            let initial = self.shared.initial.as_ref() == Some(&handle);
            if !initial && !self.sessions.another_knows(&handle, &session.id) {
                self.shared.store.end(&handle);
            }
        }
    }
}

/// The era of an HTTP request: as on stdio, plus a 2026 `MCP-Protocol-Version` header (a
/// 2026 request whose `_meta` lacks the version is then refused for that, with `-32602`).
fn http_era(headers: &HeaderMap, request: &Request) -> Era {
    let claimed = era::classify(request.params.as_ref());
    if claimed == Era::Modern || headers::text(headers, PROTOCOL_VERSION) == Some(MODERN_VERSION) {
        Era::Modern
    } else {
        Era::Legacy
    }
}

/// `error` (a server-busy one) with 503 and `Retry-After`.
fn busy(error: &RequestError, id: &Value) -> Response {
    with_retry_after(StatusCode::SERVICE_UNAVAILABLE, Answer::refusal(error, id))
}

/// `answer` with `status` and `Retry-After: 1`.
fn with_retry_after(status: StatusCode, answer: Answer) -> Response {
    let mut response = json_response(status, answer.line);
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// A request refused before it ran, with its status: 503 when the server has no room (a
/// listen stream past the count), 200 under 2025 (the error is the answer), and under
/// 2026 a 404 for a method the revision removed or never had and a 400 for anything else
/// (a bad envelope or filter).
fn refused(era: Era, error: &RequestError, id: &Value) -> Response {
    let status = match era {
        _ if matches!(error, RequestError::TooManyListens { .. }) => {
            return busy(error, id);
        }
        Era::Legacy => StatusCode::OK,
        Era::Modern if error.code() == ErrorCode::MethodNotFound => StatusCode::NOT_FOUND,
        Era::Modern => StatusCode::BAD_REQUEST,
    };
    error_response(status, error, id)
}

/// The answer a request task gave, or an internal error when it panicked.
fn answered(joined: Result<Answer, tokio::task::JoinError>, id: &Value) -> Answer {
    joined.unwrap_or_else(|_| Answer::refusal(&RequestError::NoWorker, id))
}

/// A JSON answer with its HTTP status: a 2026 request for a method that does not exist is a
/// 404, one that needs a client capability it did not declare a 400; every other answer,
/// error or not, is a 200.
fn answer_response(era: Era, answer: Answer) -> Response {
    let is = |code: ErrorCode| answer.error_code == Some(code.code());
    let status = match era {
        Era::Modern if is(ErrorCode::MethodNotFound) => StatusCode::NOT_FOUND,
        // A missing client capability is a 400 over HTTP.
        Era::Modern if is(ErrorCode::MissingClientCapability) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    };
    json_response(status, answer.line)
}

/// An SSE response: `X-Accel-Buffering: no` so proxies pass events at once, and a comment
/// every `keep_alive` while idle.
fn event_stream<S>(events: S, keep_alive: Duration) -> Response
where
    S: Stream<Item = Result<Event, Infallible>> + Send + 'static,
{
    let mut response = Sse::new(events)
        .keep_alive(KeepAlive::new().interval(keep_alive))
        .into_response();
    let headers = response.headers_mut();
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    headers.insert("cache-control", HeaderValue::from_static("no-cache"));
    response
}

/// Cancels a request when dropped armed: the response (or its stream) went away before the
/// answer was sent.
struct CancelOnDrop {
    cancel: Option<Box<dyn FnOnce() + Send>>,
}

impl CancelOnDrop {
    fn new(cancel: Box<dyn FnOnce() + Send>) -> CancelOnDrop {
        CancelOnDrop {
            cancel: Some(cancel),
        }
    }

    fn disarm(mut self) {
        self.cancel = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(cancel) = self.cancel.take() {
            tracing::debug!("an HTTP client closed its response stream: request cancelled");
            cancel();
        }
    }
}

/// One request's SSE stream: the messages that belong to it, then its answer.
struct Streaming {
    lines: VecDeque<String>,
    drain: Drain,
    task: Option<JoinHandle<Answer>>,
    id: Value,
    guard: Option<CancelOnDrop>,
}

impl Streaming {
    async fn next_event(mut self) -> Option<(Result<Event, Infallible>, Streaming)> {
        loop {
            if let Some(line) = self.lines.pop_front() {
                return Some((Ok(Event::default().data(line)), self));
            }
            let task = self.task.as_mut()?;
            tokio::select! {
                biased;
                answer = &mut *task => {
                    let answer = answered(answer, &self.id);
                    self.finish(answer);
                }
                lines = self.drain.next() => match lines {
                    Some(lines) => self.lines.extend(lines),
                    None => {
                        let answer = match self.task.as_mut() {
                            Some(task) => answered(task.await, &self.id),
                            None => return None,
                        };
                        self.finish(answer);
                    }
                },
            }
        }
    }

    fn finish(&mut self, answer: Answer) {
        self.task = None;
        self.lines.extend(self.drain.queued());
        self.lines.push_back(answer.line);
        if let Some(guard) = self.guard.take() {
            guard.disarm();
        }
    }
}

/// A listen stream: its acknowledgement, then what its connection is sent; its place and its
/// listen end when the client closes it (the stream is dropped).
struct Listening {
    lines: VecDeque<String>,
    drain: Drain,
    connection: Arc<Connection>,
}

impl Listening {
    async fn next_event(mut self) -> Option<(Result<Event, Infallible>, Listening)> {
        if self.lines.is_empty() {
            let lines = self.drain.next().await?;
            self.lines.extend(lines);
        }
        let line = self.lines.pop_front()?;
        Some((Ok(Event::default().data(line)), self))
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.connection.take_listens();
        self.connection.shared.detach(&self.connection);
    }
}

/// `GET /mcp`: a 2025 MCP session's stream of unsolicited messages.
pub(crate) async fn get(State(endpoint): State<Arc<Endpoint>>, headers: HeaderMap) -> Response {
    if headers::text(&headers, PROTOCOL_VERSION) == Some(MODERN_VERSION)
        || headers::text(&headers, MCP_SESSION_ID).is_none()
    {
        return method_not_allowed();
    }
    let session = match endpoint.session_of(&headers, &Value::Null) {
        Ok(session) => session,
        Err(refused) => return *refused,
    };
    if !headers::accepts(&headers, "text/event-stream") {
        return refusal(
            StatusCode::NOT_ACCEPTABLE,
            "Not acceptable: the GET stream is text/event-stream",
        );
    }
    let Ok(slot) = Arc::clone(&endpoint.get_streams).try_acquire_owned() else {
        let mut response = refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            "Service unavailable: GET streams may take half the connections, and they are open; retry later or receive notifications on POST answers",
        );
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from_static("5"));
        return response;
    };
    let Some(drain) = session.take_stream() else {
        return refusal(
            StatusCode::CONFLICT,
            "Conflict: this MCP session's GET stream is already open",
        );
    };
    let open = OpenStream {
        _slot: slot,
        drain: Some(drain),
        _active: session.activity(),
        session,
        lines: VecDeque::new(),
    };
    let events = futures_util::stream::unfold(open, OpenStream::next_event);
    event_stream(endpoint.until_stopping(events), endpoint.keep_alive)
}

/// A GET stream; its queue goes back to the session when the client closes it.
struct OpenStream {
    /// Its place among the GET streams of the process.
    _slot: tokio::sync::OwnedSemaphorePermit,
    drain: Option<Drain>,
    /// The session is not idle while its GET stream is open.
    _active: Activity,
    session: Arc<ProtocolSession>,
    lines: VecDeque<String>,
}

impl OpenStream {
    async fn next_event(mut self) -> Option<(Result<Event, Infallible>, OpenStream)> {
        if self.lines.is_empty() {
            let lines = self.drain.as_mut()?.next().await?;
            self.lines.extend(lines);
        }
        let line = self.lines.pop_front()?;
        Some((Ok(Event::default().data(line)), self))
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        if let Some(drain) = self.drain.take() {
            self.session.return_stream(drain);
        }
    }
}

/// `DELETE /mcp`: ends a 2025 MCP session.
pub(crate) async fn delete(State(endpoint): State<Arc<Endpoint>>, headers: HeaderMap) -> Response {
    if headers::text(&headers, PROTOCOL_VERSION) == Some(MODERN_VERSION)
        || headers::text(&headers, MCP_SESSION_ID).is_none()
    {
        return method_not_allowed();
    }
    let session = match endpoint.session_of(&headers, &Value::Null) {
        Ok(session) => session,
        Err(refused) => return *refused,
    };
    if let Some(session) = endpoint.sessions.remove(&session.id) {
        endpoint.end_session(&session).await;
    }
    StatusCode::OK.into_response()
}

fn method_not_allowed() -> Response {
    let mut response = refusal(
        StatusCode::METHOD_NOT_ALLOWED,
        "Method not allowed: without an MCP session (a 2026-07-28 client, or before initialize) /mcp takes POST only",
    );
    response
        .headers_mut()
        .insert("allow", HeaderValue::from_static("POST"));
    response
}
