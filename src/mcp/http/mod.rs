//! Streamable HTTP: the endpoint `/mcp` beside stdio, through the same method table.
//!
//! - 2025 clients (`initialize` first): POST per message, an `Mcp-Session-Id` minted by
//!   `initialize` and required afterwards (400 without, 404 once ended), a GET stream for
//!   unsolicited notifications, DELETE to end the session.
//! - 2026-07-28 clients: POST only (GET and DELETE are 405), no session; the
//!   `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers must agree with the body
//!   (`-32020`, 400); envelope errors are 400, unknown methods 404, notifications 202.
//! - Before any work, every request passes the Host and Origin allow-lists (403) and, when
//!   set, the bearer token (401); bodies over the line limit are 413.
//! - Bounds for the process: at most [`HttpConfig::max_connections`] connections (more wait
//!   in the listen backlog), at most [`HttpConfig::max_in_flight`] requests running (more are
//!   answered 503 with `Retry-After`), a header time-out against slow requests; each response
//!   stream has its own bounded queue, so a slow reader holds only its own stream.

mod endpoint;
mod guard;
mod headers;
mod sessions;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::post;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

pub use guard::{BearerToken, Guard, MIN_TOKEN_CHARS, Refusal, TokenError};

use self::endpoint::Endpoint;
use self::sessions::ProtocolSessions;
use super::Server;
use super::connection::{Dispatcher, GraceOver};
use crate::base::pool::ClientId;

/// Configuration of `rea serve --http`.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    /// The Host and Origin allow-lists and the bearer token.
    pub guard: Guard,
    /// Most connections open at once; more wait to be accepted.
    pub max_connections: usize,
    /// Most requests running at once in the process; more are answered 503.
    pub max_in_flight: usize,
    /// Most 2025 MCP sessions live at once; an `initialize` beyond them is answered 503.
    pub max_mcp_sessions: usize,
    /// A 2025 MCP session, and a binary session, that no request used for this long ends.
    pub session_idle: Duration,
    /// A 2025 MCP session that made no request after `initialize` ends after this long (at
    /// most [`HttpConfig::session_idle`]); at [`HttpConfig::max_mcp_sessions`] the unused one
    /// idle the longest gives way to a new `initialize` at once.
    pub unused_session_idle: Duration,
    /// How long a client may take to send a request's headers.
    pub header_timeout: Duration,
    /// How long a client may take to send a request's body, counted from its headers; past
    /// it the request is answered 408 and the connection closes.
    pub body_timeout: Duration,
    /// How often an idle SSE stream sends a keep-alive comment.
    pub keep_alive: Duration,
}

impl HttpConfig {
    /// Default [`HttpConfig::max_connections`].
    pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
    /// Default [`HttpConfig::max_in_flight`].
    pub const DEFAULT_MAX_IN_FLIGHT: usize = 128;
    /// Default [`HttpConfig::session_idle`]: one hour.
    pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(3600);
    /// Default [`HttpConfig::unused_session_idle`]: 30 s.
    pub const DEFAULT_UNUSED_SESSION_IDLE: Duration = Duration::from_secs(30);
    /// Default [`HttpConfig::body_timeout`]: 30 s for the whole body.
    pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
}

impl Default for HttpConfig {
    fn default() -> HttpConfig {
        HttpConfig {
            guard: Guard::default(),
            max_connections: HttpConfig::DEFAULT_MAX_CONNECTIONS,
            max_in_flight: HttpConfig::DEFAULT_MAX_IN_FLIGHT,
            max_mcp_sessions: HttpConfig::DEFAULT_MAX_CONNECTIONS,
            session_idle: HttpConfig::DEFAULT_SESSION_IDLE,
            unused_session_idle: HttpConfig::DEFAULT_UNUSED_SESSION_IDLE,
            header_timeout: Duration::from_secs(10),
            body_timeout: HttpConfig::DEFAULT_BODY_TIMEOUT,
            keep_alive: Duration::from_secs(15),
        }
    }
}

/// Why `rea serve --http` cannot start.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// A non-loopback address without a bearer token.
    #[error(
        "refusing to serve {addr} without a bearer token: a non-loopback address needs --token-file"
    )]
    TokenRequired {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// The address cannot be bound.
    #[error("cannot listen on {addr}: {error}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        error: std::io::Error,
    },
}

/// Binds `addr` for [`Server::serve_http`], refusing a non-loopback address without a token.
pub async fn bind(addr: SocketAddr, config: &HttpConfig) -> Result<TcpListener, HttpError> {
    if !addr.ip().is_loopback() && config.guard.token.is_none() {
        return Err(HttpError::TokenRequired { addr });
    }
    TcpListener::bind(addr)
        .await
        .map_err(|error| HttpError::Bind { addr, error })
}

