//! The tools of SPEC section 10: definitions for `tools/list`, and [`ToolBox::call`] for
//! `tools/call`, over one [`Session`](crate::session::Session).
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
//! In [`ToolBox::definitions`] order. *Observation* tools append one Evidence record per
//! successful call (operation = tool name, the arguments as given, the result, provider,
//! document) and return its ID as `evidence_id`; *session changes* and *reads* append nothing
//! (see [`ToolKind`]). A tool backed by a provider operation is offered in guided prompts only
//! when the current provider supports it ([`ToolBox::availability`]).
//!
//! | tool | what it does | kind | provider operation |
//! |---|---|---|---|
//! | `open_binary` | open a binary (native provider) or a catalog JSON (catalog provider); replaces the open one | session change | none |
//! | `close_binary` | close the binary, discard its ledger | session change | none |
//! | `list_providers` | declared providers, their operations, which is current | read | none |
//! | `list_documents` | documents of a provider (`provider?`) | observation | `list_documents` |
//! | `current_document` | open target, current provider and document | read | none |
//! | `set_current_document` | make a document (and its provider) current | session change | none |
//! | `list_procedures` | one page of procedures (`document?`, `cursor?`, `limit` 1..=500) | observation | `list_procedures` |
//! | `procedure_info` | one procedure by address or unique name | observation | `procedure_info` |
//! | `search_procedures` | procedures by name (`query`, `match`: contains/exact, `limit` ≤ 500) | observation | `search_procedures` |
//! | `list_segments` | mapped regions with permissions | observation | `list_segments` |
//! | `search_strings` | printable strings (`contains?`, `min_chars`, `limit` ≤ 500) | observation | `search_strings` |
//! | `read_bytes` | up to 4,096 bytes as hex (`address`, `length`) | observation | `read_bytes` |
//! | `disassemble` | instructions of a procedure (`procedure`) or a range (`address`, `length` ≤ 65,536), paged (`cursor?`, `limit` ≤ 1,000) | observation | `disassemble` |
//! | `xrefs_to` | call, jump and data references to an address, each with its procedure, paged | observation | `xrefs_to` |
//! | `callers` | procedures with a direct call to a procedure, with call sites, paged | observation | `callers` |
//! | `callees` | what a procedure calls directly, stubs and import slots named by the imported symbol, paged | observation | `callees` |
//! | `list_evidence` | page through the ledger (`cursor?`, `limit` ≤ 100) | read | none |
//! | `get_evidence` | one Evidence record in full (`id`) | read | none |
//! | `register_unknown` | record an open question (`question`, `document?`, `procedure?`) | session change | none |
//! | `refine_unknown` | a new revision of a head becomes the head (`id`, `question`, ...) | session change | none |
//! | `resolve_unknown` | resolve a head with retained Evidence IDs (`id`, `evidence`, `note?`) | session change | none |
//! | `list_unknowns` | residual unknowns, paged (`status`, `revisions`, `document?`, `procedure?`, `cursor?`, `limit` ≤ 100) | read | none |
//! | `inventory_artifacts` | one page of the inventory of a directory or zip (`path`, `page`, `page_size`, `manifest_id?`); later pages come from the walk kept at page 0; the page is retained as Evidence | observation (unbound) | none |
//! | `list_artifact_occurrences` | occurrences of a retained inventory (`manifest_id`, `under?`, `format?`) | read | none |
//! | `compare_inventories` | added, removed, changed paths of two retained inventories (`before`, `after`) | read | none |
//! | `import_process_capture` | retain a capture document as Evidence, stored once as the result, and say whether it is a valid v4 capture (never executes anything) | observation (unbound) | none |
//! | `verify_reconstruction` | claims (`claims`) evaluated against retained Evidence only | read | none |
//!
//! **Bounds.** A successful result whose JSON would be over [`MAX_RESULT_BYTES`] (1 MiB,
//! counting the structured content and its JSON text) is an error result naming the limit and
//! saying how to page; nothing is recorded. Evidence is bounded by the ledger
//! ([`crate::session::MAX_LEDGER_BYTES`], [`crate::session::MAX_RECORD_BYTES`],
//! [`crate::session::MAX_JSON_DEPTH`]). Every path a tool opens is checked as described in
//! [`crate::session::files`] and confined by the session's
//! [`Confinement`](crate::session::Confinement). [`ToolBox::call_cancellable`] stops an
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
//! - `open_binary`: `{label, providers: [id], documents: [document], current_document,
//!   replaced: {label, evidence_discarded} | null}`; a *document* is `{name, format,
//!   architecture}` (the last two nullable).
//! - `close_binary`: `{label, evidence_discarded}`.
//! - `list_providers`: `{label, providers: [{id, operations: [tool name], current}]}`.
//! - `list_documents`: `{provider, documents: [document], evidence_id}`.
//! - `current_document`: `{label, provider, document}` (all null with no binary open).
//! - `set_current_document`: `{provider, document}`.
//! - `list_procedures`: `{document, procedures: [{address, name}], next_cursor, evidence_id}`;
//!   `name` is the primary name or null, `next_cursor` is null on the last page; the page's
//!   cursor is the `cursor` argument (absent for the first page).
//! - `procedure_info`: `{document, address, name: {name, raw_name} | null, aliases: [{name,
//!   raw_name}], size, segment, sources: [source], evidence_id}`; `name` and `aliases` are
//!   every name the provider knows at the address; `source` is one of `symbol_table`,
//!   `dynamic_symbols`, `exports`, `unwind_table`, `function_starts`, `import_stubs`,
//!   `entry_point`, `call_targets`, `catalog`.
//! - `search_procedures`: `{document, procedures: [procedure], truncated, evidence_id}`, each
//!   *procedure* shaped as `procedure_info` without `document` and `evidence_id`.
//! - `list_segments`: `{document, segments: [{name, address, size, file_offset, file_size,
//!   permissions}], evidence_id}`; `permissions` is like `r-x`.
//! - `search_strings`: `{document, strings: [{address, text, truncated, segment}], truncated,
//!   evidence_id}`.
//! - `read_bytes`: `{document, address, length, hex, evidence_id}`; `address` is canonical
//!   (`0x` + lowercase hex, no leading zeros), `length` is the number of bytes read (fewer than
//!   asked when the file-backed region ends), `hex` is two lowercase digits per byte.
//! - `list_imports`: `{document, imports: [{symbol: {name, raw_name}, library, version,
//!   ordinal, stub, slot}], next_cursor, evidence_id}`; `library`, `version`, `ordinal`,
//!   `stub` and `slot` are null when the format does not say; `next_cursor` is null on the
//!   last page.
//! - `disassemble`: `{document, architecture, procedure: {address, name} | null, start, end,
//!   instructions: [{address, bytes, mnemonic, operands, target, target_kind, target_name}],
//!   next_cursor, analysis}`; `target_kind` is `call`, `jump` or `data`.
//! - `xrefs_to`: `{document, target: {address, name}, references: [{from, kind, procedure:
//!   {address, name} | null, segment}], total, next_cursor, analysis}`.
//! - `callers` / `callees`: `{document, procedure: {address, name}, callers | callees:
//!   [{procedure: {address, name}, import, call_sites: [address]}], total, next_cursor,
//!   analysis}`.
//! - every code-analysis result's `analysis` is `{complete, cut_short_by: instructions |
//!   references | time | null, instructions, references}`: when the document's analysis hit a
//!   bound, lists may miss entries.
//! - `list_evidence`: `{evidence: [{id, sequence, operation, arguments, provider, document}],
//!   next_cursor, total}`.
//! - `get_evidence`: `{id, sequence, operation, arguments, result, provider, document}`.
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
//! A tool is one `ToolSpec` entry in the `TOOLS` list of its group file (`session.rs`,
//! `analysis.rs`, `code.rs`, `ledger.rs`, `unknowns.rs`, `artifacts.rs`, `captures.rs`) plus one handler
//! function beside it. Its parameters declare the input schema and the argument checks at
//! once; its handler variant (`Observe`, `Retain`, `Change`, `Read`) fixes whether Evidence is
//! recorded. `Retain` records a document no provider observed (an inventory page, an imported
//! capture) as an unbound observation
//! ([`Observation::unbound`](crate::session::Observation::unbound)) and returns its ID as
//! `evidence_id`. A new group is a new file with its `TOOLS` list and one line in the catalog
//! of `toolbox.rs`.

mod analysis;
mod artifacts;
mod captures;
mod code;
mod definition;
mod ledger;
mod outcome;
mod parameters;
mod schema;
mod session;
mod spec;
mod toolbox;
mod unknowns;

pub use definition::{ToolAnnotations, ToolDefinition, ToolKind};
pub use outcome::{EVIDENCE_ID_FIELD, ToolError, ToolOutcome, UnknownTool};
pub use parameters::ArgumentError;
pub use toolbox::{MAX_RESULT_BYTES, ToolBox};
