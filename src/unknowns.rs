//! The residual-unknown registry (docs/CONTRACT.md section 10): open questions an investigation has
//! not answered yet, refined as understanding grows and resolved only with Evidence.
//!
//! - [`UnknownRegistry::register`] records a question, optionally about a document or procedure,
//!   and gives it a fresh [`UnknownId`].
//! - [`UnknownRegistry::refine`] records a new revision; it becomes the head of its chain, and
//!   the old revision stays in the history as [`UnknownStatus::Superseded`].
//! - [`UnknownRegistry::resolve`] closes the head, only with at least one Evidence ID that the
//!   ledger holds (asked through [`EvidenceLookup`]).
//! - [`UnknownRegistry::unresolved_heads`] is the Residual unknown completion source.
//!
//! Only heads can be refined or resolved, and a resolved head is final. Every failed call
//! leaves the registry unchanged.
//!
//! ```
//! use rea::unknowns::{ResolutionDraft, UnknownDraft, UnknownRegistry};
//!
//! let question = |text: &str| UnknownDraft { question: text.into(), ..Default::default() };
//! let mut registry = UnknownRegistry::new();
//! let first = registry.register(question("What does 0x401000 decrypt?")).unwrap().id.clone();
//! let refined = registry.refine(first.as_str(), question("Is it the license blob?"));
//! let head = refined.unwrap().id.clone();
//! assert_eq!(registry.unresolved_heads().collect::<Vec<_>>(), [&head]);
//!
//! // The session plugs in its ledger; here the ledger holds one Evidence ID.
//! let ledger = |id: &str| id == "ev-000000000001";
//! let missing = ResolutionDraft { evidence: vec!["ev-000000000009".into()], note: None };
//! assert!(registry.resolve(head.as_str(), missing, &ledger).is_err());
//! let found = ResolutionDraft { evidence: vec!["ev-000000000001".into()], note: None };
//! registry.resolve(head.as_str(), found, &ledger).unwrap();
//! assert_eq!(registry.unresolved_heads().count(), 0);
//! ```

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::base::{Cancel, Cancelled};
use crate::core::MAX_VALUE_CHARS;
use crate::text::Quoted;

/// Longest question, in Unicode scalar values.
pub const MAX_QUESTION_CHARS: usize = 4_096;

/// Longest resolution note, in Unicode scalar values.
pub const MAX_NOTE_CHARS: usize = 4_096;

/// Most records (all revisions counted) one registry holds; registering or refining past it
/// fails with [`UnknownError::RegistryFull`].
pub const MAX_UNKNOWN_RECORDS: usize = 10_000;

/// Most Evidence IDs one resolution may cite.
pub const MAX_RESOLVING_EVIDENCE: usize = 100;

/// Source of unknown ID numbers for the whole process: IDs are never reused, even after a
/// registry is cleared.
static NEXT_UNKNOWN_NUMBER: AtomicU64 = AtomicU64::new(1);

/// Digits after the `unk-` prefix. Fixed width keeps string order equal to creation order for
/// the first 10^12 - 1 IDs of a process.
const UNKNOWN_DIGITS: usize = 12;

/// A residual-unknown ID: `unk-` and twelve decimal digits, e.g. `unk-000000000007`.
///
/// IDs are ASCII, unique in the process (every revision has its own), and sort as strings in
/// creation order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct UnknownId(String);

impl From<UnknownId> for String {
    fn from(id: UnknownId) -> String {
        id.0
    }
}

/// Text that is not an unknown ID.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not an unknown ID: expected `unk-` followed by twelve digits")]
pub struct UnknownIdError {
    /// The rejected text, cut to 64 characters.
    pub text: Quoted,
}

impl TryFrom<String> for UnknownId {
    type Error = UnknownIdError;

    fn try_from(text: String) -> Result<UnknownId, UnknownIdError> {
        let valid = text.strip_prefix("unk-").is_some_and(|digits| {
            digits.len() == UNKNOWN_DIGITS && digits.bytes().all(|b| b.is_ascii_digit())
        });
        if valid {
            Ok(UnknownId(text))
        } else {
            Err(UnknownIdError {
                text: text.as_str().into(),
            })
        }
    }
}

