//! The MCP shell: JSON-RPC classification, dispatch through one jsonrpsee `RpcModule` per
//! server (each request carries its own context: its connection, its era, where its messages
//! go), and two transports: stdio (framing, one writer for the output) and [`http`].
//!
//! The shell holds no business logic: prompts come from [`crate::prompts`], completion from
//! [`crate::session`], tools from [`crate::tools`].

mod approval;
mod connection;
pub(crate) mod era;
mod error;
mod framing;
mod handler_error;
mod handlers;
pub mod http;
pub(crate) mod message;
mod method;
mod outlet;
mod params;
pub mod prompt_file;
pub(crate) mod protocol;
mod roots;
pub(crate) mod rules;
pub mod sealed;
mod server;
mod state;
mod stdio;
pub mod tasks;

use std::sync::Arc;

use tokio::io::{AsyncBufRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot};

use self::framing::{BlockingLineReader, Frame, LineReader};

pub use era::{Era, LogLevel};
pub use error::{ErrorCode, RequestError};
pub use framing::DEFAULT_MAX_LINE_BYTES;
pub use handlers::{COMPLETION_THREADS, TOOL_THREADS};
pub use protocol::{MODERN_VERSION, ProtocolVersion};
pub use server::ShellConfig;
pub use state::extension;
pub use state::extension::{
    AskError, Extension, ExtensionContext, ExtensionError, Handled, ListKind, Reply,
};

use crate::prompts::{DefinitionError, PromptDefinition, RegistryChange};
use crate::session::{
    ClientHandles, Session, SessionHandle, SessionStore, SourceConfig, StoreConfig,
};

/// Configuration of a [`Server`].
#[derive(Clone, Debug, Default)]
pub struct ServerConfig {
    /// Framing and shutdown.
    pub shell: ShellConfig,
    /// How completion calls providers (the time bound).
    pub sources: SourceConfig,
    /// How many binary sessions may be open, and their one Evidence budget.
    pub sessions: StoreConfig,
}

/// An MCP server: the prompt registry, the session, and the shell configuration. Cloning
/// gives another handle on the same server (to register prompts while it serves).
#[derive(Debug, Clone)]
pub struct Server {
    shared: Arc<state::Shared>,
    /// The one method table every connection and transport dispatches through.
    module: Arc<jsonrpsee::RpcModule<Arc<state::Shared>>>,
    shell: ShellConfig,
    /// The stop signal every transport of this server watches ([`Server::shutdown`]).
    shutdown: server::Shutdown,
}

impl Server {
    /// A server with the built-in prompts and a new, empty session.
    pub fn new(config: ServerConfig) -> Server {
        let store = Arc::new(SessionStore::new(config.sessions.clone()));
        // Only the random source can fail here: then connections make a session when needed.
        let initial = store.create().ok().map(|(handle, _)| handle);
        Server::with_store(config, store, initial)
    }

    /// A server with the built-in prompts whose connections start with `session` as their
    /// own (a request naming no session works in it); more sessions open beside it.
    pub fn with_session(config: ServerConfig, session: Arc<Session>) -> Server {
        let store = Arc::new(SessionStore::new(config.sessions.clone()));
        store.set_confinement(session.confinement());
        // A fresh store has room, so only the random source can fail: then connections start
        // without a session and make one when they need it.
        let initial = store.admit(Arc::clone(&session)).ok();
        Server::with_store(config, store, initial)
    }

    /// A server over the sessions of `store`, whose connections start with `initial` (if any)
    /// as their own session.
    pub fn with_store(
        config: ServerConfig,
        store: Arc<SessionStore>,
        initial: Option<SessionHandle>,
    ) -> Server {
        let shared = Arc::new(state::Shared::new(store, initial, config.sources));
        Server {
            module: Arc::new(handlers::module(Arc::clone(&shared))),
            shared,
            shell: config.shell,
            shutdown: server::Shutdown::default(),
        }
    }

