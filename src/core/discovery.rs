//! Bounded procedure discovery (docs/CONTRACT.md section 6) as a pure state machine (documented on
//! [`crate::core`]).

use std::sync::Arc;

use hashbrown::{HashMap, HashSet};

use super::bounds::{PROCEDURE_ADDRESS_LIMIT, PROCEDURE_PAGE_SIZE};
use super::complete::{PrefixIndex, is_over_long};

/// One procedure as a provider lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcedureEntry {
    /// Address, lowercase `0x`-prefixed hexadecimal (see [`is_valid_address`]).
    pub address: String,
    /// Symbol name, when the provider knows one: the primary name.
    pub name: Option<String>,
    /// Other names of the same address (aliases, such as `bcmp` beside `memcmp`), in the
    /// provider's order; empty when it knows none. Discovery treats each as a name of this
    /// address, exactly like [`ProcedureEntry::name`]; they do not count toward the page size
    /// (a page's size is its number of entries).
    pub aliases: Vec<String>,
}

impl ProcedureEntry {
    /// An entry with at most a primary name and no aliases.
    ///
    /// ```
    /// use rea::core::ProcedureEntry;
    /// let entry = ProcedureEntry::new("0x401000", Some("main"));
    /// assert_eq!(entry.name.as_deref(), Some("main"));
    /// assert!(entry.aliases.is_empty());
    /// ```
    pub fn new(address: impl Into<String>, name: Option<&str>) -> ProcedureEntry {
        ProcedureEntry {
            address: address.into(),
            name: name.map(str::to_owned),
            aliases: Vec::new(),
        }
    }
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
    /// An entry's address is not canonical lowercase `0x`-prefixed hexadecimal
    /// (see [`is_valid_address`]).
    #[error("entry has an invalid address")]
    InvalidAddress,
    /// An address, name (primary or alias) or cursor is longer than the value bound.
    #[error("a value is longer than the value bound")]
    ValueTooLong,
    /// The provider returned a cursor it had returned before.
    #[error("the provider repeated a cursor")]
    RepeatedCursor,
    /// A page promised more pages but added no new address, or a page was fed after
    /// discovery had finished.
    #[error("a page with a next cursor added no new address")]
    NoProgress,
}

/// The procedures discovery found.
///
/// An owner that never changes the lists can attach their [`PrefixIndex`]
/// ([`Procedures::indexed`], [`Outcome::indexed`]) after discovery; completion then answers
/// from it. Changing a list of an indexed value leaves the index answering for the lists as
/// they were.
#[derive(Clone, Debug, Default)]
pub struct Procedures {
    /// Unique addresses in first-seen order; at most [`PROCEDURE_ADDRESS_LIMIT`].
    pub addresses: Vec<String>,
    /// Names (primary or alias) that map to exactly one address, in first-seen order; empty
    /// unless exhaustive.
    pub names: Vec<String>,
    /// Whether the provider reported its last page before the bound was reached.
    pub exhaustive: bool,
    /// The index of [`Procedures::candidates`], when built.
    index: Option<Arc<PrefixIndex>>,
    /// For each of [`Procedures::names`], the index of its address in
    /// [`Procedures::addresses`] (filled by discovery; empty when built by hand).
    name_addresses: Vec<usize>,
    /// Names the provider listed for two or more addresses (when exhaustive).
    ambiguous: HashSet<String>,
}

/// The lists are compared; whether they are indexed does not change what they complete to.
impl PartialEq for Procedures {
    fn eq(&self, other: &Procedures) -> bool {
        (&self.addresses, &self.names, self.exhaustive)
            == (&other.addresses, &other.names, other.exhaustive)
    }
}

impl Eq for Procedures {}

impl Procedures {
    /// These procedures with the [`PrefixIndex`] of their [`Procedures::candidates`] built
    /// (for the first [`SCAN_LIMIT`](crate::core::SCAN_LIMIT) candidates only).
    pub fn indexed(self) -> Procedures {
        let index = PrefixIndex::new(self.candidates());
        Procedures {
            index: Some(Arc::new(index)),
            ..self
        }
    }

    /// The index built by [`Procedures::indexed`], if any.
    pub fn index(&self) -> Option<&PrefixIndex> {
        self.index.as_deref()
    }

    /// Completion candidates in source order: addresses, then unique names.
    pub fn candidates(&self) -> impl Iterator<Item = &str> {
        self.addresses
            .iter()
            .chain(self.names.iter())
            .map(String::as_str)
    }