impl UnknownId {
    fn next() -> UnknownId {
        let number = NEXT_UNKNOWN_NUMBER.fetch_add(1, Ordering::Relaxed);
        UnknownId(format!("unk-{number:0UNKNOWN_DIGITS$}"))
    }

    /// Makes the process's numbering continue at `next` or later: a store resumed at start-up
    /// raises it past every ID it ever held, so no ID is issued twice in the store's life.
    pub fn continue_at(next: u64) {
        NEXT_UNKNOWN_NUMBER.fetch_max(next, Ordering::Relaxed);
    }

    /// The ID as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for UnknownId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for UnknownId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for UnknownId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

/// Answers whether the session's Evidence ledger holds an Evidence ID.
///
/// Any `Fn(&str) -> bool` is a lookup, so a session can pass
/// `&|id: &str| ledger.contains(id)`.
pub trait EvidenceLookup {
    /// Whether `id` names a retained Evidence record.
    fn contains_evidence(&self, id: &str) -> bool;
}

impl<F: Fn(&str) -> bool> EvidenceLookup for F {
    fn contains_evidence(&self, id: &str) -> bool {
        self(id)
    }
}

/// The text of a question, for [`UnknownRegistry::register`] and [`UnknownRegistry::refine`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UnknownDraft {
    /// The open question; not blank, at most [`MAX_QUESTION_CHARS`].
    pub question: String,
    /// The document it concerns, if any; not empty, at most [`MAX_VALUE_CHARS`].
    pub document: Option<String>,
    /// The procedure it concerns (address or name), if any; not empty, at most
    /// [`MAX_VALUE_CHARS`].
    pub procedure: Option<String>,
}

/// What resolves an unknown, for [`UnknownRegistry::resolve`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResolutionDraft {
    /// Evidence IDs that answer the question: 1 to [`MAX_RESOLVING_EVIDENCE`], each retained
    /// in the ledger. Repeated IDs count once.
    pub evidence: Vec<String>,
    /// A short answer, if the caller gives one; at most [`MAX_NOTE_CHARS`].
    pub note: Option<String>,
}

/// Where a record stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UnknownStatus {
    /// The head of its chain, not resolved: a completion candidate.
    Open,
    /// An older revision; its chain continues in [`Unknown::superseded_by`].
    Superseded,
    /// The head of its chain, resolved with Evidence.
    Resolved,
}

/// How an unknown was resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Resolution {
    /// The Evidence cited.
    // In the order given, without repeats.
    #[schemars(extend("items" = {"type": "string", "description": "An Evidence ID."}))]
    pub evidence: Vec<String>,
    /// The answer given, if any.
    pub note: Option<String>,
}

/// One revision of a residual unknown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Unknown {
    /// This revision's ID (`unk-` and twelve digits).
    #[schemars(with = "String")]
    pub id: UnknownId,
    /// The open question.
    pub question: String,
    /// The document it concerns.
    pub document: Option<String>,
    /// The procedure it concerns.
    pub procedure: Option<String>,
    /// `open`: a head, offered for completion; `superseded`: refined; `resolved`: answered
    /// with Evidence.
    pub status: UnknownStatus,
    /// The revision this one refines.
    #[schemars(with = "Option<String>")]
    pub revises: Option<UnknownId>,
    /// The revision that refines this one.
    // Set exactly when the status is `superseded`.
    #[schemars(with = "Option<String>")]
    pub superseded_by: Option<UnknownId>,
    /// How it was resolved; null unless resolved.
    pub resolution: Option<Resolution>,
}

/// Which statuses [`UnknownRegistry::list`] returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StatusFilter {
    /// Open records only.
    Open,
    /// Resolved records only.
    Resolved,
    /// Every status.
    #[default]
    All,
}

/// Which revisions [`UnknownRegistry::list`] returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RevisionFilter {
    /// Current heads only.
    #[default]
    Heads,
    /// Every revision, superseded ones included.
    All,
}

/// A filter for [`UnknownRegistry::list`]; the default lists every head.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UnknownFilter {
    /// Statuses to keep.
    pub status: StatusFilter,
    /// Revisions to keep.
    pub revisions: RevisionFilter,
    /// Keep only records about this document (exact match).
    pub document: Option<String>,
    /// Keep only records about this procedure (exact match).
    pub procedure: Option<String>,
}

