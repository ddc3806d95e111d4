//! Built-in providers (part of the session layer): [`native`] for ELF, Mach-O and PE files,
//! and (soon) `catalog` for exported function lists.

pub mod native;
mod table;
