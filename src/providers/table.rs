//! A document's procedures in address order, with paging, lookup and name search; shared by
//! the built-in providers.
//!
//! The table is stored compactly, because a catalog may list millions of procedures: one
//! 32-byte record per address, one 16-byte entry per name, and the text of every name in one
//! string ([`Span`]s into it). Addresses and the names `list_procedures` shows are formatted
//! when a page is built, never stored as text. A catalog of 1.6 million procedures (60 MiB of
//! JSON) takes about 100 MB as a table.

use std::collections::HashMap;
use std::num::NonZeroU64;
use std::sync::{Arc, OnceLock};

use crate::base::files::mapped_capacity;
use crate::core::discover;
use crate::core::{
    MAX_VALUE_CHARS, Outcome, PROCEDURE_PAGE_SIZE, ProcedureEntry, ProcedurePage, key,
};
use crate::session::{
    Address, NameMatch, ProcedureInfo, ProcedureMatches, ProcedureName, ProcedureQuery,
    ProcedureSource, ProviderError, Segment,
};

/// Prefix of the cursors this table issues; the rest is the index of the next entry.
const CURSOR_PREFIX: &str = "at:";

/// One name found for an address, with its preference: lower ranks are preferred as the
/// primary name.
#[derive(Clone, Debug)]
pub(crate) struct FoundName {
    pub(crate) rank: u8,
    pub(crate) name: ProcedureName,
}

/// A piece of a table's name text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    start: u32,
    len: u32,
}

/// A display name and a raw name (the same span when they are equal).
#[derive(Clone, Copy, Debug)]
struct StoredName {
    name: Span,
    raw: Span,
}

/// No segment (a segment index).
const NO_SEGMENT: u32 = u32::MAX;

/// The sources of a procedure as a set, one bit per [`ProcedureSource`] in declaration (and
/// so sort) order.
#[derive(Clone, Copy, Debug, Default)]
struct Sources(u16);

const ALL_SOURCES: [ProcedureSource; 9] = [
    ProcedureSource::SymbolTable,
    ProcedureSource::DynamicSymbols,
    ProcedureSource::Exports,
    ProcedureSource::UnwindTable,
    ProcedureSource::FunctionStarts,
    ProcedureSource::ImportStubs,
    ProcedureSource::EntryPoint,
    ProcedureSource::CallTargets,
    ProcedureSource::Catalog,
];

impl Sources {
    fn bit(source: ProcedureSource) -> u16 {
        let index = ALL_SOURCES
            .iter()
            .position(|&s| s == source)
            .unwrap_or_default();
        1 << index
    }

    fn with(self, source: ProcedureSource) -> Sources {
        Sources(self.0 | Sources::bit(source))
    }

    fn list(self) -> Vec<ProcedureSource> {
        ALL_SOURCES
            .iter()
            .copied()
            .filter(|&s| self.0 & Sources::bit(s) != 0)
            .collect()
    }
}

/// One sighting of a procedure, before sightings are merged by address.
#[derive(Clone, Copy, Debug)]
struct Sighting {
    address: u64,
    size: Option<NonZeroU64>,
    name: Option<StoredName>,
    segment: u32,
    rank: u8,
    source: ProcedureSource,
}

/// Name text and interned segment names, shared by a builder and the table it builds.
#[derive(Default)]
struct Text {
    text: String,
    /// Set when the text would pass 4 GiB (spans are 32-bit).
    overflow: bool,
}

impl Text {
    fn push(&mut self, text: &str) -> Span {
        let start = self.text.len();
        match (u32::try_from(start), u32::try_from(text.len())) {
            (Ok(start), Ok(len)) if start.checked_add(len).is_some() => {
                reserve(&mut self.text, text.len());
                self.text.push_str(text);
                Span { start, len }
            }
            _ => {
                self.overflow = true;
                Span { start: 0, len: 0 }
            }
        }
    }

    fn name(&mut self, name: &str, raw_name: &str) -> StoredName {
        let name_span = self.push(name);
        let raw = if raw_name == name {
            name_span
        } else {
            self.push(raw_name)
        };
        StoredName {
            name: name_span,
            raw,
        }
    }

    fn get(&self, span: Span) -> &str {
        let start = span.start as usize;
        self.text
            .get(start..start + span.len as usize)
            .unwrap_or_default()
    }
}

/// Collects procedures from several sources before they are merged by address.
#[derive(Default)]
pub(crate) struct TableBuilder {
    sightings: Vec<Sighting>,
    text: Text,
    segments: Vec<Box<str>>,
    segment_ids: HashMap<Box<str>, u32>,
}

