//! Reading occurrences and manifest IDs out of retained pages: the Artifact manifest and
//! Artifact occurrence completion sources and `list_artifact_occurrences`.

use std::collections::HashSet;

use serde::Serialize;
use serde_json::Value;

use super::page::{ExecutableFormat, InventoryPage, Occurrence, parse_page};

/// The documents among `documents` that are valid inventory pages, in the given order (for
/// example the results of the `inventory_artifacts` Evidence records, oldest first).
pub fn valid_pages<'a>(documents: impl IntoIterator<Item = &'a Value>) -> Vec<InventoryPage> {
    documents
        .into_iter()
        .filter_map(|document| parse_page(document).ok())
        .collect()
}

/// The distinct manifest IDs of `pages`, in first-seen order.
pub fn manifest_ids(pages: &[InventoryPage]) -> Vec<&str> {
    let mut seen = HashSet::new();
    pages
        .iter()
        .map(|page| page.manifest_id.as_str())
        .filter(|id| seen.insert(*id))
        .collect()
}

/// Which occurrences [`list_occurrences`] returns; the default returns all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OccurrenceFilter {
    /// Only occurrences of this inventory.
    pub manifest_id: Option<String>,
    /// Only occurrences at this path or below it (whole components: `bin` matches `bin/app`,
    /// not `binaries/app`).
    pub under: Option<String>,
    /// Only occurrences of this format.
    pub format: Option<ExecutableFormat>,
}

impl OccurrenceFilter {
    fn accepts(&self, manifest_id: &str, occurrence: &Occurrence) -> bool {
        let manifest = self
            .manifest_id
            .as_deref()
            .is_none_or(|id| id == manifest_id);
        let under = self.under.as_deref().is_none_or(|directory| {
            let directory = directory.trim_end_matches('/');
            directory.is_empty()
                || occurrence.path == directory
                || occurrence
                    .path
                    .strip_prefix(directory)
                    .is_some_and(|rest| rest.starts_with('/'))
        });
        let format = self.format.is_none_or(|format| format == occurrence.format);
        manifest && under && format
    }
}

/// An occurrence with the inventory it belongs to. It serializes as the occurrence's fields
/// plus `manifest_id`: the item shape of the `list_artifact_occurrences` result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ListedOccurrence<'a> {
    /// The inventory's manifest ID.
    pub manifest_id: &'a str,
    /// The occurrence.
    #[serde(flatten)]
    pub occurrence: &'a Occurrence,
}

/// The occurrences of `pages` that pass `filter`, each once (first-seen order of pages, then
/// path order within a page).
pub fn list_occurrences<'a>(
    pages: &'a [InventoryPage],
    filter: &OccurrenceFilter,
) -> Vec<ListedOccurrence<'a>> {
    let mut seen = HashSet::new();
    pages
        .iter()
        .flat_map(|page| {
            page.occurrences.iter().map(|occurrence| ListedOccurrence {
                manifest_id: &page.manifest_id,
                occurrence,
            })
        })
        .filter(|listed| filter.accepts(listed.manifest_id, listed.occurrence))
        .filter(|listed| seen.insert(listed.occurrence.occurrence_id.as_str()))
        .collect()
}

/// The occurrence with this ID in `pages`, if any.
pub fn find_occurrence<'a>(
    pages: &'a [InventoryPage],
    occurrence_id: &str,
) -> Option<ListedOccurrence<'a>> {
    pages.iter().find_map(|page| {
        page.occurrences
            .iter()
            .find(|occurrence| occurrence.occurrence_id == occurrence_id)
            .map(|occurrence| ListedOccurrence {
                manifest_id: &page.manifest_id,
                occurrence,
            })
    })
}
