//! A document's procedures in address order, with paging, lookup and name search; shared by
//! the built-in providers.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

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

#[derive(Default)]
struct Found {
    names: Vec<FoundName>,
    size: Option<u64>,
    segment: Option<String>,
    sources: Vec<ProcedureSource>,
}

/// Collects procedures from several sources before they are merged by address.
#[derive(Default)]
pub(crate) struct TableBuilder {
    found: BTreeMap<u64, Found>,
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
        let found = self.found.entry(address).or_default();
        if !found.sources.contains(&source) {
            found.sources.push(source);
        }
        if let Some(name) = name {
            found.names.push(name);
        }
        if found.size.is_none() {
            found.size = size.filter(|&size| size > 0);
        }
    }

    /// Places the procedure at `address` (added before) in the named segment, whatever the
    /// segment addresses say.
    pub(crate) fn place(&mut self, address: u64, segment: String) {
        if let Some(found) = self.found.get_mut(&address) {
            found.segment = Some(segment);
        }
    }

    /// Merges by address. `segments` must be sorted by address; a procedure not placed
    /// explicitly is placed in the first segment containing its address.
    pub(crate) fn finish(self, segments: &[Segment]) -> ProcedureTable {
        let records = self
            .found
            .into_iter()
            .map(|(address, mut found)| {
                found.names.sort_by(|a, b| {
                    (a.rank, &a.name.raw_name, &a.name.name).cmp(&(
                        b.rank,
                        &b.name.raw_name,
                        &b.name.name,
                    ))
                });
                let mut names: Vec<ProcedureName> = Vec::with_capacity(found.names.len());
                for candidate in found.names {
                    if !names.iter().any(|n| n.raw_name == candidate.name.raw_name) {
                        names.push(candidate.name);
                    }
                }
                found.sources.sort_unstable();
                let mut names = names.into_iter();
                let name = names.next();
                let address = Address::new(address);
                ProcedureRecord {
                    address_text: address.to_string(),
                    listed_name: name.as_ref().and_then(listed_name),
                    address,
                    name,
                    aliases: names.collect(),
                    size: found.size,
                    segment: found.segment.or_else(|| {
                        segment_containing(segments, address.value()).map(|s| s.name.clone())
                    }),
                    sources: found.sources,
                }
            })
            .collect();
        ProcedureTable {
            records,
            discovery: OnceLock::new(),
        }
    }
}

/// The name `list_procedures` shows for a primary name or an alias: the display name, else the
/// raw name, if it fits the value bound (completion rejects pages with longer values).
fn listed_name(name: &ProcedureName) -> Option<String> {
    [&name.name, &name.raw_name]
        .into_iter()
        .find(|text| !text.is_empty() && text.chars().nth(MAX_VALUE_CHARS).is_none())
        .cloned()
}

/// The first segment of `segments` (sorted by address) that contains `address`.
pub(crate) fn segment_containing(segments: &[Segment], address: u64) -> Option<&Segment> {
    let after = segments.partition_point(|s| s.address.value() <= address);
    segments[..after]
        .iter()
        .rev()
        .find(|s| address - s.address.value() < s.size.max(1))
}

struct ProcedureRecord {
    address: Address,
    address_text: String,
    name: Option<ProcedureName>,
    listed_name: Option<String>,
    aliases: Vec<ProcedureName>,
    size: Option<u64>,
    segment: Option<String>,
    sources: Vec<ProcedureSource>,
}

impl ProcedureRecord {
    fn info(&self) -> ProcedureInfo {
        ProcedureInfo {
            address: self.address,
            name: self.name.clone(),
            aliases: self.aliases.clone(),
            size: self.size,
            segment: self.segment.clone(),
            sources: self.sources.clone(),
        }
    }

    /// The aliases as `list_procedures` shows them ([`listed_name`] of each), without the
    /// listed primary name and without repeats (two raw names can share a display name).
    fn listed_aliases(&self) -> Vec<String> {
        let mut listed: Vec<String> = Vec::new();
        for text in self.aliases.iter().filter_map(listed_name) {
            if self.listed_name.as_ref() != Some(&text) && !listed.contains(&text) {
                listed.push(text);
            }
        }
        listed
    }

    fn names(&self) -> impl Iterator<Item = &ProcedureName> {
        self.name.iter().chain(&self.aliases)
    }
}

/// Procedures of one document, one per address, in address order.
pub(crate) struct ProcedureTable {
    records: Vec<ProcedureRecord>,
    /// Bounded discovery over this table's own pages, computed on first use: the table never
    /// changes, so neither does the outcome.
    discovery: OnceLock<Option<Arc<Outcome>>>,
}

impl ProcedureTable {
    /// [`ProcedureTable::discovery`] if it is already computed and succeeded.
    pub(crate) fn ready_discovery(&self) -> Option<Arc<Outcome>> {
        self.discovery.get().cloned().flatten()
    }

    /// The outcome of bounded discovery over [`ProcedureTable::page`], computed once.
    pub(crate) fn discovery(&self) -> Result<Arc<Outcome>, ProviderError> {
        self.discovery
            .get_or_init(|| {
                discover(|request| self.page(request.cursor.as_deref(), request.limit))
                    .ok()
                    .map(Arc::new)
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
            .map(|record| ProcedureEntry {
                address: record.address_text.clone(),
                name: record.listed_name.clone(),
                aliases: record.listed_aliases(),
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
            let name = record.name.as_ref().map(|name| name.name.as_str());
            (record.address.value(), record.size, name)
        })
    }

    /// The procedure starting at `address`.
    pub(crate) fn info(
        &self,
        document: &str,
        address: Address,
    ) -> Result<ProcedureInfo, ProviderError> {
        self.records
            .binary_search_by_key(&address, |record| record.address)
            .map(|index| self.records[index].info())
            .map_err(|_| ProviderError::NoProcedure {
                document: document.into(),
                address,
            })
    }

    /// Procedures with a display or raw name matching `query`, in address order.
    pub(crate) fn search(&self, query: &ProcedureQuery) -> ProcedureMatches {
        let wanted = key(query.text());
        let hit = |name: &ProcedureName| match query.matching() {
            NameMatch::Exact => name.name == query.text() || name.raw_name == query.text(),
            NameMatch::Contains => [&name.name, &name.raw_name]
                .into_iter()
                .any(|text| key(text).contains(wanted.as_ref())),
        };
        let mut matching = self.records.iter().filter(|record| record.names().any(hit));
        let procedures: Vec<ProcedureInfo> = matching
            .by_ref()
            .take(query.limit())
            .map(ProcedureRecord::info)
            .collect();
        ProcedureMatches {
            procedures,
            truncated: matching.next().is_some(),
        }
    }
}
