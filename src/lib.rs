//! # REA guided prompts and verified completion
//!
//! REA is an MCP server for evidence-driven reverse engineering. This crate is its
//! guided-prompt and completion subsystem: six investigation workflows that tell an agent which
//! REA tools to use in which order, and `completion/complete` suggestions for their arguments
//! that are live, bounded, Unicode-correct projections of the current session.
//!
//! It ships as this library, for integrators who want the verified completion semantics, and as
//! the `rea serve` MCP server, over stdio or Streamable HTTP.
//!
//! Beside these docs, two files at the repository root hold what no single item can:
//! `docs/CONTRACT.md`, the normative contract in numbered sections (code cites it as
//! "docs/CONTRACT.md section N"), and `ARCHITECTURE.md`, the map of the modules, their
//! invariants, the path of a request and recipes for extending the crate.
//!
//! ## The main path
//!
//! ```
//! use std::collections::BTreeMap;
//! use rea::core::{complete, matches};
//! use rea::prompts::{BinarySession, PromptRegistry, ToolAvailability};
//!
//! // Completion: verbatim values, deduplicated, code-point sorted, bounded.
//! let done = complete("0x10", ["0x1000", "０ｘ１０ＡＢ", "0x2000", "0x1000"]).unwrap();
//! assert_eq!(done.values, ["0x1000", "０ｘ１０ＡＢ"]);
//! assert_eq!((done.total, done.has_more), (2, false));
//!
//! // The matching key: NFKD, full case folding, default ignorables removed, starter rule.
//! assert!(matches("f", "ﬁle") && matches("ㅎ", "한") && !matches("e", "é"));
//!
//! // A guided prompt, with its arguments confined to one single-line JSON data block.
//! let registry = PromptRegistry::with_builtin();
//! let tools = ToolAvailability::new(["open_binary", "list_documents"], BinarySession::Closed);
//! let arguments = BTreeMap::from([("feature".to_owned(), "offline search".to_owned())]);
//! let prompt = registry.render("investigate_feature", &arguments, &tools).unwrap();
//! assert_eq!(prompt.data_json(), r#"{"feature":"offline search"}"#);
//! ```
//!
//! Serving over stdio from a program of your own (the `rea serve` binary does exactly this):
//!
//! ```no_run
//! use rea::mcp::{Server, ServerConfig};
//!
//! # async fn run() -> std::io::Result<()> {
//! let server = Server::new(ServerConfig::default());
//! // Pipes and sockets on the async workers, anything else on dedicated threads; bounded
//! // queues either way (see "Execution model" below).
//! server.serve_stdio().await
//! # }
//! ```
//!
//! Serving over Streamable HTTP (`rea serve --http`): 2025 clients by `Mcp-Session-Id` and
//! 2026-07-28 clients statelessly, on one endpoint, through the same method table
//! ([`mcp::http`]):
//!
//! ```no_run
//! use rea::mcp::http::{HttpConfig, bind};
//! use rea::mcp::{Server, ServerConfig};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::new(ServerConfig::default());
//! let config = HttpConfig::default();
//! // Loopback needs no token; any other address refuses to bind without one.
//! let listener = bind("127.0.0.1:8765".parse()?, &config).await?;
//! server.serve_http(listener, config).await?;
//! # Ok(())
//! # }
//! ```
//!
//! Several binaries at once: each `open_binary` answers a session handle that every tool,
//! prompt, completion and resource URI can name ([`session::SessionStore`]; a call naming none
//! works in the session its client opened or named last):
//!
//! ```
//! use std::sync::Arc;
//! use rea::session::{SessionStore, StoreConfig};
//! use rea::tools::ToolBox;
//! use serde_json::json;
//!
//! let tools = ToolBox::with_store(Arc::new(SessionStore::new(StoreConfig::default())));
//! let noted = tools
//!     .call("register_unknown", json!({"question": "who calls main?"}).as_object().unwrap())
//!     .unwrap();
//! let session = noted.session().unwrap().to_string();
//! let listed = tools
//!     .call("list_unknowns", json!({"session": session}).as_object().unwrap())
//!     .unwrap();
//! assert_eq!(listed.structured_content().unwrap()["total"], 1);
//! ```
//!
//! ## Guarantees
//!
//! - **Bounds** ([`core::MAX_VALUE_CHARS`] and its siblings): values and candidates of at most 4,096 scalar values (longer
//!   prefixes are an error, longer candidates are skipped, never truncated); at most 10,000
//!   candidates scanned per request; procedure discovery stops at 5,000 unique addresses, asked
//!   in pages of 500; at most 100 values per result, with `total` and `hasMore`.
//! - **Matching** ([the matching key](core#the-matching-key)): `key(x) = NFKD(strip_DI(casefold(NFKD(x))))` with full C+F
//!   case folding; a prefix matches when the candidate's key extends it at a starter. ASCII
//!   takes a fast path proven equal to the general one.
//! - **Ordering**: values sort by code point (Rust's `str` order), not UTF-16 order.
//! - **Liveness**: no completion cache; every request projects the live session, and completion
//!   never changes it. Provider errors, time-outs and malformed output give an empty result.
//!   A table that never changes (a built-in provider's document names and discoveries) is
//!   answered from its [`core::PrefixIndex`], and the ledger by binary search
//!   ([`core::complete_ordered`]): the same answer as the scan, in time set by the matches.
//! - **Prompts**: deterministic text; the text outside the data block depends only on which
//!   arguments are present; no argument or suggestion grants permission.
//! - **Quoting**: an error message (a tool error, a JSON-RPC error, a prompt error) quotes at
//!   most [`QUOTED_CHARS`] (64) characters of anything a client sent, then `...`: the
//!   error fields that hold caller text are [`Quoted`], which only exists cut.
//! - **Unicode data**: see [the matching key](core#unicode-data) for the Unicode version of each backend crate; an
//!   exhaustive test compares them to ICU4X over every scalar value.
//!
//! ## Execution model
//!
//! `rea serve` stays within stated bounds whatever a client sends, cancels or fails to read:
//!
//! - **Threads**: two async workers serve stdin and stdout when they are pipes or sockets (what
//!   a client that starts the server gives it; they are made non-blocking for as long as the
//!   server serves, and their flags put back after) and every HTTP connection; a terminal or
//!   a file for stdin or stdout gets a dedicated thread for each instead; tool calls
//!   run on a fixed pool of [`mcp::TOOL_THREADS`] (4) threads, completion requests that must
//!   call a provider on [`mcp::COMPLETION_THREADS`] (2), and those provider calls on
//!   [`session::PROVIDER_THREADS`] (2), files are loaded on one [`providers::loader`] thread;
//!   pools start on first use and never grow. At most 16
//!   threads in all (checked from `/proc` by the test suite). A completion whose candidates
//!   are at hand (the session's own stores, or tables a provider holds in memory:
//!   [`session::Provider::ready_document_names`], [`session::Provider::ready_discovery`]) is
//!   answered on the async worker, without a hop ([`session::complete_argument_at_hand`]).
//! - **Requests in flight**: at most [`mcp::ShellConfig::max_in_flight`] (16) per connection,
//!   a batch counting as one; a request keeps its slot until its work has really stopped.
//!   Up to [`mcp::ShellConfig::max_waiting`] (64) more requests
//!   ([`mcp::ShellConfig::max_waiting_bytes`], 16 MiB) wait for a slot while input is read on,
//!   so cancellations and notifications are never held behind a request; a request beyond them
//!   is answered at once with `-32000` naming both limits. `ping` needs no slot.
//! - **Output**: at most [`mcp::ShellConfig::output_queue`] (16) answers wait for the client;
//!   a client that stops reading stops the server reading. No answer is longer than
//!   [`mcp::ShellConfig::max_response_bytes`] (4 MiB): a larger one becomes a `-32603` error
//!   that says to page. A batch holds at most [`mcp::ShellConfig::max_batch_messages`] (32)
//!   messages; the rest are answered with `-32600`.
//! - **Input**: lines over [`mcp::ShellConfig::max_line_bytes`] (4 MiB) are skipped without
//!   being buffered.
//! - **Memory** is bounded by what the process holds, measured with `VmHWM` by the suite: a
//!   file is recognised from its first 4 KiB before it is read whole; loads run one at a time;
//!   a catalog costs at most about 2.7 times its size while it opens and 1.5 times once open
//!   ([`providers::catalog`]); the Evidence ledger's cap counts the memory its records occupy
//!   ([`session::record_cost`]).
//! - **Providers**: a completion's provider calls are bounded by
//!   [`session::SourceConfig::provider_timeout`]; a provider whose call overran gets no new
//!   calls until that call returns (its completions answer empty at once).
//! - **Cancellation**: `notifications/cancelled` sets the request's [`session::Cancel`]; long
//!   work stops at its next check. Every change of state (opening, closing, selecting a
//!   document, registering, refining or resolving an unknown, recording Evidence) claims its
//!   commit with [`session::Cancel::commit`] under the session's lock after every check that
//!   could fail, so exactly one of the cancel and the commit wins: a request cancelled first
//!   never commits and is never answered; one that committed first is answered.
//! - **Errors never commit**: a tool call that answers `isError` left the session as it was
//!   (`open_binary` opens into a new state and swaps it in one step; its result is a summary
//!   of at most [`tools::OPEN_SUMMARY_DOCUMENTS`] documents, so it cannot be what fails).
//! - **Protocol edges**: `initialize` is accepted once and never inside a batch; before it,
//!   only `ping` runs (other methods get `-32600` saying so; unknown ones `-32601`); a request
//!   whose id is already in flight is rejected; a request whose id can be read is answered
//!   under it whatever else on the line is broken (a lone surrogate escape, invalid UTF-8, a
//!   number JSON cannot hold, nesting past the parser's limit); a client's response is taken
//!   only when it is a valid JSON-RPC response (`jsonrpc` "2.0", exactly one of `result` and
//!   `error`), and is never answered.
//! - **Two protocol eras, one connection**: a request carrying the 2026-07-28 `_meta` envelope
//!   ([`mcp::MODERN_VERSION`]) is served under that revision (no `initialize` needed,
//!   `server/discover`, `subscriptions/listen` streams of at most 64 per process, results with
//!   `resultType`); every other request under the negotiated 2025 revision. Nothing is pinned
//!   by either, and a 2026 client is never sent a request (docs/CONTRACT.md section 8c).
//! - **Messages to the client only when asked**: `notifications/message` is sent for a
//!   request only at or above the level `logging/setLevel` (2025) or the request's `_meta`
//!   (2026) set, and before that request's answer; stderr stays the operator's log.
//! - **HTTP** ([`mcp::http`]): at most [`mcp::http::HttpConfig::max_connections`] (256)
//!   connections and [`mcp::http::HttpConfig::max_in_flight`] (128) requests in flight for the
//!   whole process (one more is answered 503 with `Retry-After`); 10 s to send a request's
//!   headers; each response stream has its own queue, so a client that stops reading holds only
//!   its own request; closing a response cancels its request. Checked with 64 clients on the
//!   real server (8 threads, 9 descriptors, 91 MB peak).
//! - **Confinement follows the roots**: when the client's roots narrow so that the open
//!   binary's file lies outside them, its tools answer an error and its completions are empty
//!   until the roots include it again.
//!
//! ## Layers
//!
//! Each layer imports only its own layer and the layers below it, lowest first:
//!
//! 1. [`core`] and the `text` helpers (quoting caller text: [`Quoted`]). The core is pure: it
//!    names no `std::io`, `std::fs`, `std::time`, `std::thread`, `std::net`, `std::process`,
//!    `std::env`, `tokio`, `serde_json` or `jsonrpsee`.
//! 2. `base`: helpers with I/O and no policy (checked file opening, [`files`], [`Cancel`],
//!    per-request [`notices`], the fixed thread pools). It is private; the crate root
//!    re-exports its public parts.
//! 3. [`prompts`]: guided prompts and their registry.
//! 4. The domains beside the session, each with its invariants in its module doc:
//!    [`schemas`] (the published JSON Schemas), [`capture`] (process captures), [`inventory`]
//!    (artifact inventories), [`unknowns`] (residual unknowns), [`claims`] (the claim language
//!    of `verify_reconstruction`).
//! 5. [`session`]: the session and the [`session::Provider`] trait; it names no concrete
//!    provider.
//! 6. [`providers`]: the built-in providers, and [`providers::open_path`], which loads a file
//!    and opens it in a [`session::Session`].
//! 7. [`tools`]: the tools a client calls, over the binary sessions of a
//!    [`session::SessionStore`].
//! 8. [`resources`]: static resources and the session resource templates, read through the
//!    tools.
//! 9. [`mcp`]: the shell: one method table, one connection core that decides what each
//!    message asks of its connection, and the two transports that drive it, stdio and
//!    [`mcp::http`].
//! 10. `fuzzing`: the hidden invariant checks behind the fuzz targets and their replay tests,
//!     which may drive the whole server; then the `rea` binary.
//!
//! Within a layer, no two modules with the same parent import each other, directly or around
//! a circle, whether through the files themselves or through files below them (a module may
//! import its own children and they may import it). The test `tests/it/architecture.rs` reads
//! every file of `src/` and fails on a `use`, `crate::`, `super::` or `self::` path that breaks
//! one of these rules, on a module with children written as `name.rs` beside `name/` (the
//! crate's one convention is `name/mod.rs`), and on a citation of a document outside the
//! repository.

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod annotations;
mod base;
pub mod capture;
pub mod claims;
pub mod core;
#[doc(hidden)]
pub mod fuzzing;
pub mod inventory;
pub mod mcp;
pub mod prompts;
pub mod providers;
pub mod resources;
pub mod schemas;
pub mod session;
pub mod tools;
pub mod unknowns;

mod text;

// The crate root re-exports what an integrator reaches for first; the modules hold the rest.
pub use base::{Cancel, Cancelled, files, notices};
pub use mcp::{Server, ServerConfig};
pub use prompts::PromptRegistry;
pub use session::{Session, SessionStore, StoreConfig};
pub use text::{QUOTED_CHARS, Quoted};
pub use tools::ToolBox;