/// Why a registry call failed. The registry is unchanged after any of these.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnknownError {
    /// The question is empty or only white space.
    #[error("question is empty; describe what is still unknown")]
    EmptyQuestion,
    /// `document`, `procedure` or `note` is given but empty.
    #[error("{field} is empty; omit it or give a value")]
    EmptyField {
        /// The field.
        field: &'static str,
    },
    /// A text field is over its bound.
    #[error("{field} is {chars} characters long; at most {limit} are allowed")]
    TooLong {
        /// The field.
        field: &'static str,
        /// Its length in Unicode scalar values.
        chars: usize,
        /// The bound.
        limit: usize,
    },
    /// No record has this ID (never registered, or cleared with its session).
    #[error("no residual unknown has ID {id:?}")]
    NotFound {
        /// The ID asked for.
        id: Quoted,
    },
    /// The ID names an older revision; only heads can be refined or resolved.
    #[error("residual unknown {id} was refined; use its current head {head}")]
    NotHead {
        /// The ID asked for.
        id: UnknownId,
        /// The head of its chain.
        head: UnknownId,
    },
    /// The head is resolved; resolution is final.
    #[error("residual unknown {id} is already resolved")]
    AlreadyResolved {
        /// The ID asked for.
        id: UnknownId,
    },
    /// A resolution cited no Evidence.
    #[error("resolving residual unknown {id} needs at least one Evidence ID in evidence")]
    NoEvidence {
        /// The ID asked for.
        id: UnknownId,
    },
    /// A resolution cited more Evidence IDs than allowed.
    #[error("evidence lists {count} Evidence IDs; at most {limit} are allowed")]
    TooMuchEvidence {
        /// Distinct IDs cited.
        count: usize,
        /// The bound.
        limit: usize,
    },
    /// Some cited Evidence IDs are not in the ledger.
    #[error(
        "evidence cites IDs the ledger does not hold: {}; residual unknown {id} stays open",
        quote_all(missing)
    )]
    MissingEvidence {
        /// The ID asked for.
        id: UnknownId,
        /// The IDs not found, in the order given.
        missing: Vec<Quoted>,
    },
    /// The registry holds [`MAX_UNKNOWN_RECORDS`] records already.
    #[error("the registry holds {limit} residual unknowns already; resolve or close the session")]
    RegistryFull {
        /// The bound.
        limit: usize,
    },
    /// The request was cancelled before the registry changed; nothing changed.
    #[error("the request was cancelled before it changed anything")]
    Cancelled(#[from] Cancelled),
}

