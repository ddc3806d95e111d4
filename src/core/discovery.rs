//! Bounded procedure discovery (SPEC section 6) as a pure state machine.
//!
//! The caller asks [`Discovery::request`] what to fetch, calls the provider itself, and feeds
//! the page to [`Discovery::feed`], until a [`Step::Finished`] comes back. Each accepted page
//! either adds a new unique address or ends discovery, and cursors may never repeat, so any
//! page sequence ends after at most [`PROCEDURE_ADDRESS_LIMIT`] + 1 pages.

use std::collections::{HashMap, HashSet};

use super::bounds::{PROCEDURE_ADDRESS_LIMIT, PROCEDURE_PAGE_SIZE};
use super::complete::is_over_long;

/// One procedure as a provider lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcedureEntry {
    /// Address, lowercase `0x`-prefixed hexadecimal (see [`is_valid_address`]).
    pub address: String,
    /// Symbol name, when the provider knows one.
    pub name: Option<String>,
}

/// One page of a provider's `list_procedures`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProcedurePage {
    /// The entries of this page, at most the limit asked for.
    pub entries: Vec<ProcedureEntry>,
    /// Opaque cursor of the next page; `None` when this is the last page.
    pub next_cursor: Option<String>,
}

/// What discovery asks the provider for next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageRequest {
    /// Cursor to pass back to the provider; `None` for the first page.
    pub cursor: Option<String>,
    /// Page size: always [`PROCEDURE_PAGE_SIZE`].
    pub limit: usize,
}

/// Why provider output was rejected. Any of these makes the whole completion empty.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    /// A page held more entries than asked for.
    #[error("page holds {got} entries; {limit} were asked for")]
    TooManyEntries {
        /// Entries in the page.
        got: usize,
        /// The limit asked for.
        limit: usize,
    },
    /// An entry's address is not lowercase `0x`-prefixed hexadecimal.
    #[error("entry has an invalid address")]
    InvalidAddress,
    /// An address, name or cursor is longer than the value bound.
    #[error("a value is longer than the value bound")]
    ValueTooLong,
    /// The provider returned a cursor it had returned before.
    #[error("the provider repeated a cursor")]
    RepeatedCursor,
    /// A page promised more pages but added no new address.
    #[error("a page with a next cursor added no new address")]
    NoProgress,
}

/// The procedures discovery found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Procedures {
    /// Unique addresses in first-seen order; at most [`PROCEDURE_ADDRESS_LIMIT`].
    pub addresses: Vec<String>,
    /// Names that map to exactly one address, in first-seen order; empty unless exhaustive.
    pub names: Vec<String>,
    /// Whether the provider reported its last page before the bound was reached.
    pub exhaustive: bool,
}

impl Procedures {
    /// Completion candidates in source order: addresses, then unique names.
    pub fn candidates(&self) -> impl Iterator<Item = &str> {
        self.addresses
            .iter()
            .chain(self.names.iter())
            .map(String::as_str)
    }
}

/// How discovery ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Discovery ended normally (exhaustively or at the bound).
    Found(Procedures),
    /// The provider's output was malformed; completion must be empty.
    Malformed(Malformed),
}

/// The next step of discovery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Fetch this page and feed it back.
    Fetch(PageRequest),
    /// Discovery is over.
    Finished(Outcome),
}

/// Whether `address` is `0x` followed by 1 to 16 lowercase hexadecimal digits.
pub fn is_valid_address(address: &str) -> bool {
    match address.strip_prefix("0x") {
        Some(digits) => {
            (1..=16).contains(&digits.len())
                && digits
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        }
        None => false,
    }
}

/// The discovery state machine.
#[derive(Debug, Default)]
pub struct Discovery {
    addresses: Vec<String>,
    seen_addresses: HashSet<String>,
    /// Name to the single address it maps to, or `None` once it maps to two.
    names: HashMap<String, Option<String>>,
    name_order: Vec<String>,
    seen_cursors: HashSet<String>,
    cursor: Option<String>,
    exhaustive: bool,
    finished: bool,
}

impl Discovery {
    /// A fresh discovery.
    pub fn new() -> Discovery {
        Discovery::default()
    }