    /// Stops serving, as `rea serve` does on SIGTERM and SIGINT: stdio stops reading and
    /// HTTP stops accepting connections and requests; requests running get
    /// [`ShellConfig::shutdown_grace`] to finish, and those still running then (or waiting
    /// for a slot now) are answered with a `-32000` error saying the server stopped them.
    /// Then [`Server::serve`], [`Server::serve_stdio`] and [`Server::serve_http`] return
    /// `Ok`. Every clone of this server stops.
    pub fn shutdown(&self) {
        self.shutdown.begin();
    }

    /// This server with `extension`'s tools, prompts and resources served beside the
    /// built-in ones (see [`extension`]); it replaces any extension set before.
    pub fn with_extension(mut self, extension: Arc<dyn Extension>) -> Server {
        self.shared.set_extension(extension);
        // The method table depends on the catalog (tools methods exist only with tools).
        self.module = Arc::new(handlers::module(Arc::clone(&self.shared)));
        self
    }

    /// The session connections start with, while it is open.
    pub fn session(&self) -> Option<Arc<Session>> {
        let initial = self.shared.initial.as_ref()?;
        self.shared.store.get(initial.as_str()).ok()
    }

    /// The open binary sessions.
    pub fn store(&self) -> &Arc<SessionStore> {
        &self.shared.store
    }

    /// Registers or updates a prompt. When the listed catalog changed, every connected,
    /// initialized client receives `notifications/prompts/list_changed`.
    pub fn register_prompt(
        &self,
        definition: PromptDefinition,
    ) -> Result<RegistryChange, DefinitionError> {
        let change = self
            .shared
            .registry
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .register(definition)?;
        if change.catalog_changed() {
            self.shared.broadcast("notifications/prompts/list_changed");
        }
        Ok(change)
    }

    /// Removes a prompt; clients are notified when one was removed.
    pub fn remove_prompt(&self, name: &str) -> Option<PromptDefinition> {
        let removed = self
            .shared
            .registry
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
        if removed.is_some() {
            self.shared.broadcast("notifications/prompts/list_changed");
        }
        removed
    }

    /// Replaces the prompts a source (such as a prompt file) owns: `previous` names what the
    /// source registered last time, `definitions` what it holds now; prompts that left the
    /// source are restored to the built-in of the same name or removed (see
    /// [`PromptRegistry::sync_source`](crate::prompts::PromptRegistry::sync_source)). Clients
    /// get one `notifications/prompts/list_changed` when anything changed; returns whether it
    /// did.
    pub fn sync_prompts(
        &self,
        previous: &[String],
        definitions: &[PromptDefinition],
    ) -> Result<bool, DefinitionError> {
        let changed = self
            .shared
            .registry
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .sync_source(previous, definitions)?;
        if changed {
            self.shared.broadcast("notifications/prompts/list_changed");
        }
        Ok(changed)
    }

    /// Answers one `completion/complete` request (its `params` object) exactly as the server
    /// would on the wire; used by `rea complete`.
    pub fn complete(&self, params: &serde_json::Value) -> Result<serde_json::Value, RequestError> {
        match params {
            serde_json::Value::Object(params) => {
                // As a client whose own session is the one connections start with.
                let client = ClientHandles::new();
                if let Some(initial) = &self.shared.initial {
                    client.name(initial);
                }
                handlers::CompletionRequest::from_object(&self.shared, params)
                    .map(|request| request.answer(&self.shared, &client).into())
            }
            _ => Err(RequestError::ParamsNotObject {
                method: "completion/complete",
            }),
        }
    }

