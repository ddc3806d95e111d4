//! The pure core's invariants (docs/CONTRACT.md sections 3, 4 and 6), for the `key_invariants`,
//! `complete_invariants`, `index_equality` and `discovery_termination` fuzz targets and the
//! tests that replay their saved inputs. They read the core's crate-private parts (the key's
//! case folding, the bounds), which is why they are in the crate.
//!
//! Each `check_*_bytes` function decodes an arbitrary byte string into a case and checks every
//! invariant the matching fuzz target promises, returning the first [`Violation`]. Everything
//! here is pure.

mod complete;
mod discovery;
mod key;

pub use complete::{
    CompleteCase, MAX_LISTED_CANDIDATES, MAX_REPEATED_CANDIDATES, check_complete,
    check_complete_bytes, check_index, check_index_bytes, literal_completion,
};
pub use discovery::{check_discovery, check_discovery_bytes, discovery_pages};
pub use key::{MAX_KEY_CASE_CHARS, check_key, check_key_bytes, check_pair};

/// An invariant that does not hold for some input.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invariant violated: {invariant}; input: {input}")]
pub struct Violation {
    /// What should have held.
    pub invariant: &'static str,
    /// The offending input, abbreviated.
    pub input: String,
}

/// `Ok(())` when `holds`, else a [`Violation`] describing `input` lazily.
fn ensure(
    holds: bool,
    invariant: &'static str,
    input: impl FnOnce() -> String,
) -> Result<(), Violation> {
    if holds {
        Ok(())
    } else {
        Err(Violation {
            invariant,
            input: input(),
        })
    }
}

/// A short, escaped rendering of a possibly huge string.
fn abbreviate(text: &str) -> String {
    const SHOWN: usize = 48;
    let count = text.chars().count();
    if count <= SHOWN {
        format!("{text:?}")
    } else {
        let head: String = text.chars().take(SHOWN).collect();
        format!("{head:?}… ({count} chars)")
    }
}

/// docs/CONTRACT.md section 3's relation computed straight from the key, without the matcher's
/// shortcuts.
fn by_definition(prefix: &str, candidate: &str) -> bool {
    keys_related(&crate::core::key(prefix), &crate::core::key(candidate))
}

/// [`by_definition`] on keys already computed, so a check keys each string once: the prefix
/// key is empty, or the candidate key extends it at a starter boundary.
fn keys_related(prefix_key: &str, candidate_key: &str) -> bool {
    prefix_key.is_empty() || crate::core::key::key_extends(prefix_key, candidate_key)
}
