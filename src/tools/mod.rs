//! The tools of docs/CONTRACT.md section 11: definitions for `tools/list`, and [`ToolBox::call`]
//! for `tools/call`, over one [`Session`](crate::session::Session).
//!
//! This layer knows nothing about JSON-RPC. [`ToolBox::call`] returns `Err` only for an
//! unknown tool name ([`UnknownTool`]; the mcp layer answers `-32602`). Every other failure
//! (arguments that do not fit the input schema, no binary open, an unknown provider or
//! document, an operation the provider does not support, an ambiguous procedure name, a read
//! over 4,096 bytes, a provider error, ...) is a [`ToolOutcome`] with `isError: true` whose
//! text names what is wrong (the argument, provider, document or candidates).
//!
//! ```
//! use std::sync::Arc;
//! use rea::providers::catalog::CatalogProvider;
//! use rea::session::Session;
//! use rea::tools::ToolBox;
//! use serde_json::{Map, json};
//!
//! let catalog = CatalogProvider::from_json(br#"{"schema": "rea.catalog", "version": 1,
//!     "documents": [{"name": "app", "procedures": [{"address": "0x1000", "name": "main"}]}]}"#)
//!     .unwrap();
//! let session = Arc::new(Session::new());
//! session.open_providers("app.json", vec![Arc::new(catalog)]).unwrap();
//! let tools = ToolBox::new(Arc::clone(&session));
//!
//! let arguments = json!({"procedure": "main"}).as_object().cloned().unwrap();
//! let outcome = tools.call("procedure_info", &arguments).unwrap();
//! assert!(!outcome.is_error());
//! let result = outcome.structured_content().unwrap();
//! assert_eq!(result["address"], "0x1000");
//! // The call was recorded as Evidence, and the result cites it.
//! let id = outcome.evidence_id().unwrap();
//! assert_eq!(session.evidence_ids(), [id]);
//!
//! // Bad arguments are error results naming the field, not `Err`.
//! let outcome = tools.call("read_bytes", &Map::new()).unwrap();
//! assert!(outcome.is_error());
//! assert_eq!(outcome.text(), r#"read_bytes needs the argument "address""#);
//! assert!(tools.call("no_such_tool", &Map::new()).is_err());
//! ```
//!
//! # The catalog
//!
//! The tools, each with its title, description, input schema, output schema and annotations,
//! are what `tools/list` answers; the file `snapshots/tools_catalog__definitions.snap` holds
//! that answer (in [`ToolBox::definitions`] order) and is the catalog to read. *Observation*
//! tools append one Evidence record per successful call (operation = tool name, the arguments
//! as given, the result, provider, document) and return its ID as `evidence_id`; *session
//! changes* and *reads* append nothing (see [`ToolKind`]). A tool backed by a provider
//! operation is offered in guided prompts only when the current provider supports it
//! ([`ToolBox::availability`]).
//!
//! **Bounds.** A successful result whose JSON would be over [`MAX_RESULT_BYTES`] (1 MiB,
//! counting the structured content and its JSON text) is an error result naming the limit and
//! saying how to page; nothing is recorded. Evidence is bounded by the ledger
//! ([`crate::session::MAX_LEDGER_BYTES`], [`crate::session::MAX_RECORD_BYTES`],
//! [`crate::session::MAX_JSON_DEPTH`]). Every path a tool opens is checked as described in
//! [`crate::base::files`] and confined by the session's
//! [`Confinement`](crate::base::files::Confinement). [`ToolBox::call_cancellable`] stops an
//! inventory walk when its [`Cancel`](crate::session::Cancel) is set and then records nothing.
//!
//! Why this split: an observation is a fact about the open binary that a provider reported,
//! which is what Evidence is for; `list_providers` and `current_document` describe the
//! server's own state, and the ledger tools read Evidence (recording those reads would only
//! grow the ledger with copies of itself). Opening, closing and selecting change the session;
//! opening and closing discard the ledger, so they are marked destructive.
//!
//! Every provider-backed tool accepts `provider` (default: the current provider) and, except
//! `list_documents`, `document` (default: the current document). A `procedure` argument is an
//! address (`0x` + lowercase hex) or the display or raw name of exactly one procedure; an
//! ambiguous name is an error listing the candidate addresses.
//!
//! # Results
//!
//! A successful [`ToolOutcome`] carries the result object as `structuredContent` and as compact
//! JSON text; each definition's `outputSchema` describes it exactly (every listed field is
//! always present; absent values are `null`). The Evidence `result` of an observation is that
//! object without `evidence_id`. These shapes are a contract: the `verify_reconstruction`
//! claim evaluator reads `procedure_info`, `search_procedures`, `list_procedures`,
//! `read_bytes`, `callees` and `disassemble` results back from Evidence.
//!
//! # Availability
//!
//! [`ToolBox::availability`] is what the prompts layer needs to render workflows: tools not
//! backed by a provider operation are always offered; a provider-backed tool is offered when
//! the current provider supports its operation. **With no binary open** the provider-backed
//! tools count as offered when the built-in `native` provider supports them (it supports them
//! all), because `open_binary` on a binary opens it; the availability is then
//! [`BinarySession::Closed`](crate::prompts::BinarySession::Closed), so a rendering says that
//! `open_binary` comes first.
//!
//! # Adding a tool
//!
//! A tool is one `ToolSpec` entry in the `tools()` list of its group file (`binary.rs`,
//! `analysis.rs`, `code.rs`, `ledger.rs`, `residuals.rs`, `artifacts.rs`, `captures.rs`) and,
//! beside it, three plain Rust items:
//!
//! - its arguments, one struct deriving `Deserialize` and `JsonSchema` (schemars): each field
//!   is a parameter, its doc comment the description, its bounds `#[schemars(length(..))]`,
//!   `range(..)` or `regex(pattern = ..)`, its default a serde default. The input schema is
//!   generated from the struct (inlined, `additionalProperties: false`, a `required` list) and
//!   the arguments are checked against it by a validator compiled once per tool before they
//!   are deserialized, so the schema and the struct cannot disagree. The target (`document`,
//!   `provider`) and the `cursor` are structs to `#[serde(flatten)]`;
//! - its result, a type deriving `Serialize` and `JsonSchema`, whose generated schema is the
//!   published `outputSchema` (every field required, none other allowed; a test validates
//!   every tool's real results against it). A type of a lower layer in a result (a session,
//!   inventory, unknown or claim type, which derive no schema) has a hand-written `JsonSchema`
//!   impl beside the tool that returns it;
//! - its handler, a function from the argument struct to the result, given to
//!   `Handler::observe`, `Handler::change`, `Handler::read` or `Handler::retain`, which fixes
//!   whether Evidence is recorded. `retain` records a document no provider observed (an
//!   inventory page, an imported capture) as an unbound observation
//!   ([`Observation::unbound`](crate::session::Observation::unbound)) and returns its ID as
//!   `evidence_id`.
//!
//! A new group is a new file with its `tools()` list and one line in the catalog of
//! `toolbox.rs`.

mod analysis;
mod annotations;
mod arguments;
mod artifacts;
mod binary;
pub mod capture_approval;
mod captures;
mod code;
mod compare;
mod definition;
mod ledger;
mod outcome;
mod residuals;
mod run_capture;
mod schema;
mod spec;
mod toolbox;

pub use arguments::ArgumentError;
pub use binary::OPEN_SUMMARY_DOCUMENTS;

pub use definition::{ToolAnnotations, ToolDefinition, ToolKind};
pub use outcome::{EVIDENCE_ID_FIELD, ProcedureCompareError, ToolError, ToolOutcome, UnknownTool};
pub use toolbox::{MAX_RESULT_BYTES, ToolBox};
