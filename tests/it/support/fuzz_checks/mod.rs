//! The invariant checks of the fuzz targets; each target includes its file by path, and
//! `fuzz_replay` runs them on every saved input.

pub mod capture_parser;
pub mod inventory_parser;
pub mod resource_uri;
pub mod zip_reader;
