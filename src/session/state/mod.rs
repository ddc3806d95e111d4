//! [`Session`]: the open binary, its providers and documents, and the Evidence ledger.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use schemars::JsonSchema;
use serde::Serialize;

use super::durable::{Change, Durable, StoredBinary, StoredSession};
use super::error::SessionError;
use super::evidence::{EvidenceId, EvidencePage, EvidenceRecord, Ledger, Observation};
use super::provider::{Companions, DocumentInfo, Operation, Provider};
use super::target::Target;
use crate::annotations::AnnotationRegistry;
use crate::base::Cancel;
use crate::base::files::Confinement;
use crate::core::MAX_VALUE_CHARS;
use crate::unknowns::UnknownRegistry;

mod annotations;
mod stores;

pub use annotations::Annotated;

pub use stores::{INVENTORY_OPERATION, KeptWalk, MAX_KEPT_INVENTORIES};

/// Source of binary-session numbers for the whole process, so an observation made in a closed
/// session can never be recorded into a later one.
static NEXT_EPOCH: AtomicU64 = AtomicU64::new(1);

/// The session of one MCP connection (or one integrator): `Send + Sync`, used through `&self`
/// (hold it in an `Arc`). Provider calls never run under its lock.
///
/// A *binary session* starts with [`Session::open_providers`] (or `rea::providers::open_path`,
/// which loads a file first) and ends with [`Session::close`]; opening while one is open closes
/// the previous one first. It has declared providers (the first is current), a current
/// document, the Evidence ledger and the residual-unknown registry. Closing clears the ledger
/// and the registry; Evidence and unknown IDs are never reused in the process.
///
/// ```
/// use rea::session::{Observation, Session};
/// use serde_json::json;
///
/// let session = Session::new();
/// let record = session
///     .record_evidence(Observation::unbound("list_providers", json!({}), json!([])))
///     .unwrap();
/// assert!(record.id.as_str().starts_with("ev-"));
/// assert_eq!(session.evidence_ids(), [record.id.as_str()]);
/// ```
#[derive(Debug, Default)]
pub struct Session {
    state: Mutex<State>,
    /// Held by every change that is committed to the store, from its checks to its
    /// application: a change is committed (outside `state`, so readers never wait on the
    /// disk) and then applied, and no other change runs in between.
    writer: Mutex<()>,
    /// Where the session's changes are committed before they are applied, if anywhere.
    journal: Option<Journal>,
}

/// Times a record is prepared again after another instance appended to the session first.
const MAX_STALE_TRIES: usize = 16;

/// Whether `error` says another instance changed the session first
/// ([`super::durable::DurableError::Stale`]).
pub(crate) fn is_stale(error: &SessionError) -> bool {
    matches!(error, SessionError::Store(store) if matches!(**store, super::durable::DurableError::Stale { .. }))
}

/// The store a session commits its changes to, and its handle there.
#[derive(Clone, Debug)]
pub(crate) struct Journal {
    pub(crate) handle: String,
    pub(crate) durable: Arc<dyn Durable>,
}

/// Where an opened file came from, as the store keeps it: its digest and size, and its bytes
/// when the store keeps binaries.
#[derive(Clone, Debug, Default)]
pub struct Provenance {
    /// The SHA-256 of the file's bytes, as 64 lowercase hexadecimal digits.
    pub sha256: String,
    /// The file's size in bytes.
    pub size: u64,
    /// The file's bytes, if the store keeps them (see [`Session::keeps_binaries`]).
    pub bytes: Option<Arc<[u8]>>,
}

/// A kept binary opened again: where its file was found, and the providers serving it.
pub type Reopened = (Option<PathBuf>, Vec<Arc<dyn Provider>>);

/// What a session that is listed shows (`list_sessions`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SessionSummary {
    /// The open binary's label (the path as given), or null.
    pub label: Option<String>,
    /// Where its file was found, or null.
    pub path: Option<String>,
    /// The SHA-256 of its file, or null.
    pub sha256: Option<String>,
    /// Evidence records retained.
    pub records: usize,
    /// Residual unknowns that are open heads.
    pub open_unknowns: usize,
    /// Revisions of residual unknowns, of every status.
    pub unknowns: usize,
}

