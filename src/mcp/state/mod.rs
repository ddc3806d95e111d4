//! The state handlers and the connection loop share: the server-wide [`Shared`] and the
//! per-connection [`Connection`], and what a request learns besides its params.

pub mod extension;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};

use serde_json::{Map, Value};
use tokio::sync::oneshot;

use self::extension::Extension;
use super::era::{self, ListenFilter, LogLevel};
use super::handler_error::{ASK_TIMEOUT, AskError, MAX_PENDING_ASKS};
use super::message::RequestKey;
use super::outlet::Outlet;
use super::protocol::{Offer, ProtocolVersion};
use super::roots;
use crate::base::files::Confinement;
use crate::base::notices::{Notice, Severity};
use crate::base::pool::ClientId;
use crate::prompts::{PromptRegistry, ToolAvailability};
use crate::session::{Cancel, ClientHandles, Session, SessionHandle, SessionStore, SourceConfig};
use crate::tools::ToolBox;

/// The id prefix of the requests extension handlers send to the client.
const ASK_ID_PREFIX: &str = "rea-ask-";

/// Most distinct confinement notices one connection remembers having told.
const MAX_TOLD: usize = 64;

/// Most resource subscriptions one connection holds.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 256;

/// State shared by every connection of one server.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) registry: RwLock<PromptRegistry>,
    /// The open binary sessions, by handle.
    pub(crate) store: Arc<SessionStore>,
    /// The session every new connection starts with as its own (`rea serve --open`), if any.
    pub(crate) initial: Option<SessionHandle>,
    pub(crate) sources: SourceConfig,
    pub(crate) tools: ToolBox,
    /// The confinement the server started with (`--root`); client roots narrow it.
    pub(crate) base_confinement: Confinement,
    connections: Mutex<Vec<Weak<Connection>>>,
    /// `subscriptions/listen` streams open in the process (at most [`era::MAX_LISTENS`]).
    listens: AtomicUsize,
    /// The integrator's tools, prompts and resources, if any.
    extension: RwLock<Option<Arc<dyn Extension>>>,
    /// The tasks (docs/CONTRACT.md section 18), kept in the session store's durable store.
    pub(crate) tasks: Arc<super::tasks::Tasks>,
}

impl Shared {
    pub(crate) fn new(
        store: Arc<SessionStore>,
        initial: Option<SessionHandle>,
        sources: SourceConfig,
    ) -> Shared {
        Shared {
            base_confinement: store.confinement(),
            registry: RwLock::new(PromptRegistry::with_builtin()),
            tools: ToolBox::with_store(Arc::clone(&store)),
            tasks: Arc::new(super::tasks::Tasks::new(Arc::clone(store.durable()))),
            store,
            initial,
            sources,
            connections: Mutex::new(Vec::new()),
            listens: AtomicUsize::new(0),
            extension: RwLock::new(None),
        }
    }