fn quote_all(ids: &[Quoted]) -> String {
    ids.iter()
        .map(|id| format!("{id:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The residual unknowns of one binary session, in creation order.
#[derive(Clone, Debug, Default)]
pub struct UnknownRegistry {
    records: BTreeMap<UnknownId, Unknown>,
}

impl UnknownRegistry {
    /// An empty registry.
    pub fn new() -> UnknownRegistry {
        UnknownRegistry::default()
    }

    /// Records a new open question and returns it.
    pub fn register(&mut self, draft: UnknownDraft) -> Result<&Unknown, UnknownError> {
        self.register_unless(draft, &Cancel::never())
    }

    /// [`UnknownRegistry::register`], unless `cancel` is set before the registry changes.
    pub fn register_unless(
        &mut self,
        draft: UnknownDraft,
        cancel: &Cancel,
    ) -> Result<&Unknown, UnknownError> {
        let planned = self.plan_register(draft)?;
        self.commit(planned, cancel)
    }

    /// The revision [`UnknownRegistry::register`] would add, without adding it (see
    /// [`UnknownRegistry::apply`]). Its ID is issued now.
    pub fn plan_register(&self, draft: UnknownDraft) -> Result<Vec<Unknown>, UnknownError> {
        check_draft(&draft)?;
        self.check_room()?;
        Ok(vec![revision(draft, None)])
    }

    /// Records a new revision of the head `id` and returns it; the new revision becomes the
    /// head. Its question replaces the old one; a `None` document or procedure keeps the
    /// head's value.
    pub fn refine(&mut self, id: &str, draft: UnknownDraft) -> Result<&Unknown, UnknownError> {
        self.refine_unless(id, draft, &Cancel::never())
    }

    /// [`UnknownRegistry::refine`], unless `cancel` is set before the registry changes.
    pub fn refine_unless(
        &mut self,
        id: &str,
        draft: UnknownDraft,
        cancel: &Cancel,
    ) -> Result<&Unknown, UnknownError> {
        let planned = self.plan_refine(id, draft)?;
        self.commit(planned, cancel)
    }

    /// The revisions [`UnknownRegistry::refine`] would add and change (the new head first,
    /// then the superseded one), without changing anything.
    pub fn plan_refine(&self, id: &str, draft: UnknownDraft) -> Result<Vec<Unknown>, UnknownError> {
        check_draft(&draft)?;
        let head = self.open_head(id)?;
        self.check_room()?;
        let mut previous = self.records[&head].clone();
        let draft = UnknownDraft {
            question: draft.question,
            document: draft.document.or_else(|| previous.document.clone()),
            procedure: draft.procedure.or_else(|| previous.procedure.clone()),
        };
        let new = revision(draft, Some(head));
        previous.status = UnknownStatus::Superseded;
        previous.superseded_by = Some(new.id.clone());
        Ok(vec![new, previous])
    }

    /// Resolves the head `id` with Evidence the ledger holds, and returns it.
    pub fn resolve(
        &mut self,
        id: &str,
        draft: ResolutionDraft,
        ledger: &impl EvidenceLookup,
    ) -> Result<&Unknown, UnknownError> {
        self.resolve_unless(id, draft, ledger, &Cancel::never())
    }

    /// [`UnknownRegistry::resolve`], unless `cancel` is set before the registry changes.
    pub fn resolve_unless(
        &mut self,
        id: &str,
        draft: ResolutionDraft,
        ledger: &impl EvidenceLookup,
        cancel: &Cancel,
    ) -> Result<&Unknown, UnknownError> {
        let planned = self.plan_resolve(id, draft, ledger)?;
        self.commit(planned, cancel)
    }

    /// The revision [`UnknownRegistry::resolve`] would change, without changing it.
    pub fn plan_resolve(
        &self,
        id: &str,
        draft: ResolutionDraft,
        ledger: &impl EvidenceLookup,
    ) -> Result<Vec<Unknown>, UnknownError> {
        let head = self.open_head(id)?;
        let mut evidence: Vec<String> = Vec::with_capacity(draft.evidence.len());
        for cited in draft.evidence {
            if !evidence.contains(&cited) {
                evidence.push(cited);
            }
        }
        if evidence.is_empty() {
            return Err(UnknownError::NoEvidence { id: head });
        }
        if evidence.len() > MAX_RESOLVING_EVIDENCE {
            return Err(UnknownError::TooMuchEvidence {
                count: evidence.len(),
                limit: MAX_RESOLVING_EVIDENCE,
            });
        }
        if let Some(note) = &draft.note {
            check_text("note", note, MAX_NOTE_CHARS)?;
        }
        let missing: Vec<Quoted> = evidence
            .iter()
            .filter(|cited| !ledger.contains_evidence(cited))
            .map(|cited| Quoted::new(cited))
            .collect();
        if !missing.is_empty() {
            return Err(UnknownError::MissingEvidence { id: head, missing });
        }
        let mut record = self.records[&head].clone();
        record.status = UnknownStatus::Resolved;
        record.resolution = Some(Resolution {
            evidence,
            note: draft.note,
        });
        Ok(vec![record])
    }

    /// Adds or replaces each of `revisions` (what a `plan_` method planned, or revisions read
    /// back from a store), by ID.
    pub fn apply(&mut self, revisions: Vec<Unknown>) {
        for revision in revisions {
            self.records.insert(revision.id.clone(), revision);
        }
    }

    /// Applies `planned` unless `cancel` was set first, and returns its first revision.
    fn commit(&mut self, planned: Vec<Unknown>, cancel: &Cancel) -> Result<&Unknown, UnknownError> {
        cancel.commit()?;
        let first = planned.first().map(|revision| revision.id.clone());
        self.apply(planned);
        first
            .and_then(|id| self.records.get(&id))
            .ok_or_else(|| UnknownError::NotFound { id: "".into() })
    }

    /// The record with this ID, any revision.
    pub fn get(&self, id: &str) -> Option<&Unknown> {
        self.records.get(id)
    }

    /// The chain of revisions ending at `id`, oldest first.
    pub fn history(&self, id: &str) -> Result<Vec<&Unknown>, UnknownError> {
        let mut record = self
            .get(id)
            .ok_or_else(|| UnknownError::NotFound { id: id.into() })?;
        let mut chain = vec![record];
        while let Some(previous) = record.revises.as_ref().and_then(|p| self.records.get(p)) {
            chain.push(previous);
            record = previous;
        }
        chain.reverse();
        Ok(chain)
    }

    /// The head of the chain `id` belongs to.
    pub fn head_of(&self, id: &str) -> Result<&Unknown, UnknownError> {
        let mut record = self
            .get(id)
            .ok_or_else(|| UnknownError::NotFound { id: id.into() })?;
        while let Some(next) = record
            .superseded_by
            .as_ref()
            .and_then(|n| self.records.get(n))
        {
            record = next;
        }
        Ok(record)
    }

    /// The records that pass `filter`, in creation order.
    pub fn list(&self, filter: &UnknownFilter) -> Vec<&Unknown> {
        self.records
            .values()
            .filter(|record| filter.accepts(record))
            .collect()
    }

    /// IDs of the current heads that are not resolved, in creation order: the Residual unknown
    /// completion source.
    pub fn unresolved_heads(&self) -> impl Iterator<Item = &UnknownId> {
        self.records
            .values()
            .filter(|record| record.status == UnknownStatus::Open)
            .map(|record| &record.id)
    }

    /// Number of records, all revisions counted.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether the registry holds no record.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Forgets every record (the session closed). IDs are never handed out again.
    pub fn clear(&mut self) {
        self.records.clear();
    }

    /// The ID of `id`'s record if it is an open head.
    fn open_head(&self, id: &str) -> Result<UnknownId, UnknownError> {
        let record = self
            .get(id)
            .ok_or_else(|| UnknownError::NotFound { id: id.into() })?;
        match record.status {
            UnknownStatus::Open => Ok(record.id.clone()),
            UnknownStatus::Resolved => Err(UnknownError::AlreadyResolved {
                id: record.id.clone(),
            }),
            UnknownStatus::Superseded => Err(UnknownError::NotHead {
                id: record.id.clone(),
                head: self.head_of(id)?.id.clone(),
            }),
        }
    }

    fn check_room(&self) -> Result<(), UnknownError> {
        if self.records.len() >= MAX_UNKNOWN_RECORDS {
            return Err(UnknownError::RegistryFull {
                limit: MAX_UNKNOWN_RECORDS,
            });
        }
        Ok(())
    }
}

/// A new open revision of `draft`, refining `revises` if given.
fn revision(draft: UnknownDraft, revises: Option<UnknownId>) -> Unknown {
    Unknown {
        id: UnknownId::next(),
        question: draft.question,
        document: draft.document,
        procedure: draft.procedure,
        status: UnknownStatus::Open,
        revises,
        superseded_by: None,
        resolution: None,
    }
}

impl UnknownFilter {
    fn accepts(&self, record: &Unknown) -> bool {
        let status = match self.status {
            StatusFilter::Open => record.status == UnknownStatus::Open,
            StatusFilter::Resolved => record.status == UnknownStatus::Resolved,
            StatusFilter::All => true,
        };
        let revision = match self.revisions {
            RevisionFilter::Heads => record.status != UnknownStatus::Superseded,
            RevisionFilter::All => true,
        };
        let document = self.document.is_none() || self.document == record.document;
        let procedure = self.procedure.is_none() || self.procedure == record.procedure;
        status && revision && document && procedure
    }
}

fn check_draft(draft: &UnknownDraft) -> Result<(), UnknownError> {
    if draft.question.trim().is_empty() {
        return Err(UnknownError::EmptyQuestion);
    }
    check_text("question", &draft.question, MAX_QUESTION_CHARS)?;
    if let Some(document) = &draft.document {
        check_text("document", document, MAX_VALUE_CHARS)?;
    }
    if let Some(procedure) = &draft.procedure {
        check_text("procedure", procedure, MAX_VALUE_CHARS)?;
    }
    Ok(())
}

fn check_text(field: &'static str, text: &str, limit: usize) -> Result<(), UnknownError> {
    if text.is_empty() {
        return Err(UnknownError::EmptyField { field });
    }
    let chars = text.chars().count();
    if chars > limit {
        return Err(UnknownError::TooLong {
            field,
            chars,
            limit,
        });
    }
    Ok(())
}