impl Server {
    /// Serves MCP over Streamable HTTP at `/mcp` on `listener` (see [`bind`]) until the
    /// listener fails or [`Server::shutdown`] is called. Connections are served on the
    /// current runtime; the fixed thread pools of tool calls and completion are the same as
    /// on stdio.
    ///
    /// At [`HttpConfig::max_connections`] a new connection is answered 503 with
    /// `Retry-After` and closed. At shutdown no connection is accepted any more, each open
    /// one finishes the request it serves (GET and listen streams end), requests running get
    /// [`ShellConfig::shutdown_grace`](super::ShellConfig::shutdown_grace), those still
    /// running are then answered with a `-32000` error, and the MCP sessions end.
    pub async fn serve_http(
        &self,
        listener: TcpListener,
        config: HttpConfig,
    ) -> std::io::Result<()> {
        let endpoint = self.http_endpoint(&config);
        let router = Self::router_for(Arc::clone(&endpoint), &config);
        let connections = Arc::new(Semaphore::new(config.max_connections.max(1)));
        let refusals = Arc::new(Semaphore::new(MAX_REFUSALS));
        let mut open = tokio::task::JoinSet::new();
        loop {
            let accepted = tokio::select! {
                biased;
                () = self.shutdown.stopping() => break,
                accepted = listener.accept() => accepted,
            };
            while open.try_join_next().is_some() {}
            let (stream, peer) = match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of descriptors and the like: wait a little rather than spin.
                    tracing::warn!(%error, "accepting an HTTP connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else {
                // At the cap: a status, not a silent wait. Refusals are bounded too; past
                // them the connection is just closed.
                if let Ok(refusal) = Arc::clone(&refusals).try_acquire_owned() {
                    let limit = config.max_connections;
                    tokio::spawn(async move {
                        refuse_connection(stream, limit).await;
                        drop(refusal);
                    });
                }
                continue;
            };
            // Without it, an answer on a reused connection waits for the client's delayed
            // acknowledgement (about 40 ms).
            if let Err(error) = stream.set_nodelay(true) {
                tracing::debug!(%error, "TCP_NODELAY could not be set");
            }
            let service = TowerToHyperService::new(router.clone());
            let header_timeout = config.header_timeout;
            let shutdown = self.shutdown.clone();
            // Every request of this TCP connection is one client's for the fair share of the
            // tool threads (a 2026 request carries no other identity).
            open.spawn(ClientId::serve_connection(async move {
                let connection = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(header_timeout)
                    .serve_connection(TokioIo::new(stream), service);
                tokio::pin!(connection);
                let served = tokio::select! {
                    served = connection.as_mut() => served,
                    () = shutdown.stopping() => {
                        // The request being served finishes; no other is read.
                        connection.as_mut().graceful_shutdown();
                        connection.await
                    }
                };
                if let Err(error) = served {
                    tracing::debug!(%peer, %error, "HTTP connection ended with an error");
                }
                drop(permit);
            }));
        }
        drop(listener);
        let grace = self.shell.shutdown_grace;
        tracing::info!(
            connections = open.len(),
            "stopping: no connection is accepted, requests running get the shutdown grace"
        );
        let finished =
            tokio::time::timeout(grace, async { while open.join_next().await.is_some() {} });
        if finished.await.is_err() {
            tracing::warn!("requests stopped at the end of the shutdown grace");
            endpoint.grace_over.end();
            let answered = tokio::time::timeout(STOPPED_ANSWERS, async {
                while open.join_next().await.is_some() {}
            });
            if answered.await.is_err() {
                open.abort_all();
            }
        }
        endpoint.end_all_sessions().await;
        Ok(())
    }
}

/// How long connections whose requests were stopped at the end of the shutdown grace have to
/// send those answers.
const STOPPED_ANSWERS: Duration = Duration::from_secs(1);

/// Most connections being refused at once (at the connection cap); past them a new
/// connection is closed without a word.
const MAX_REFUSALS: usize = 64;

/// How long a refused connection has to take its 503.
const REFUSAL_TIMEOUT: Duration = Duration::from_secs(1);

/// Answers a connection beyond the cap with 503 and `Retry-After`, then closes it. What the
/// client sent is read (briefly) first, so closing does not reset the answer away.
async fn refuse_connection(mut stream: tokio::net::TcpStream, limit: usize) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32000,
            "message": format!("Server busy: the {limit} HTTP connections this server holds at once are all open (--max-http-connections); connect again after Retry-After"),
        },
    })
    .to_string();
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let refuse = async {
        let mut request = [0u8; 4096];
        // The request's head, if it comes at once; the answer does not depend on it.
        let _ = tokio::time::timeout(Duration::from_millis(50), stream.read(&mut request)).await;
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await?;
        let mut rest = [0u8; 4096];
        while stream.read(&mut rest).await? > 0 {}
        Ok::<(), std::io::Error>(())
    };
    let _ = tokio::time::timeout(REFUSAL_TIMEOUT, refuse).await;
}