#[derive(Debug, Default)]
struct State {
    binary: Option<Binary>,
    ledger: Ledger,
    /// Residual unknowns; cleared with the ledger. Inventory pages and captures are Evidence
    /// records, so the ledger is their store (see `stores`).
    unknowns: UnknownRegistry,
    /// The investigator's annotations; cleared with the ledger.
    annotations: AnnotationRegistry,
    /// Which paths tools may touch.
    confinement: Confinement,
    /// Providers declared beside the one that opens a file (see [`Companions`]).
    companions: Option<Arc<dyn Companions>>,
    /// Who approves `run_process_capture` runs.
    capture_approval: crate::capture::CaptureApproval,
    /// Finished inventories whose later pages may still be asked for (see `stores`); cleared
    /// with the ledger.
    inventories: stores::KeptInventories,
    /// `close_binary` ended the session ([`Session::end_unless`]) and no binary was opened
    /// since: a record (of a call that raced it) is refused instead of answering an ID no
    /// session holds.
    ended: bool,
}

struct Binary {
    epoch: u64,
    label: String,
    /// The file's digest and size, if it came from a file.
    provenance: Option<(String, u64)>,
    /// Where the file was found when it was opened (the opened descriptor's path), for the
    /// confinement check of every later read; `None` for providers opened without a file.
    origin: Option<PathBuf>,
    providers: Vec<Arc<dyn Provider>>,
    current_provider: usize,
    current_document: Option<String>,
}

impl std::fmt::Debug for Binary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<&str> = self.providers.iter().map(|p| p.id()).collect();
        f.debug_struct("Binary")
            .field("epoch", &self.epoch)
            .field("label", &self.label)
            .field("providers", &ids)
            .field("current_provider", &self.current_provider)
            .field("current_document", &self.current_document)
            .finish()
    }
}

impl Binary {
    fn provider_index(&self, id: Option<&str>) -> Result<usize, SessionError> {
        let Some(id) = id else {
            return Ok(self.current_provider);
        };
        self.providers
            .iter()
            .position(|provider| provider.id() == id)
            .ok_or_else(|| SessionError::UnknownProvider {
                id: id.into(),
                declared: self.provider_ids(),
            })
    }

    fn provider_ids(&self) -> Vec<String> {
        self.providers.iter().map(|p| p.id().to_owned()).collect()
    }

    fn target(
        &self,
        index: usize,
        document: Option<String>,
        labels: crate::annotations::Labels,
    ) -> Target {
        let provider = &self.providers[index];
        Target {
            epoch: self.epoch,
            provider_id: provider.id().to_owned(),
            provider: Arc::clone(provider),
            document,
            labels,
        }
    }
}

/// What [`Session::open_providers`] opened.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Opened {
    /// The label of the opened target (for a file, its path).
    pub label: String,
    /// Declared provider identities; the first is current.
    pub providers: Vec<String>,
    /// The current provider's documents.
    pub documents: Vec<DocumentInfo>,
    /// The current document: the first document, if any.
    pub current_document: Option<String>,
    /// The binary session this one replaced, if one was open.
    pub replaced: Option<ClosedBinary>,
}

/// What [`Session::close`] closed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ClosedBinary {
    /// The closed target (for a file, its path).
    pub label: String,
    /// How many Evidence records were discarded.
    pub evidence_discarded: usize,
}

/// A declared provider, as `list_providers` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ProviderSummary {
    /// The provider's identity.
    pub id: String,
    /// Operations (tool names) it supports.
    // In `Operation::ALL` order (not in the doc comment, which is the published description).
    pub operations: Vec<Operation>,
    /// Whether it is the current provider.
    pub current: bool,
}

impl Session {
    /// A session with no binary open and an empty ledger.
    pub fn new() -> Session {
        Session::default()
    }

