//! The claim language of `verify_reconstruction` (docs/CONTRACT.md section 11): a finite list of
//! claims about procedures, calls, bytes, artifact occurrences and captures, each evaluated against
//! retained Evidence only.
//!
//! ```
//! use rea::claims::{EvidenceRecordView, VerdictStatus, evaluate, parse_claims};
//! use serde_json::json;
//!
//! let arguments = json!({"document": "app", "address": "0x1000", "length": 2});
//! let result = json!({"document": "app", "address": "0x1000", "hex": "5548"});
//! let ledger = [EvidenceRecordView {
//!     id: "ev-000000000001",
//!     operation: "read_bytes",
//!     arguments: &arguments,
//!     result: &result,
//!     provider: Some("native"),
//! }];
//! let claims = parse_claims(&json!([
//!     {"kind": "bytes_equal", "document": "app", "address": "0x1000", "hex": "5548"},
//!     {"kind": "bytes_equal", "document": "app", "address": "0x1001", "hex": "90"},
//!     {"kind": "procedure_exists", "document": "app", "address": "0x2000"},
//! ]))
//! .unwrap();
//! let verdicts = evaluate(&claims, &ledger);
//! assert_eq!(verdicts[0].status, VerdictStatus::Supported);
//! assert_eq!(verdicts[0].evidence, ["ev-000000000001"]);
//! assert_eq!(verdicts[1].status, VerdictStatus::Contradicted);
//! assert_eq!(verdicts[2].status, VerdictStatus::Unverified);
//! ```
//!
//! # Claims
//!
//! `claims` is a JSON array of at most [`MAX_CLAIMS`] objects. Each has a `kind` and exactly the
//! fields of that kind; unknown fields are errors.
//!
//! | kind | fields | reads Evidence of |
//! |---|---|---|
//! | `procedure_exists` | `document`, `address` | `procedure_info`, `search_procedures`, `list_procedures` |
//! | `procedure_named` | `document`, `address`, `name` | `procedure_info`, `search_procedures`, `list_procedures` |
//! | `bytes_equal` | `document`, `address`, `hex` | `read_bytes` |
//! | `occurrence_digest` | `occurrence_id`, `sha256` | `inventory_artifacts`, `list_artifact_occurrences` |
//! | `occurrence_format` | `occurrence_id`, `format` | `inventory_artifacts`, `list_artifact_occurrences` |
//! | `capture_exit_code` | `capture`, `code` | the `import_process_capture` record `capture` |
//! | `capture_stdout_digest` | `capture`, `sha256` | the `import_process_capture` record `capture` |
//! | `capture_stderr_digest` | `capture`, `sha256` | the `import_process_capture` record `capture` |
//! | `calls` | `caller`, `callee`, `document?` | `callees`, `disassemble` |
//!
//! Field syntax: `document` and `name` are non-empty strings of at most 4,096 characters;
//! `caller` and `callee` are each a procedure: a canonical address, or else (a string not
//! starting with `0x`) a name, as `name`; `calls` claims without `document` are about any
//! document;
//! `address` is canonical, as the session renders addresses (`0x` and 1 to 16 lowercase
//! hexadecimal digits without a leading zero, see [`crate::core::is_valid_address`]); `hex` is 1 to
//! [`MAX_CLAIM_BYTES`] bytes as pairs of hexadecimal digits; `sha256` is 64 lowercase
//! hexadecimal digits; `occurrence_id` is `occ-` and 32 lowercase hexadecimal digits; `format`
//! is an inventory format name (`elf`, `mach-o`, `mach-o-fat`, `pe`, ...); `capture` is an
//! Evidence ID; `code` is an integer.
//!
//! # Verdicts
//!
//! Each claim gets a [`Verdict`]: `supported`, `contradicted` or `unverified`, citing the
//! Evidence IDs it rests on (ledger order). Contradiction wins: if any retained record
//! contradicts a claim, the verdict is `contradicted` (citing the contradicting records) even if
//! others support it. With no record that settles it, a claim is `unverified`.
//!
//! # Evidence results read
//!
//! Evaluation reads only the [`EvidenceRecordView`]s given: operation, arguments, result and ID.
//! These are the result fields it reads (other fields are ignored); `document` is taken from the
//! result, or else from the arguments:
//!
//! - `procedure_info`: `{document, address, name, raw_name?, aliases?}` where `name` and each
//!   alias is a string or `{name, raw_name}` (or `null`: no name known). Its names are complete:
//!   a name not among them contradicts `procedure_named`.
//! - `search_procedures`: `{document, procedures: [<procedure_info result>...]}`; names complete.
//! - `list_procedures`: `{document, procedures: [{address, name?, aliases?}...], next_cursor}`
//!   with the page's `cursor` in the arguments (absent or `null` for the first page). Names
//!   there (the primary name and the aliases, display names only) may not be every name the
//!   provider knows, so they support but never contradict `procedure_named`. When the
//!   retained pages form a complete listing of a document (a first page, then the page for each
//!   `next_cursor`, up to one whose `next_cursor` is `null`, all from the provider of the
//!   first page; the oldest record per cursor is used), an address absent from all of them
//!   contradicts `procedure_exists` and `procedure_named`.
//! - `read_bytes`: `{document, address, hex}`. The claimed range may be covered by several
//!   records; a byte that differs contradicts, full coverage with equal bytes supports, partial
//!   coverage is unverified.
//! - `inventory_artifacts`: an inventory page ([`crate::inventory::parse_page`]);
//!   invalid pages are ignored.
//! - `list_artifact_occurrences`: `{occurrences: [{occurrence_id, sha256, format, ...}...]}`.
//! - `import_process_capture`: the capture document as imported; only a valid Process Capture
//!   v4 is read. `capture_exit_code` is contradicted by another code or by a signal.
//!   `capture_*_digest` compares the stream's recorded `sha256`; when that stream was truncated,
//!   a different digest is unverified rather than contradicted.
//! - `callees`: `{document, procedure: {address, name}, callees: [{procedure: {address, name},
//!   import, kind, call_sites}...], next_cursor, analysis: {complete}}`. Each callee of `kind`
//!   `call` (or without `kind`) is a direct call of `procedure`, known by its address, its name
//!   and its `import`; `tail_call` edges are jumps, as `disassemble` shows them, and are not
//!   read.
//! - `disassemble`: `{document, procedure: {address, name} | null, instructions: [{target,
//!   target_kind, target_name}...], next_cursor, analysis: {complete}}`. Each instruction with
//!   `target_kind` `call` and a `target` is a direct call of `procedure`, known by the target
//!   address and `target_name`; range disassemblies (`procedure` null) are not read.
//!
//! A `calls` claim is about direct calls, as these tools list them (a call through a register
//! has no known callee and is not counted). It is supported by a record whose procedure matches
//! `caller` (by address, or by name) with a call matching `callee` (by address, or by name or
//! imported symbol). It is contradicted by a complete view of the caller's calls without the
//! callee: a `callees` or procedure `disassemble` record that is a first page (no `cursor`)
//! with `next_cursor` null and `analysis.complete` true. A callee claimed by name is not ruled
//! out while such a view holds a call whose callee has no name.

