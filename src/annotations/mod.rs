//! The investigator's annotations (docs/CONTRACT.md section 17): names, comments and prototypes
//! an investigation writes back, each citing the Evidence behind it, and undoable.
//!
//! - [`AnnotationRegistry::plan_batch`] checks a batch of [`EditDraft`]s (every value, every
//!   cited Evidence ID) and gives each edit a fresh [`AnnotationId`]; nothing changes until
//!   [`AnnotationRegistry::apply`]. A batch is planned whole or refused whole.
//! - [`AnnotationRegistry::plan_undo`] plans the revision that reverts an effective revision;
//!   undoing an undo re-applies what it reverted.
//! - The history is append-only: a revision is never changed or removed (until its session
//!   closes). Whether a revision is *effective* is derived from the history: it is, unless an
//!   effective undo names it. The [`Projection`] (the label, comment and prototype at each
//!   address) is the newest effective edit of each kind at each address.
//!
//! ```
//! use rea::annotations::{AnnotationRegistry, EditDraft, EditKind};
//!
//! let mut registry = AnnotationRegistry::new();
//! let ledger = |id: &str| id == "ev-000000000001";
//! let edit = EditDraft {
//!     kind: EditKind::Name,
//!     document: "main".into(),
//!     address: "0x5a40".into(),
//!     value: "parse_args".into(),
//!     evidence: vec!["ev-000000000001".into()],
//!     procedure: true,
//! };
//! let planned = registry.plan_batch(vec![edit], &ledger).unwrap();
//! let id = planned[0].id.clone();
//! registry.apply(planned);
//! assert_eq!(registry.label("main", "0x5a40"), Some("parse_args"));
//! let undo = registry.plan_undo(id.as_str()).unwrap();
//! registry.apply(vec![undo]);
//! assert_eq!(registry.label("main", "0x5a40"), None);
//! ```

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use crate::text::Quoted;
use crate::unknowns::EvidenceLookup;

mod prototype;

pub use prototype::{MAX_DECLARATION_CHARS, PrototypeError, check_declaration};

/// Longest name, in Unicode scalar values.
pub const MAX_NAME_CHARS: usize = 256;

/// Longest comment, in Unicode scalar values.
pub const MAX_COMMENT_CHARS: usize = 4_096;

/// Most edits in one batch.
pub const MAX_BATCH_EDITS: usize = 256;

/// Most Evidence IDs one edit may cite.
pub const MAX_CITED_EVIDENCE: usize = 100;

/// Most revisions (undos counted) one registry holds.
pub const MAX_ANNOTATION_RECORDS: usize = 10_000;

/// Source of annotation ID numbers for the whole process.
static NEXT_ANNOTATION_NUMBER: AtomicU64 = AtomicU64::new(1);

const ANNOTATION_DIGITS: usize = 12;

/// An annotation ID: `ann-` and twelve decimal digits, e.g. `ann-000000000007`. ASCII, unique
/// in the store for its whole life, sorting as strings in creation order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct AnnotationId(String);

impl From<AnnotationId> for String {
    fn from(id: AnnotationId) -> String {
        id.0
    }
}

/// Text that is not an annotation ID.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not an annotation ID: expected `ann-` followed by twelve digits")]
pub struct AnnotationIdError {
    /// The rejected text, cut to 64 characters.
    pub text: Quoted,
}

impl TryFrom<String> for AnnotationId {
    type Error = AnnotationIdError;

    fn try_from(text: String) -> Result<AnnotationId, AnnotationIdError> {
        if is_annotation_id(&text) {
            Ok(AnnotationId(text))
        } else {
            Err(AnnotationIdError {
                text: text.as_str().into(),
            })
        }
    }
}

/// Whether `text` has the form of an annotation ID.
pub fn is_annotation_id(text: &str) -> bool {
    text.strip_prefix("ann-").is_some_and(|digits| {
        digits.len() == ANNOTATION_DIGITS && digits.bytes().all(|b| b.is_ascii_digit())
    })
}