impl TableBuilder {
    /// Notes a procedure at `address` seen by `source`, with an optional name and size.
    pub(crate) fn add(
        &mut self,
        address: u64,
        source: ProcedureSource,
        name: Option<FoundName>,
        size: Option<u64>,
    ) {
        let rank = name.as_ref().map_or(0, |found| found.rank);
        let stored = name.map(|found| self.text.name(&found.name.name, &found.name.raw_name));
        self.push(address, source, rank, stored, size);
    }

    /// [`TableBuilder::add`] with the display and raw name borrowed (rank 0).
    pub(crate) fn add_named(
        &mut self,
        address: u64,
        source: ProcedureSource,
        name: Option<(&str, &str)>,
        size: Option<u64>,
    ) {
        let stored = name.map(|(name, raw_name)| self.text.name(name, raw_name));
        self.push(address, source, 0, stored, size);
    }

    fn push(
        &mut self,
        address: u64,
        source: ProcedureSource,
        rank: u8,
        name: Option<StoredName>,
        size: Option<u64>,
    ) {
        if self.sightings.len() == self.sightings.capacity() {
            let wanted = mapped_capacity(
                (self.sightings.len() * 2).max(16),
                std::mem::size_of::<Sighting>(),
            );
            self.sightings
                .reserve_exact(wanted.saturating_sub(self.sightings.len()));
        }
        self.sightings.push(Sighting {
            address,
            size: size.and_then(NonZeroU64::new),
            name,
            segment: NO_SEGMENT,
            rank,
            source,
        });
    }

    /// Places the procedure added last at `address` in the named segment, whatever the
    /// segment addresses say.
    pub(crate) fn place(&mut self, address: u64, segment: &str) {
        let id = self.segment_id(segment);
        if let Some(sighting) = self
            .sightings
            .iter_mut()
            .rev()
            .find(|sighting| sighting.address == address)
        {
            sighting.segment = id;
        }
    }

    fn segment_id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.segment_ids.get(name) {
            return id;
        }
        let id = u32::try_from(self.segments.len()).unwrap_or(NO_SEGMENT);
        self.segments.push(name.into());
        self.segment_ids.insert(name.into(), id);
        id
    }

    /// How many sightings were added.
    pub(crate) fn len(&self) -> usize {
        self.sightings.len()
    }

    /// The addresses of the sightings, in the order they were added.
    pub(crate) fn addresses(&self) -> impl Iterator<Item = u64> + '_ {
        self.sightings.iter().map(|sighting| sighting.address)
    }

    /// The address of the sighting added `index`-th.
    pub(crate) fn address_at(&self, index: usize) -> u64 {
        self.sightings[index].address
    }

    /// The segment names the sightings were placed in, in the order they were added (`None`
    /// for one not placed).
    pub(crate) fn placements(&self) -> impl Iterator<Item = Option<&str>> + '_ {
        self.sightings.iter().map(|sighting| {
            self.segments
                .get(sighting.segment as usize)
                .map(|name| &**name)
        })
    }

    /// Merges by address. `segments` must be sorted by address; a procedure not placed
    /// explicitly is placed in the first segment containing its address.
    pub(crate) fn finish(mut self, segments: &[Segment]) -> Result<ProcedureTable, ProviderError> {
        if self.text.overflow {
            return Err(ProviderError::Malformed {
                reason: "the procedure names take more than 4 GiB".to_owned(),
            });
        }
        // Stable, so that the first size and the last placement added win, as documented.
        if !self.sightings.is_sorted_by_key(|sighting| sighting.address) {
            self.sightings.sort_by_key(|sighting| sighting.address);
        }
        let mut sightings = std::mem::take(&mut self.sightings);
        let distinct = 1 + sightings
            .windows(2)
            .filter(|pair| pair[0].address != pair[1].address)
            .count();
        let mut records: Vec<ProcedureRecord> = Vec::with_capacity(distinct.min(sightings.len()));
        let mut names: Vec<StoredName> = Vec::with_capacity(
            sightings
                .iter()
                .filter(|sighting| sighting.name.is_some())
                .count(),
        );
        let mut run: Vec<(u8, StoredName)> = Vec::new();
        for group in sightings.chunk_by(|a, b| a.address == b.address) {
            let address = group[0].address;
            run.clear();
            run.extend(
                group
                    .iter()
                    .filter_map(|sighting| sighting.name.map(|name| (sighting.rank, name))),
            );
            if run.len() > 1 {
                let text = &self.text;
                run.sort_by(|a, b| {
                    (a.0, text.get(a.1.raw), text.get(a.1.name)).cmp(&(
                        b.0,
                        text.get(b.1.raw),
                        text.get(b.1.name),
                    ))
                });
            }
            let first_name = u32::try_from(names.len()).unwrap_or(u32::MAX);
            for &(_, candidate) in &run {
                let raw = self.text.get(candidate.raw);
                let seen = names[first_name as usize..]
                    .iter()
                    .any(|n| self.text.get(n.raw) == raw);
                if !seen {
                    names.push(candidate);
                }
            }
            let name_count = u32::try_from(names.len() - first_name as usize).unwrap_or(u32::MAX);
            let placed = group
                .iter()
                .rev()
                .map(|sighting| sighting.segment)
                .find(|&segment| segment != NO_SEGMENT);
            let segment = match placed {
                Some(segment) => segment,
                None => match segment_containing(segments, address) {
                    Some(found) => self.segment_id(&found.name),
                    None => NO_SEGMENT,
                },
            };
            records.push(ProcedureRecord {
                address,
                size: group.iter().find_map(|sighting| sighting.size),
                first_name,
                name_count,
                segment,
                sources: group.iter().fold(Sources::default(), |set, sighting| {
                    set.with(sighting.source)
                }),
            });
        }
        sightings.clear();
        drop(sightings);
        Ok(ProcedureTable {
            records: shrunk(records),
            names: shrunk(names),
            text: self.text.text,
            segments: self.segments.into_boxed_slice(),
            discovery: OnceLock::new(),
        })
    }
}

