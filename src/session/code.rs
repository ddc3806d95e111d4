//! The results of the code-analysis operations of [`Provider`](super::Provider):
//! `disassemble`, `xrefs_to`, `callers` and `callees`.

use std::time::Instant;

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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct AnalysisStatus {
    /// Whether every procedure was decoded and every reference kept.
    pub complete: bool,
    /// The bound that cut the analysis short, when one did.
    pub cut_short_by: Option<AnalysisLimit>,
    /// Instructions decoded.
    pub instructions: u64,
    /// References kept.
    pub references: u64,
}

/// An address and the name of what is there, when one is known.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NamedAddress {
    /// The address.
    pub address: Address,
    /// The name: a procedure's display name, a stub's `symbol@plt`, or an imported symbol.
    pub name: Option<String>,
}

/// How one place refers to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Instruction {
    /// Address of its first byte.
    pub address: Address,
    /// Its bytes as lowercase hexadecimal, two digits per byte.
    pub bytes: String,
    /// The mnemonic (Intel syntax on x86), e.g. `call` or `adrp`.
    pub mnemonic: String,
    /// The operands as text, absolute addresses for PC-relative ones.
    pub operands: String,
    /// The address it branches to, calls, or refers to PC-relatively, when it has one.
    pub target: Option<Address>,
    /// How it refers to `target`.
    pub target_kind: Option<ReferenceKind>,
    /// What is at `target`: a procedure or stub name, `name+0x10` inside a procedure, or the
    /// imported symbol of a slot.
    pub target_name: Option<String>,
}

/// One page of `disassemble`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Disassembly {
    /// The decoded architecture, e.g. `x86_64`, `i386`, `aarch64`.
    pub architecture: String,
    /// The procedure decoded, when the scope is a procedure.
    pub procedure: Option<NamedAddress>,
    /// First address of the scope.
    pub start: Address,
    /// End of the scope (exclusive).
    pub end: Address,
    /// This page's instructions, in address order.
    pub instructions: Vec<Instruction>,
    /// Cursor of the next page; `None` on the last page.
    pub next_cursor: Option<String>,
    /// How complete the analysis that names targets is.
    pub analysis: AnalysisStatus,
}

/// One reference to an address.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Reference {
    /// The referring instruction, or the data word holding the pointer.
    pub from: Address,
    /// How it refers.
    pub kind: ReferenceKind,
    /// The procedure containing `from`, when it is in one.
    pub procedure: Option<NamedAddress>,
    /// The segment containing `from`.
    pub segment: Option<String>,
}

/// One page of `xrefs_to`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct References {
    /// The referenced address and what is there.
    pub target: NamedAddress,
    /// This page's references, in `from` order.
    pub references: Vec<Reference>,
    /// Total number of references to the target.
    pub total: usize,
    /// Cursor of the next page; `None` on the last page.
    pub next_cursor: Option<String>,
    /// How complete the analysis is.
    pub analysis: AnalysisStatus,
}

/// How one procedure transfers control to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallKind {
    /// A call instruction (direct, or through an import slot).
    Call,
    /// An unconditional jump (`jmp`, `b`) from inside a procedure to the start of another
    /// known procedure, a stub or an import slot: the caller does not return there.
    TailCall,
}

/// One edge of the direct call graph.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CallEdge {
    /// The caller (for `callers`) or the callee (for `callees`).
    pub procedure: NamedAddress,
    /// The imported symbol, when the callee is a stub or an import slot.
    pub import: Option<String>,
    /// Whether the edge's instructions are calls or tail-call jumps.
    pub kind: CallKind,
    /// The call (or tail-call jump) instructions of this edge, in address order.
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
