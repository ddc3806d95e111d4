//! The rmcp peer: the official Rust MCP SDK serving the Document completion of the e2e benches.
//!
//! It reads a rea catalog (`--catalog PATH`, the file `benches/e2e_stdio.rs` writes), keeps the
//! documents' names sorted by code point without duplicates, and precomputes each name's
//! matching key once at start. `completion/complete` for the `document` argument of
//! `investigate_feature` scans those keys for the prefix's key and answers at most 100 values
//! (already in code-point order, since the table is sorted) with `total` and `hasMore`; any
//! other reference or argument gets an empty completion.
//!
//! The key is `lowercase(NFKD(x))` and a match is a plain `starts_with` on it: looser than
//! rea's key (no full case folding, no removal of default ignorables, no starter-boundary
//! rule, no scan bound), so it does at most as much work per candidate as rea.
//!
//! Modes:
//! - `--stdio` (the default): newline-delimited JSON-RPC on stdin/stdout through
//!   `rmcp::transport::stdio_pipes` (the SDK's non-blocking pipe transport).
//! - `--http ADDR:PORT`: `StreamableHttpService` under `/mcp` on axum 0.8, stateless (no
//!   `Mcp-Session-Id`; every POST is served on its own, which is rmcp's fastest path) with JSON
//!   responses (`json_response`), and TCP_NODELAY on every accepted connection. With `--sse`
//!   it answers each POST with an SSE stream instead (rmcp's default), still stateless.

use std::sync::Arc;

use axum::serve::ListenerExt;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, Implementation, InitializeResult,
    Reference, ServerCapabilities,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use unicode_normalization::UnicodeNormalization;

/// The prompt and argument the peer completes.
const PROMPT: &str = "investigate_feature";
const ARGUMENT: &str = "document";
/// The most values one completion returns (the MCP limit).
const MAX_VALUES: usize = 100;

/// The peer's matching key.
fn key(x: &str) -> String {
    x.nfkd().collect::<String>().to_lowercase()
}

/// The document names, sorted and deduplicated, with their keys.
struct Table {
    names: Vec<String>,
    keys: Vec<String>,
}

impl Table {
    fn new(mut names: Vec<String>) -> Table {
        names.sort_unstable();
        names.dedup();
        let keys = names.iter().map(|name| key(name)).collect();
        Table { names, keys }
    }

    fn complete(&self, prefix: &str) -> CompletionInfo {
        let prefix = key(prefix);
        let mut values = Vec::new();
        let mut total = 0usize;
        for (name, candidate) in self.names.iter().zip(&self.keys) {
            if candidate.starts_with(&prefix) {
                if values.len() < MAX_VALUES {
                    values.push(name.clone());
                }
                total += 1;
            }
        }
        CompletionInfo::with_pagination(
            values,
            Some(u32::try_from(total).unwrap_or(u32::MAX)),
            total > MAX_VALUES,
        )
        .expect("at most 100 values")
    }
}

#[derive(Clone)]
struct Peer {
    table: Arc<Table>,
}

impl ServerHandler for Peer {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_completions()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("rea-rmcp-peer", "0.0.0"))
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let ours = matches!(&request.r#ref, Reference::Prompt(prompt) if prompt.name == PROMPT)
            && request.argument.name == ARGUMENT;
        let completion = if ours {
            self.table.complete(&request.argument.value)
        } else {
            CompletionInfo::default()
        };
        Ok(CompleteResult::new(completion))
    }
}

/// The document names of a rea catalog.
fn catalog_names(path: &str) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| {
        eprintln!("rea-rmcp-peer: cannot read {path}: {error}");
        std::process::exit(2)
    });
    let catalog: Value = serde_json::from_str(&text).unwrap_or_else(|error| {
        eprintln!("rea-rmcp-peer: {path} is not JSON: {error}");
        std::process::exit(2)
    });
    catalog["documents"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|document| document["name"].as_str().map(str::to_owned))
        .collect()
}

fn usage() -> ! {
    eprintln!("usage: rea-rmcp-peer --catalog PATH [--stdio | --http ADDR:PORT [--sse]]");
    std::process::exit(2)
}

#[tokio::main]
async fn main() {
    let mut catalog = None;
    let mut http = None;
    let mut json_response = true;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--catalog" => catalog = Some(args.next().unwrap_or_else(|| usage())),
            "--http" => http = Some(args.next().unwrap_or_else(|| usage())),
            "--stdio" => http = None,
            "--sse" => json_response = false,
            _ => usage(),
        }
    }
    let Some(catalog) = catalog else { usage() };
    let peer = Peer {
        table: Arc::new(Table::new(catalog_names(&catalog))),
    };
    match http {
        None => {
            let running = peer
                .serve(rmcp::transport::stdio_pipes())
                .await
                .unwrap_or_else(|error| {
                    eprintln!("rea-rmcp-peer: stdio: {error}");
                    std::process::exit(1)
                });
            let _ = running.waiting().await;
        }
        Some(address) => {
            let config = StreamableHttpServerConfig::default()
                .with_legacy_session_mode(false)
                .with_json_response(json_response);
            let service = StreamableHttpService::new(
                move || Ok(peer.clone()),
                Arc::new(NeverSessionManager::default()),
                config,
            );
            let router = axum::Router::new().nest_service("/mcp", service);
            let listener = tokio::net::TcpListener::bind(&address)
                .await
                .unwrap_or_else(|error| {
                    eprintln!("rea-rmcp-peer: cannot bind {address}: {error}");
                    std::process::exit(1)
                })
                .tap_io(|stream| {
                    let _ = stream.set_nodelay(true);
                });
            axum::serve(listener, router)
                .await
                .expect("the server runs");
        }
    }
}
