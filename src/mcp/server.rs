//! The connection loop: frames in, classification, dispatch through the `RpcModule`, answers
//! out through one bounded queue, with a fixed number of requests in flight.
//!
//! Backpressure, not buffering: the loop takes the next frame only when it can act on it. A
//! request waits for an in-flight permit before the following frame is read, and a request
//! keeps its permit until its work has really stopped (a cancelled request's blocking work
//! included), so at most [`ShellConfig::max_in_flight`] requests run and nothing queues behind
//! them but the one frame being held. Answers go through a queue of
//! [`ShellConfig::output_queue`] lines; a client that stops reading fills it, which stops the
//! requests, which stops the reading.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jsonrpsee::types::Params;
use jsonrpsee::{ConnectionId, Extensions, MethodCallback, RpcModule};
use serde_json::Value;
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;

use super::error::RequestError;
use super::framing::{DEFAULT_MAX_LINE_BYTES, Frame};
use super::handlers;
use super::message::{Line, Message, Notification, Request, RequestKey, classify_line};
use super::outlet::Outlet;
use super::protocol::ProtocolVersion;
use super::state::{Connection, RequestContext, Shared};
use crate::session::Cancel;

/// Configuration of the stdio shell: framing, the caps of the execution model, shutdown.
#[derive(Clone, Debug)]
pub struct ShellConfig {
    /// Longest accepted line in bytes; longer lines are skipped and answered with `-32600`.
    pub max_line_bytes: usize,
    /// Requests (a batch counts as one) running at once per connection; the next request is
    /// not read until one finishes.
    pub max_in_flight: usize,
    /// Answers and notifications waiting for the client to read them; when full, requests
    /// wait (and so does reading).
    pub output_queue: usize,
    /// Longest answer in bytes; a larger one is replaced by a `-32603` error saying so.
    pub max_response_bytes: usize,
    /// Most messages in one batch; the members past it are answered with `-32600`.
    pub max_batch_messages: usize,
    /// How long in-flight requests may run after end of input before they are abandoned.
    pub shutdown_grace: Duration,
}

impl ShellConfig {
    /// Default [`ShellConfig::max_in_flight`].
    pub const DEFAULT_MAX_IN_FLIGHT: usize = 16;
    /// Default [`ShellConfig::output_queue`].
    pub const DEFAULT_OUTPUT_QUEUE: usize = 16;
    /// Default [`ShellConfig::max_response_bytes`]: 4 MiB.
    pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;
    /// Default [`ShellConfig::max_batch_messages`].
    pub const DEFAULT_MAX_BATCH_MESSAGES: usize = 32;
}

impl Default for ShellConfig {
    fn default() -> Self {
        ShellConfig {
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            max_in_flight: ShellConfig::DEFAULT_MAX_IN_FLIGHT,
            output_queue: ShellConfig::DEFAULT_OUTPUT_QUEUE,
            max_response_bytes: ShellConfig::DEFAULT_MAX_RESPONSE_BYTES,
            max_batch_messages: ShellConfig::DEFAULT_MAX_BATCH_MESSAGES,
            shutdown_grace: Duration::from_secs(5),
        }
    }
}

/// Requests running now, by id, for `notifications/cancelled` and duplicate ids.
#[derive(Debug, Default)]
struct InFlight {
    next_serial: AtomicU64,
    requests: Mutex<HashMap<RequestKey, (u64, Cancel)>>,
}

impl InFlight {
    /// Registers `key`; `None` when a request with that id is already in flight.
    fn insert(&self, key: RequestKey, cancel: Cancel) -> Option<u64> {
        let mut requests = self.lock();
        if requests.contains_key(&key) {
            return None;
        }
        let serial = self.next_serial.fetch_add(1, Ordering::Relaxed);
        requests.insert(key, (serial, cancel));
        Some(serial)
    }

    fn finish(&self, key: &RequestKey, serial: u64) {
        let mut requests = self.lock();
        if requests.get(key).is_some_and(|(s, _)| *s == serial) {
            requests.remove(key);
        }
    }

    fn cancel(&self, key: &RequestKey) -> bool {
        match self.lock().remove(key) {
            Some((_, cancel)) => {
                cancel.cancel();
                true
            }
            None => false,
        }
    }