impl AnnotationId {
    fn next() -> AnnotationId {
        let number = NEXT_ANNOTATION_NUMBER.fetch_add(1, Ordering::Relaxed);
        AnnotationId(format!("ann-{number:0ANNOTATION_DIGITS$}"))
    }

    /// Makes the process's numbering continue at `next` or later (a store resumed at start-up
    /// raises it past every ID it ever held).
    pub fn continue_at(next: u64) {
        NEXT_ANNOTATION_NUMBER.fetch_max(next, Ordering::Relaxed);
    }

    /// The ID as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AnnotationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a revision is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnnotationKind {
    /// A name of a procedure or an address.
    Name,
    /// A comment at an address.
    Comment,
    /// A C prototype of a procedure.
    Prototype,
    /// The revert of another revision.
    Undo,
}

/// The kind of an edit (every [`AnnotationKind`] but `Undo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditKind {
    /// A name.
    Name,
    /// A comment.
    Comment,
    /// A prototype.
    Prototype,
}

impl EditKind {
    fn kind(self) -> AnnotationKind {
        match self {
            EditKind::Name => AnnotationKind::Name,
            EditKind::Comment => AnnotationKind::Comment,
            EditKind::Prototype => AnnotationKind::Prototype,
        }
    }

    /// The argument that carries the edit's value.
    pub fn value_field(self) -> &'static str {
        match self {
            EditKind::Name => "name",
            EditKind::Comment => "text",
            EditKind::Prototype => "declaration",
        }
    }
}

/// One revision of the history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Annotation {
    /// This revision's ID.
    pub id: AnnotationId,
    /// What it is.
    pub kind: AnnotationKind,
    /// The document of its address (null for an undo).
    pub document: Option<String>,
    /// The annotated address, canonical (null for an undo).
    pub address: Option<String>,
    /// Whether the address is a procedure's (a name given by `procedure`, a prototype).
    pub procedure: bool,
    /// The name, comment text or declaration (null for an undo).
    pub value: Option<String>,
    /// The Evidence IDs the edit cites (empty for an undo).
    pub evidence: Vec<String>,
    /// The revision an undo reverts.
    pub undoes: Option<AnnotationId>,
}

/// One edit of a batch, its target already resolved to a canonical address of a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditDraft {
    /// What the edit sets.
    pub kind: EditKind,
    /// The document of the address.
    pub document: String,
    /// The canonical address.
    pub address: String,
    /// The name, comment text or declaration.
    pub value: String,
    /// Evidence IDs of the session's ledger (1 to [`MAX_CITED_EVIDENCE`]).
    pub evidence: Vec<String>,
    /// Whether the address is a procedure's.
    pub procedure: bool,
}

/// What is wrong with one field of one edit.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EditProblem {
    /// A name outside the allowed set.
    #[error(
        "{name:?} is not a name rea accepts: a letter or `_`, then letters, digits and \
         `_:.@$<>~` (at most 256 characters)"
    )]
    BadName {
        /// The name, cut.
        name: Quoted,
    },
    /// A value over its bound.
    #[error("it is {chars} characters long; at most {limit} are allowed")]
    TooLong {
        /// Its length.
        chars: usize,
        /// The bound.
        limit: usize,
    },
    /// A comment holding a character that is refused.
    #[error(
        "it holds {character}, at character {at}: comments may not hold control characters \
         (but line feed and tab) or bidirectional-override characters"
    )]
    BadCharacter {
        /// The character, as `U+XXXX`.
        character: String,
        /// Its position, from 0.
        at: usize,
    },
    /// A blank value.
    #[error("it is empty")]
    Empty,
    /// A declaration that is not a C function declaration.
    #[error(transparent)]
    Prototype(#[from] PrototypeError),
    /// A field the edit needs is absent.
    #[error(
        "it is missing: a name edit needs procedure or address, and name; a comment \
             needs address and text; a prototype needs procedure and declaration"
    )]
    Missing,
    /// Two fields that exclude each other.
    #[error("give procedure or {other}, not both")]
    Conflict {
        /// The other field.
        other: &'static str,
    },
    /// A field this kind of edit does not take.
    #[error("a {kind} edit does not take this field")]
    NotAllowed {
        /// The edit's kind.
        kind: &'static str,
    },
    /// The procedure or address does not resolve.
    #[error("{reason}")]
    Target {
        /// The session's message.
        reason: String,
    },
    /// The address lies in no segment of the document.
    #[error("{address} lies in no mapped segment of the document (list_segments lists them)")]
    Unmapped {
        /// The address, canonical.
        address: String,
    },
    /// No Evidence cited.
    #[error("cite at least one Evidence ID of this session (list_evidence lists them)")]
    NoEvidence,
    /// Too many Evidence IDs cited.
    #[error("it cites {count} Evidence IDs; at most {limit} are allowed")]
    TooMuchEvidence {
        /// Distinct IDs cited.
        count: usize,
        /// The bound.
        limit: usize,
    },
    /// An Evidence ID this session's ledger does not hold.
    #[error(
        "{id:?} is not an Evidence ID of this session's ledger (an ID of another session, \
         of a closed one, or of none); cite what list_evidence lists"
    )]
    MissingEvidence {
        /// The ID, cut.
        id: Quoted,
    },
}

