//! The state handlers and the connection loop share: the server-wide [`Shared`] and the
//! per-connection [`Connection`], and what a request learns besides its params.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};

use serde_json::Value;

use super::outlet::Outlet;
use super::protocol::{Offer, ProtocolVersion};
use super::roots;
use crate::prompts::{PromptRegistry, ToolAvailability};
use crate::session::files::Confinement;
use crate::session::{Cancel, ClientSessions, Session, SessionHandle, SessionStore, SourceConfig};
use crate::tools::ToolBox;

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
            store,
            initial,
            sources,
            connections: Mutex::new(Vec::new()),
        }
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

    /// Sends `method` as a notification to every connected, initialized client.
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
        }
    }

    pub(crate) fn registry(&self) -> std::sync::RwLockReadGuard<'_, PromptRegistry> {
        self.registry.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The session a request names (`Some` handle), else `client`'s own; `None` when the named
    /// handle is not open or the client has no session.
    pub(crate) fn session_named(
        &self,
        client: &ClientSessions,
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
        Offer {
            tools: !self.tools.definitions().is_empty(),
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
    /// Whether the client declared the `roots` capability.
    client_roots: AtomicBool,
    /// Serial of the latest `roots/list` request sent (0: none yet).
    roots_serial: AtomicU64,
    pub(crate) outlet: Outlet,
    /// The binary sessions this client opened or named, and its own.
    pub(crate) sessions: ClientSessions,
}

impl Connection {
    /// A new, uninitialized connection of `shared` answering through `outlet`.
    pub(crate) fn new(shared: Arc<Shared>, outlet: Outlet) -> Connection {
        let sessions = ClientSessions::new();
        if let Some(initial) = &shared.initial {
            sessions.name(initial);
        }
        Connection {
            sessions,
            shared,
            version: Mutex::new(None),
            ready: AtomicBool::new(false),
            client_roots: AtomicBool::new(false),
            roots_serial: AtomicU64::new(0),
            outlet,
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

    /// Notes that the client declared the `roots` capability: the server asks for them.
    pub(crate) fn expect_roots(&self) {
        self.client_roots.store(true, Ordering::Release);
    }

    /// Asks the client for its roots when it declared the capability.
    pub(crate) async fn ask_for_roots(&self) {
        if self.client_roots.load(Ordering::Acquire) {
            let serial = self.roots_serial.fetch_add(1, Ordering::AcqRel) + 1;
            self.outlet.send(roots::roots_request(serial)).await;
        }
    }

    /// Takes the client's answer to the latest `roots/list` as the confinement (within the
    /// server's own roots). Answers to earlier requests, and error answers, change nothing.
    pub(crate) fn take_roots(&self, response: &Value) {
        let latest = self.roots_serial.load(Ordering::Acquire);
        if roots::answered_serial(&response["id"]) != Some(latest) || latest == 0 {
            tracing::warn!(id = %response["id"], "dropped a response to no pending request");
            return;
        }
        match roots::root_paths(response) {
            Some(paths) => {
                let confinement = self.shared.base_confinement.narrowed_to(&paths);
                tracing::info!(roots = ?confinement.roots(), "confined to the client's roots");
                self.shared.store.set_confinement(confinement);
            }
            None => tracing::warn!("the client's roots/list answer is an error or malformed"),
        }
    }

    /// Sends a notification if the client has finished initialization.
    pub(crate) fn notify(&self, method: &'static str) {
        if self.ready.load(Ordering::Acquire) {
            self.outlet.notify(method);
        }
    }
}

/// What the request handlers learn about their request besides its params.
#[derive(Clone, Debug)]
pub(crate) struct RequestContext {
    /// Set when the client cancels the request (or the connection shuts down).
    pub(crate) cancel: Cancel,
}