    fn cancel_all(&self) {
        for (_, (_, cancel)) in self.lock().drain() {
            cancel.cancel();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestKey, (u64, Cancel)>> {
        self.requests.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What runs requests: the module and the answer size limit.
#[derive(Clone)]
struct Dispatcher {
    module: Arc<RpcModule<Arc<Connection>>>,
    max_response_bytes: usize,
}

/// One connection being served.
struct ConnectionLoop {
    connection: Arc<Connection>,
    dispatcher: Dispatcher,
    config: ShellConfig,
    permits: Arc<Semaphore>,
    in_flight: Arc<InFlight>,
    tasks: JoinSet<()>,
}

/// Serves one connection from `frames` (ended by closing the channel, or by an error) and
/// answers through `outlet`; finishes in-flight work (bounded by `shutdown_grace`) at the end.
pub(crate) async fn serve_frames(
    shared: Arc<Shared>,
    config: &ShellConfig,
    mut frames: mpsc::Receiver<std::io::Result<Frame>>,
    outlet: Outlet,
) -> std::io::Result<()> {
    let connection = Arc::new(Connection::new(shared.clone(), outlet));
    shared.attach(&connection);
    let mut served = ConnectionLoop {
        dispatcher: Dispatcher {
            module: Arc::new(handlers::module(connection.clone())),
            max_response_bytes: config.max_response_bytes,
        },
        connection,
        config: config.clone(),
        permits: Arc::new(Semaphore::new(config.max_in_flight.max(1))),
        in_flight: Arc::new(InFlight::default()),
        tasks: JoinSet::new(),
    };
    let read_result = loop {
        match frames.recv().await {
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
        }
        // Reap finished tasks so the set does not grow with the number of requests served.
        while served.tasks.try_join_next().is_some() {}
    };
    drop(frames);
    let grace = tokio::time::timeout(config.shutdown_grace, async {
        while served.tasks.join_next().await.is_some() {}
    });
    if grace.await.is_err() {
        tracing::warn!("in-flight requests abandoned at shutdown");
        served.in_flight.cancel_all();
        served.tasks.abort_all();
    }
    shared.detach(&served.connection);
    served.connection.outlet.close(config.shutdown_grace).await;
    read_result
}

impl ConnectionLoop {
    async fn send(&self, message: Value) {
        self.connection.outlet.send(message.to_string()).await;
    }

    async fn handle_line(&mut self, bytes: &[u8]) {
        match classify_line(bytes) {
            Line::Unparsable(error) => self.send(error.to_response(&Value::Null)).await,
            Line::Single(Message::Request(request)) if request.method == "initialize" => {
                // `initialize` settles the protocol version that later lines (batches) depend
                // on, so it is answered before the next line is read.
                let answer = self.initialize(request).await;
                self.connection.outlet.send(answer).await;
            }
            Line::Single(message) => self.handle_message(message).await,
            Line::Batch(messages) => self.handle_batch(messages).await,
        }
    }

    async fn initialize(&self, request: Request) -> String {
        if self.connection.version().is_some() {
            return RequestError::AlreadyInitialized
                .to_response(&request.id)
                .to_string();
        }
        self.dispatcher.run(request, Cancel::never()).await
    }

    async fn handle_message(&mut self, message: Message) {
        match message {
            Message::Request(request) => self.start_request(request).await,
            Message::Notification(notification) => self.handle_notification(notification).await,
            Message::ClientResponse(response) => self.connection.take_roots(&response),
            Message::Invalid { id, error } => self.send(error.to_response(&id)).await,
        }
    }

    async fn handle_notification(&self, notification: Notification) {
        match notification.method.as_str() {
            "notifications/initialized" => {
                self.connection.mark_ready();
                self.connection.ask_for_roots().await;
            }
            "notifications/roots/list_changed" => self.connection.ask_for_roots().await,
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

    /// Waits for an in-flight permit (so the next frame is not read before one is free), then
    /// runs `request` in its own task. The task keeps the permit until the request's work has
    /// stopped, and answers unless the request was cancelled.
    async fn start_request(&mut self, request: Request) {
        let Ok(permit) = Arc::clone(&self.permits).acquire_owned().await else {
            return;
        };
        let cancel = Cancel::new();
        let Some(serial) = self.in_flight.insert(request.key.clone(), cancel.clone()) else {
            let error = RequestError::DuplicateId {
                id: request.id.clone(),
            };
            self.send(error.to_response(&request.id)).await;
            return;
        };
        let dispatcher = self.dispatcher.clone();
        let connection = self.connection.clone();
        let in_flight = self.in_flight.clone();
        self.tasks.spawn(async move {
            let key = request.key.clone();
            let answer = dispatcher.run(request, cancel.clone()).await;
            in_flight.finish(&key, serial);
            if !cancel.is_cancelled() {
                connection.outlet.send(answer).await;
            }
            drop(permit);
        });
    }

    async fn handle_batch(&mut self, messages: Vec<Message>) {
        let batches_allowed = self
            .connection
            .version()
            .is_some_and(ProtocolVersion::accepts_batches);
        if !batches_allowed {
            let error = RequestError::BatchNotAccepted;
            self.send(error.to_response(&Value::Null)).await;
            return;
        }
        let limit = self.config.max_batch_messages;
        let mut entries = Vec::new();
        for (index, message) in messages.into_iter().enumerate() {
            match message {
                Message::Request(request) if index >= limit => {
                    let error = RequestError::BatchTooLong { limit };
                    entries.push(BatchEntry::Answered(error.to_response(&request.id)));
                }
                Message::Request(request) if request.method == "initialize" => {
                    let error = RequestError::InitializeInBatch;
                    entries.push(BatchEntry::Answered(error.to_response(&request.id)));
                }
                Message::Request(request) => entries.push(BatchEntry::Run(request)),
                Message::Invalid { id, error } => {
                    entries.push(BatchEntry::Answered(error.to_response(&id)));
                }
                Message::Notification(notification) => {
                    self.handle_notification(notification).await;
                }
                Message::ClientResponse(response) => self.connection.take_roots(&response),
            }
        }
        if entries.is_empty() {
            return;
        }
        // A batch is one unit of work: one permit; its requests run one after another, and its
        // members are not individually cancellable.
        let Ok(permit) = Arc::clone(&self.permits).acquire_owned().await else {
            return;
        };
        let dispatcher = self.dispatcher.clone();
        let connection = self.connection.clone();
        self.tasks.spawn(async move {
            let answer = dispatcher.run_batch(entries).await;
            connection.outlet.send(answer).await;
            drop(permit);
        });
    }
}

/// One member of a batch that gets an answer: already answered (invalid) or still to run.
enum BatchEntry {
    Answered(Value),
    Run(Request),
}

impl Dispatcher {
    /// The answers of a batch as one JSON array line, within the response size limit: members
    /// whose answer would pass it are answered with an error instead.
    async fn run_batch(&self, entries: Vec<BatchEntry>) -> String {
        let mut line = String::from("[");
        for entry in entries {
            let (answer, id) = match entry {
                BatchEntry::Answered(reply) => (reply.to_string(), None),
                BatchEntry::Run(request) => {
                    let id = request.id.clone();
                    (self.run(request, Cancel::never()).await, Some(id))
                }
            };
            let answer = match id {
                Some(id) if line.len() + answer.len() + 1 > self.max_response_bytes => {
                    self.too_large(line.len() + answer.len() + 1, &id)
                }
                _ => answer,
            };
            if line.len() > 1 {
                line.push(',');
            }
            line.push_str(&answer);
        }
        line.push(']');
        line
    }

    /// Runs one request through the `RpcModule` and answers with the client's id, verbatim
    /// (jsonrpsee's `Id` cannot hold negative integers). The answer is one JSON line.
    async fn run(&self, request: Request, cancel: Cancel) -> String {
        let Some(callback) = self.module.method(&request.method) else {
            return RequestError::MethodNotFound {
                method: request.method.into(),
            }
            .to_response(&request.id)
            .to_string();
        };
        let params_text = request.params.as_ref().map(Value::to_string);
        let params = Params::new(params_text.as_deref());
        let mut extensions = Extensions::new();
        extensions.insert(RequestContext { cancel });
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
                return RequestError::Subscription
                    .to_response(&request.id)
                    .to_string();
            }
        };
        let answer = with_client_id(response.into_json().get(), &request.id);
        if answer.len() > self.max_response_bytes {
            return self.too_large(answer.len(), &request.id);
        }
        answer
    }

    fn too_large(&self, bytes: usize, id: &Value) -> String {
        RequestError::ResponseTooLarge {
            bytes,
            limit: self.max_response_bytes,
        }
        .to_response(id)
        .to_string()
    }
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
