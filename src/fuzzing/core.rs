//! The pure core's invariants (docs/CONTRACT.md sections 3, 4 and 6), for the `key_invariants`,
//! `complete_invariants`, `index_equality` and `discovery_termination` fuzz targets and the tests that replay
//! their saved inputs. The checks live beside the code they check, crate-private in the core;
//! this is their only public path. Each returns the first [`Violation`] instead of panicking.

pub use crate::core::invariants::{
    CompleteCase, MAX_KEY_CASE_CHARS, MAX_LISTED_CANDIDATES, MAX_REPEATED_CANDIDATES, Violation,
    check_complete, check_complete_bytes, check_discovery, check_discovery_bytes, check_index,
    check_index_bytes, check_key, check_key_bytes, check_pair, discovery_pages, literal_completion,
};