    /// The server's extension, if it has one.
    pub(crate) fn extension(&self) -> Option<Arc<dyn Extension>> {
        self.extension
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Sets the server's extension (replacing any earlier one).
    pub(crate) fn set_extension(&self, extension: Arc<dyn Extension>) {
        *self.extension.write().unwrap_or_else(|e| e.into_inner()) = Some(extension);
    }

    pub(crate) fn attach(&self, connection: &Arc<Connection>) {
        let mut connections = self.connections.lock().unwrap_or_else(|e| e.into_inner());
        connections.retain(|c| c.strong_count() > 0);
        connections.push(Arc::downgrade(connection));
    }

    pub(crate) fn detach(&self, connection: &Arc<Connection>) {
        let mut connections = self.connections.lock().unwrap_or_else(|e| e.into_inner());
        connections
            .retain(|c| c.strong_count() > 0 && !std::ptr::eq(c.as_ptr(), Arc::as_ptr(connection)));
    }

    /// Takes one of the process's [`era::MAX_LISTENS`] listen places; `false` when all are
    /// taken.
    pub(crate) fn reserve_listen(&self) -> bool {
        self.listens
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < era::MAX_LISTENS).then_some(open + 1)
            })
            .is_ok()
    }

    /// Gives back `count` listen places.
    fn release_listens(&self, count: usize) {
        let _ = self
            .listens
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                Some(open.saturating_sub(count))
            });
    }

    /// Sends `method` as a notification to every connected, initialized 2025 client and to
    /// every listen stream that asked for it.
    pub(crate) fn broadcast(&self, method: &'static str) {
        let connections: Vec<Arc<Connection>> = self
            .connections
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        for connection in connections {
            connection.notify(method);
            connection.notify_listens(method);
        }
    }

    pub(crate) fn registry(&self) -> std::sync::RwLockReadGuard<'_, PromptRegistry> {
        self.registry.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The session a request names (`Some` handle), else `client`'s own; `None` when the named
    /// handle is not open or the client has no session.
    pub(crate) fn session_named(
        &self,
        client: &ClientHandles,
        named: Option<&str>,
    ) -> Option<Arc<Session>> {
        match named {
            Some(handle) => self.store.get(handle).ok(),
            None => self.tools.client_session(client),
        }
    }

    /// Which workflow tools a rendering for `session` may list now.
    pub(crate) fn tool_availability(&self, session: Option<&Session>) -> ToolAvailability {
        self.tools.availability_in(session)
    }

    pub(crate) fn offer(&self) -> Offer {
        let extension = self.extension();
        Offer {
            tools: !self.tools.definitions().is_empty()
                || extension.as_ref().is_some_and(|e| !e.tools().is_empty()),
            subscribe: extension.as_ref().is_some_and(|e| e.subscribe()),
        }
    }
}

/// Per-connection protocol state: the negotiated version, whether the client said it is
/// initialized, and the queue of its answers.
#[derive(Debug)]
pub(crate) struct Connection {
    pub(crate) shared: Arc<Shared>,
    version: Mutex<Option<ProtocolVersion>>,
    ready: AtomicBool,
    /// Whether the server asks this client for its roots when it declares them: over stdio
    /// the one client's roots confine the server; over HTTP they would confine every other
    /// client's paths and binaries too, so there roots come from `--root` alone.
    asks_roots: bool,
    /// Whether the client declared the `roots` capability (and is asked for them).
    client_roots: AtomicBool,
    /// Serial of the latest `roots/list` request sent (0: none yet).
    roots_serial: AtomicU64,
    /// Whether an answer to `roots/list` is awaited (from `initialize` on, for a client that
    /// declared roots); requests that touch paths wait for it (at most [`roots::ROOTS_WAIT`]).
    roots_pending: tokio::sync::watch::Sender<bool>,
    /// The confinement notices already sent to this client (each cause is told once; at
    /// most [`MAX_TOLD`], then the record starts over).
    told: Mutex<HashSet<String>>,
    pub(crate) outlet: Outlet,
    /// The binary sessions this client opened or named, and its own.
    pub(crate) sessions: ClientHandles,
    /// The threshold `logging/setLevel` set (2025 era); none: no `notifications/message`.
    log_threshold: Mutex<Option<LogLevel>>,
    /// The open `subscriptions/listen` streams of this connection (2026 era).
    listens: Mutex<Vec<Listen>>,
    /// The capabilities the client declared at `initialize` (2025 era).
    client_capabilities: Mutex<Value>,
    /// Requests to the client waiting for their answers, by id.
    asks: Mutex<HashMap<String, oneshot::Sender<Value>>>,
    /// Serial of the latest request to the client.
    ask_serial: AtomicU64,
    /// The resource URIs the client subscribed to (2025 era).
    subscriptions: Mutex<HashSet<String>>,
    /// Who the tool and completion threads are shared with: this connection, or for a 2026
    /// request over HTTP the TCP connection it came on.
    pub(crate) client: ClientId,
}