    /// [`Procedures::candidates`] with the investigator's `labels` (canonical address, label)
    /// taken in under section 6's rule for names: a name is offered only when discovery was
    /// exhaustive and provider names and labels together give it exactly one address. So a
    /// provider name that is also a label at another address names neither, a label given to
    /// two addresses is not offered, and a label that repeats its procedure's own name is
    /// offered once. Order: addresses, the provider's names, then the labels in `labels`' order.
    ///
    /// ```
    /// use rea::core::{Discovery, Outcome, ProcedureEntry, ProcedurePage, Step};
    ///
    /// let mut discovery = Discovery::new();
    /// let page = ProcedurePage {
    ///     entries: vec![
    ///         ProcedureEntry::new("0x10", Some("main")),
    ///         ProcedureEntry::new("0x20", Some("helper")),
    ///         ProcedureEntry::new("0x5a40", None),
    ///     ],
    ///     next_cursor: None,
    /// };
    /// let Step::Finished(Outcome::Found(procedures)) = discovery.feed(page) else { panic!() };
    /// let labels = [("0x5a40".to_owned(), "parse_args".to_owned()),
    ///               ("0x10".to_owned(), "helper".to_owned())];
    /// let offered: Vec<&str> = procedures.candidates_with_labels(&labels);
    /// // `helper` now names two addresses: neither is offered by that name.
    /// assert_eq!(offered, ["0x10", "0x20", "0x5a40", "main", "parse_args"]);
    /// ```
    pub fn candidates_with_labels<'a>(&'a self, labels: &'a [(String, String)]) -> Vec<&'a str> {
        let mut offered: Vec<&str> = self.addresses.iter().map(String::as_str).collect();
        if !self.exhaustive || labels.is_empty() {
            offered.extend(self.names.iter().map(String::as_str));
            return offered;
        }
        // Each label's one address, or `None` once it was given to two.
        let mut labelled: HashMap<&str, Option<&str>> = HashMap::with_capacity(labels.len());
        for (address, label) in labels {
            labelled
                .entry(label.as_str())
                .and_modify(|one| {
                    if *one != Some(address.as_str()) {
                        *one = None;
                    }
                })
                .or_insert(Some(address.as_str()));
        }
        let mut provider_names: HashMap<&str, &str> = HashMap::with_capacity(self.names.len());
        for (name, &at) in self.names.iter().zip(&self.name_addresses) {
            let address = self.addresses[at].as_str();
            provider_names.insert(name.as_str(), address);
            let agrees = labelled
                .get(name.as_str())
                .is_none_or(|labelled_at| *labelled_at == Some(address));
            if agrees {
                offered.push(name);
            }
        }
        let mut seen = HashSet::with_capacity(labels.len());
        for (_, label) in labels {
            let label = label.as_str();
            // A label the provider also lists was decided with the provider's names above.
            let unique = matches!(labelled.get(label), Some(Some(_)))
                && !self.ambiguous.contains(label)
                && !provider_names.contains_key(label);
            if unique && seen.insert(label) {
                offered.push(label);
            }
        }
        offered
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

impl Outcome {
    /// The outcome with the procedures found [indexed](Procedures::indexed).
    pub fn indexed(self) -> Outcome {
        match self {
            Outcome::Found(procedures) => Outcome::Found(procedures.indexed()),
            malformed => malformed,
        }
    }
}

/// The next step of discovery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Fetch this page and feed it back.
    Fetch(PageRequest),
    /// Discovery is over.
    Finished(Outcome),
}

/// Whether `address` is a valid address: `0x` followed by 1 to 16 lowercase hexadecimal
/// digits without a leading zero, except `0x0` itself (the canonical `{:#x}` rendering of a
/// `u64`).
///
/// ```
/// use rea::core::is_valid_address;
/// assert!(is_valid_address("0x401000"));
/// assert!(is_valid_address("0x0"));
/// assert!(!is_valid_address("0x00401000"));
/// assert!(!is_valid_address("0x401A00"));
/// assert!(!is_valid_address("401000"));
/// ```
pub fn is_valid_address(address: &str) -> bool {
    let Some(digits) = address.strip_prefix("0x") else {
        return false;
    };
    let canonical = digits == "0" || !digits.starts_with('0');
    (1..=16).contains(&digits.len())
        && canonical
        && digits
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Where a name points so far.
#[derive(Clone, Copy, Debug)]
struct NameSlot {
    /// Order in which the name was first seen.
    first_seen: usize,
    /// Index of its single address in `addresses`, or `None` once it was listed with two.
    address: Option<usize>,
}

/// The discovery state machine.
#[derive(Debug, Default)]
pub struct Discovery {
    /// Each unique address with the order in which it was first seen; the map owns the
    /// strings, so an address is stored once and never copied.
    address_index: HashMap<String, usize>,
    names: HashMap<String, NameSlot>,
    seen_cursors: HashSet<String>,
    cursor: Option<String>,
    /// A new address arrived after the bound and was not kept.
    dropped: bool,
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

    /// Takes in a page: `Ok(Some(_))` to continue, `Ok(None)` when discovery is over.
    fn accept(&mut self, page: ProcedurePage) -> Result<Option<PageRequest>, Malformed> {
        validate(&page)?;
        if let Some(cursor) = &page.next_cursor
            && self.seen_cursors.contains(cursor.as_str())
        {
            return Err(Malformed::RepeatedCursor);
        }
        let before = self.address_index.len();
        self.reserve_for(&page);
        for entry in page.entries {
            self.note_entry(entry);
        }
        match page.next_cursor {
            None => {
                self.exhaustive = !self.dropped;
                Ok(None)
            }
            Some(_) if self.address_index.len() == PROCEDURE_ADDRESS_LIMIT => Ok(None),
            Some(_) if self.address_index.len() == before => Err(Malformed::NoProgress),
            Some(cursor) => {
                self.seen_cursors.insert(cursor.clone());
                self.cursor = Some(cursor);
                Ok(Some(self.request()))
            }
        }
    }

    /// Grows the tables once instead of by repeated doubling: a full page that promises
    /// more suggests a listing that reaches the bound.
    fn reserve_for(&mut self, page: &ProcedurePage) {
        let full = page.entries.len() == PROCEDURE_PAGE_SIZE && page.next_cursor.is_some();
        let expected = if full {
            PROCEDURE_ADDRESS_LIMIT
        } else {
            self.address_index.len() + page.entries.len()
        };
        let more = expected.saturating_sub(self.address_index.len());
        self.address_index.reserve(more);
        self.names
            .reserve(expected.saturating_sub(self.names.len()));
    }

    fn note_entry(&mut self, entry: ProcedureEntry) {
        let index = match self.address_index.get(entry.address.as_str()) {
            Some(&index) => index,
            None if self.address_index.len() == PROCEDURE_ADDRESS_LIMIT => {
                // A new address past the bound: discovery cannot be exhaustive any more,
                // and names will not be offered, so the entry is dropped whole.
                self.dropped = true;
                return;
            }
            None => {
                let index = self.address_index.len();
                self.address_index.insert(entry.address, index);
                index
            }
        };
        let ProcedureEntry { name, aliases, .. } = entry;
        for name in name.into_iter().chain(aliases) {
            if !name.is_empty() {
                self.note_name(name, index);
            }
        }
    }

    /// Notes that `name` names the address at `index`.
    fn note_name(&mut self, name: String, index: usize) {
        let first_seen = self.names.len();
        self.names
            .entry(name)
            .and_modify(|slot| {
                if slot.address != Some(index) {
                    slot.address = None;
                }
            })
            .or_insert(NameSlot {
                first_seen,
                address: Some(index),
            });
    }

    fn take_procedures(&mut self) -> Procedures {
        let exhaustive = self.exhaustive;
        // First-seen orders are dense (0..len), so both lists are placed, not sorted.
        let mut addresses = vec![String::new(); self.address_index.len()];
        for (address, index) in self.address_index.drain() {
            addresses[index] = address;
        }
        let mut names = Vec::new();
        let mut name_addresses = Vec::new();
        let mut ambiguous = HashSet::new();
        if exhaustive {
            let mut ordered: Vec<Option<(String, usize)>> = vec![None; self.names.len()];
            for (name, slot) in self.names.drain() {
                match slot.address {
                    Some(at) => ordered[slot.first_seen] = Some((name, at)),
                    None => {
                        ambiguous.insert(name);
                    }
                }
            }
            for (name, at) in ordered.into_iter().flatten() {
                names.push(name);
                name_addresses.push(at);
            }
        }
        Procedures {
            addresses,
            names,
            exhaustive,
            index: None,
            name_addresses,
            ambiguous,
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
        if entry
            .name
            .iter()
            .chain(&entry.aliases)
            .any(|name| is_over_long(name))
        {
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