    /// A session whose ledger draws on `budget`, shared with other sessions (see
    /// [`SessionStore`](crate::session::SessionStore)).
    pub fn with_budget(budget: Arc<super::budget::LedgerBudget>) -> Session {
        Session {
            state: Mutex::new(State {
                ledger: Ledger::with_budget(budget),
                ..State::default()
            }),
            ..Session::default()
        }
    }

    /// A session drawing on `budget` whose changes are committed to `journal` first.
    pub(crate) fn journaled(budget: Arc<super::budget::LedgerBudget>, journal: Journal) -> Session {
        Session {
            journal: Some(journal),
            ..Session::with_budget(budget)
        }
    }

    /// The session `stored` read back from `journal`'s store, with `providers` serving its
    /// binary (`None` when it had none, or its file could not be found again). Its ledger
    /// draws on `budget`, and is refused when it does not fit.
    pub(crate) fn resumed(
        budget: Arc<super::budget::LedgerBudget>,
        journal: Journal,
        stored: StoredSession,
        providers: Option<Reopened>,
    ) -> Result<Session, SessionError> {
        let ledger = Ledger::restore(budget, stored.records)?;
        let mut unknowns = UnknownRegistry::new();
        unknowns.apply(stored.unknowns);
        let mut annotations = AnnotationRegistry::new();
        annotations.apply(stored.annotations);
        let binary = match (stored.binary, providers) {
            (Some(kept), Some((origin, providers))) if !providers.is_empty() => {
                let current_provider = providers
                    .iter()
                    .position(|p| p.id() == kept.current_provider)
                    .unwrap_or(0);
                Some(Binary {
                    epoch: NEXT_EPOCH.fetch_add(1, Ordering::Relaxed),
                    label: kept.label,
                    provenance: kept.sha256.map(|hash| (hash, kept.size)),
                    origin,
                    providers,
                    current_provider,
                    current_document: kept.current_document,
                })
            }
            _ => None,
        };
        Ok(Session {
            state: Mutex::new(State {
                binary,
                ledger,
                unknowns,
                annotations,
                ..State::default()
            }),
            writer: Mutex::new(()),
            journal: Some(journal),
        })
    }

    /// The handle this session is kept under in its store, if it has one.
    pub(crate) fn journal_handle(&self) -> Option<&str> {
        self.journal.as_ref().map(|journal| journal.handle.as_str())
    }

    /// Whether the store this session commits to keeps the bytes of opened binaries (so an
    /// opener should pass them in [`Provenance::bytes`]).
    pub fn keeps_binaries(&self) -> bool {
        self.journal
            .as_ref()
            .is_some_and(|journal| journal.durable.keeps_binaries())
    }