/// One open `subscriptions/listen` stream.
#[derive(Debug)]
pub(crate) struct Listen {
    /// The listen request's id, as sent (the stream's subscription id).
    pub(crate) id: Value,
    /// The id as a key.
    pub(crate) key: RequestKey,
    /// What it gets.
    pub(crate) filter: ListenFilter,
}

impl Connection {
    /// A new, uninitialized connection of `shared` answering through `outlet`.
    pub(crate) fn new(shared: Arc<Shared>, outlet: Outlet) -> Connection {
        let sessions = ClientHandles::new();
        if let Some(initial) = &shared.initial {
            sessions.name(initial);
        }
        Connection::with_sessions(shared, outlet, sessions, true)
    }

    /// A 2025 client's MCP session over HTTP: like [`Connection::new`], but completion never
    /// offers its handles (over HTTP a handle is a bearer token) and its roots are never asked
    /// for (they would confine the other clients too).
    pub(crate) fn over_http(shared: Arc<Shared>, outlet: Outlet) -> Connection {
        let sessions = ClientHandles::unlisted();
        if let Some(initial) = &shared.initial {
            sessions.name(initial);
        }
        Connection::with_sessions(shared, outlet, sessions, false)
    }

    /// One 2026 request over HTTP: no connection, so no session of its own; only what the
    /// request names.
    pub(crate) fn one_request(shared: Arc<Shared>, outlet: Outlet) -> Connection {
        let mut connection =
            Connection::with_sessions(shared, outlet, ClientHandles::unlisted(), false);
        connection.client = ClientId::of_this_connection();
        connection
    }

    fn with_sessions(
        shared: Arc<Shared>,
        outlet: Outlet,
        sessions: ClientHandles,
        asks_roots: bool,
    ) -> Connection {
        Connection {
            sessions,
            shared,
            asks_roots,
            version: Mutex::new(None),
            ready: AtomicBool::new(false),
            client_roots: AtomicBool::new(false),
            roots_serial: AtomicU64::new(0),
            roots_pending: tokio::sync::watch::Sender::new(false),
            told: Mutex::new(HashSet::new()),
            outlet,
            log_threshold: Mutex::new(None),
            listens: Mutex::new(Vec::new()),
            client_capabilities: Mutex::new(Value::Object(Map::new())),
            client: ClientId::fresh(),
            asks: Mutex::new(HashMap::new()),
            ask_serial: AtomicU64::new(0),
            subscriptions: Mutex::new(HashSet::new()),
        }
    }

    /// Notes `notifications/initialized`: notifications may be sent from now on.
    pub(crate) fn mark_ready(&self) {
        self.ready.store(true, Ordering::Release);
    }

