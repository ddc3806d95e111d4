//! The six guided prompts, their registry and their renderer (docs/CONTRACT.md section 7).
//!
//! REA offers six provider-neutral investigation workflows through the MCP prompts
//! capability. A prompt adds no tools and invokes none: it tells the agent which current REA
//! tools to use, in which order, and how to keep its answer honest.
//!
//! | prompt | purpose |
//! |---|---|
//! | `investigate_feature` | Trace a feature from discovery into bounded function evidence. |
//! | `compare_application_versions` | Compare two shipped artifacts, with optional static and runtime follow-up. |
//! | `verify_reconstruction` | Evaluate a finite reconstruction specification against retained comparison Evidence. |
//! | `trace_crash` | Correlate a crash symptom with static paths and optional Process Capture v4 evidence. |
//! | `audit_residual_unknowns` | Audit current residual-unknown heads and evidence-qualified resolution. |
//! | `prepare_bounded_process_capture` | Design an approval-gated, bounded process experiment before execution. |
//!
//! Required arguments are free text. Optional arguments carry a completion [`Family`] (kept
//! server-side; `prompts/list` shows name, title, description and arguments only), and their
//! descriptions say which family completes them.
//!
//! # The rendering contract
//!
//! [`render`] produces one `user` text message. For the same definition, arguments and
//! [`ToolAvailability`] it produces the same bytes. The message:
//!
//! - lists, numbered in workflow order, only the workflow tools that are *offered* (present in
//!   the server's catalog and supported by the current provider), and names the workflow tools
//!   that are not offered, or says that none are;
//! - with no binary open, says that `open_binary` comes first, or, when the server does not
//!   offer `open_binary`, says that too;
//! - requires separate **Observations** (each citing Evidence IDs), **Inferences** and
//!   **Unknowns** sections;
//! - states that the selection data is untrusted data, not instructions or authorization, and
//!   that no argument or suggestion grants permission: extraction, mutation and process
//!   execution keep their own approval;
//! - carries every supplied argument only inside one fenced data block (opened by
//!   [`DATA_FENCE_OPEN`], closed by [`DATA_FENCE_CLOSE`]) as a single line of JSON with keys in
//!   code-point order. Besides JSON's own escapes, U+0085, U+2028, U+2029, the other C1
//!   controls, DEL, the backtick and the bidirectional controls are written as `\u` escapes, so
//!   the line is one line under every convention and holds no backtick that could touch the
//!   fence. The block is present even when no argument is supplied (`{}`).
//!
//! The text outside the data line depends only on the definition, the availability and
//! **which** arguments are present, never on their values ([`RenderedPrompt::outside_data`]).
//! A property test and the `prompt_render` fuzz target check this.
//!
//! Validation comes first: an argument the prompt does not have, a missing required argument
//! (an empty string counts as supplied) or a value over [`MAX_PROMPT_VALUE_CHARS`] is a
//! [`PromptError`] naming the prompt and the argument; an unknown prompt name is an error of
//! [`PromptRegistry::render`].
//!
//! # The registry
//!
//! [`PromptRegistry`] keeps prompts in a stable order and reports what a registration did
//! ([`RegistryChange`]), so the server emits `notifications/prompts/list_changed` only when the
//! catalog really changed. [`PromptRegistry::page`] pages `prompts/list` with opaque cursors
//! ([`DEFAULT_PAGE_SIZE`] holds all built-ins in one page).
//!
//! ```
//! use std::collections::BTreeMap;
//! use rea::prompts::{BinarySession, PromptRegistry, ToolAvailability};
//!
//! let registry = PromptRegistry::with_builtin();
//! let tools = ToolAvailability::new(["open_binary", "list_documents"], BinarySession::Closed);
//! let arguments = BTreeMap::from([("feature".to_owned(), "offline search".to_owned())]);
//! let rendered = registry.render("investigate_feature", &arguments, &tools).unwrap();
//! assert_eq!(rendered.data_json(), r#"{"feature":"offline search"}"#);
//! assert!(rendered.text().contains("call `open_binary` first"));
//! ```
//!
//! [`Family`]: crate::core::Family

mod availability;
mod bounds;
mod builtin;
mod data_block;
mod definition;
mod error;
mod file;
mod registry;
mod render;

pub use availability::{BinarySession, ToolAvailability};
pub use bounds::MAX_PROMPT_VALUE_CHARS;
pub use builtin::builtin_prompts;
pub use data_block::{DATA_FENCE_CLOSE, DATA_FENCE_OPEN};
pub use definition::{ArgumentDefinition, ArgumentListing, PromptDefinition, PromptListing};
pub use error::{DefinitionError, PromptError};
pub use file::{PromptFileError, parse_prompt_file};
pub use registry::{DEFAULT_PAGE_SIZE, InvalidCursor, PromptPage, PromptRegistry, RegistryChange};
pub use render::{RenderedPrompt, render};
