//! # REA guided prompts and verified completion
//!
//! (The manual grows with the crate; see the README for now.)

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod core;
pub mod mcp;
pub mod prompts;
pub mod providers;
pub mod session;
pub mod tools;
