//! The session's stores beyond providers: residual unknowns, and the Evidence-backed views of
//! artifact inventories and process captures (docs/CONTRACT.md section 10).
//!
//! Inventory pages and process captures are not kept apart from the ledger: they are the
//! results of `inventory_artifacts` and `import_process_capture` Evidence records. So they
//! vanish with the ledger when the binary session closes, and completion projects them from
//! the live ledger without a second store to keep in step.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;

use super::Session;
use crate::base::Cancel;
use crate::capture::is_capture_candidate;
use crate::inventory::{Inventory, InventoryPage, manifest_ids, valid_pages};
use crate::session::durable::Change;
use crate::session::error::SessionError;
use crate::session::evidence::EvidenceRecord;
use crate::session::evidence::Ledger;
use crate::unknowns::{
    ResolutionDraft, Unknown, UnknownDraft, UnknownError, UnknownFilter, UnknownRegistry,
};

/// The Evidence operation (tool name) that retains inventory pages; its result is the page.
pub const INVENTORY_OPERATION: &str = "inventory_artifacts";

/// Most finished inventories kept for their later pages; the oldest is dropped first.
pub const MAX_KEPT_INVENTORIES: usize = 4;

/// Finished inventories kept so later pages come from the same walk instead of a new one
/// (bounded by [`MAX_KEPT_INVENTORIES`], cleared when the binary session closes).
#[derive(Debug, Default)]
pub(super) struct KeptInventories {
    kept: VecDeque<Arc<Inventory>>,
}

/// What [`Session::kept_inventory`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeptWalk {
    /// The kept walk asked for.
    Kept(Arc<Inventory>),
    /// A walk with the manifest ID asked for is kept, but of another root: its path, as that
    /// walk's caller gave it.
    OtherRoot(String),
    /// No such walk is kept.
    NotKept,
}

impl KeptInventories {
    pub(super) fn clear(&mut self) {
        self.kept.clear();
    }
}

impl Session {
    /// Registers a residual unknown and returns it.
    pub fn register_unknown(&self, draft: UnknownDraft) -> Result<Unknown, SessionError> {
        self.register_unknown_unless(draft, &Cancel::never())
    }

    /// [`Session::register_unknown`], unless `cancel` is set before the registry changes:
    /// then nothing changes and the error is [`UnknownError::Cancelled`].
    pub fn register_unknown_unless(
        &self,
        draft: UnknownDraft,
        cancel: &Cancel,
    ) -> Result<Unknown, SessionError> {
        self.change_unknowns(cancel, |registry, _| registry.plan_register(draft))
    }

    /// Refines the head `id`: the new revision becomes the head. Returns the new revision.
    pub fn refine_unknown(&self, id: &str, draft: UnknownDraft) -> Result<Unknown, SessionError> {
        self.refine_unknown_unless(id, draft, &Cancel::never())
    }

    /// [`Session::refine_unknown`], unless `cancel` is set before the registry changes.
    pub fn refine_unknown_unless(
        &self,
        id: &str,
        draft: UnknownDraft,
        cancel: &Cancel,
    ) -> Result<Unknown, SessionError> {
        self.change_unknowns(cancel, |registry, _| registry.plan_refine(id, draft))
    }

    /// Resolves the head `id` with Evidence the ledger holds; every cited ID must be retained.
    pub fn resolve_unknown(
        &self,
        id: &str,
        draft: ResolutionDraft,
    ) -> Result<Unknown, SessionError> {
        self.resolve_unknown_unless(id, draft, &Cancel::never())
    }

    /// [`Session::resolve_unknown`], unless `cancel` is set before the registry changes.
    pub fn resolve_unknown_unless(
        &self,
        id: &str,
        draft: ResolutionDraft,
        cancel: &Cancel,
    ) -> Result<Unknown, SessionError> {
        self.change_unknowns(cancel, |registry, ledger| {
            let retained = |cited: &str| ledger.contains(cited);
            registry.plan_resolve(id, draft, &retained)
        })
    }

    /// Plans a change of the registry under the lock, commits it to the store, then applies
    /// it; returns the first planned revision (the one the call is about).
    fn change_unknowns(
        &self,
        cancel: &Cancel,
        plan: impl FnOnce(&UnknownRegistry, &Ledger) -> Result<Vec<Unknown>, UnknownError>,
    ) -> Result<Unknown, SessionError> {
        let _writer = self.writer();
        let planned = {
            let state = self.lock();
            let planned = plan(&state.unknowns, &state.ledger)?;
            cancel.commit().map_err(UnknownError::from)?;
            planned
        };
        let changes: Vec<Change<'_>> = planned.iter().map(Change::Unknown).collect();
        self.journal(&changes)?;
        let answer = planned.first().cloned();
        self.lock().unknowns.apply(planned);
        answer.ok_or(SessionError::NotOpen)
    }

