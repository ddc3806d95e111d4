//! The pure completion core: bounds, the matching key, `complete()` and bounded procedure
//! discovery.
//!
//! Nothing in this module performs I/O, reads a clock, awaits, or knows about JSON-RPC. Every
//! function is total: it returns a value or a typed error for any input and never panics.
//! (Hash tables use hashbrown's randomly seeded foldhash; the seed affects speed, never
//! results.)
//!
//! - The bounds of docs/CONTRACT.md section 2: [`MAX_VALUE_CHARS`], [`SCAN_LIMIT`],
//!   [`PROCEDURE_ADDRESS_LIMIT`], [`PROCEDURE_PAGE_SIZE`], [`MAX_VALUES`].
//! - The matching key and prefix relation of docs/CONTRACT.md section 3 ([`key()`], [`matches()`]),
//!   and the Unicode version of every table they use ([`UNICODE_VERSION`], 18.0.0); see
//!   [the matching key](#the-matching-key) below.
//! - [`complete()`] of docs/CONTRACT.md section 4: bounded, deduplicated, code-point-sorted prefix
//!   matching; [`PrefixIndex`], the same answer from an immutable table sorted once by key,
//!   and [`complete_ordered`] for tables that are their own index (ordered lowercase IDs).
//! - Bounded procedure discovery of docs/CONTRACT.md section 6 ([`Discovery`], [`discover`]), with
//!   the decisions on valid addresses and non-advancing pages; see
//!   [procedure discovery](#procedure-discovery) below.
//! - [`Family`]: argument families (docs/CONTRACT.md section 5).
//!
//! # The matching key
//!
//! The matching key and the prefix relation of docs/CONTRACT.md section 3.
//!
//! ## Definition
//!
//! `key(x) = NFKD(strip_DI(casefold(NFKD(x))))`: compatibility decomposition, full Unicode
//! case folding (CaseFolding.txt statuses C and F, so "ß" becomes "ss" and KELVIN SIGN becomes
//! "k"), removal of Default_Ignorable_Code_Point characters, and a final NFKD that restores
//! canonical order after folding changed combining classes (U+0345 folds to the starter "ι")
//! or removal brought marks together. The first step is NFKD rather than NFD because the
//! NFD-first forms of Unicode D146/D147 are not invariant under NFKD of their input
//! ("\u{345}\u{FF9E}" is the classic witness). On every scalar value the key equals
//! `NFKD(NFKC_Casefold(x))` (checked exhaustively by `tests/it/unicode_exhaustive.rs`).
//!
//! `matches(prefix, candidate)` holds when `key(prefix)` is empty, or `key(candidate)` starts
//! with `key(prefix)` and the character after it is absent or a starter (canonical combining
//! class 0). "f" matches "ﬁle", but "e" does not match "é" (the next key character is
//! U+0301).
//!
//! ## Unicode data
//!
//! Everything uses Unicode [`UNICODE_VERSION`] (18.0.0):
//! - NFKD and canonical combining classes: `unicode-normalization` 0.1.26, whose tables are
//!   Unicode 18.0.0 (`unicode_normalization::UNICODE_VERSION`);
//! - case folding: `unicase` 2.10.0, which does not state a version; it agrees with ICU4X 2.4
//!   (Unicode 18.0.0 data) on all 1,112,064 scalar values;
//! - the Default_Ignorable_Code_Point table behind [`is_default_ignorable`]: DerivedCoreProperties.txt of Unicode 18.0.0.
//!
//! `tests/it/unicode_exhaustive.rs` compares each of these with ICU4X over every scalar value and
//! fails when a dependency update changes the version, so this paragraph stays true.
//!
//! ## ASCII fast path
//!
//! For ASCII input the key is `to_ascii_lowercase`. More generally, cutting a string next to
//! an ASCII character cuts its key at the same place (`key(a + b) == key(a) + key(b)` when `a`
//! ends or `b` starts with ASCII), because ASCII characters are starters that NFKD never
//! decomposes or reorders across, folding maps to ASCII, and none is default ignorable. The
//! matcher (the private `matcher` module) screens candidates eight leading bytes at a time
//! with this, decides most of the rest from their leading ASCII run, and settles most
//! non-ASCII candidates from their first character ([`stable_first_key_char`]) without
//! computing a key.
//!
//! # Procedure discovery
//!
//! Bounded procedure discovery (docs/CONTRACT.md section 6) as a pure state machine.
//!
//! The caller asks [`Discovery::request`] what to fetch, calls the provider itself, and feeds
//! the page to [`Discovery::feed`] until a [`Step::Finished`] comes back; [`discover`] is that
//! loop for a synchronous fetch function.
//!
//! ## Rules
//!
//! - Every request asks for [`PROCEDURE_PAGE_SIZE`] entries and passes back the cursor of the
//!   previous page. Discovery is **exhaustive** when a page has no next cursor and every
//!   address it listed was kept, and **bounded** when [`PROCEDURE_ADDRESS_LIMIT`] unique
//!   addresses have been seen; then it stops and further new addresses are ignored.
//! - Addresses are always candidates. Names are candidates only after exhaustive discovery,
//!   and only names listed with exactly one address; a name listed with two addresses is
//!   never offered. An entry's aliases ([`ProcedureEntry::aliases`]) are names of its address
//!   like its primary name: `bcmp` and `memcmp` at one address are both offered, and a name
//!   that is the primary name at one address and an alias at another is not. An empty name
//!   counts as no name.
//! - A **valid address** is the canonical lowercase hexadecimal rendering of a 64-bit value:
//!   `0x` followed by 1 to 16 digits `0-9a-f` with no leading zero (`0x0` is zero). Canonical
//!   form makes string identity the same as address identity, so "unique addresses" and
//!   "a name mapped to one address" mean what they say; `format!("{addr:#x}")` produces it.
//! - A page is **malformed** when it holds more entries than asked for (entries are counted,
//!   not names: an entry with aliases is one item), an entry has an invalid address, a name
//!   (primary or alias) or the cursor is longer than [`MAX_VALUE_CHARS`],
//!   its next cursor was returned before (a repeated cursor), or it is **non-advancing**: it
//!   has a next cursor but adds no new unique address. Any malformed page ends discovery with
//!   [`Outcome::Malformed`], and the completion is empty.
//!
//! ## Termination
//!
//! Every page that lets discovery continue adds at least one new unique address, so any page
//! sequence, however adversarial, ends after at most [`PROCEDURE_ADDRESS_LIMIT`] pages.
//! Memory stays proportional to the pages fed.

pub(crate) mod bounds;
pub(crate) mod complete;
pub mod diff;
pub(crate) mod discovery;
mod family;
pub(crate) mod key;

mod words;

pub use bounds::{
    MAX_VALUE_CHARS, MAX_VALUES, PROCEDURE_ADDRESS_LIMIT, PROCEDURE_PAGE_SIZE, SCAN_LIMIT,
};
pub use complete::{
    Completion, Prefix, PrefixIndex, ValueTooLong, complete, complete_ordered, complete_prefix,
    extends_ordered,
};
pub use discovery::{
    Discovery, Malformed, Outcome, PageRequest, ProcedureEntry, ProcedurePage, Procedures, Step,
    discover, is_valid_address,
};
pub use family::Family;
pub use key::{
    UNICODE_VERSION, case_fold, general_key, is_default_ignorable, key, key_extends, matches,
    stable_first_key_char,
};