mod evaluate;
mod parse;
mod shapes;
mod sightings;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::inventory::ExecutableFormat;

pub use evaluate::evaluate;
pub use parse::parse_claims;

/// Most claims in one `verify_reconstruction` call.
pub const MAX_CLAIMS: usize = 100;

/// Most bytes one `bytes_equal` claim compares (the `read_bytes` bound).
pub const MAX_CLAIM_BYTES: usize = 4_096;

/// One retained Evidence record, as evaluation sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EvidenceRecordView<'a> {
    /// The Evidence ID.
    pub id: &'a str,
    /// The operation (tool name) that observed it.
    pub operation: &'a str,
    /// The arguments of the call.
    pub arguments: &'a Value,
    /// The result of the call.
    pub result: &'a Value,
    /// The provider that answered, if the call went to one. Pages of a procedure listing
    /// only form a complete listing together when they come from the same provider.
    pub provider: Option<&'a str>,
}

/// One parsed claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// A procedure starts at `address` in `document`.
    ProcedureExists {
        /// The document.
        document: String,
        /// The start address.
        address: u64,
    },
    /// The procedure at `address` in `document` is named `name` (display or raw name, or an
    /// alias).
    ProcedureNamed {
        /// The document.
        document: String,
        /// The start address.
        address: u64,
        /// The name.
        name: String,
    },
    /// `document` holds `bytes` at `address`.
    BytesEqual {
        /// The document.
        document: String,
        /// The first byte's address.
        address: u64,
        /// The bytes.
        bytes: Vec<u8>,
    },
    /// The artifact occurrence has this SHA-256.
    OccurrenceDigest {
        /// The occurrence ID.
        occurrence_id: String,
        /// Lowercase hexadecimal digest.
        sha256: String,
    },
    /// The artifact occurrence has this detected format.
    OccurrenceFormat {
        /// The occurrence ID.
        occurrence_id: String,
        /// The format.
        format: ExecutableFormat,
    },
    /// The captured process exited with `code`.
    CaptureExitCode {
        /// Evidence ID of the `import_process_capture` record.
        capture: String,
        /// The exit code.
        code: i64,
    },
    /// The captured process's standard output has this SHA-256.
    CaptureStdoutDigest {
        /// Evidence ID of the `import_process_capture` record.
        capture: String,
        /// Lowercase hexadecimal digest.
        sha256: String,
    },
    /// The captured process's standard error has this SHA-256.
    CaptureStderrDigest {
        /// Evidence ID of the `import_process_capture` record.
        capture: String,
        /// Lowercase hexadecimal digest.
        sha256: String,
    },
    /// Procedure `caller` calls procedure `callee` directly.
    Calls {
        /// The document, or `None` for any document.
        document: Option<String>,
        /// The calling procedure.
        caller: ProcedureRef,
        /// The called procedure, stub or imported symbol.
        callee: ProcedureRef,
    },
}