/// Grows `text` for `more` bytes, doubling, at the capacity [`mapped_capacity`] gives.
fn reserve(text: &mut String, more: usize) {
    let needed = text.len().saturating_add(more);
    if needed > text.capacity() {
        let wanted = mapped_capacity(needed.max(text.capacity().saturating_mul(2)), 1);
        text.reserve_exact(wanted - text.len());
    }
}

/// `items` without spare capacity, unless [`mapped_capacity`] wants the spare (only pages
/// written are resident).
fn shrunk<T>(mut items: Vec<T>) -> Vec<T> {
    if mapped_capacity(items.len(), std::mem::size_of::<T>()) == items.len() {
        items.shrink_to_fit();
    }
    items
}

/// The name `list_procedures` shows: the display name, else the raw name, if it fits the value
/// bound (completion rejects pages with longer values).
fn listed_name<'a>(name: &'a str, raw_name: &'a str) -> Option<&'a str> {
    [name, raw_name]
        .into_iter()
        .find(|text| !text.is_empty() && text.chars().nth(MAX_VALUE_CHARS).is_none())
}

/// The first segment of `segments` (sorted by address) that contains `address`.
pub(crate) fn segment_containing(segments: &[Segment], address: u64) -> Option<&Segment> {
    let after = segments.partition_point(|s| s.address.value() <= address);
    segments[..after]
        .iter()
        .rev()
        .find(|s| address - s.address.value() < s.size.max(1))
}

/// One address of a table (32 bytes).
#[derive(Clone, Copy, Debug)]
struct ProcedureRecord {
    address: u64,
    size: Option<NonZeroU64>,
    /// Index of the primary name in the table's names; the aliases follow it.
    first_name: u32,
    name_count: u32,
    segment: u32,
    sources: Sources,
}

/// Procedures of one document, one per address, in address order.
pub(crate) struct ProcedureTable {
    // Vectors rather than boxed slices: their capacity is chosen by `mapped_capacity`.
    records: Vec<ProcedureRecord>,
    names: Vec<StoredName>,
    text: String,
    segments: Box<[Box<str>]>,
    /// Bounded discovery over this table's own pages, computed on first use: the table never
    /// changes, so neither does the outcome.
    discovery: OnceLock<Option<Arc<Outcome>>>,
}

impl ProcedureTable {
    fn text(&self, span: Span) -> &str {
        let start = span.start as usize;
        self.text
            .get(start..start + span.len as usize)
            .unwrap_or_default()
    }