    /// Commits `changes` to the store, if the session has one.
    fn journal(&self, changes: &[Change<'_>]) -> Result<(), SessionError> {
        match &self.journal {
            Some(journal) => Ok(journal.durable.commit(&journal.handle, changes)?),
            None => Ok(()),
        }
    }

    fn writer(&self) -> MutexGuard<'_, ()> {
        self.writer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Forgets what the store keeps of this session (one that was never admitted, made for a
    /// call that failed after all); a failure to forget is left to the next resume, which
    /// finds a session nobody holds.
    pub fn discard(&self) {
        let _writer = self.writer();
        if let Err(error) = self.journal(&[Change::Close]) {
            tracing::warn!("a session that was never opened stays in the store: {error}");
        }
    }

    /// What `list_sessions` shows of this session.
    pub fn summary(&self) -> SessionSummary {
        let state = self.lock();
        let binary = state.binary.as_ref();
        SessionSummary {
            label: binary.map(|b| b.label.clone()),
            path: binary.and_then(|b| b.origin.as_ref().map(|o| o.display().to_string())),
            sha256: binary.and_then(|b| b.provenance.as_ref().map(|(hash, _)| hash.clone())),
            records: state.ledger.len(),
            open_unknowns: state.unknowns.unresolved_heads().count(),
            unknowns: state.unknowns.len(),
        }
    }

    /// The real path and SHA-256 of the open binary's file, if it came from a file.
    pub fn file_identity(&self) -> Option<(PathBuf, String)> {
        let state = self.lock();
        let binary = state.binary.as_ref()?;
        Some((
            binary.origin.clone()?,
            binary.provenance.as_ref()?.0.clone(),
        ))
    }

    /// Whether a binary is open in this session.
    pub fn is_open(&self) -> bool {
        self.lock().binary.is_some()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // No code panics while holding the lock, and every update leaves the state whole, so a
        // poisoned lock still guards consistent data.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens a binary session served by `providers` (the first is current), closing the open
    /// one first if there is one. The current document is the first document the current
    /// provider lists.
    pub fn open_providers(
        &self,
        label: impl Into<String>,
        providers: Vec<Arc<dyn Provider>>,
    ) -> Result<Opened, SessionError> {
        self.open_providers_unless(label, providers, &Cancel::never())
    }

    /// [`Session::open_providers`], unless `cancel` is set before the new binary session is
    /// committed: then nothing changes and the error is [`SessionError::Cancelled`].
    pub fn open_providers_unless(
        &self,
        label: impl Into<String>,
        providers: Vec<Arc<dyn Provider>>,
        cancel: &Cancel,
    ) -> Result<Opened, SessionError> {
        self.open_file_providers_unless(label, None, providers, cancel)
    }

    /// [`Session::open_providers_unless`] for providers that serve the file found at `origin`
    /// (the real path of the opened descriptor): while the session's [`Confinement`] does not
    /// allow `origin` (the client's roots narrowed), the binary's providers are refused with
    /// [`SessionError::OutsideRoots`] (tools answer an error, completion answers empty).
    pub fn open_file_providers_unless(
        &self,
        label: impl Into<String>,
        origin: Option<PathBuf>,
        providers: Vec<Arc<dyn Provider>>,
        cancel: &Cancel,
    ) -> Result<Opened, SessionError> {
        self.open_provenance_unless(label, origin, None, providers, cancel)
    }

    /// [`Session::open_file_providers_unless`] for a file whose digest, size and (if the store
    /// keeps them) bytes are `provenance`: what the store keeps of the binary, committed before
    /// the session changes.
    pub fn open_provenance_unless(
        &self,
        label: impl Into<String>,
        origin: Option<PathBuf>,
        provenance: Option<Provenance>,
        providers: Vec<Arc<dyn Provider>>,
        cancel: &Cancel,
    ) -> Result<Opened, SessionError> {
        let Some(first) = providers.first() else {
            return Err(SessionError::NoProviders);
        };
        for (index, provider) in providers.iter().enumerate() {
            check_provider_id(provider.id())?;
            if providers[..index].iter().any(|p| p.id() == provider.id()) {
                return Err(SessionError::DuplicateProvider {
                    id: provider.id().into(),
                });
            }
        }
        let documents = first
            .list_documents()
            .map_err(|source| SessionError::Provider {
                provider: first.id().to_owned(),
                source,
            })?;
        let (identity, bytes) = match provenance {
            Some(Provenance {
                sha256,
                size,
                bytes,
            }) => (Some((sha256, size)), bytes),
            None => (None, None),
        };
        let binary = Binary {
            epoch: NEXT_EPOCH.fetch_add(1, Ordering::Relaxed),
            label: label.into(),
            provenance: identity,
            origin,
            current_provider: 0,
            current_document: documents.first().map(|d| d.name.clone()),
            providers,
        };
        let opened = Opened {
            label: binary.label.clone(),
            providers: binary.provider_ids(),
            current_document: binary.current_document.clone(),
            documents,
            replaced: None,
        };
        let _writer = self.writer();
        cancel.commit()?;
        if self.journal.is_some() {
            let stored = StoredBinary {
                label: binary.label.clone(),
                path: binary.origin.clone(),
                sha256: binary.provenance.as_ref().map(|(hash, _)| hash.clone()),
                size: binary.provenance.as_ref().map_or(0, |(_, size)| *size),
                providers: binary.provider_ids(),
                current_provider: binary.providers[0].id().to_owned(),
                current_document: binary.current_document.clone(),
            };
            let replaces = self.lock().binary.is_some();
            self.journal(&[Change::Open {
                replaces,
                binary: &stored,
                bytes: bytes.as_deref(),
            }])?;
        }
        let mut state = self.lock();
        let replaced = state.close_binary();
        state.binary = Some(binary);
        state.ended = false;
        Ok(Opened { replaced, ..opened })
    }

    /// Confines every path the tools touch from now on (`rea serve --root`, or the client's
    /// `roots/list`). The default is [`Confinement::unrestricted`].
    ///
    /// Walks kept for later inventory pages are dropped, so no page made under the old
    /// confinement is served under the new one.
    pub fn set_confinement(&self, confinement: Confinement) {
        let mut state = self.lock();
        state.confinement = confinement;
        state.inventories.clear();
    }

    /// The current confinement.
    pub fn confinement(&self) -> Confinement {
        self.lock().confinement.clone()
    }

    /// Who approves `run_process_capture` runs from now on (the default: the person, through
    /// the client).
    pub fn set_capture_approval(&self, approval: crate::capture::CaptureApproval) {
        self.lock().capture_approval = approval;
    }

    /// Who approves `run_process_capture` runs.
    pub fn capture_approval(&self) -> crate::capture::CaptureApproval {
        self.lock().capture_approval
    }

    /// Declares `companions` beside the provider of every binary later opened from a file
    /// (`rea serve --provider angr`); `None` declares none (the default). An open binary
    /// session keeps the providers it has.
    pub fn set_companions(&self, companions: Option<Arc<dyn Companions>>) {
        self.lock().companions = companions;
    }

    /// What [`Session::set_companions`] set.
    pub fn companions(&self) -> Option<Arc<dyn Companions>> {
        self.lock().companions.clone()
    }

    /// Adds a provider to the open binary session (it does not become current).
    pub fn declare_provider(&self, provider: Arc<dyn Provider>) -> Result<(), SessionError> {
        check_provider_id(provider.id())?;
        let mut state = self.lock();
        let binary = state.binary.as_mut().ok_or(SessionError::NotOpen)?;
        if binary.providers.iter().any(|p| p.id() == provider.id()) {
            return Err(SessionError::DuplicateProvider {
                id: provider.id().into(),
            });
        }
        binary.providers.push(provider);
        Ok(())
    }

    /// Closes the open binary session and clears the Evidence ledger.
    pub fn close(&self) -> Result<ClosedBinary, SessionError> {
        self.close_unless(&Cancel::never())
    }

    /// [`Session::close`], unless `cancel` is set first: then nothing changes and the error is
    /// [`SessionError::Cancelled`].
    pub fn close_unless(&self, cancel: &Cancel) -> Result<ClosedBinary, SessionError> {
        let _writer = self.writer();
        if self.lock().binary.is_none() {
            return Err(SessionError::NotOpen);
        }
        cancel.commit()?;
        self.journal(&[Change::Close])?;
        self.lock().close_binary().ok_or(SessionError::NotOpen)
    }

    /// [`Session::close_unless`], and the session ends with it (what `close_binary` does): a
    /// record of no binary that finishes afterwards (an inventory that raced the close) is
    /// refused with [`SessionError::ClosedWhileRunning`] until a binary is opened again.
    pub fn end_unless(&self, cancel: &Cancel) -> Result<ClosedBinary, SessionError> {
        let _writer = self.writer();
        if self.lock().binary.is_none() {
            return Err(SessionError::NotOpen);
        }
        cancel.commit()?;
        self.journal(&[Change::Close])?;
        let mut state = self.lock();
        state.ended = true;
        state.close_binary().ok_or(SessionError::NotOpen)
    }

    /// The label of the open target, if a binary is open.
    pub fn label(&self) -> Option<String> {
        self.lock().binary.as_ref().map(|b| b.label.clone())
    }

    /// Whether the open binary's file lies outside the roots allowed now (the client's roots
    /// narrowed): then its tools answer [`SessionError::OutsideRoots`].
    pub fn binary_outside_roots(&self) -> bool {
        self.lock().binary_outside_roots()
    }

    /// The declared providers (empty when no binary is open).
    pub fn providers(&self) -> Vec<ProviderSummary> {
        let state = self.lock();
        let Some(binary) = &state.binary else {
            return Vec::new();
        };
        binary
            .providers
            .iter()
            .enumerate()
            .map(|(index, provider)| ProviderSummary {
                id: provider.id().to_owned(),
                operations: Operation::ALL
                    .into_iter()
                    .filter(|&op| provider.supports(op))
                    .collect(),
                current: index == binary.current_provider,
            })
            .collect()
    }

    /// The declared provider identities in declaration order (empty when no binary is open).
    pub fn provider_ids(&self) -> Vec<String> {
        self.lock()
            .binary
            .as_ref()
            .map_or_else(Vec::new, Binary::provider_ids)
    }

    /// The provider named `id`, or the current provider when `id` is `None`.
    pub fn provider(&self, id: Option<&str>) -> Result<Arc<dyn Provider>, SessionError> {
        let state = self.lock();
        let binary = state.readable_binary()?;
        let index = binary.provider_index(id)?;
        Ok(Arc::clone(&binary.providers[index]))
    }

    /// The current document, if a binary is open and has one.
    pub fn current_document(&self) -> Option<String> {
        self.lock()
            .binary
            .as_ref()
            .and_then(|b| b.current_document.clone())
    }

    /// What a tool call works on: the provider named `provider` (else the current one) and the
    /// document `document` (else the current document, if any). The document is not checked
    /// here; the provider answers `UnknownDocument` for names it does not have.
    pub fn target(
        &self,
        provider: Option<&str>,
        document: Option<&str>,
    ) -> Result<Target, SessionError> {
        let state = self.lock();
        let binary = state.readable_binary()?;
        let index = binary.provider_index(provider)?;
        let document = document
            .map(str::to_owned)
            .or_else(|| binary.current_document.clone());
        Ok(binary.target(index, document, state.annotations.labels()))
    }

    /// Makes `document` of the provider named `provider` (else the current provider) current,
    /// and that provider the current provider. The document must be one the provider lists.
    pub fn set_current_document(
        &self,
        provider: Option<&str>,
        document: &str,
    ) -> Result<Target, SessionError> {
        self.set_current_document_unless(provider, document, &Cancel::never())
    }

    /// [`Session::set_current_document`], unless `cancel` is set first: then nothing changes
    /// and the error is [`SessionError::Cancelled`].
    pub fn set_current_document_unless(
        &self,
        provider: Option<&str>,
        document: &str,
        cancel: &Cancel,
    ) -> Result<Target, SessionError> {
        let target = self.target(provider, Some(document))?;
        let documents = target.query(|provider| provider.list_documents())?;
        if !documents.iter().any(|d| d.name == document) {
            return Err(SessionError::UnknownDocument {
                provider: target.provider_id().to_owned(),
                document: document.into(),
            });
        }
        let _writer = self.writer();
        let current_provider = {
            let state = self.lock();
            let binary = state
                .binary
                .as_ref()
                .filter(|b| b.epoch == target.epoch)
                .ok_or(SessionError::SessionChanged)?;
            binary.provider_index(Some(target.provider_id()))?
        };
        cancel.commit()?;
        self.journal(&[Change::Current {
            provider: target.provider_id(),
            document,
        }])?;
        let mut state = self.lock();
        let binary = state
            .binary
            .as_mut()
            .filter(|b| b.epoch == target.epoch)
            .ok_or(SessionError::SessionChanged)?;
        binary.current_provider = current_provider;
        binary.current_document = Some(document.to_owned());
        Ok(target)
    }

    /// Appends an observation to the ledger. An observation made through a [`Target`] is only
    /// recorded while the same binary session is open ([`SessionError::SessionChanged`]
    /// otherwise).
    pub fn record_evidence(
        &self,
        observation: Observation,
    ) -> Result<Arc<EvidenceRecord>, SessionError> {
        self.record_evidence_unless(observation, &Cancel::never())
    }

    /// [`Session::record_evidence`], unless `cancel` is set before the record is appended:
    /// then nothing is retained and the error is [`SessionError::Cancelled`].
    pub fn record_evidence_unless(
        &self,
        observation: Observation,
        cancel: &Cancel,
    ) -> Result<Arc<EvidenceRecord>, SessionError> {
        let _writer = self.writer();
        // Only a store several processes append to may refuse a record as stale: then the
        // observation is prepared again, so it is kept (a copy) until the record commits.
        let shared = self
            .journal
            .as_ref()
            .is_some_and(|journal| journal.durable.serves_any());
        let mut pending = Some(observation);
        let mut tries = 0;
        loop {
            let observation = match pending.take() {
                Some(observation) if shared => {
                    pending = Some(observation.clone());
                    observation
                }
                Some(observation) => observation,
                // Never: only a shared store's stale record goes round again.
                None => return Err(SessionError::SessionChanged),
            };
            let number = self.issue_evidence_number()?;
            let prepared = {
                let mut state = self.lock();
                cancel.check()?;
                if let Some(binding) = &observation.binding {
                    let open_epoch = state.binary.as_ref().map(|b| b.epoch);
                    if open_epoch != Some(binding.epoch) {
                        return Err(SessionError::SessionChanged);
                    }
                } else if state.ended {
                    return Err(SessionError::ClosedWhileRunning);
                }
                cancel.commit()?;
                state.ledger.prepare_as(observation, number)?
            };
            match self.journal(&[Change::Record(&prepared.record)]) {
                Ok(()) => return Ok(self.lock().ledger.push(prepared)),
                Err(error) => {
                    self.lock().ledger.abandon(prepared);
                    // Another instance appended first: read what it appended, then append
                    // after it.
                    if !shared || !is_stale(&error) || tries >= MAX_STALE_TRIES {
                        return Err(error);
                    }
                    tries += 1;
                    self.catch_up_locked()?;
                }
            }
        }
    }

    /// An Evidence number from the store, when it issues them (see
    /// [`Durable::issue_evidence_number`]).
    pub(crate) fn issue_evidence_number(&self) -> Result<Option<u64>, SessionError> {
        match &self.journal {
            Some(journal) => Ok(journal.durable.issue_evidence_number()?),
            None => Ok(None),
        }
    }

    /// Replaces what this session holds (ledger, unknowns, annotations, current document) by
    /// `stored`, what the store holds of it now (another process changed it); the binary and
    /// its providers stay. The caller checked that `stored` has the same binary.
    pub(crate) fn catch_up(&self, stored: StoredSession) -> Result<(), SessionError> {
        let _writer = self.writer();
        self.apply_stored(stored)
    }

    /// [`Session::catch_up`] from the store, with the writer lock already held.
    pub(crate) fn catch_up_locked(&self) -> Result<(), SessionError> {
        let Some(journal) = &self.journal else {
            return Ok(());
        };
        match journal.durable.load_session(&journal.handle)? {
            Some(stored) => self.apply_stored(stored),
            None => Err(SessionError::ClosedWhileRunning),
        }
    }

    fn apply_stored(&self, stored: StoredSession) -> Result<(), SessionError> {
        let mut state = self.lock();
        let budget = Arc::clone(state.ledger.budget());
        // The old ledger gives its memory back before the new one takes it.
        state.ledger = Ledger::with_budget(Arc::clone(&budget));
        state.ledger = Ledger::restore(budget, stored.records)?;
        let mut unknowns = UnknownRegistry::new();
        unknowns.apply(stored.unknowns);
        state.unknowns = unknowns;
        let mut annotations = AnnotationRegistry::new();
        annotations.apply(stored.annotations);
        state.annotations = annotations;
        if let (Some(binary), Some(kept)) = (state.binary.as_mut(), stored.binary) {
            if let Some(at) = binary
                .providers
                .iter()
                .position(|p| p.id() == kept.current_provider)
            {
                binary.current_provider = at;
            }
            binary.current_document = kept.current_document;
        }
        Ok(())
    }

    /// The retained record with ID `id`.
    pub fn evidence(&self, id: &str) -> Result<Arc<EvidenceRecord>, SessionError> {
        let id = EvidenceId::parse(id)?;
        self.lock()
            .ledger
            .get(id.as_str())
            .ok_or_else(|| SessionError::UnknownEvidence {
                id: id.as_str().into(),
            })
    }

    /// A page of at most `limit` records (at least 1), oldest first, starting after the record
    /// whose ID is `cursor`.
    pub fn list_evidence(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<EvidencePage, SessionError> {
        let after = cursor.map(EvidenceId::parse).transpose()?;
        Ok(self.lock().ledger.page(after.as_ref(), limit))
    }

    /// Retained Evidence IDs, oldest first.
    pub fn evidence_ids(&self) -> Vec<String> {
        self.evidence_id_snapshot().to_vec()
    }

    /// Retained Evidence IDs, oldest first, as a shared snapshot (no copy while the ledger is
    /// unchanged): what completion reads.
    pub fn evidence_id_snapshot(&self) -> Arc<[String]> {
        self.lock().ledger.ids()
    }

    /// Evidence completion over the retained IDs, answered by binary search while the ledger's
    /// IDs are ordered (always, for the IDs this crate issues); `None` otherwise.
    pub(crate) fn complete_evidence_ids(
        &self,
        prefix: &crate::core::Prefix,
    ) -> Option<crate::core::Completion> {
        self.lock().ledger.complete_ids(prefix)
    }

    /// Memory the ledger's records occupy, as counted against
    /// [`super::evidence::MAX_LEDGER_BYTES`] (see [`super::evidence::record_cost`]).
    pub fn evidence_bytes(&self) -> usize {
        self.lock().ledger.bytes()
    }

    /// Number of retained Evidence records.
    pub fn evidence_count(&self) -> usize {
        self.lock().ledger.len()
    }
}

impl State {
    /// The open binary, if its file lies inside the current confinement.
    fn readable_binary(&self) -> Result<&Binary, SessionError> {
        let binary = self.binary.as_ref().ok_or(SessionError::NotOpen)?;
        match &binary.origin {
            Some(origin) if !self.confinement.allows(origin) => {
                crate::base::notices::note(crate::base::notices::Notice::BinaryOutsideRoots {
                    label: binary.label.as_str().into(),
                    roots: self.confinement.roots().unwrap_or_default().to_vec(),
                });
                Err(SessionError::OutsideRoots {
                    label: binary.label.as_str().into(),
                })
            }
            _ => Ok(binary),
        }
    }

    /// Whether a binary is open whose file lies outside the current confinement.
    fn binary_outside_roots(&self) -> bool {
        self.binary
            .as_ref()
            .and_then(|binary| binary.origin.as_ref())
            .is_some_and(|origin| !self.confinement.allows(origin))
    }

    /// Ends the binary session, if one is open, and clears what belongs to it.
    fn close_binary(&mut self) -> Option<ClosedBinary> {
        let binary = self.binary.take()?;
        let evidence_discarded = self.ledger.clear();
        self.unknowns.clear();
        self.annotations.clear();
        self.inventories.clear();
        Some(ClosedBinary {
            label: binary.label,
            evidence_discarded,
        })
    }
}

fn check_provider_id(id: &str) -> Result<(), SessionError> {
    if id.is_empty() || id.chars().nth(MAX_VALUE_CHARS).is_some() {
        return Err(SessionError::InvalidProviderId { id: id.into() });
    }
    Ok(())
}