impl Server {
    /// The `/mcp` endpoint as a tower service, without a listener: what
    /// [`Server::serve_http`] serves on each connection. Starts the idle-session sweeper on
    /// the current runtime; it stops when the router is dropped.
    pub fn http_router(&self, config: &HttpConfig) -> Router {
        Self::router_for(self.http_endpoint(config), config)
    }

    fn http_endpoint(&self, config: &HttpConfig) -> Arc<Endpoint> {
        let endpoint = Arc::new(Endpoint {
            shared: Arc::clone(&self.shared),
            dispatcher: Dispatcher {
                module: Arc::clone(&self.module),
                max_response_bytes: self.shell.max_response_bytes,
                max_batch_messages: self.shell.max_batch_messages,
            },
            sessions: ProtocolSessions::new(config.max_mcp_sessions),
            slots: Arc::new(Semaphore::new(config.max_in_flight.max(1))),
            get_streams: Arc::new(Semaphore::new(get_stream_share(config.max_connections))),
            max_in_flight: config.max_in_flight.max(1),
            stream_queue: self.shell.output_queue,
            keep_alive: config.keep_alive,
            max_body_bytes: self.shell.max_line_bytes,
            body_timeout: config.body_timeout,
            shutdown: self.shutdown.clone(),
            grace_over: GraceOver::new(self.shell.shutdown_grace),
        });
        let unused_idle = config.unused_session_idle.min(config.session_idle);
        tokio::spawn(sweep(
            Arc::downgrade(&endpoint),
            config.session_idle,
            unused_idle,
        ));
        endpoint
    }

    fn router_for(endpoint: Arc<Endpoint>, config: &HttpConfig) -> Router {
        let guard = Arc::new(config.guard.clone());
        let max_body_bytes = endpoint.max_body_bytes;
        Router::new()
            .route(
                "/mcp",
                post(endpoint::post)
                    .get(endpoint::get)
                    .delete(endpoint::delete),
            )
            .fallback(not_found)
            .with_state(endpoint)
            .layer(DefaultBodyLimit::max(max_body_bytes))
            .layer(middleware::from_fn_with_state(guard, check_guard))
    }
}

/// The Host and Origin allow-lists and the token, before any other work.
async fn check_guard(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    // Only the origin form (`POST /mcp`) is served: an absolute-form target
    // (`POST http://evil.com/mcp`) names a host besides Host, so which one counts is unclear.
    let uri = request.uri();
    if uri.scheme().is_some() || uri.authority().is_some() {
        return endpoint::refusal(
            StatusCode::BAD_REQUEST,
            "Bad request: the request target must be the path /mcp (origin form), not an absolute URI",
        );
    }
    match guard.check(request.headers()) {
        Ok(()) => next.run(request).await,
        Err(refused) => {
            let status = match refused {
                Refusal::Token => StatusCode::UNAUTHORIZED,
                Refusal::Host | Refusal::Origin => StatusCode::FORBIDDEN,
                Refusal::DuplicateHost => StatusCode::BAD_REQUEST,
            };
            let mut response = endpoint::refusal(status, refused.message());
            if refused == Refusal::Token {
                response.headers_mut().insert(
                    axum::http::header::WWW_AUTHENTICATE,
                    axum::http::HeaderValue::from_static("Bearer"),
                );
            }
            response
        }
    }
}

/// How many GET streams may be open at once: half the connections, so streams that never
/// end cannot take every connection from the clients that send requests.
pub(crate) fn get_stream_share(max_connections: usize) -> usize {
    (max_connections / 2).max(1)
}

async fn not_found() -> Response {
    endpoint::refusal(StatusCode::NOT_FOUND, "Not found: the MCP endpoint is /mcp")
}

/// Ends idle MCP sessions and idle binary sessions, every quarter of the time-out for unused
/// MCP sessions (at most every minute), until the endpoint is gone.
async fn sweep(endpoint: std::sync::Weak<Endpoint>, idle: Duration, unused_idle: Duration) {
    let every = (unused_idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(60));
    loop {
        tokio::time::sleep(every).await;
        let Some(endpoint) = endpoint.upgrade() else {
            return;
        };
        for session in endpoint.sessions.remove_idle(idle, unused_idle) {
            tracing::info!("an idle MCP session ended");
            endpoint.end_session(&session).await;
        }
        // The session every connection starts with (`--open`) is the operator's: kept.
        if let Some(initial) = &endpoint.shared.initial {
            let _ = endpoint.shared.store.get(initial.as_str());
        }
        let ended = endpoint.shared.store.end_idle(idle);
        if !ended.is_empty() {
            tracing::info!(count = ended.len(), "idle binary sessions ended");
        }
    }
}