/// Why a registry call failed. The registry is unchanged after any of these.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AnnotationError {
    /// One field of one edit is wrong; nothing of the batch is committed.
    #[error("edits[{index}].{field}: {problem}; nothing of the batch was committed")]
    Edit {
        /// The edit's index in the batch, from 0.
        index: usize,
        /// The field.
        field: &'static str,
        /// What is wrong.
        problem: EditProblem,
    },
    /// A batch with no edit or too many.
    #[error("edits holds {count} edits; give 1 to {limit}, nothing was committed")]
    BatchSize {
        /// Edits given.
        count: usize,
        /// [`MAX_BATCH_EDITS`].
        limit: usize,
    },
    /// No revision has this ID.
    #[error(
        "no annotation of this session has ID {id:?}; list_annotations lists them (with \
         history: true, the undone ones too)"
    )]
    NotFound {
        /// The ID asked for, cut.
        id: Quoted,
    },
    /// The revision is undone already.
    #[error("annotation {id} is undone already (by {by}); undo {by} to apply it again")]
    AlreadyUndone {
        /// The ID asked for.
        id: AnnotationId,
        /// The undo that reverts it.
        by: AnnotationId,
    },
    /// The registry holds [`MAX_ANNOTATION_RECORDS`] revisions already.
    #[error(
        "this session holds {limit} annotation revisions already; close the session to start anew"
    )]
    Full {
        /// The bound.
        limit: usize,
    },
}

/// The label, comment and prototype at each address: what the effective history says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Projection {
    /// The effective revision of each (kind, document, address), the newest of its kind there.
    pub current: BTreeMap<(AnnotationKind, String, String), String>,
}

/// The labels of one session, by document and address: what tools show beside a provider's
/// names, shared without copying while the registry is unchanged.
pub type Labels = Arc<HashMap<(String, String), String>>;

/// The annotations of one binary session.
#[derive(Clone, Debug, Default)]
pub struct AnnotationRegistry {
    history: Vec<Annotation>,
    /// Whether each revision of `history` is effective.
    effective: Vec<bool>,
    /// For each revision reverted by an effective undo, that undo.
    undone_by: HashMap<AnnotationId, AnnotationId>,
    projection: Projection,
    labels: Labels,
}

impl AnnotationRegistry {
    /// An empty registry.
    pub fn new() -> AnnotationRegistry {
        AnnotationRegistry::default()
    }

    /// Number of revisions, undos counted.
    pub fn len(&self) -> usize {
        self.history.len()
    }

    /// Whether the history is empty.
    pub fn is_empty(&self) -> bool {
        self.history.is_empty()
    }

    /// Forgets everything (the session closed).
    pub fn clear(&mut self) {
        *self = AnnotationRegistry::default();
    }

