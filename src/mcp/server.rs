//! The stdio server loop: framing, classification, dispatch through the `RpcModule`, one
//! writer task that owns the output, cancellation, batches and shutdown.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jsonrpsee::RpcModule;
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};

use super::error::{ErrorCode, WireError};
use super::framing::{DEFAULT_MAX_LINE_BYTES, Frame, LineReader};
use super::handlers::{self, Shared};
use super::message::{Line, Message, Notification, Request, RequestKey, classify_line};
use super::protocol::ProtocolVersion;

/// Configuration of the stdio shell.
#[derive(Clone, Debug)]
pub struct ShellConfig {
    /// Longest accepted line in bytes; longer lines are skipped and answered with `-32600`.
    pub max_line_bytes: usize,
    /// How long in-flight requests may run after end of input before they are abandoned.
    pub shutdown_grace: Duration,
}

impl Default for ShellConfig {
    fn default() -> Self {
        ShellConfig {
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            shutdown_grace: Duration::from_secs(5),
        }
    }
}

/// Messages to the single writer task.
#[derive(Debug)]
enum Outbound {
    Line(String),
    Close,
}

/// A handle that queues whole lines for the writer task.
#[derive(Clone, Debug)]
pub(crate) struct Outlet(mpsc::UnboundedSender<Outbound>);

impl Outlet {
    pub(crate) fn send(&self, message: &Value) {
        // A closed writer means the connection is gone; nothing is left to tell.
        let _ = self.0.send(Outbound::Line(message.to_string()));
    }
}

/// Per-connection protocol state: the negotiated version and whether the client said it
/// is initialized.
#[derive(Debug)]
pub(crate) struct Connection {
    pub(crate) shared: Arc<Shared>,
    version: Mutex<Option<ProtocolVersion>>,
    ready: AtomicBool,
    outlet: Outlet,
}

impl Connection {
    pub(crate) fn version(&self) -> Option<ProtocolVersion> {
        *self.version.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn set_version(&self, version: ProtocolVersion) {
        *self.version.lock().unwrap_or_else(|e| e.into_inner()) = Some(version);
    }

    /// Sends a notification if the client has finished initialization.
    pub(crate) fn notify(&self, method: &str) {
        if self.ready.load(Ordering::Acquire) {
            self.outlet
                .send(&json!({ "jsonrpc": "2.0", "method": method }));
        }
    }
}

/// Requests running now, by id, for `notifications/cancelled`.
#[derive(Debug, Default)]
struct InFlight {
    next_serial: AtomicU64,
    tasks: Mutex<HashMap<RequestKey, (u64, AbortHandle)>>,
}

impl InFlight {
    fn insert(&self, key: RequestKey, handle: AbortHandle) -> u64 {
        let serial = self.next_serial.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(key, (serial, handle));
        serial
    }

    fn finish(&self, key: &RequestKey, serial: u64) {
        let mut tasks = self.lock();
        if tasks.get(key).is_some_and(|(s, _)| *s == serial) {
            tasks.remove(key);
        }
    }

