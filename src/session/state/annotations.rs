//! The session's annotations (docs/CONTRACT.md section 17): a batch or an undo is planned
//! under the lock, committed to the store with the change record that cites its Evidence as
//! one transaction, and then applied.

use std::sync::Arc;

use serde_json::{Value, json};

use super::Session;
use crate::annotations::{Annotation, AnnotationId, AnnotationRegistry, EditDraft, Labels};
use crate::base::Cancel;
use crate::session::durable::Change;
use crate::session::error::SessionError;
use crate::session::evidence::{EvidenceRecord, Observation};

/// What a batch or an undo committed: its revisions, and the change record the ledger holds.
#[derive(Clone, Debug)]
pub struct Annotated {
    /// The new revisions, in the order of the edits.
    pub revisions: Vec<Annotation>,
    /// The ledger's change record of the call.
    pub record: Arc<EvidenceRecord>,
}

/// The ledger operation of the change record of a batch.
pub const ANNOTATE_OPERATION: &str = "annotate";

/// The ledger operation of the change record of an undo.
pub const UNDO_OPERATION: &str = "undo_annotation";

impl Session {
    /// Commits a batch of edits whose targets were resolved in the binary session `epoch`:
    /// every edit or none. The change record (operation `annotate`, `arguments` as given)
    /// lists the revisions, each citing its Evidence.
    pub fn annotate_unless(
        &self,
        epoch: u64,
        edits: Vec<EditDraft>,
        arguments: Value,
        cancel: &Cancel,
    ) -> Result<Annotated, SessionError> {
        self.change_annotations(
            epoch,
            ANNOTATE_OPERATION,
            arguments,
            cancel,
            |registry, ledger| {
                let retained = |cited: &str| ledger.contains(cited);
                registry.plan_batch(edits, &retained)
            },
        )
    }

    /// Commits the undo of the effective revision `id`.
    pub fn undo_annotation_unless(
        &self,
        id: &str,
        arguments: Value,
        cancel: &Cancel,
    ) -> Result<Annotated, SessionError> {
        let epoch = self.epoch().ok_or(SessionError::NotOpen)?;
        self.change_annotations(epoch, UNDO_OPERATION, arguments, cancel, |registry, _| {
            Ok(vec![registry.plan_undo(id)?])
        })
    }

    fn epoch(&self) -> Option<u64> {
        self.lock().binary.as_ref().map(|binary| binary.epoch)
    }

    fn change_annotations(
        &self,
        epoch: u64,
        operation: &'static str,
        arguments: Value,
        cancel: &Cancel,
        plan: impl FnOnce(
            &AnnotationRegistry,
            &crate::session::evidence::Ledger,
        ) -> Result<Vec<Annotation>, crate::annotations::AnnotationError>,
    ) -> Result<Annotated, SessionError> {
        let _writer = self.writer();
        let number = self.issue_evidence_number()?;
        let (revisions, prepared) = {
            let mut state = self.lock();
            if state.binary.as_ref().map(|b| b.epoch) != Some(epoch) {
                return Err(SessionError::SessionChanged);
            }
            let revisions = plan(&state.annotations, &state.ledger)?;
            let result = json!({
                "evidence_kind": "annotation_change",
                "note": "An annotation is an inference of the investigator, backed by the \
                         Evidence it cites; it changes no byte of the binary.",
                "annotations": revisions,
            });
            cancel.commit()?;
            let prepared = state
                .ledger
                .prepare_as(Observation::unbound(operation, arguments, result), number)?;
            (revisions, prepared)
        };
        let mut changes: Vec<Change<'_>> = vec![Change::Record(&prepared.record)];
        changes.extend(revisions.iter().map(Change::Annotation));
        if let Err(error) = self.journal(&changes) {
            self.lock().ledger.abandon(prepared);
            if super::is_stale(&error) {
                // Another instance changed the session first: the next call sees its change.
                self.catch_up_locked()?;
            }
            return Err(error);
        }
        let mut state = self.lock();
        let record = state.ledger.push(prepared);
        state.annotations.apply(revisions.clone());
        Ok(Annotated { revisions, record })
    }

    /// Every annotation revision, oldest first, with whether it is effective and the undo
    /// that reverts it.
    pub fn annotation_history(&self) -> Vec<(Annotation, bool, Option<AnnotationId>)> {
        let state = self.lock();
        state
            .annotations
            .history()
            .map(|(revision, effective)| {
                let by = state.annotations.undone_by(&revision.id).cloned();
                (revision.clone(), effective, by)
            })
            .collect()
    }

    /// The effective labels, by document and canonical address.
    pub fn labels(&self) -> Labels {
        self.lock().annotations.labels()
    }

    /// What the effective annotations say (for tests and integrators).
    pub fn annotation_projection(&self) -> crate::annotations::Projection {
        self.lock().annotations.projection().clone()
    }
}