    pub(crate) fn version(&self) -> Option<ProtocolVersion> {
        *self.version.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Settles the version once; `false` when the connection was already initialized.
    pub(crate) fn settle_version(&self, version: ProtocolVersion) -> bool {
        let mut settled = self.version.lock().unwrap_or_else(|e| e.into_inner());
        if settled.is_some() {
            return false;
        }
        *settled = Some(version);
        true
    }

    /// Notes that the client declared the `roots` capability: the server asks for them,
    /// unless this connection is one of many (HTTP). Whether it will.
    pub(crate) fn expect_roots(&self) -> bool {
        if self.asks_roots {
            self.client_roots.store(true, Ordering::Release);
            self.roots_pending.send_replace(true);
        }
        self.asks_roots
    }

    /// Asks the client for its roots when it declared the capability.
    pub(crate) async fn ask_for_roots(&self) {
        if self.client_roots.load(Ordering::Acquire) {
            let serial = self.roots_serial.fetch_add(1, Ordering::AcqRel) + 1;
            self.roots_pending.send_replace(true);
            self.outlet.send(roots::roots_request(serial)).await;
        }
    }

    /// Waits until the client has answered the latest `roots/list`, at most
    /// [`roots::ROOTS_WAIT`] (a request sent right after `notifications/initialized` would
    /// otherwise race the answer). A client that has not answered by then is not waited for
    /// again until the server asks anew.
    pub(crate) async fn settled_roots(&self) {
        let mut pending = self.roots_pending.subscribe();
        let answered = pending.wait_for(|pending| !*pending);
        if tokio::time::timeout(roots::ROOTS_WAIT, answered)
            .await
            .is_err()
        {
            tracing::warn!("the client has not answered roots/list; nothing outside is allowed");
            self.roots_pending.send_replace(false);
        }
    }

    /// Whether `notice` (a confinement notice) is new to this client; it counts as told from
    /// now on.
    fn first_telling(&self, notice: &Notice) -> bool {
        let mut told = self.told.lock().unwrap_or_else(|e| e.into_inner());
        if told.len() >= MAX_TOLD {
            told.clear();
        }
        told.insert(notice.to_string())
    }

    /// Notes the capabilities the client declared at `initialize`.
    pub(crate) fn set_client_capabilities(&self, capabilities: Value) {
        *self
            .client_capabilities
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = capabilities;
    }

    /// The capabilities the client declared at `initialize` (an empty object before).
    pub(crate) fn client_capabilities(&self) -> Value {
        self.client_capabilities
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// A new request to the client: its id and where its answer arrives; refused when
    /// [`MAX_PENDING_ASKS`] already wait.
    pub(crate) fn register_ask(&self) -> Result<(String, oneshot::Receiver<Value>), AskError> {
        let mut asks = self.asks.lock().unwrap_or_else(|e| e.into_inner());
        if asks.len() >= MAX_PENDING_ASKS {
            return Err(AskError::TooManyPending {
                limit: MAX_PENDING_ASKS,
            });
        }
        let serial = self.ask_serial.fetch_add(1, Ordering::AcqRel) + 1;
        let id = format!("{ASK_ID_PREFIX}{serial}");
        let (sender, receiver) = oneshot::channel();
        asks.insert(id.clone(), sender);
        Ok((id, receiver))
    }

    /// Forgets the request to the client `id` (answered, timed out or cancelled).
    pub(crate) fn forget_ask(&self, id: &str) {
        self.asks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
    }

    /// Routes a response the client sent: to the request to the client waiting for it, else
    /// to `roots/list` handling.
    pub(crate) fn take_response(&self, response: &Value) {
        let waiting = response["id"].as_str().and_then(|id| {
            self.asks
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(id)
        });
        match waiting {
            Some(sender) => {
                let _ = sender.send(response.clone());
            }
            None => self.take_roots(response),
        }
    }

    /// Subscribes to `uri` (2025 era); `false` when [`MAX_SUBSCRIPTIONS`] are held.
    pub(crate) fn subscribe(&self, uri: &str) -> bool {
        let mut subscriptions = self.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
        if subscriptions.len() >= MAX_SUBSCRIPTIONS && !subscriptions.contains(uri) {
            return false;
        }
        subscriptions.insert(uri.to_owned());
        true
    }

    /// Ends the subscription to `uri`, if any.
    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(uri);
    }

    /// Takes the client's answer to the latest `roots/list` as the confinement (within the
    /// server's own roots). Answers to earlier requests, and error answers, change nothing.
    pub(crate) fn take_roots(&self, response: &Value) {
        let latest = self.roots_serial.load(Ordering::Acquire);
        if roots::answered_serial(&response["id"]) != Some(latest) || latest == 0 {
            tracing::warn!(id = %response["id"], "dropped a response to no pending request");
            return;
        }
        match roots::client_roots(response) {
            Some(roots::ClientRoots::Named(paths)) => {
                let confinement = self.shared.base_confinement.narrowed_to(&paths);
                tracing::info!(roots = ?confinement.roots(), "confined to the client's roots");
                self.shared.store.set_confinement(confinement);
            }
            Some(roots::ClientRoots::Unnamed) => {
                let confinement = self.shared.base_confinement.clone();
                tracing::info!(roots = ?confinement.roots(), "the client names no roots");
                self.shared.store.set_confinement(confinement);
            }
            None => tracing::warn!("the client's roots/list answer is an error or malformed"),
        }
        self.roots_pending.send_replace(false);
    }

    /// Sends a notification if the client has finished initialization.
    pub(crate) fn notify(&self, method: &'static str) {
        if self.ready.load(Ordering::Acquire) {
            self.outlet.notify(method);
        }
    }

    /// Sends the notification `line` (its params included) if the client has finished
    /// initialization, without waiting for room in the output queue.
    pub(crate) fn notify_line(&self, line: String) {
        if self.ready.load(Ordering::Acquire) {
            self.outlet.notify_line(line);
        }
    }
}

impl Connection {
    /// This connection's identity for the tasks it creates (the per-session bound and
    /// `tasks/list`).
    pub(crate) fn task_owner(self: &Arc<Self>) -> super::tasks::Owner {
        Some(Arc::as_ptr(self) as usize)
    }