    /// Serves one client over `input`/`output` until end of input. Reading and writing run
    /// as parts of this future and one spawned writer task; use [`Server::serve_stdio`] for the
    /// process's own stdin and stdout.
    pub async fn serve<R, W>(&self, input: R, output: W) -> std::io::Result<()>
    where
        R: AsyncBufRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (frames, received) = mpsc::channel(1);
        let (outlet, drain) = outlet::outlet(self.shell.output_queue);
        let writer = tokio::spawn(drain.write_to(output));
        let mut reader = LineReader::new(input, self.shell.max_line_bytes);
        let read = async move {
            loop {
                let frame = reader.next_frame().await.transpose();
                let last = !matches!(frame, Some(Ok(_)));
                if let Some(frame) = frame
                    && frames.send(frame).await.is_err()
                {
                    return;
                }
                if last {
                    return;
                }
            }
        };
        // A stop ends the reading at once, whether or not a line is coming.
        let read = async {
            tokio::select! {
                () = read => {}
                () = self.shutdown.stopping() => {}
            }
        };
        let serve = server::serve_frames(
            self.shared.clone(),
            Arc::clone(&self.module),
            &self.shell,
            received,
            outlet,
            &self.shutdown,
        );
        let ((), served) = tokio::join!(read, serve);
        let written = tokio::time::timeout(self.shell.output_flush(), writer).await;
        served?;
        match written {
            Ok(Ok(result)) => result,
            Ok(Err(join)) => Err(std::io::Error::other(join)),
            Err(_) => Err(std::io::Error::other(
                "the output could not be written before shutdown",
            )),
        }
    }

    /// Serves one client over the process's stdin and stdout until end of input.
    ///
    /// When both are pipes or sockets (what a client that starts the server gives it), they
    /// are made non-blocking and served by [`Server::serve`] on the runtime's workers, so a
    /// request is read, answered and written without waking another thread. Otherwise (a
    /// terminal, a file) stdin and stdout each get a dedicated thread (never tokio's blocking
    /// pool, which other work could fill), connected to the connection loop by bounded
    /// queues. Either way the reader holds at most one frame beyond the one being handled,
    /// and the writer at most [`ShellConfig::output_queue`] lines.
    ///
    /// Run it on a runtime with its I/O and time drivers enabled (`enable_all`, which
    /// `#[tokio::main]` gives).
    pub async fn serve_stdio(&self) -> std::io::Result<()> {
        if let (Some(input), Some(output)) = (stdio::PolledFd::stdin(), stdio::PolledFd::stdout()) {
            let output = tokio::io::BufWriter::new(output);
            return self.serve(tokio::io::BufReader::new(input), output).await;
        }
        self.serve_stdio_on_threads().await
    }

    /// [`Server::serve_stdio`] with a dedicated thread for each of stdin and stdout.
    async fn serve_stdio_on_threads(&self) -> std::io::Result<()> {
        let (frames, received) = mpsc::channel::<std::io::Result<Frame>>(1);
        let (outlet, drain) = outlet::outlet(self.shell.output_queue);
        let max_line_bytes = self.shell.max_line_bytes;
        std::thread::Builder::new()
            .name("rea-stdin".to_owned())
            .spawn(move || {
                let mut reader = BlockingLineReader::new(std::io::stdin().lock(), max_line_bytes);
                while let Some(frame) = reader.next_frame().transpose() {
                    let last = frame.is_err();
                    if frames.blocking_send(frame).is_err() || last {
                        return;
                    }
                }
            })?;
        let (written, finished) = oneshot::channel();
        std::thread::Builder::new()
            .name("rea-stdout".to_owned())
            .spawn(move || {
                let stdout = std::io::BufWriter::new(std::io::stdout().lock());
                let _ = written.send(drain.write_blocking(stdout));
            })?;
        let served = server::serve_frames(
            self.shared.clone(),
            Arc::clone(&self.module),
            &self.shell,
            received,
            outlet,
            &self.shutdown,
        )
        .await;
        let written = tokio::time::timeout(self.shell.output_flush(), finished).await;
        served?;
        match written {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(std::io::Error::other("the stdout thread stopped")),
            Err(_) => Err(std::io::Error::other(
                "stdout could not be written before shutdown",
            )),
        }
    }
}
