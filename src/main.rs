//! The `rea` command line: `rea serve` runs the stdio MCP server; `rea complete` answers one
//! completion request against a binary or catalog and prints the MCP result.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use rea::files::{Confinement, FileError};
use rea::mcp::http::{BearerToken, Guard, HttpConfig, HttpError, TokenError};
use rea::mcp::prompt_file::{PromptFileLoadError, PromptFileState, PromptFileWatch};
use rea::mcp::{RequestError, Server, ServerConfig, ShellConfig};
use rea::providers::OpenError;
use rea::providers::external::{AdapterSpec, Adapters, AngrNotInstalled};
use rea::session::durable::{DEFAULT_MAX_STORE_MIB, DEFAULT_RETENTION_DAYS};
use rea::session::{
    Durable, DurableError, MemoryStore, PostgresOptions, PostgresStore, SessionError, SessionStore,
    SourceConfig, SqliteStore, StoreConfig, StoreError, StoreOptions,
};
use serde_json::{Map, Value, json};

/// REA: guided prompts and verified completion for evidence-driven reverse engineering.
#[derive(Debug, Parser)]
#[command(name = "rea", version, about)]
struct Cli {
    /// Log level for stderr (error, warn, info, debug, trace). Logs never go to stdout.
    #[arg(long, global = true, default_value = "warn")]
    log_level: tracing::Level,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the MCP server over stdio (newline-delimited JSON-RPC on stdin/stdout).
    Serve(ServeArgs),
    /// Open a binary (or catalog), run one completion request and print the MCP result JSON.
    Complete(CompleteArgs),
}

#[derive(Debug, Args)]
struct SessionArgs {
    /// A binary (ELF, Mach-O, PE) or a catalog JSON file to open before anything else.
    #[arg(long, value_name = "PATH")]
    open: Option<PathBuf>,

    /// Confine every path the tools touch (open_binary, inventory_artifacts, --open) to this
    /// directory and what lies below it (repeatable). Without it, any readable path may be
    /// opened.
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,

    /// Time bound of provider calls made for completion, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    provider_timeout_ms: u64,

    /// Most binary sessions open at once (each open_binary without a session argument opens
    /// one; close_binary ends one). All their Evidence ledgers share one 64 MiB budget.
    #[arg(long, value_name = "N", default_value_t = rea::session::DEFAULT_MAX_SESSIONS,
          value_parser = clap::value_parser!(usize))]
    max_sessions: usize,

    /// Declare an external provider beside `native` for every binary opened: `angr` (the
    /// reference adapter; install it first with `sh adapters/angr/install.sh`).
    #[arg(long = "provider", value_name = "NAME", value_enum)]
    providers: Vec<ExternalKind>,

    /// Most adapter processes running at once in the whole server (one per binary session).
    #[arg(long, value_name = "N", default_value_t = rea::providers::external::DEFAULT_MAX_ADAPTERS)]
    max_adapters: usize,

    /// Address-space limit of each adapter process, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 4096)]
    adapter_memory_mib: u64,

    /// Seconds after its last call that an adapter process is stopped (it starts again on
    /// the next call that needs it).
    #[arg(long, value_name = "SECS",
          default_value_t = rea::providers::external::DEFAULT_IDLE_STOP.as_secs())]
    adapter_idle_secs: u64,

    /// The angr adapter's folder (holding `rea_angr_adapter.py` and `install.sh`).
    #[arg(long, value_name = "DIR", default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/adapters/angr"))]
    angr_dir: PathBuf,

    /// The angr adapter's virtual environment; default: `.venv` in `--angr-dir`.
    #[arg(long, value_name = "DIR")]
    angr_venv: Option<PathBuf>,

    /// Where investigations are kept (sessions, binaries, Evidence, unknowns): a SQLite file,
    /// created on first use; a PostgreSQL database several `rea serve --http` instances share
    /// (`postgres://user@host:port/database`, migrated at start); or `memory` to keep nothing
    /// after the process ends. Default for
    /// `rea serve`: $XDG_DATA_HOME/rea/store.sqlite, else ~/.local/share/rea/store.sqlite; for
    /// `rea complete`: memory.
    #[arg(long, value_name = "PATH|postgres://...|memory")]
    store: Option<PathBuf>,

    /// Whether the store keeps the bytes of each opened binary (once per SHA-256), so a
    /// session resumes when its file has moved or changed; `no` keeps its path and hash only.
    #[arg(long, value_name = "yes|no", default_value = "yes")]
    store_binaries: YesNo,

    /// Approve every run_process_capture run as the operator's policy (recorded as such in
    /// each capture), for clients that cannot ask their person (no MCP elicitation). Without
    /// it, such a client's runs are refused and nothing runs.
    #[arg(long)]
    approve_captures: bool,

    /// Most MiB the store file may hold; a call that would grow it past this fails with an
    /// error naming the limit, and nothing of it is kept.
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_MAX_STORE_MIB)]
    max_store_mib: u64,

    /// Days a kept session no call changed stays in the store: at start-up an older one
    /// (that no other running rea serve holds) is removed. 0 keeps every session until
    /// close_binary.
    #[arg(long, value_name = "DAYS", default_value_t = DEFAULT_RETENTION_DAYS)]
    session_retention_days: u64,
}