    /// The page to fetch next.
    pub fn request(&self) -> PageRequest {
        PageRequest {
            cursor: self.cursor.clone(),
            limit: PROCEDURE_PAGE_SIZE,
        }
    }

    /// Feeds the page answered for [`Discovery::request`] and says what to do next.
    /// Feeding after a [`Step::Finished`] is answered with [`Malformed::NoProgress`].
    pub fn feed(&mut self, page: ProcedurePage) -> Step {
        if self.finished {
            return Step::Finished(Outcome::Malformed(Malformed::NoProgress));
        }
        match self.accept(page) {
            Ok(Some(request)) => Step::Fetch(request),
            Ok(None) => {
                self.finished = true;
                Step::Finished(Outcome::Found(self.take_procedures()))
            }
            Err(malformed) => {
                self.finished = true;
                Step::Finished(Outcome::Malformed(malformed))
            }
        }
    }

    fn accept(&mut self, page: ProcedurePage) -> Result<Option<PageRequest>, Malformed> {
        validate(&page)?;
        if let Some(cursor) = &page.next_cursor {
            if !self.seen_cursors.insert(cursor.clone()) {
                return Err(Malformed::RepeatedCursor);
            }
        }
        let before = self.addresses.len();
        let mut dropped = false;
        for entry in page.entries {
            if !self.seen_addresses.contains(&entry.address) {
                if self.addresses.len() == PROCEDURE_ADDRESS_LIMIT {
                    dropped = true;
                    continue;
                }
                self.seen_addresses.insert(entry.address.clone());
                self.addresses.push(entry.address.clone());
            }
            if let Some(name) = entry.name {
                self.note_name(name, entry.address);
            }
        }
        let bounded = dropped || self.addresses.len() == PROCEDURE_ADDRESS_LIMIT;
        match page.next_cursor {
            None => {
                self.exhaustive = !dropped;
                Ok(None)
            }
            Some(_) if bounded => Ok(None),
            Some(_) if self.addresses.len() == before => Err(Malformed::NoProgress),
            Some(cursor) => {
                self.cursor = Some(cursor);
                Ok(Some(self.request()))
            }
        }
    }

    fn note_name(&mut self, name: String, address: String) {
        match self.names.get_mut(&name) {
            Some(slot) => {
                if slot.as_deref() != Some(address.as_str()) {
                    *slot = None;
                }
            }
            None => {
                self.name_order.push(name.clone());
                self.names.insert(name, Some(address));
            }
        }
    }

    fn take_procedures(&mut self) -> Procedures {
        let exhaustive = self.exhaustive;
        let names = if exhaustive {
            std::mem::take(&mut self.name_order)
                .into_iter()
                .filter(|name| matches!(self.names.get(name), Some(Some(_))))
                .collect()
        } else {
            Vec::new()
        };
        Procedures {
            addresses: std::mem::take(&mut self.addresses),
            names,
            exhaustive,
        }
    }
}

fn validate(page: &ProcedurePage) -> Result<(), Malformed> {
    if page.entries.len() > PROCEDURE_PAGE_SIZE {
        return Err(Malformed::TooManyEntries {
            got: page.entries.len(),
            limit: PROCEDURE_PAGE_SIZE,
        });
    }
    if page.next_cursor.as_deref().is_some_and(is_over_long) {
        return Err(Malformed::ValueTooLong);
    }
    for entry in &page.entries {
        if !is_valid_address(&entry.address) {
            return Err(Malformed::InvalidAddress);
        }
        if entry.name.as_deref().is_some_and(is_over_long) {
            return Err(Malformed::ValueTooLong);
        }
    }
    Ok(())
}

/// Runs discovery to the end with `fetch` as the provider call. A fetch error ends discovery
/// with that error.
pub fn discover<E>(
    mut fetch: impl FnMut(&PageRequest) -> Result<ProcedurePage, E>,
) -> Result<Outcome, E> {
    let mut discovery = Discovery::new();
    let mut request = discovery.request();
    loop {
        let page = fetch(&request)?;
        match discovery.feed(page) {
            Step::Fetch(next) => request = next,
            Step::Finished(outcome) => return Ok(outcome),
        }
    }
}