    fn cancel(&self, key: &RequestKey) -> bool {
        match self.lock().remove(key) {
            Some((_, handle)) => {
                handle.abort();
                true
            }
            None => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestKey, (u64, AbortHandle)>> {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One connection being served.
struct Session {
    connection: Arc<Connection>,
    module: Arc<RpcModule<Arc<Connection>>>,
    in_flight: Arc<InFlight>,
    tasks: JoinSet<()>,
}

/// Serves one connection: reads `input` until end of input, writes responses and
/// notifications to `output` through one writer task, then finishes in-flight work (bounded by
/// `shutdown_grace`) and flushes.
pub(crate) async fn serve_connection<R, W>(
    shared: Arc<Shared>,
    config: &ShellConfig,
    input: R,
    output: W,
) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (sender, receiver) = mpsc::unbounded_channel();
    let writer = tokio::spawn(write_lines(output, receiver));
    let connection = Arc::new(Connection {
        shared: shared.clone(),
        version: Mutex::new(None),
        ready: AtomicBool::new(false),
        outlet: Outlet(sender.clone()),
    });
    shared.attach(&connection);
    let mut session = Session {
        module: Arc::new(handlers::module(connection.clone())),
        connection,
        in_flight: Arc::new(InFlight::default()),
        tasks: JoinSet::new(),
    };
    let mut reader = LineReader::new(input, config.max_line_bytes);
    let read_result = loop {
        match reader.next_frame().await {
            Ok(None) => break Ok(()),
            Ok(Some(Frame::TooLong { bytes })) => session.connection.outlet.send(
                &WireError::invalid_request(format!(
                    "Invalid request: the message is {bytes} bytes long; the maximum line length is {} bytes",
                    config.max_line_bytes
                ))
                .to_response(&Value::Null),
            ),
            Ok(Some(Frame::Line(bytes))) => session.handle_line(&bytes).await,
            Err(error) => break Err(error),
        }
        // Reap finished tasks so the set does not grow with the number of requests served.
        while session.tasks.try_join_next().is_some() {}
    };
    let grace = tokio::time::timeout(config.shutdown_grace, async {
        while session.tasks.join_next().await.is_some() {}
    });
    if grace.await.is_err() {
        tracing::warn!("in-flight requests abandoned at shutdown");
        session.tasks.abort_all();
    }
    shared.detach(&session.connection);
    let _ = sender.send(Outbound::Close);
    drop(session);
    writer.await.map_err(std::io::Error::other)??;
    read_result
}

impl Session {
    async fn handle_line(&mut self, bytes: &[u8]) {
        match classify_line(bytes) {
            Line::Unparsable(error) => self
                .connection
                .outlet
                .send(&error.to_response(&Value::Null)),
            // `initialize` settles the protocol version that later lines (batches) depend on,
            // so it is answered before the next line is read.
            Line::Single(Message::Request(request)) if request.method == "initialize" => {
                let response = dispatch(&self.module, request).await;
                self.connection.outlet.send(&response);
            }
            Line::Single(message) => self.handle_message(message),
            Line::Batch(messages) => self.handle_batch(messages),
        }
    }

    fn handle_message(&mut self, message: Message) {
        match message {
            Message::Request(request) => self.spawn_request(request),
            Message::Notification(notification) => self.handle_notification(notification),
            Message::ClientResponse(response) => {
                tracing::warn!(id = %response["id"], "dropped a response to a request this server never sent");
            }
            Message::Invalid { id, error } => self.connection.outlet.send(&error.to_response(&id)),
        }
    }

    fn handle_notification(&self, notification: Notification) {
        match notification.method.as_str() {
            "notifications/initialized" => self.connection.ready.store(true, Ordering::Release),
            "notifications/cancelled" => {
                let key = notification
                    .params
                    .as_ref()
                    .and_then(|p| p.get("requestId"))
                    .and_then(RequestKey::of);
                match key {
                    Some(key) if self.in_flight.cancel(&key) => {
                        tracing::debug!(?key, "cancelled an in-flight request");
                    }
                    other => tracing::debug!(?other, "cancellation for no in-flight request"),
                }
            }
            other => tracing::debug!(method = other, "ignored notification"),
        }
    }

    fn spawn_request(&mut self, request: Request) {
        let module = self.module.clone();
        let outlet = self.connection.outlet.clone();
        let in_flight = self.in_flight.clone();
        let key = request.key.clone();
        // The task waits for its registration so a fast request cannot finish before it.
        let (registered, wait) = tokio::sync::oneshot::channel::<u64>();
        let handle = self.tasks.spawn(async move {
            let serial = wait.await.unwrap_or(u64::MAX);
            let key = request.key.clone();
            let response = dispatch(&module, request).await;
            in_flight.finish(&key, serial);
            outlet.send(&response);
        });
        let serial = self.in_flight.insert(key, handle);
        let _ = registered.send(serial);
    }

    fn handle_batch(&mut self, messages: Vec<Message>) {
        let batches_allowed = self
            .connection
            .version()
            .is_some_and(ProtocolVersion::accepts_batches);
        if !batches_allowed {
            self.connection.outlet.send(
                &WireError::invalid_request(
                    "Invalid request: JSON-RPC batches are accepted only under protocol version 2025-03-26",
                )
                .to_response(&Value::Null),
            );
            return;
        }
        // Answers keep the order of the batch; requests run one after another.
        let mut entries = Vec::new();
        for message in messages {
            match message {
                Message::Request(request) => entries.push(BatchEntry::Run(request)),
                Message::Invalid { id, error } => {
                    entries.push(BatchEntry::Answered(error.to_response(&id)));
                }
                other => self.handle_message(other),
            }
        }
        if entries.is_empty() {
            return;
        }
        let module = self.module.clone();
        let outlet = self.connection.outlet.clone();
        self.tasks.spawn(async move {
            let mut replies = Vec::with_capacity(entries.len());
            for entry in entries {
                replies.push(match entry {
                    BatchEntry::Answered(reply) => reply,
                    BatchEntry::Run(request) => dispatch(&module, request).await,
                });
            }
            outlet.send(&Value::Array(replies));
        });
    }
}

/// One member of a batch that gets an answer: already answered (invalid) or still to run.
enum BatchEntry {
    Answered(Value),
    Run(Request),
}

/// Runs one request through the `RpcModule` under an internal id and answers with the
/// client's id, verbatim (jsonrpsee's `Id` cannot hold negative integers).
async fn dispatch(module: &RpcModule<Arc<Connection>>, request: Request) -> Value {
    if module.method(&request.method).is_none() {
        return WireError::new(
            ErrorCode::MethodNotFound,
            format!(
                "Method not found: {}",
                super::message::short_text(&request.method)
            ),
        )
        .to_response(&request.id);
    }
    let mut internal = json!({ "jsonrpc": "2.0", "id": 0, "method": request.method });
    if let Some(params) = request.params {
        internal["params"] = params;
    }
    let answer = module
        .raw_json_request(&internal.to_string(), 1)
        .await
        .ok()
        .and_then(|(raw, _)| serde_json::from_str::<Value>(raw.get()).ok());
    match answer {
        Some(mut response) => {
            response["id"] = request.id;
            response
        }
        None => WireError::new(ErrorCode::InternalError, "Internal error: dispatch failed")
            .to_response(&request.id),
    }
}

/// The single owner of the output: writes whole lines, flushing when the queue drains.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut output: W,
    mut receiver: mpsc::UnboundedReceiver<Outbound>,
) -> std::io::Result<()> {
    while let Some(message) = receiver.recv().await {
        let Outbound::Line(line) = message else { break };
        output.write_all(line.as_bytes()).await?;
        output.write_all(b"\n").await?;
        if receiver.is_empty() {
            output.flush().await?;
        }
    }
    output.flush().await
}
