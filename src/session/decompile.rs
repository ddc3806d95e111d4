//! The result of [`Provider::decompile`](super::Provider::decompile): pseudo-C of one
//! procedure, which is a reconstruction, never an observation of behaviour.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;

use super::code::NamedAddress;

/// Default time bound of one decompilation (docs/CONTRACT.md section 11).
pub const DEFAULT_DECOMPILE_TIME: Duration = Duration::from_secs(30);

/// Largest time bound a caller may give one decompilation.
pub const MAX_DECOMPILE_TIME: Duration = Duration::from_secs(300);

/// Default number of characters of pseudo-C one result holds.
pub const DEFAULT_DECOMPILE_CHARS: usize = 40_000;

/// Most characters of pseudo-C one result holds.
pub const MAX_DECOMPILE_CHARS: usize = 100_000;

/// Most decompiler warnings one result holds.
pub const MAX_DECOMPILE_WARNINGS: usize = 100;

/// Most characters of one decompiler warning.
pub const MAX_WARNING_CHARS: usize = 1_000;

/// Most of the investigator's names one decompilation passes to its provider.
pub const MAX_DECOMPILE_NAMES: usize = 1_024;

/// The investigator's names (labels, docs/CONTRACT.md section 17) of a document's procedures
/// and addresses, for a decompiler to show instead of its own: one per address, in address
/// order, at most [`MAX_DECOMPILE_NAMES`] (the lowest addresses).
///
/// ```
/// use rea::session::{Address, DecompileNames};
/// let names = DecompileNames::new([
///     (Address::new(0x20), "second".to_owned()),
///     (Address::new(0x10), "first".to_owned()),
/// ]);
/// assert_eq!(names.as_slice()[0], (Address::new(0x10), "first".to_owned()));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DecompileNames(Vec<(super::Address, String)>);

impl DecompileNames {
    /// The names, sorted by address, the first of each address kept, cut to the bound.
    pub fn new(names: impl IntoIterator<Item = (super::Address, String)>) -> DecompileNames {
        let mut names: Vec<(super::Address, String)> = names.into_iter().collect();
        names.sort_by_key(|(address, _)| *address);
        names.dedup_by_key(|(address, _)| *address);
        names.truncate(MAX_DECOMPILE_NAMES);
        DecompileNames(names)
    }

    /// The names, in address order.
    pub fn as_slice(&self) -> &[(super::Address, String)] {
        &self.0
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// How long a decompilation may take and how much pseudo-C it may return.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecompileBound {
    time: Duration,
    max_chars: usize,
}

impl DecompileBound {
    /// At most `time` (clamped to 1 s ..= [`MAX_DECOMPILE_TIME`]) and `max_chars` characters
    /// (clamped to 1 ..= [`MAX_DECOMPILE_CHARS`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use rea::session::{DecompileBound, MAX_DECOMPILE_TIME};
    /// let bound = DecompileBound::new(Duration::from_secs(900), 10);
    /// assert_eq!(bound.time(), MAX_DECOMPILE_TIME);
    /// assert_eq!(bound.max_chars(), 10);
    /// ```
    pub fn new(time: Duration, max_chars: usize) -> DecompileBound {
        DecompileBound {
            time: time.clamp(Duration::from_secs(1), MAX_DECOMPILE_TIME),
            max_chars: max_chars.clamp(1, MAX_DECOMPILE_CHARS),
        }
    }

    /// The time bound.
    pub fn time(self) -> Duration {
        self.time
    }

    /// Most characters of pseudo-C.
    pub fn max_chars(self) -> usize {
        self.max_chars
    }
}

impl Default for DecompileBound {
    fn default() -> DecompileBound {
        DecompileBound::new(DEFAULT_DECOMPILE_TIME, DEFAULT_DECOMPILE_CHARS)
    }
}

/// Pseudo-C of one procedure, as a decompiler reconstructed it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Decompilation {
    /// The procedure decompiled.
    pub procedure: NamedAddress,
    /// The decompiler and its version, e.g. `angr 9.2.213`.
    pub decompiler: String,
    /// The pseudo-C.
    // At most the bound's characters.
    pub code: String,
    /// The decompiler's warnings and errors, verbatim.
    // In the order it gave them.
    #[schemars(length(max = MAX_DECOMPILE_WARNINGS))]
    pub warnings: Vec<String>,
    /// Whether `code` is the whole procedure as the decompiler reconstructed it.
    pub complete: bool,
    /// Why `complete` is false (structuring failed, a bound stopped it, the output was cut);
    /// null when complete.
    pub incomplete_reason: Option<String>,
}
