//! Comparing two inventories, each given as all of its retained pages.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;

use super::page::{InventoryPage, Occurrence};

/// Most missing page indexes named in a [`CompareError::MissingPages`] message.
const NAMED_MISSING_PAGES: usize = 10;

/// What changed from one inventory to another, each list in path order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct InventoryDiff {
    /// Manifest ID of the first inventory.
    pub before: String,
    /// Manifest ID of the second inventory.
    pub after: String,
    /// Paths only `after` has.
    pub added: Vec<Occurrence>,
    /// Paths only `before` has.
    pub removed: Vec<Occurrence>,
    /// Paths both have, with different digests.
    pub changed: Vec<ChangedOccurrence>,
    /// Paths both have with the same digest.
    pub unchanged: usize,
}

/// A path whose content differs between the two inventories.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ChangedOccurrence {
    /// The path.
    pub path: String,
    /// The occurrence in the first inventory.
    pub before: Occurrence,
    /// The occurrence in the second inventory.
    pub after: Occurrence,
}

/// Which inventory of a comparison an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The first (`before`).
    Before,
    /// The second (`after`).
    After,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Before => "before",
            Side::After => "after",
        })
    }
}

/// Why two inventories cannot be compared.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CompareError {
    /// No page was given for one side.
    #[error("no inventory page was given for the {side} inventory")]
    NoPages {
        /// The side.
        side: Side,
    },
    /// The pages of one side belong to different inventories.
    #[error("the {side} pages mix manifests {first} and {other}")]
    MixedManifests {
        /// The side.
        side: Side,
        /// The first manifest ID seen.
        first: String,
        /// Another one.
        other: String,
    },
    /// Not every page of one side was given.
    #[error(
        "the {side} inventory {manifest_id} is missing {} of its {count} pages ({}); retrieve them with inventory_artifacts",
        missing_count,
        name_pages(missing, *missing_count)
    )]
    MissingPages {
        /// The side.
        side: Side,
        /// Its manifest ID.
        manifest_id: String,
        /// Pages it should have.
        count: u64,
        /// How many are missing.
        missing_count: u64,
        /// The first missing page indexes, at most 10.
        missing: Vec<u64>,
    },
    /// Pages of one side disagree with each other (positions, totals, or repeated paths).
    #[error("the {side} pages of inventory {manifest_id} disagree: {problem}")]
    InconsistentPages {
        /// The side.
        side: Side,
        /// Its manifest ID.
        manifest_id: String,
        /// What disagrees.
        problem: String,
    },
}

fn name_pages(missing: &[u64], total: u64) -> String {
    let mut text = missing
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let named = u64::try_from(missing.len()).unwrap_or(u64::MAX);
    if total > named {
        text.push_str(&format!(" and {} more", total - named));
    }
    text
}

/// Compares inventory `before` with inventory `after`, each given as every one of its pages
/// (in any order; a page given twice must be identical).
///
/// Paths are matched exactly; a path in both with a different `sha256` is `changed`. Swapping
/// the arguments swaps `added` with `removed` and `before` with `after` in each change.
pub fn compare_inventories(
    before: &[InventoryPage],
    after: &[InventoryPage],
) -> Result<InventoryDiff, CompareError> {
    let (before_id, old) = assemble(Side::Before, before)?;
    let (after_id, new) = assemble(Side::After, after)?;
    let mut diff = InventoryDiff {
        before: before_id.to_owned(),
        after: after_id.to_owned(),
        added: Vec::new(),
        removed: Vec::new(),
        changed: Vec::new(),
        unchanged: 0,
    };
    for (path, old_occurrence) in &old {
        match new.get(path) {
            None => diff.removed.push((*old_occurrence).clone()),
            Some(new_occurrence) if new_occurrence.sha256 == old_occurrence.sha256 => {
                diff.unchanged += 1;
            }
            Some(new_occurrence) => diff.changed.push(ChangedOccurrence {
                path: (*path).to_owned(),
                before: (*old_occurrence).clone(),
                after: (*new_occurrence).clone(),
            }),
        }
    }
    diff.added = new
        .iter()
        .filter(|(path, _)| !old.contains_key(*path))
        .map(|(_, occurrence)| (*occurrence).clone())
        .collect();
    Ok(diff)
}

/// All occurrences of one side's inventory by path, after checking its pages fit together.
fn assemble(
    side: Side,
    pages: &[InventoryPage],
) -> Result<(&str, BTreeMap<&str, &Occurrence>), CompareError> {
    let first = pages.first().ok_or(CompareError::NoPages { side })?;
    let manifest_id = first.manifest_id.as_str();
    let inconsistent = |problem: &str| CompareError::InconsistentPages {
        side,
        manifest_id: manifest_id.to_owned(),
        problem: problem.to_owned(),
    };
    let mut by_index: BTreeMap<u64, &InventoryPage> = BTreeMap::new();
    for page in pages {
        if page.manifest_id != manifest_id {
            return Err(CompareError::MixedManifests {
                side,
                first: manifest_id.to_owned(),
                other: page.manifest_id.clone(),
            });
        }
        let shared = |p: &InventoryPage| (p.page.count, p.page.size, p.root.clone());
        if shared(page) != shared(first)
            || page.page.total_occurrences != first.page.total_occurrences
            || page.page.total_rejected != first.page.total_rejected
        {
            return Err(inconsistent("page positions or totals differ"));
        }
        if let Some(earlier) = by_index.insert(page.page.index, page)
            && earlier != page
        {
            return Err(inconsistent(&format!(
                "two different pages have index {}",
                page.page.index
            )));
        }
    }
    let count = first.page.count;
    let present = u64::try_from(by_index.len()).unwrap_or(u64::MAX);
    if present < count {
        let missing = (0..count)
            .filter(|index| !by_index.contains_key(index))
            .take(NAMED_MISSING_PAGES)
            .collect();
        return Err(CompareError::MissingPages {
            side,
            manifest_id: manifest_id.to_owned(),
            count,
            missing_count: count - present,
            missing,
        });
    }
    let mut occurrences: BTreeMap<&str, &Occurrence> = BTreeMap::new();
    for page in by_index.values() {
        for occurrence in &page.occurrences {
            if occurrences
                .insert(occurrence.path.as_str(), occurrence)
                .is_some()
            {
                return Err(inconsistent(&format!(
                    "path {:?} is on two pages",
                    occurrence.path
                )));
            }
        }
    }
    if u64::try_from(occurrences.len()).ok() != Some(first.page.total_occurrences) {
        return Err(inconsistent("total_occurrences does not match the pages"));
    }
    Ok((manifest_id, occurrences))
}
