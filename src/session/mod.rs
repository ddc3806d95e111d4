//! The binary session: providers, documents, the Evidence ledger and the completion sources.
//!
//! - [`provider`]: the [`Provider`] trait integrators implement, and its data types.
//! - [`Address`]: addresses as the session speaks them (`0x`-prefixed lowercase hexadecimal).

pub mod address;
pub mod provider;

pub use address::{Address, AddressError};
pub use provider::{
    DocumentInfo, MAX_READ_BYTES, MAX_SEARCH_RESULTS, NameMatch, Operation, Permissions,
    ProcedureInfo, ProcedureMatches, ProcedureName, ProcedureQuery, ProcedureSource, Provider,
    ProviderError, ReadLength, ReadLengthError, Segment, StringMatch, StringMatches, StringQuery,
};