    /// Checks a batch and plans its revisions, in the order of the edits; their IDs are issued
    /// now. `ledger` answers whether an Evidence ID is this session's.
    pub fn plan_batch(
        &self,
        edits: Vec<EditDraft>,
        ledger: &dyn EvidenceLookup,
    ) -> Result<Vec<Annotation>, AnnotationError> {
        if edits.is_empty() || edits.len() > MAX_BATCH_EDITS {
            return Err(AnnotationError::BatchSize {
                count: edits.len(),
                limit: MAX_BATCH_EDITS,
            });
        }
        for (index, edit) in edits.iter().enumerate() {
            check_edit(edit, ledger).map_err(|(field, problem)| AnnotationError::Edit {
                index,
                field,
                problem,
            })?;
        }
        self.check_room(edits.len())?;
        Ok(edits
            .into_iter()
            .map(|edit| {
                let mut evidence: Vec<String> = Vec::with_capacity(edit.evidence.len());
                for id in edit.evidence {
                    if !evidence.contains(&id) {
                        evidence.push(id);
                    }
                }
                Annotation {
                    id: AnnotationId::next(),
                    kind: edit.kind.kind(),
                    document: Some(edit.document),
                    address: Some(edit.address),
                    procedure: edit.procedure,
                    value: Some(edit.value),
                    evidence,
                    undoes: None,
                }
            })
            .collect())
    }

    /// Plans the undo of the effective revision `id`.
    pub fn plan_undo(&self, id: &str) -> Result<Annotation, AnnotationError> {
        let at = self
            .position(id)
            .ok_or_else(|| AnnotationError::NotFound { id: id.into() })?;
        let target = &self.history[at];
        if !self.effective[at] {
            let by = self
                .undone_by
                .get(&target.id)
                .cloned()
                .unwrap_or_else(|| target.id.clone());
            return Err(AnnotationError::AlreadyUndone {
                id: target.id.clone(),
                by,
            });
        }
        self.check_room(1)?;
        Ok(Annotation {
            id: AnnotationId::next(),
            kind: AnnotationKind::Undo,
            document: None,
            address: None,
            procedure: false,
            value: None,
            evidence: Vec::new(),
            undoes: Some(target.id.clone()),
        })
    }

    fn check_room(&self, adding: usize) -> Result<(), AnnotationError> {
        if self.history.len().saturating_add(adding) > MAX_ANNOTATION_RECORDS {
            return Err(AnnotationError::Full {
                limit: MAX_ANNOTATION_RECORDS,
            });
        }
        Ok(())
    }

    fn position(&self, id: &str) -> Option<usize> {
        self.history
            .binary_search_by(|revision| revision.id.as_str().cmp(id))
            .ok()
    }

    /// Adds planned (or stored) revisions to the history and derives the new projection.
    /// Revisions already held, or naming a revision the history does not hold, are skipped.
    pub fn apply(&mut self, revisions: Vec<Annotation>) {
        for revision in revisions {
            if self.position(revision.id.as_str()).is_some() {
                continue;
            }
            if revision
                .undoes
                .as_ref()
                .is_some_and(|undone| self.position(undone.as_str()).is_none())
            {
                continue;
            }
            let at = self.history.partition_point(|kept| kept.id < revision.id);
            self.history.insert(at, revision);
        }
        self.derive();
    }

    /// Recomputes effectiveness (newest first: an effective undo cancels its target, which is
    /// older) and the projection.
    fn derive(&mut self) {
        let count = self.history.len();
        let mut cancelled: HashMap<&AnnotationId, &AnnotationId> = HashMap::new();
        let mut effective = vec![false; count];
        for at in (0..count).rev() {
            let revision = &self.history[at];
            effective[at] = !cancelled.contains_key(&revision.id);
            if effective[at]
                && let Some(target) = &revision.undoes
            {
                cancelled.insert(target, &revision.id);
            }
        }
        self.undone_by = cancelled
            .into_iter()
            .map(|(target, by)| (target.clone(), by.clone()))
            .collect();
        let mut projection = Projection::default();
        let mut labels = HashMap::new();
        for (revision, &on) in self.history.iter().zip(&effective) {
            if !on || revision.kind == AnnotationKind::Undo {
                continue;
            }
            let (Some(document), Some(address), Some(value)) =
                (&revision.document, &revision.address, &revision.value)
            else {
                continue;
            };
            projection.current.insert(
                (revision.kind, document.clone(), address.clone()),
                value.clone(),
            );
            if revision.kind == AnnotationKind::Name {
                labels.insert((document.clone(), address.clone()), value.clone());
            }
        }
        self.effective = effective;
        self.projection = projection;
        self.labels = Arc::new(labels);
    }