    /// The 2025 log threshold (`logging/setLevel`), if set.
    pub(crate) fn log_threshold(&self) -> Option<LogLevel> {
        *self.log_threshold.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets the 2025 log threshold.
    pub(crate) fn set_log_threshold(&self, level: LogLevel) {
        *self.log_threshold.lock().unwrap_or_else(|e| e.into_inner()) = Some(level);
    }

    fn listens(&self) -> std::sync::MutexGuard<'_, Vec<Listen>> {
        self.listens.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps `listen` open (its place was reserved with [`Shared::reserve_listen`]).
    pub(crate) fn add_listen(&self, listen: Listen) {
        self.listens().push(listen);
    }

    /// Whether a listen stream with this id is open.
    pub(crate) fn has_listen(&self, key: &RequestKey) -> bool {
        self.listens().iter().any(|listen| &listen.key == key)
    }

    /// Ends the listen stream `key`; `false` when none is open under it.
    pub(crate) fn end_listen(&self, key: &RequestKey) -> bool {
        let mut listens = self.listens();
        let before = listens.len();
        listens.retain(|listen| &listen.key != key);
        let ended = before - listens.len();
        drop(listens);
        self.shared.release_listens(ended);
        ended > 0
    }

    /// Ends every listen stream of this connection and returns them.
    pub(crate) fn take_listens(&self) -> Vec<Listen> {
        let listens = std::mem::take(&mut *self.listens());
        self.shared.release_listens(listens.len());
        listens
    }

    /// Sends `method`, tagged with the stream's id, on each listen stream that asked for it.
    pub(crate) fn notify_listens(&self, method: &'static str) {
        for listen in self.listens().iter() {
            if listen.filter.wants(method) {
                let line = era::stream_notification(method, &listen.id).to_string();
                self.outlet.notify_line(line);
            }
        }
    }
}

/// How the answer of a 2026 request is completed (`resultType`, serverInfo, caching).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ModernAnswer {
    /// The `ttlMs` and `cacheScope` of a cacheable result (`None`: not cacheable).
    pub(crate) caching: Option<era::Caching>,
}

/// What the request handlers learn about their request besides its params.
#[derive(Clone, Debug)]
pub(crate) struct RequestContext {
    /// The connection (or, for a 2026 request over HTTP, the request alone) it came on: its
    /// negotiated version and the binary sessions it opened or named.
    pub(crate) connection: Arc<Connection>,
    /// Where messages that belong to this request go before its answer (`notifications/message`
    /// and the like): the connection's output on stdio, the request's own stream over HTTP.
    pub(crate) stream: Outlet,
    /// Set when the client cancels the request (or the connection shuts down).
    pub(crate) cancel: Cancel,
    /// The level from which `notifications/message` is sent for this request: the 2025
    /// connection's threshold, or the 2026 request's `_meta` level; `None`: none is sent.
    pub(crate) log_level: Option<LogLevel>,
    /// Set for a 2026 request.
    pub(crate) modern: Option<ModernAnswer>,
    /// Set by the handler when it answered an `input_required` result (2026 era).
    pub(crate) input_required: Arc<AtomicBool>,
    /// Set by the handler when it answered a `CreateTaskResult` (2026 era: `resultType:
    /// "task"`).
    pub(crate) task_created: Arc<AtomicBool>,
}

impl RequestContext {
    /// Sends `method` with `params` to the client as a request on this request's stream
    /// (2025 era) and waits for its result, at most [`ASK_TIMEOUT`], until the request is
    /// cancelled or the connection ends.
    pub(crate) async fn ask(&self, method: &str, params: Value) -> Result<Value, AskError> {
        let connection = &self.connection;
        let (id, answer) = connection.register_ask()?;
        let line =
            serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.stream.send(line.to_string()).await;
        let waited = tokio::select! {
            answer = tokio::time::timeout(ASK_TIMEOUT, answer) => match answer {
                Err(_) => Waited::TimedOut,
                Ok(Err(_)) => Waited::Ended,
                Ok(Ok(response)) => Waited::Answer(response),
            },
            () = cancelled(self.cancel.clone()) => Waited::Ended,
        };
        connection.forget_ask(&id);
        let method = method.to_owned();
        match waited {
            Waited::TimedOut => Err(AskError::TimedOut { method }),
            Waited::Ended => Err(AskError::Ended { method }),
            Waited::Answer(mut response) => {
                if let Some(error) = response.get("error") {
                    return Err(AskError::Refused {
                        code: error["code"].as_i64().unwrap_or_default(),
                        message: error["message"].as_str().unwrap_or_default().to_owned(),
                        method,
                    });
                }
                match response.get_mut("result") {
                    Some(result) => Ok(result.take()),
                    None => Err(AskError::Ended { method }),
                }
            }
        }
    }
}

/// How a request to the client ended.
enum Waited {
    Answer(Value),
    TimedOut,
    Ended,
}

/// Resolves when `cancel` is set (polled: cancellation is rare and the wait is long).
pub(crate) async fn cancelled(cancel: Cancel) {
    while !cancel.is_cancelled() {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

impl RequestContext {
    /// A 2025 request's context on `connection`, answered on its output, without a log
    /// threshold.
    pub(crate) fn new(connection: &Arc<Connection>, cancel: Cancel) -> RequestContext {
        RequestContext {
            connection: Arc::clone(connection),
            stream: connection.outlet.clone(),
            cancel,
            log_level: None,
            modern: None,
            input_required: Arc::new(AtomicBool::new(false)),
            task_created: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Sends each of `notices` at or above this request's log level as
    /// `notifications/message` on its stream, before its answer. Without a level nothing is
    /// sent, except that a 2025 connection hears each confinement notice (a refused path, a
    /// binary outside the roots) once per cause at `warning`, level or not.
    pub(crate) async fn send_notices(&self, notices: &[Notice]) {
        for notice in notices {
            let level = match notice.severity() {
                Severity::Notice => LogLevel::Notice,
                Severity::Warning => LogLevel::Warning,
            };
            let told_once = self.modern.is_none() && notice.is_confinement();
            let threshold = match self.log_level {
                Some(threshold) => threshold,
                None if told_once => LogLevel::Warning,
                None => continue,
            };
            if level >= threshold && (!told_once || self.connection.first_telling(notice)) {
                let message = era::log_message(level, &notice.to_string());
                self.stream.send(message.to_string()).await;
            }
        }
    }
}
