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

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use jsonrpsee::RpcModule;
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinSet;

use super::connection::{Admitted, ConnectionCore, Dispatcher, GraceOver, Noted, Step};
use super::era;
use super::error::RequestError;
use super::framing::{DEFAULT_MAX_LINE_BYTES, Frame};
use super::message::{Line, Message, classify_line};
use super::outlet::Outlet;
use super::rules::{Answer, BatchEntry, refused_batch};
use super::state::{Connection, Shared};

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

/// Work that needs a running slot: one request, or a whole batch.
enum Work {
    Request(Box<Admitted>),
    Batch(Vec<BatchEntry>),
}

impl Work {
    fn is_cancelled(&self) -> bool {
        match self {
            Work::Request(admitted) => admitted.is_cancelled(),
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
    core: ConnectionCore,
    config: ShellConfig,
    permits: Arc<Semaphore>,
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
    let dispatcher = Dispatcher {
        module,
        max_response_bytes: config.max_response_bytes,
        max_batch_messages: config.max_batch_messages,
    };
    let mut served = ConnectionLoop {
        core: ConnectionCore::new(connection, dispatcher),
        config: config.clone(),
        permits: Arc::new(Semaphore::new(config.max_in_flight.max(1))),
        tasks: JoinSet::new(),
        waiting: VecDeque::new(),
        waiting_bytes: 0,
        grace_over: GraceOver::new(config.shutdown_grace),
    };
    let outlet = served.core.connection.outlet.clone();
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
        served.core.in_flight.cancel_all();
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
            served.core.in_flight.cancel_all();
            served.tasks.abort_all();
        }
    }
    // Listen streams still open end gracefully: their result, then the cancellation that
    // closes a stdio stream.
    for listen in served.core.connection.take_listens() {
        served.send(era::listen_end(&listen.id)).await;
        served.send(era::listen_cancelled(&listen.id)).await;
    }
    shared.detach(&served.core.connection);
    served
        .core
        .connection
        .outlet
        .close(config.output_flush())
        .await;
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
        self.core.connection.outlet.send(message.to_string()).await;
    }

    async fn write(&self, answer: Answer) {
        self.core.connection.outlet.send(answer.line).await;
    }

    async fn handle_line(&mut self, bytes: &[u8]) {
        match classify_line(bytes) {
            Line::Unparsable { id, error } => self.send(error.to_response(&id)).await,
            Line::Single(message) => self.handle_message(message, bytes.len()).await,
            Line::Batch(messages) => self.handle_batch(messages, bytes.len()).await,
        }
    }

    async fn handle_message(&mut self, message: Message, bytes: usize) {
        match message {
            Message::Request(request) => {
                let era = era::classify(request.params.as_ref());
                let step = self.core.request(request, era);
                self.take_step(step, bytes).await;
            }
            Message::Notification(notification) => {
                if self.core.notification(&notification).await == Noted::Cancelled {
                    self.drop_cancelled_waiting();
                }
            }
            Message::ClientResponse(response) => self.core.connection.take_response(&response),
            Message::MalformedResponse { reason } => {
                tracing::warn!(reason, "dropped a malformed response from the client");
            }
            Message::Invalid { id, error } => self.send(error.to_response(&id)).await,
        }
    }

    /// Acts on what the core decided for a request: `initialize` is answered before the
    /// next line is read (the version it settles decides how later lines are read); a
    /// request that needs no slot (`ping`) is answered at once, so a client can always tell
    /// the server is alive; any other runs at once when a slot is free and nothing waits
    /// before it, else waits on the list, else is answered that the server is busy.
    async fn take_step(&mut self, step: Step, bytes: usize) {
        match step {
            Step::Refuse { error, id } => self.send(error.to_response(&id)).await,
            Step::Answer(answer) => self.write(answer).await,
            Step::Initialize(request) => {
                let answer = self.core.initialize(request).await;
                self.write(answer).await;
            }
            Step::Listen(listen) => {
                // Acknowledged first, then kept open (it holds no request slot) until the
                // client cancels it or the input ends.
                self.send(listen.filter.acknowledgement(&listen.id)).await;
                self.core.connection.add_listen(listen);
            }
            Step::Run(admitted) if !admitted.needs_slot() => {
                let ran = admitted.run(&self.core.dispatcher, &self.grace_over).await;
                if !ran.cancelled {
                    self.write(ran.answer).await;
                }
            }
            Step::Run(admitted) => {
                if let Err(Work::Request(admitted)) =
                    self.run_or_wait(Work::Request(admitted), bytes)
                {
                    let answer = admitted.refuse(&self.busy());
                    self.write(answer).await;
                }
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
                Work::Request(admitted) => {
                    let answer = admitted.refuse(&refusal);
                    self.write(answer).await;
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
    /// answers unless a request was cancelled before it answered.
    fn spawn(&mut self, work: Work, permit: OwnedSemaphorePermit) {
        let core = self.core.clone();
        let grace_over = self.grace_over.clone();
        self.tasks.spawn(async move {
            let answer = match work {
                Work::Request(admitted) => {
                    let ran = admitted.run(&core.dispatcher, &grace_over).await;
                    (!ran.cancelled).then_some(ran.answer)
                }
                Work::Batch(entries) => Some(core.run_batch(entries, &grace_over).await),
            };
            if let Some(answer) = answer {
                core.connection.outlet.send(answer.line).await;
            }
            drop(permit);
        });
    }

    async fn handle_batch(&mut self, messages: Vec<Message>, bytes: usize) {
        let entries = match self.core.batch(messages).await {
            Ok((entries, noted)) => {
                if noted == Noted::Cancelled {
                    self.drop_cancelled_waiting();
                }
                entries
            }
            Err(error) => return self.send(error.to_response(&Value::Null)).await,
        };
        if entries.is_empty() {
            return;
        }
        // A batch is one unit of work: one slot.
        if let Err(Work::Batch(entries)) = self.run_or_wait(Work::Batch(entries), bytes) {
            let answers = refused_batch(entries, &self.busy());
            self.send(answers).await;
        }
    }
}
