//! Artifact tools: inventory a directory or zip archive page by page, list the occurrences of
//! retained inventories, and compare two retained inventories.
//!
//! **Pages are retained as Evidence.** Each `inventory_artifacts` call appends one unbound
//! Evidence record (operation `inventory_artifacts`) whose result is the page document exactly
//! as returned, so the page can be cited. `list_artifact_occurrences` and `compare_inventories`
//! read only those retained pages (never the file system) and append nothing; the Artifact
//! manifest and Artifact occurrence completion families project the same pages.

use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::arguments::ArgumentError;
use super::definition::ToolAnnotations;
use super::outcome::ToolError;
use super::spec::{Handler, Retained, ToolSpec, encode};
use crate::core::MAX_VALUE_CHARS;
use crate::inventory::{
    DEFAULT_PAGE_SIZE, ExecutableFormat, Inventory, InventoryDiff, InventoryLimits, InventoryPage,
    MAX_PAGE_SIZE, Occurrence, OccurrenceFilter, PageSize, compare_inventories, list_occurrences,
    manifest_ids,
};
use crate::session::{Cancel, KeptWalk, Session};

/// Largest page index accepted (far beyond any inventory the limits allow).
const MAX_PAGE_INDEX: u64 = 1_000_000;

fn default_page_size() -> u64 {
    DEFAULT_PAGE_SIZE as u64
}

/// The arguments of `inventory_artifacts`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct InventoryArtifactsArguments {
    /// Path of the directory or zip archive on the server's machine.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    path: String,
    /// Page index, from 0 (default 0).
    #[serde(default)]
    #[schemars(range(min = 0, max = MAX_PAGE_INDEX))]
    page: u64,
    /// For a later page: the manifest ID of page 0, so the page comes from that same walk of
    /// `path` (kept by the server) instead of a new one. It must name a walk of this `path`.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    manifest_id: Option<String>,
    /// Most occurrences per page (1 to 1000, default 200).
    #[serde(default = "default_page_size")]
    #[schemars(range(min = 1, max = MAX_PAGE_SIZE))]
    page_size: u64,
}

/// The arguments of `list_artifact_occurrences`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct ListOccurrencesArguments {
    /// A manifest ID of a retained inventory (see inventory_artifacts).
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    manifest_id: String,
    /// Only occurrences at this path or below it (whole components).
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    under: Option<String>,
    /// Only occurrences of this format: elf, mach-o, mach-o-fat, pe, zip, wasm, java-class,
    /// ar, script or unknown.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    format: Option<String>,
}

/// The arguments of `compare_inventories`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct CompareArguments {
    /// A manifest ID of a retained inventory (see inventory_artifacts).
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    before: String,
    /// A manifest ID of a retained inventory (see inventory_artifacts).
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    after: String,
}

/// The artifact tools, in catalog order.
pub(super) fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "inventory_artifacts",
            title: "Inventory Artifacts",
            description: "Inventory a shipped application: a directory (symbolic links are reported, never \
            followed) or a zip archive (read, never extracted; entries with absolute \
            or `..` paths are reported as rejected). Returns one page of the Artifact \
            Inventory v1 document: manifest ID (derived from the content), and per file a \
            stable occurrence ID, path, size, sha256 and detected executable format. The page \
            is retained as Evidence; call again with the next `page` (and the `manifest_id`) \
            for the rest: later pages come from the same walk, not a new one.",
            annotations: ToolAnnotations {
                read_only_hint: false,
                destructive_hint: false,
                idempotent_hint: false,
                open_world_hint: false,
            },
            handler: Handler::retain(inventory_artifacts),
        },
        ToolSpec {
            name: "list_artifact_occurrences",
            title: "List Artifact Occurrences",
            description: "Occurrences of a retained inventory (its retained pages only), each with \
            its manifest ID, optionally only those below a path or of one executable format.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::read(list_artifact_occurrences),
        },
        ToolSpec {
            name: "compare_inventories",
            title: "Compare Inventories",
            description: "Compare two retained inventories by path and digest: occurrences added, \
            removed and changed from `before` to `after`. Every page of both must be retained.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::read(compare),
        },
    ]
}