/// A yes-or-no option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum YesNo {
    /// Yes.
    Yes,
    /// No.
    No,
}

/// An external provider `--provider` can declare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ExternalKind {
    /// angr 9.2.213 through `adapters/angr/`: procedures from its CFG, and `decompile`.
    Angr,
}

#[derive(Debug, Args)]
struct ServeArgs {
    #[command(flatten)]
    session: SessionArgs,

    /// Longest accepted input line in bytes; longer lines are rejected with -32600.
    #[arg(long, default_value_t = rea::mcp::DEFAULT_MAX_LINE_BYTES)]
    max_line_bytes: usize,

    /// A JSON file of extra prompts, re-read while serving; clients are notified with
    /// notifications/prompts/list_changed when the listed prompts change.
    #[arg(long, value_name = "PATH")]
    prompt_file: Option<PathBuf>,

    /// How often the prompt file is re-read, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 500)]
    prompt_poll_ms: u64,

    /// On SIGTERM or SIGINT (and at end of input), how long requests running may take to
    /// finish; those still running then are answered with an error, and the server exits 0.
    #[arg(long, value_name = "SECS", default_value_t = ShellConfig::DEFAULT_SHUTDOWN_GRACE.as_secs())]
    shutdown_grace_secs: u64,

    #[command(flatten)]
    http: HttpArgs,
}

/// Streamable HTTP instead of stdio.
#[derive(Debug, Args)]
struct HttpArgs {
    /// Serve MCP over Streamable HTTP at http://ADDR:PORT/mcp instead of stdio (port 0 picks
    /// a free one; the address is printed on stderr). A non-loopback address needs
    /// --token-file.
    #[arg(long, value_name = "ADDR:PORT")]
    http: Option<SocketAddr>,

    /// A file holding the bearer token every HTTP request must carry
    /// (Authorization: Bearer TOKEN; at least 32 printable characters).
    #[arg(long, value_name = "PATH", requires = "http")]
    token_file: Option<PathBuf>,

    /// An Origin allowed besides loopback ones, as scheme://host[:port] (repeatable).
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    allow_origin: Vec<String>,

    /// A Host name served besides localhost, 127.0.0.1 and [::1], e.g. the name a reverse
    /// proxy forwards (repeatable).
    #[arg(long, value_name = "HOST", requires = "http")]
    allow_host: Vec<String>,

    /// Most HTTP connections open at once.
    #[arg(long, value_name = "N", default_value_t = HttpConfig::DEFAULT_MAX_CONNECTIONS)]
    max_http_connections: usize,

    /// Most HTTP requests running at once; more are answered 503 with Retry-After.
    #[arg(long, value_name = "N", default_value_t = HttpConfig::DEFAULT_MAX_IN_FLIGHT)]
    max_http_in_flight: usize,

    /// Over HTTP, an MCP session or binary session unused for this many seconds ends.
    #[arg(long, value_name = "SECS", default_value_t = HttpConfig::DEFAULT_SESSION_IDLE.as_secs())]
    session_idle_secs: u64,
}

impl HttpArgs {
    fn config(&self) -> Result<HttpConfig, CliError> {
        let token = match &self.token_file {
            Some(path) => Some(BearerToken::from_file(path)?),
            None => None,
        };
        let mut hosts: Vec<String> = self
            .allow_host
            .iter()
            .map(|h| h.to_ascii_lowercase())
            .collect();
        if let Some(addr) = self.http
            && !addr.ip().is_unspecified()
        {
            let ip = match addr.ip() {
                std::net::IpAddr::V6(ip) => format!("[{ip}]"),
                std::net::IpAddr::V4(ip) => ip.to_string(),
            };
            hosts.push(ip);
        }
        Ok(HttpConfig {
            guard: Guard {
                hosts,
                origins: self
                    .allow_origin
                    .iter()
                    .map(|o| o.to_ascii_lowercase())
                    .collect(),
                token,
            },
            max_connections: self.max_http_connections.max(1),
            max_in_flight: self.max_http_in_flight.max(1),
            max_mcp_sessions: self.max_http_connections.max(1),
            session_idle: Duration::from_secs(self.session_idle_secs.max(1)),
            ..HttpConfig::default()
        })
    }
}