    /// What the effective history says.
    pub fn projection(&self) -> &Projection {
        &self.projection
    }

    /// The labels, shared.
    pub fn labels(&self) -> Labels {
        Arc::clone(&self.labels)
    }

    /// The label at `address` of `document`, if one is effective.
    pub fn label(&self, document: &str, address: &str) -> Option<&str> {
        self.projection
            .current
            .get(&(
                AnnotationKind::Name,
                document.to_owned(),
                address.to_owned(),
            ))
            .map(String::as_str)
    }

    /// Every revision, oldest first, with whether it is effective.
    pub fn history(&self) -> impl Iterator<Item = (&Annotation, bool)> {
        self.history.iter().zip(self.effective.iter().copied())
    }

    /// The undo that reverts `id`, if an effective one does.
    pub fn undone_by(&self, id: &AnnotationId) -> Option<&AnnotationId> {
        self.undone_by.get(id)
    }
}

/// Checks one edit, naming the field at fault.
fn check_edit(
    edit: &EditDraft,
    ledger: &dyn EvidenceLookup,
) -> Result<(), (&'static str, EditProblem)> {
    let field = edit.kind.value_field();
    match edit.kind {
        EditKind::Name => check_name(&edit.value),
        EditKind::Comment => check_comment(&edit.value),
        EditKind::Prototype => check_declaration(&edit.value).map_err(EditProblem::from),
    }
    .map_err(|problem| (field, problem))?;
    check_evidence(&edit.evidence, ledger).map_err(|problem| ("evidence", problem))
}

/// Checks a name: `[A-Za-z_][A-Za-z0-9_:.@$<>~]*`, at most [`MAX_NAME_CHARS`].
pub fn check_name(name: &str) -> Result<(), EditProblem> {
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        return Err(EditProblem::TooLong {
            chars,
            limit: MAX_NAME_CHARS,
        });
    }
    let mut bytes = name.bytes();
    let first_ok = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    let rest_ok = bytes.all(|b| b.is_ascii_alphanumeric() || b"_:.@$<>~".contains(&b));
    if first_ok && rest_ok {
        Ok(())
    } else {
        Err(EditProblem::BadName { name: name.into() })
    }
}

/// Whether `c` is a bidirectional embedding, override or isolate character.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Checks a comment: not blank, at most [`MAX_COMMENT_CHARS`], no control characters but line
/// feed and tab, no bidirectional embeddings, overrides or isolates.
pub fn check_comment(text: &str) -> Result<(), EditProblem> {
    let chars = text.chars().count();
    if chars > MAX_COMMENT_CHARS {
        return Err(EditProblem::TooLong {
            chars,
            limit: MAX_COMMENT_CHARS,
        });
    }
    if text.trim().is_empty() {
        return Err(EditProblem::Empty);
    }
    for (at, c) in text.chars().enumerate() {
        if (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c) {
            return Err(EditProblem::BadCharacter {
                character: format!("U+{:04X}", u32::from(c)),
                at,
            });
        }
    }
    Ok(())
}

fn check_evidence(cited: &[String], ledger: &dyn EvidenceLookup) -> Result<(), EditProblem> {
    if cited.is_empty() {
        return Err(EditProblem::NoEvidence);
    }
    let mut distinct: Vec<&str> = cited.iter().map(String::as_str).collect();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() > MAX_CITED_EVIDENCE {
        return Err(EditProblem::TooMuchEvidence {
            count: distinct.len(),
            limit: MAX_CITED_EVIDENCE,
        });
    }
    match cited.iter().find(|id| !ledger.contains_evidence(id)) {
        Some(id) => Err(EditProblem::MissingEvidence {
            id: id.as_str().into(),
        }),
        None => Ok(()),
    }
}
