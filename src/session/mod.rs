//! The binary session: providers, documents, the Evidence ledger and the completion sources.
//!
//! - [`SessionStore`]: several binary sessions at once, each named by a [`SessionHandle`],
//!   with one Evidence budget for all; [`ClientHandles`]: the sessions one client knows and
//!   which is its own.
//! - [`Session`]: the state of one binary session (`Send + Sync`, methods take `&self`).
//!   Open a binary with [`Session::open_providers`], pick a provider and document with
//!   [`Session::target`], call the provider through the [`Target`], then record what was
//!   observed with [`Session::record_evidence`].
//! - [`Provider`]: the trait integrators implement (with an example), and its data types.
//! - [`EvidenceId`], [`EvidenceRecord`] and [`LedgerError`]: the Evidence ledger and its
//!   bounds.
//! - [`SessionView`]: what completion reads, and [`complete_argument`], the completion of one
//!   argument family from the live session.
//! - [`Address`]: addresses as the session speaks them (`0x`-prefixed lowercase hexadecimal).
//! - The stores the session owns, of the domains beside it: residual unknowns
//!   ([`crate::unknowns`]), artifact inventories ([`crate::inventory`]), process captures
//!   ([`crate::capture`]) and reconstruction claims ([`crate::claims`]).
//! - [`Durable`]: the store investigations outlive the process in ([`SqliteStore`], the
//!   default of `rea serve`, and [`MemoryStore`]); see [`durable`].
//! - [`Cancel`]: the cancellation signal of one request (from the crate's bottom layer, `base`).

mod address;
pub(crate) mod bounded;
mod budget;
mod code;
mod decompile;
pub mod durable;
mod error;
mod evidence;
mod provider;
mod sources;
mod state;
pub mod store;
mod target;

pub use crate::base::{Cancel, Cancelled};
pub use address::{Address, AddressError};
pub use bounded::{PROVIDER_THREADS, QUEUED_CALLS, completion_deadline, within_request_deadline};
pub use budget::LedgerBudget;
pub use decompile::{
    DEFAULT_DECOMPILE_CHARS, DEFAULT_DECOMPILE_TIME, Decompilation, DecompileBound, DecompileNames,
    MAX_DECOMPILE_CHARS, MAX_DECOMPILE_NAMES, MAX_DECOMPILE_TIME, MAX_DECOMPILE_WARNINGS,
    MAX_WARNING_CHARS,
};
pub use durable::{
    Acquired, Durable, DurableError, MemoryStore, PostgresOptions, PostgresStore, SqliteStore,
    StoreOptions,
};
pub use error::SessionError;
pub use evidence::{
    EvidenceId, EvidenceIdError, EvidencePage, EvidenceRecord, LedgerError, MAX_JSON_DEPTH,
    MAX_LEDGER_BYTES, MAX_RECORD_BYTES, Observation, fits_one_record, json_depth_exceeds,
    record_cost, value_heap_bytes,
};
pub use provider::{
    AnalysisLimit, AnalysisStatus, CallEdge, CallGraph, CallKind, CodeScope, Companions,
    CompareLimit, Disassembly, DocumentInfo, DocumentNames, FingerprintBounds, Fingerprints,
    Import, ImportPage, Instruction, MAX_CODE_PAGE, MAX_DISASSEMBLY_BYTES, MAX_READ_BYTES,
    MAX_SEARCH_RESULTS, NameMatch, NamedAddress, Operation, Permissions, ProcedureInfo,
    ProcedureMatches, ProcedureName, ProcedureQuery, ProcedureSource, Provider, ProviderError,
    ReadLength, ReadLengthError, Reference, ReferenceKind, References, Segment, StringMatch,
    StringMatches, StringQuery,
};
pub use sources::{
    ClientView, DOCUMENT_ARGUMENT, MANIFEST_ARGUMENT, PROVIDER_ARGUMENT, SESSION_ARGUMENT,
    SessionView, SourceConfig, complete_argument, complete_argument_at_hand,
};
pub use state::{
    Annotated, ClosedBinary, INVENTORY_OPERATION, KeptWalk, MAX_KEPT_INVENTORIES, Opened,
    Provenance, ProviderSummary, Reopened, Session, SessionSummary,
};
pub use store::{
    ClientHandles, DEFAULT_MAX_SESSIONS, SessionHandle, SessionStore, StoreConfig, StoreError,
    random_token,
};
pub use target::Target;