#[derive(Debug, Args)]
struct CompleteArgs {
    #[command(flatten)]
    session: SessionArgs,

    /// The prompt whose argument is completed (e.g. trace_crash).
    #[arg(long)]
    prompt: String,

    /// The argument to complete (e.g. procedure).
    #[arg(long)]
    argument: String,

    /// The prefix typed so far.
    #[arg(long, default_value = "")]
    value: String,

    /// Other arguments already given, as NAME=VALUE (repeatable), e.g. --context document=libc.so.6.
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_context)]
    context: Vec<(String, String)>,
}

fn parse_context(text: &str) -> Result<(String, String), ContextError> {
    text.split_once('=')
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .ok_or_else(|| ContextError {
            given: text.to_owned(),
        })
}

/// A `--context` value without `=`.
#[derive(Debug, thiserror::Error)]
#[error("expected NAME=VALUE, got {given:?}")]
struct ContextError {
    given: String,
}

/// Why a command failed; printed after `rea: ` with exit status 1.
#[derive(Debug, thiserror::Error)]
enum CliError {
    /// A `--root` cannot be used.
    #[error(transparent)]
    Roots(#[from] FileError),
    /// `--provider angr` without the adapter installed.
    #[error(transparent)]
    AngrMissing(#[from] AngrNotInstalled),
    /// The `--open` path cannot be opened.
    #[error("cannot open {}: {error}", path.display())]
    Open { path: PathBuf, error: OpenError },
    /// No session could be made (the random source failed).
    #[error(transparent)]
    Session(StoreError),
    /// The store cannot be opened or read.
    #[error(transparent)]
    Store(Box<DurableError>),
    /// A session the store keeps cannot be resumed.
    #[error("cannot resume the sessions of the store: {0}")]
    Resume(SessionError),
    /// The `--prompt-file` cannot be loaded.
    #[error(transparent)]
    PromptFile(#[from] PromptFileLoadError),
    /// The async runtime cannot start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The bearer token cannot be read or is unfit.
    #[error(transparent)]
    Token(#[from] TokenError),
    /// The HTTP endpoint cannot start.
    #[error(transparent)]
    Http(#[from] HttpError),
    /// Stdin or stdout failed while serving.
    #[error("stdio failed: {0}")]
    Stdio(std::io::Error),
    /// SIGTERM and SIGINT cannot be handled.
    #[error("cannot handle SIGTERM and SIGINT: {0}")]
    Signals(std::io::Error),
    /// The completion request was refused, as the server would refuse it on the wire.
    #[error("{error} (JSON-RPC {})", error.code().code())]
    Complete { error: RequestError },
    /// The result cannot be written.
    #[error("cannot write the result: {0}")]
    Write(std::io::Error),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(cli.log_level)
        .with_ansi(false)
        .init();
    let result = match cli.command {
        Command::Serve(args) => serve(args),
        Command::Complete(args) => complete(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("rea: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The session and server the arguments describe, with the binary opened if asked.
fn server_for(args: &SessionArgs, shell: ShellConfig) -> Result<Server, CliError> {
    server_with(args, shell, Initial::Always, StoreDefault::Memory)
}

/// The store used when `--store` is not given.
#[derive(Clone, Copy, PartialEq, Eq)]
enum StoreDefault {
    /// The platform's data directory (`rea serve`).
    DataDirectory,
    /// Memory (`rea complete`: one shot, nothing to resume).
    Memory,
}

/// `$XDG_DATA_HOME/rea/store.sqlite`, else `~/.local/share/rea/store.sqlite`.
fn data_directory_store() -> Option<PathBuf> {
    let absolute = |value: std::ffi::OsString| {
        let path = PathBuf::from(value);
        path.is_absolute().then_some(path)
    };
    let base = std::env::var_os("XDG_DATA_HOME")
        .and_then(absolute)
        .or_else(|| {
            std::env::var_os("HOME")
                .and_then(absolute)
                .map(|home| home.join(".local").join("share"))
        })?;
    Some(base.join("rea").join("store.sqlite"))
}

/// The store the arguments name.
fn durable_for(args: &SessionArgs, default: StoreDefault) -> Result<Arc<dyn Durable>, CliError> {
    let path = match (&args.store, default) {
        (Some(path), _) if path.as_os_str() == "memory" => None,
        (Some(path), _) => Some(path.clone()),
        (None, StoreDefault::Memory) => None,
        (None, StoreDefault::DataDirectory) => {
            let found = data_directory_store();
            if found.is_none() {
                tracing::warn!(
                    "neither XDG_DATA_HOME nor HOME names a folder: nothing is kept after this \
                     process (pass --store PATH to keep it)"
                );
            }
            found
        }
    };
    let Some(path) = path else {
        return Ok(Arc::new(MemoryStore::new()));
    };
    if let Some(url) = path
        .to_str()
        .filter(|text| text.starts_with("postgres://") || text.starts_with("postgresql://"))
    {
        let options = PostgresOptions {
            keep_binaries: args.store_binaries == YesNo::Yes,
            retention_days: Some(args.session_retention_days).filter(|days| *days > 0),
        };
        let store =
            PostgresStore::open(url, options).map_err(|error| CliError::Store(Box::new(error)))?;
        return Ok(Arc::new(store));
    }
    let options = StoreOptions {
        max_mib: args.max_store_mib.max(1),
        keep_binaries: args.store_binaries == YesNo::Yes,
        retention_days: Some(args.session_retention_days).filter(|days| *days > 0),
    };
    let store =
        SqliteStore::open(&path, options).map_err(|error| CliError::Store(Box::new(error)))?;
    Ok(Arc::new(store))
}

/// Whether the server starts with a session every connection uses as its own.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Initial {
    /// Always (stdio: one client per process).
    Always,
    /// Only when `--open` opens something in it (HTTP: clients must not share a session by
    /// default).
    WhenOpened,
}

fn server_with(
    args: &SessionArgs,
    shell: ShellConfig,
    initial: Initial,
    store_default: StoreDefault,
) -> Result<Server, CliError> {
    let config = ServerConfig {
        shell,
        sources: SourceConfig {
            provider_timeout: Duration::from_millis(args.provider_timeout_ms),
        },
        sessions: StoreConfig {
            max_sessions: args.max_sessions.max(1),
            // Over HTTP the clients share one ledger budget: each session a quarter of it.
            ledger_share_bytes: matches!(initial, Initial::WhenOpened)
                .then_some(rea::session::MAX_LEDGER_BYTES / 4),
            capture_approval: if args.approve_captures {
                rea::capture::CaptureApproval::Operator
            } else {
                rea::capture::CaptureApproval::Person
            },
            ..StoreConfig::default()
        },
    };
    let durable = durable_for(args, store_default)?;
    let store = Arc::new(SessionStore::with_durable(config.sessions.clone(), durable));
    if !args.roots.is_empty() {
        store.set_confinement(Confinement::to_roots(&args.roots)?);
    }
    if let Some(adapters) = adapters_for(args)? {
        store.set_companions(Some(Arc::new(adapters)));
    }
    rea::providers::resume(&store).map_err(|error| match error {
        SessionError::Store(error) => CliError::Store(error),
        error => CliError::Resume(error),
    })?;
    // `--open` of the file an open session of the store serves resumes that session.
    if let Some(path) = &args.open
        && let Ok((origin, sha256)) = rea::providers::identify(path, &store.confinement())
        && let Some(handle) = store.find_file(&origin, &sha256)
    {
        return Ok(Server::with_store(config, store, Some(handle)));
    }
    // The session every connection starts with as its own; `--open` opens in it.
    let session = store.prepare().map_err(CliError::Session)?;
    if let Some(path) = &args.open {
        rea::providers::open_path(&session, path).map_err(|error| CliError::Open {
            path: path.clone(),
            error,
        })?;
    }
    if initial == Initial::WhenOpened && args.open.is_none() {
        return Ok(Server::with_store(config, store, None));
    }
    match store.admit(Arc::clone(&session)) {
        Ok(initial) => Ok(Server::with_store(config, store, Some(initial))),
        // Every place is taken by a resumed session: connections name one, or close one.
        Err(StoreError::TooMany { .. }) if args.open.is_none() => {
            Ok(Server::with_store(config, store, None))
        }
        Err(error) => {
            session.discard();
            Err(CliError::Session(error))
        }
    }
}

/// The adapters `--provider` asks for, checked to be installed.
fn adapters_for(args: &SessionArgs) -> Result<Option<Adapters>, CliError> {
    if args.providers.is_empty() {
        return Ok(None);
    }
    let mut specs = Vec::new();
    for kind in &args.providers {
        let spec = match kind {
            ExternalKind::Angr => {
                let venv = args
                    .angr_venv
                    .clone()
                    .unwrap_or_else(|| args.angr_dir.join(".venv"));
                AdapterSpec::angr(&args.angr_dir, &venv)?
            }
        };
        if !specs.iter().any(|s: &AdapterSpec| s.id == spec.id) {
            let mut spec = spec;
            spec.limits.memory_bytes = args.adapter_memory_mib.saturating_mul(1 << 20);
            specs.push(spec);
        }
    }
    // The private folders that killed servers of this user left behind.
    rea::providers::external::remove_stale_folders();
    Ok(Some(
        Adapters::new(specs, args.max_adapters)
            .with_idle_stop(Duration::from_secs(args.adapter_idle_secs)),
    ))
}

fn serve(args: ServeArgs) -> Result<(), CliError> {
    // The capture work folders that killed servers of this user left behind.
    rea::capture::sandbox::remove_stale_work_folders();
    let shell = ShellConfig {
        max_line_bytes: args.max_line_bytes,
        shutdown_grace: Duration::from_secs(args.shutdown_grace_secs),
        ..ShellConfig::default()
    };
    let initial = match args.http.http {
        Some(_) => Initial::WhenOpened,
        None => Initial::Always,
    };
    let server = server_with(&args.session, shell, initial, StoreDefault::DataDirectory)?;
    let http = match args.http.http {
        Some(addr) => Some((addr, args.http.config()?)),
        None => None,
    };
    let mut prompt_file = PromptFileState::default();
    if let Some(path) = &args.prompt_file {
        prompt_file.refresh(&server, path)?;
    }
    // Two async workers suffice: blocking work runs on the server's own fixed pools, and stdin
    // and stdout are polled (or, for a terminal or a file, have dedicated threads), so tokio's
    // blocking pool is kept small.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(2)
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    let result = runtime.block_on(async {
        stop_on_signals(server.clone())?;
        if let Some(path) = args.prompt_file {
            let watch = PromptFileWatch {
                path,
                interval: Duration::from_millis(args.prompt_poll_ms.max(10)),
            };
            tokio::spawn(rea::mcp::prompt_file::watch(
                server.clone(),
                watch,
                prompt_file,
            ));
        }
        if let Some((addr, config)) = http {
            let listener = rea::mcp::http::bind(addr, &config).await?;
            let bound = listener.local_addr().map_err(CliError::Stdio)?;
            eprintln!("rea: serving MCP over Streamable HTTP at http://{bound}/mcp");
            return server
                .serve_http(listener, config)
                .await
                .map_err(CliError::Stdio);
        }
        // The connection loop runs on a worker, not on this thread: the requests it spawns
        // then start on the same worker without a cross-thread wake-up.
        let connection = server.clone();
        match tokio::spawn(async move { connection.serve_stdio().await }).await {
            Ok(served) => served.map_err(CliError::Stdio),
            Err(join) => Err(CliError::Stdio(std::io::Error::other(join))),
        }
    });
    // Blocking provider calls that overran the shutdown grace must not hold the process.
    runtime.shutdown_timeout(Duration::from_millis(100));
    result
}

/// SIGTERM (systemd, container runtimes) and SIGINT (Ctrl-C) stop the server gracefully
/// ([`Server::shutdown`]): no new work, the grace for what runs, exit 0.
fn stop_on_signals(server: Server) -> Result<(), CliError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate()).map_err(CliError::Signals)?;
    let mut interrupt = signal(SignalKind::interrupt()).map_err(CliError::Signals)?;
    tokio::spawn(async move {
        let name = tokio::select! {
            _ = terminate.recv() => "SIGTERM",
            _ = interrupt.recv() => "SIGINT",
        };
        tracing::info!(signal = name, "stopping");
        server.shutdown();
    });
    Ok(())
}

fn complete(args: CompleteArgs) -> Result<(), CliError> {
    let server = server_for(&args.session, ShellConfig::default())?;
    let context: Map<String, Value> = args
        .context
        .into_iter()
        .map(|(name, value)| (name, Value::String(value)))
        .collect();
    let params = json!({
        "ref": { "type": "ref/prompt", "name": args.prompt },
        "argument": { "name": args.argument, "value": args.value },
        "context": { "arguments": context },
    });
    let result = server
        .complete(&params)
        .map_err(|error| CliError::Complete { error })?;
    let text = serde_json::to_string_pretty(&result).unwrap_or_default();
    let mut stdout = std::io::stdout().lock();
    match writeln!(stdout, "{text}") {
        // A reader that stopped early (`| head`) is not a failure.
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError::Write(error)),
        _ => Ok(()),
    }
}
