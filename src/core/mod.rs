//! The pure completion core: bounds, the matching key, `complete()` and bounded procedure
//! discovery.
//!
//! Nothing in this module performs I/O, reads a clock, awaits, or knows about JSON-RPC. Every
//! function is total: it returns a value or a typed error for any input and never panics.
//! (Hash tables use hashbrown's randomly seeded foldhash; the seed affects speed, never
//! results.)
//!
//! - [`bounds`]: the constants of SPEC section 2.
//! - [`key`](mod@key): the matching key and prefix relation of SPEC section 3, and the Unicode version
//!   of every table they use ([`key::UNICODE_VERSION`], 18.0.0).
//! - [`complete`](mod@complete): `complete()` of SPEC section 4.
//! - [`discovery`]: bounded procedure discovery of SPEC section 6, with the decisions on valid
//!   addresses and non-advancing pages.
//! - [`family`]: argument families (SPEC section 5).

pub mod bounds;
pub mod complete;
pub mod discovery;
pub mod family;
pub(crate) mod invariants;
pub mod key;

mod words;

pub use bounds::{
    MAX_VALUE_CHARS, MAX_VALUES, PROCEDURE_ADDRESS_LIMIT, PROCEDURE_PAGE_SIZE, SCAN_LIMIT,
};
pub use complete::{Completion, Prefix, ValueTooLong, complete};
pub use discovery::{
    Discovery, Malformed, Outcome, PageRequest, ProcedureEntry, ProcedurePage, Procedures, Step,
};
pub use family::Family;
pub use key::{key, matches};
