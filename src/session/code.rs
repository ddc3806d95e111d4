//! The results of the code-analysis operations of [`Provider`](super::Provider):
//! `disassemble`, `xrefs_to`, `callers` and `callees`.

use std::time::Instant;

use schemars::JsonSchema;
use serde::Serialize;

use super::address::Address;
use crate::core::diff::Fingerprint;

/// Most bytes a `disassemble` address range may span.
pub const MAX_DISASSEMBLY_BYTES: u64 = 65_536;

/// Most entries (instructions, references, call edges) one page of a code-analysis result
/// holds.
pub const MAX_CODE_PAGE: usize = 1_000;

/// What `disassemble` decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CodeScope {
    /// The procedure starting at this address: up to the next procedure start, the end of its
    /// section, or its known size, whichever comes first.
    Procedure(Address),
    /// `length` bytes (at most [`MAX_DISASSEMBLY_BYTES`]) from `start`.
    Range {
        /// First byte decoded.
        start: Address,
        /// Number of bytes.
        length: u64,
    },
}

/// Which bound, if any, cut the analysis of a document short.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnalysisLimit {
    /// The most instructions one analysis decodes.
    Instructions,
    /// The most references one analysis keeps.
    References,
    /// The most time one analysis takes.
    Time,
}

/// How complete the document's code analysis is. Every code-analysis result carries it, so a
/// reader knows whether an empty or short list may be missing references.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AnalysisStatus {
    /// Whether every procedure was decoded and every reference kept.
    pub complete: bool,
    /// The bound that cut the analysis short (most instructions, most references, most time),
    /// or null.
    pub cut_short_by: Option<AnalysisLimit>,
    /// Instructions the analysis decoded.
    pub instructions: u64,
    /// References the analysis kept.
    pub references: u64,
}

/// An address and the name of what is there, when one is known.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct NamedAddress {
    /// The address, lowercase `0x`-prefixed hexadecimal.
    #[schemars(with = "String")]
    pub address: Address,
    /// What is there: a procedure, `symbol@plt` stub or imported symbol name; null when
    /// unknown.
    pub name: Option<String>,
}

/// How one place refers to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReferenceKind {
    /// A call instruction (direct, or through an import slot).
    Call,
    /// A jump or conditional branch (direct, or through an import slot).
    Jump,
    /// An instruction operand or a pointer in data that holds the address.
    Data,
}

/// One decoded instruction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Instruction {
    /// Address of the instruction.
    #[schemars(with = "String")]
    pub address: Address,
    /// Its bytes, lowercase hexadecimal.
    pub bytes: String,
    /// The mnemonic.
    // Intel syntax on x86, e.g. `call` or `adrp`.
    pub mnemonic: String,
    /// The operands as text.
    // Absolute addresses for PC-relative ones.
    pub operands: String,
    /// Address it calls, branches to or refers to PC-relatively, or null.
    #[schemars(with = "Option<String>")]
    pub target: Option<Address>,
    /// How it refers to `target` (null without one).
    pub target_kind: Option<ReferenceKind>,
    /// What is at `target`: a procedure, `name+0x10`, a `symbol@plt` stub or an imported
    /// symbol; null when unknown.
    pub target_name: Option<String>,
}

/// One page of `disassemble`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Disassembly {
    /// The decoded architecture (`x86_64`, `i386`, `aarch64`).
    pub architecture: String,
    /// The procedure decoded, or null for an address range.
    pub procedure: Option<NamedAddress>,
    /// First address of the procedure or range.
    #[schemars(with = "String")]
    pub start: Address,
    /// End of the procedure or range (exclusive).
    #[schemars(with = "String")]
    pub end: Address,
    /// This page's instructions, in address order.
    pub instructions: Vec<Instruction>,
    /// Cursor of the next page; null on the last page.
    pub next_cursor: Option<String>,
    /// The document's code analysis: when it is not complete, lists may miss entries.
    pub analysis: AnalysisStatus,
}

/// One reference to an address.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Reference {
    /// The referring instruction, or the data word holding the pointer.
    #[schemars(with = "String")]
    pub from: Address,
    /// `call`, `jump` or `data`.
    pub kind: ReferenceKind,
    /// The procedure containing `from`, or null.
    pub procedure: Option<NamedAddress>,
    /// The segment containing `from`.
    pub segment: Option<String>,
}

/// One page of `xrefs_to`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct References {
    /// The referenced address and what is there.
    pub target: NamedAddress,
    /// This page's references, by referring address.
    pub references: Vec<Reference>,
    /// Number of references to the address.
    pub total: usize,
    /// Cursor of the next page; null on the last page.
    pub next_cursor: Option<String>,
    /// The document's code analysis: when it is not complete, lists may miss entries.
    pub analysis: AnalysisStatus,
}

/// How one procedure transfers control to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CallKind {
    /// A call instruction (direct, or through an import slot).
    Call,
    /// An unconditional jump (`jmp`, `b`) from inside a procedure to the start of another
    /// known procedure, a stub or an import slot: the caller does not return there.
    TailCall,
}

/// One edge of the direct call graph.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CallEdge {
    /// The caller or callee.
    // The caller for `callers`, the callee for `callees`.
    pub procedure: NamedAddress,
    /// The imported symbol when the callee is a stub (PLT entry, PE import thunk, Mach-O stub)
    /// or an import slot.
    pub import: Option<String>,
    /// `call` for call instructions; `tail_call` for unconditional jumps from inside the
    /// caller to the start of the callee (another procedure, a stub or an import slot).
    pub kind: CallKind,
    /// The calls (or tail-call jumps) of this edge, in address order.
    #[schemars(
        with = "Vec<String>",
        extend("items" = {"type": "string", "description": "Address of a call instruction, or of a tail-call jump."})
    )]
    pub call_sites: Vec<Address>,
}

/// One page of `callers` or `callees`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CallGraph {
    /// The procedure asked about.
    pub procedure: NamedAddress,
    /// This page's edges: callers in address order, or callees in address order.
    pub edges: Vec<CallEdge>,
    /// Total number of edges.
    pub total: usize,
    /// Cursor of the next page; `None` on the last page.
    pub next_cursor: Option<String>,
    /// How complete the analysis is.
    pub analysis: AnalysisStatus,
}

/// The bounds of one [`Provider::fingerprints`](super::Provider::fingerprints) call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FingerprintBounds {
    /// Most procedures fingerprinted (the first ones, in address order).
    pub max_procedures: usize,
    /// Most bytes of memory the fingerprints may take (estimated).
    pub max_bytes: usize,
    /// When to stop.
    pub deadline: Instant,
}

/// Which bound cut a comparison of procedures short.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompareLimit {
    /// The most procedures per side.
    Procedures,
    /// The most time.
    Time,
    /// The most memory.
    Memory,
    /// The code analysis was itself cut short (see its `analysis` status).
    Analysis,
}

/// What [`Provider::fingerprints`](super::Provider::fingerprints) answers.
#[derive(Clone, Debug, PartialEq)]
pub struct Fingerprints {
    /// The decoded architecture, e.g. `x86_64`, `i386`, `aarch64`.
    pub architecture: String,
    /// One per procedure, in address order.
    pub procedures: Vec<Fingerprint>,
    /// Procedures the document has (all of them, also those past a bound).
    pub total: usize,
    /// The bound that cut the list short, when one did.
    pub cut_short_by: Option<CompareLimit>,
    /// How complete the code analysis the fingerprints read is.
    pub analysis: AnalysisStatus,
}
