//! The pure completion core: bounds, the matching key, `complete()` and bounded procedure
//! discovery.
//!
//! Nothing in this module performs I/O, reads a clock, awaits, or knows about JSON-RPC. Every
//! function is total: it returns a value or a typed error for any input and never panics.

pub mod bounds;
pub mod complete;
pub mod discovery;
pub mod family;
pub mod key;

pub use bounds::{
    MAX_VALUE_CHARS, MAX_VALUES, PROCEDURE_ADDRESS_LIMIT, PROCEDURE_PAGE_SIZE, SCAN_LIMIT,
};
pub use complete::{Completion, Prefix, ValueTooLong, complete};
pub use discovery::{
    Discovery, Malformed, Outcome, PageRequest, ProcedureEntry, ProcedurePage, Procedures, Step,
};
pub use family::Family;
pub use key::{key, matches};