/// Page 0 always walks the tree anew and keeps the result; a later page comes from the kept
/// walk of `path` (with `manifest_id`, that walk of `path`; else the latest walk of `path`),
/// and walks anew only when none is kept and no `manifest_id` was given. A `manifest_id`
/// whose kept walk is of another root is refused, whatever the page: the page would
/// attribute that tree's files to `path`.
fn inventory_artifacts(
    session: &Session,
    arguments: InventoryArtifactsArguments,
    cancel: &Cancel,
) -> Result<Retained<InventoryPage>, ToolError> {
    let InventoryArtifactsArguments {
        path,
        page: index,
        manifest_id,
        page_size,
    } = arguments;
    let (path, manifest_id) = (path.as_str(), manifest_id.as_deref());
    let size = PageSize::new(usize::try_from(page_size).unwrap_or(0))?;
    let kept = match session.kept_inventory(manifest_id, path) {
        KeptWalk::OtherRoot(walked) => {
            return Err(ToolError::InventoryOfAnotherRoot {
                manifest_id: manifest_id.unwrap_or_default().into(),
                path: path.into(),
                walked: walked.as_str().into(),
            });
        }
        KeptWalk::Kept(kept) if index > 0 => Some(kept),
        KeptWalk::Kept(_) | KeptWalk::NotKept => None,
    };
    let inventory = match (kept, manifest_id) {
        (Some(kept), _) => kept,
        (None, Some(manifest_id)) if index > 0 => {
            return Err(ToolError::InventoryNotKept {
                manifest_id: manifest_id.into(),
            });
        }
        (None, _) => {
            let walked = Inventory::open_with(
                Path::new(path),
                &InventoryLimits::default(),
                &session.confinement(),
                cancel,
            )?;
            let walked = Arc::new(walked);
            session.keep_inventory(Arc::clone(&walked));
            walked
        }
    };
    let page = usize::try_from(index)
        .ok()
        .and_then(|index| inventory.page(index, size))
        .ok_or_else(|| ToolError::PageOutOfRange {
            manifest_id: inventory.manifest_id().into(),
            page: index,
            count: inventory.page_count(size),
        })?;
    Ok(Retained {
        document: encode("inventory_artifacts", &page)?,
        reply: page,
        recorded_arguments: None,
    })
}

/// The retained pages of the inventory `manifest_id`.
fn pages_of(pages: &[InventoryPage], manifest_id: &str) -> Result<Vec<InventoryPage>, ToolError> {
    let selected: Vec<InventoryPage> = pages
        .iter()
        .filter(|page| page.manifest_id == manifest_id)
        .cloned()
        .collect();
    if selected.is_empty() {
        return Err(ToolError::NoInventory {
            manifest_id: manifest_id.into(),
            retained: manifest_ids(pages).into_iter().map(str::to_owned).collect(),
        });
    }
    Ok(selected)
}

fn list_artifact_occurrences(
    session: &Session,
    arguments: ListOccurrencesArguments,
) -> Result<ListOccurrencesResult, ToolError> {
    let manifest_id = arguments.manifest_id.as_str();
    let format = arguments
        .format
        .as_deref()
        .map(|name| {
            serde_json::from_value::<ExecutableFormat>(json!(name)).map_err(|_| {
                ArgumentError::Syntax {
                    tool: "list_artifact_occurrences",
                    argument: "format",
                    reason: format!("{:?} is not an inventory format", crate::text::cut(name)),
                }
            })
        })
        .transpose()?;
    let pages = pages_of(&session.inventory_pages(), manifest_id)?;
    let filter = OccurrenceFilter {
        manifest_id: Some(manifest_id.to_owned()),
        under: arguments.under,
        format,
    };
    let occurrences = list_occurrences(&pages, &filter)
        .into_iter()
        .map(|listed| ListedItem {
            manifest_id: listed.manifest_id.to_owned(),
            occurrence: listed.occurrence.clone(),
        })
        .collect();
    Ok(ListOccurrencesResult {
        manifest_id: manifest_id.to_owned(),
        occurrences,
    })
}

/// The result of `list_artifact_occurrences`.
#[derive(Serialize, JsonSchema)]
pub(super) struct ListOccurrencesResult {
    /// The inventory listed.
    manifest_id: String,
    /// Matching occurrences, in path order.
    occurrences: Vec<ListedItem>,
}

// One listed occurrence: its fields and its inventory's manifest ID.
#[derive(Serialize, JsonSchema)]
struct ListedItem {
    /// The inventory's manifest ID.
    manifest_id: String,
    #[serde(flatten)]
    occurrence: Occurrence,
}

fn compare(session: &Session, arguments: CompareArguments) -> Result<InventoryDiff, ToolError> {
    let pages = session.inventory_pages();
    let before = pages_of(&pages, &arguments.before)?;
    let after = pages_of(&pages, &arguments.after)?;
    Ok(compare_inventories(&before, &after)?)
}
