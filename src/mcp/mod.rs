//! The MCP shell: stdio framing, JSON-RPC classification, dispatch through a jsonrpsee
//! `RpcModule`, one writer for the output.
//!
//! The shell holds no business logic: prompts come from [`crate::prompts`], completion from
//! [`crate::session`], tools from [`crate::tools`].

pub mod error;
pub mod framing;
#[doc(hidden)]
pub mod fuzzing;
mod handlers;
pub mod message;
pub mod protocol;
mod server;

use std::sync::Arc;

use tokio::io::{AsyncBufRead, AsyncWrite};

pub use error::{ErrorCode, WireError};
pub use protocol::ProtocolVersion;
pub use server::ShellConfig;

/// An MCP server: shared state plus the shell configuration.
#[derive(Debug, Clone)]
pub struct Server {
    shared: Arc<handlers::Shared>,
    config: ShellConfig,
}

impl Server {
    /// A server with `config`.
    pub fn new(config: ShellConfig) -> Server {
        Server {
            shared: Arc::new(handlers::Shared::default()),
            config,
        }
    }

    /// Serves one client over `input`/`output` until end of input.
    pub async fn serve<R, W>(&self, input: R, output: W) -> std::io::Result<()>
    where
        R: AsyncBufRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        server::serve_connection(self.shared.clone(), &self.config, input, output).await
    }
}