/// A procedure named in a claim: by start address or by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProcedureRef {
    /// The procedure (or stub) at this address.
    Address(u64),
    /// The procedure (or stub, or imported symbol) with this name.
    Name(String),
}

impl std::fmt::Display for ProcedureRef {
    /// An address as `0x1000`, a name quoted as `"main"` (cut to 64 characters).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProcedureRef::Address(address) => write!(f, "{address:#x}"),
            ProcedureRef::Name(name) => write!(f, "{:?}", crate::text::Quoted::new(name)),
        }
    }
}

impl Claim {
    /// The claim's `kind` as written in JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            Claim::ProcedureExists { .. } => "procedure_exists",
            Claim::ProcedureNamed { .. } => "procedure_named",
            Claim::BytesEqual { .. } => "bytes_equal",
            Claim::OccurrenceDigest { .. } => "occurrence_digest",
            Claim::OccurrenceFormat { .. } => "occurrence_format",
            Claim::CaptureExitCode { .. } => "capture_exit_code",
            Claim::CaptureStdoutDigest { .. } => "capture_stdout_digest",
            Claim::CaptureStderrDigest { .. } => "capture_stderr_digest",
            Claim::Calls { .. } => "calls",
        }
    }
}

/// Where a claim stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VerdictStatus {
    /// Retained Evidence shows the claim holds, and none contradicts it.
    Supported,
    /// Retained Evidence shows the claim does not hold.
    Contradicted,
    /// No retained Evidence settles the claim.
    Unverified,
}

/// The verdict on one claim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Verdict {
    /// Position of the claim, from 0.
    pub index: usize,
    /// The claim's kind.
    pub kind: &'static str,
    /// The verdict.
    pub status: VerdictStatus,
    /// Evidence the verdict rests on, in ledger order.
    // Empty when unverified for lack of Evidence.
    #[schemars(extend("items" = {"type": "string", "description": "An Evidence ID."}))]
    pub evidence: Vec<String>,
    /// One sentence saying why.
    pub reason: String,
}

/// A claim list that cannot be evaluated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClaimError {
    /// `claims` is not a JSON array.
    #[error("claims must be a JSON array of claim objects")]
    NotAList,
    /// More claims than [`MAX_CLAIMS`].
    #[error("claims holds {count} claims; at most {limit} are allowed")]
    TooMany {
        /// Claims given.
        count: usize,
        /// The bound.
        limit: usize,
    },
    /// A claim is not a JSON object.
    #[error("claims[{index}] must be an object with a kind")]
    NotAnObject {
        /// The claim's position, from 0.
        index: usize,
    },
    /// A claim's field is missing, unknown, or of the wrong form.
    #[error("claims[{index}].{field}: {problem}")]
    Malformed {
        /// The claim's position, from 0.
        index: usize,
        /// The field.
        field: crate::text::Quoted,
        /// What is wrong.
        problem: String,
    },
}