    /// The names of `record`, primary first, as (display, raw) text.
    fn names<'a>(
        &'a self,
        record: &ProcedureRecord,
    ) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        let start = record.first_name as usize;
        let end = start + record.name_count as usize;
        self.names
            .get(start..end)
            .unwrap_or_default()
            .iter()
            .map(|name| (self.text(name.name), self.text(name.raw)))
    }

    fn info_of(&self, record: &ProcedureRecord) -> ProcedureInfo {
        let mut names = self.names(record).map(|(name, raw_name)| ProcedureName {
            name: name.to_owned(),
            raw_name: raw_name.to_owned(),
        });
        ProcedureInfo {
            address: Address::new(record.address),
            name: names.next(),
            aliases: names.collect(),
            size: record.size.map(NonZeroU64::get),
            segment: self
                .segments
                .get(record.segment as usize)
                .map(|name| name.to_string()),
            sources: record.sources.list(),
        }
    }

    /// [`ProcedureTable::discovery`] if it is already computed and succeeded.
    pub(crate) fn ready_discovery(&self) -> Option<Arc<Outcome>> {
        self.discovery.get().cloned().flatten()
    }

    /// The outcome of bounded discovery over [`ProcedureTable::page`], computed once.
    pub(crate) fn discovery(&self) -> Result<Arc<Outcome>, ProviderError> {
        self.discovery
            .get_or_init(|| {
                // The table never changes, so completion answers from an index of the
                // candidates, built here once.
                discover(|request| self.page(request.cursor.as_deref(), request.limit))
                    .ok()
                    .map(|outcome| Arc::new(outcome.indexed()))
            })
            .clone()
            .ok_or_else(|| ProviderError::Malformed {
                reason: "the procedure table cannot be paged through".to_owned(),
            })
    }

    /// One page: at most `limit` (and at most [`PROCEDURE_PAGE_SIZE`]) entries from `cursor`.
    pub(crate) fn page(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<ProcedurePage, ProviderError> {
        if limit == 0 {
            return Err(ProviderError::InvalidArgument {
                argument: "limit",
                reason: "must be at least 1".to_owned(),
            });
        }
        let start = match cursor {
            None => 0,
            Some(text) => self.parse_cursor(text)?,
        };
        let end = self
            .records
            .len()
            .min(start + limit.min(PROCEDURE_PAGE_SIZE));
        let entries = self.records[start..end]
            .iter()
            .map(|record| {
                let mut names = self
                    .names(record)
                    .map(|(name, raw_name)| listed_name(name, raw_name));
                let name = names.next().flatten();
                // The aliases as listed, without the listed primary name and without repeats
                // (two raw names can share a display name).
                let mut aliases: Vec<String> = Vec::new();
                for text in names.flatten() {
                    if name != Some(text) && !aliases.iter().any(|alias| alias == text) {
                        aliases.push(text.to_owned());
                    }
                }
                ProcedureEntry {
                    address: Address::new(record.address).to_string(),
                    name: name.map(str::to_owned),
                    aliases,
                }
            })
            .collect();
        Ok(ProcedurePage {
            entries,
            next_cursor: (end < self.records.len()).then(|| format!("{CURSOR_PREFIX}{end}")),
        })
    }

    fn parse_cursor(&self, text: &str) -> Result<usize, ProviderError> {
        text.strip_prefix(CURSOR_PREFIX)
            .filter(|digits| !digits.starts_with('0') && !digits.starts_with('+'))
            .and_then(|digits| digits.parse::<usize>().ok())
            .filter(|&start| start < self.records.len())
            .ok_or_else(|| ProviderError::InvalidCursor {
                cursor: text.into(),
            })
    }

    /// Every procedure as (start address, known size, display name), in address order; what
    /// the code analysis decodes.
    pub(crate) fn outlines(&self) -> impl Iterator<Item = (u64, Option<u64>, Option<&str>)> {
        self.records.iter().map(|record| {
            let name = self.names(record).next().map(|(name, _)| name);
            (record.address, record.size.map(NonZeroU64::get), name)
        })
    }

    /// The procedure starting at `address`.
    pub(crate) fn info(
        &self,
        document: &str,
        address: Address,
    ) -> Result<ProcedureInfo, ProviderError> {
        self.records
            .binary_search_by_key(&address.value(), |record| record.address)
            .map(|index| self.info_of(&self.records[index]))
            .map_err(|_| ProviderError::NoProcedure {
                document: document.into(),
                address,
            })
    }

    /// Procedures with a display or raw name matching `query`, in address order.
    pub(crate) fn search(&self, query: &ProcedureQuery) -> ProcedureMatches {
        let wanted = key(query.text());
        let hit = |(name, raw_name): (&str, &str)| match query.matching() {
            NameMatch::Exact => name == query.text() || raw_name == query.text(),
            NameMatch::Contains => [name, raw_name]
                .into_iter()
                .any(|text| key(text).contains(wanted.as_ref())),
        };
        let mut matching = self
            .records
            .iter()
            .filter(|record| self.names(record).any(hit));
        let procedures: Vec<ProcedureInfo> = matching
            .by_ref()
            .take(query.limit())
            .map(|record| self.info_of(record))
            .collect();
        ProcedureMatches {
            procedures,
            truncated: matching.next().is_some(),
        }
    }
}