    /// Every revision of the chain the unknown `id` belongs to up to `id`, oldest first.
    pub fn unknown_history(&self, id: &str) -> Result<Vec<Unknown>, UnknownError> {
        let state = self.lock();
        let chain = state.unknowns.history(id)?;
        Ok(chain.into_iter().cloned().collect())
    }

    /// The residual unknowns that pass `filter`, in creation order.
    pub fn list_unknowns(&self, filter: &UnknownFilter) -> Vec<Unknown> {
        self.lock()
            .unknowns
            .list(filter)
            .into_iter()
            .cloned()
            .collect()
    }

    /// IDs of the current heads that are not resolved, in creation order.
    pub fn unresolved_unknown_ids(&self) -> Vec<String> {
        self.lock()
            .unknowns
            .unresolved_heads()
            .map(|id| id.as_str().to_owned())
            .collect()
    }

    /// Keeps a finished inventory for its later pages (see [`MAX_KEPT_INVENTORIES`]); an
    /// inventory of the same root replaces the earlier one.
    pub fn keep_inventory(&self, inventory: Arc<Inventory>) {
        let mut state = self.lock();
        let kept = &mut state.inventories.kept;
        kept.retain(|old| old.root() != inventory.root());
        if kept.len() == MAX_KEPT_INVENTORIES {
            kept.pop_front();
        }
        kept.push_back(inventory);
    }

    /// The kept walk of the root `path` (compared as paths: `dir/` is `dir`) for its later
    /// pages: with `manifest_id`, the walk of that root with that manifest ID, else the latest
    /// walk of that root. A walk with that manifest ID kept only for other roots is
    /// [`KeptWalk::OtherRoot`]: the manifest ID and the path do not name one walk.
    pub fn kept_inventory(&self, manifest_id: Option<&str>, path: &str) -> KeptWalk {
        let state = self.lock();
        let kept = &state.inventories.kept;
        let same_root = |walk: &Arc<Inventory>| Path::new(&walk.root().path) == Path::new(path);
        let Some(id) = manifest_id else {
            return kept
                .iter()
                .rev()
                .find(|walk| same_root(walk))
                .map_or(KeptWalk::NotKept, |walk| KeptWalk::Kept(Arc::clone(walk)));
        };
        let mut of_id = kept.iter().rev().filter(|walk| walk.manifest_id() == id);
        match of_id.clone().find(|walk| same_root(walk)) {
            Some(walk) => KeptWalk::Kept(Arc::clone(walk)),
            None => of_id.next().map_or(KeptWalk::NotKept, |walk| {
                KeptWalk::OtherRoot(walk.root().path.clone())
            }),
        }
    }

    /// Every retained Evidence record, oldest first (shared, not copied).
    pub fn evidence_records(&self) -> Vec<Arc<EvidenceRecord>> {
        self.lock().ledger.records().to_vec()
    }

    /// The schema-valid inventory pages retained as Evidence, oldest first.
    pub fn inventory_pages(&self) -> Vec<InventoryPage> {
        let records = self.evidence_records();
        valid_pages(
            records
                .iter()
                .filter(|record| record.operation == INVENTORY_OPERATION)
                .map(|record| &record.result),
        )
    }

    /// Manifest IDs of the retained, schema-valid inventory pages, in first-seen order.
    pub fn artifact_manifest_ids(&self) -> Vec<String> {
        let pages = self.inventory_pages();
        manifest_ids(&pages)
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    /// Occurrence IDs in the retained, schema-valid inventory pages, each once, in first-seen
    /// order.
    pub fn artifact_occurrence_ids(&self) -> Vec<String> {
        let pages = self.inventory_pages();
        let mut seen = std::collections::HashSet::new();
        pages
            .iter()
            .flat_map(|page| &page.occurrences)
            .map(|occurrence| occurrence.occurrence_id.clone())
            .filter(|id| seen.insert(id.clone()))
            .collect()
    }

    /// Occurrence IDs in the retained, schema-valid pages of the inventory `manifest_id`,
    /// each once, in first-seen order.
    pub fn artifact_occurrence_ids_in(&self, manifest_id: &str) -> Vec<String> {
        let pages = self.inventory_pages();
        let mut seen = std::collections::HashSet::new();
        pages
            .iter()
            .filter(|page| page.manifest_id == manifest_id)
            .flat_map(|page| &page.occurrences)
            .map(|occurrence| occurrence.occurrence_id.clone())
            .filter(|id| seen.insert(id.clone()))
            .collect()
    }

    /// Evidence IDs of retained, valid Process Capture v4 imports, oldest first.
    pub fn process_capture_ids(&self) -> Vec<String> {
        self.evidence_records()
            .iter()
            .filter(|record| is_capture_candidate(&record.operation, &record.result))
            .map(|record| record.id.to_string())
            .collect()
    }
}
