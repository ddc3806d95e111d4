//! Completion sources (docs/CONTRACT.md section 5): live, read-only projections of the session.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::bounded::call_provider;
use super::provider::{DocumentNames, Operation, Provider};
use super::state::Session;
use crate::core::complete_prefix;
use crate::core::discovery::discover;
use crate::core::{Completion, Family, Outcome, Prefix};

/// The context argument that selects a declared provider for Document and Procedure
/// completion.
pub const PROVIDER_ARGUMENT: &str = "provider";

/// The context argument that names the binary session completion reads (docs/CONTRACT.md
/// section 13); without it, the client's own session.
pub const SESSION_ARGUMENT: &str = "session";

/// The context argument that narrows Artifact occurrence completion to one inventory (the
/// `manifest_id` variable of the occurrence resource template).
pub const MANIFEST_ARGUMENT: &str = "manifest_id";

/// The context argument forwarded to procedure discovery as the document.
pub const DOCUMENT_ARGUMENT: &str = "document";

/// How completion sources call providers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceConfig {
    /// Longest wait for the provider calls of one completion request (all pages of a
    /// discovery together). Past it the completion is empty.
    pub provider_timeout: Duration,
}

impl SourceConfig {
    /// The default time bound: 2 seconds.
    pub const DEFAULT_PROVIDER_TIMEOUT: Duration = Duration::from_secs(2);
}

impl Default for SourceConfig {
    fn default() -> SourceConfig {
        SourceConfig {
            provider_timeout: SourceConfig::DEFAULT_PROVIDER_TIMEOUT,
        }
    }
}

/// What completion reads from a session. [`Session`] implements it; tests and integrators can
/// implement it over their own state.
///
/// Implementations must answer quickly and must not call providers (completion does that,
/// under its time bound). The families of a later issue have default methods returning no
/// candidates.
pub trait SessionView {
    /// Provider identities declared by the open binary session, in declaration order.
    fn provider_ids(&self) -> Vec<String>;

    /// The declared provider named `id`, or the current provider when `id` is `None`; `None`
    /// when there is no such provider (or no binary is open).
    fn provider(&self, id: Option<&str>) -> Option<Arc<dyn Provider>>;

    /// The current document, if any.
    fn current_document(&self) -> Option<String>;

    /// Retained Evidence IDs, oldest first. The ledger can hold tens of thousands of IDs, so
    /// this is a shared snapshot rather than a fresh copy per completion request.
    fn evidence_ids(&self) -> Arc<[String]>;

    /// Evidence completion answered by the store itself, equal to [`complete_prefix`] over
    /// [`SessionView::evidence_ids`]; `None` (the default) when it cannot, and completion
    /// scans the IDs. [`Session`]'s ledger keeps its IDs ordered and answers by binary search
    /// ([`crate::core::complete_ordered`]).
    fn complete_evidence(&self, prefix: &Prefix) -> Option<Completion> {
        let _ = prefix;
        None
    }

    /// Evidence IDs of retained, schema-valid Process Capture v4 documents, oldest first.
    fn process_capture_ids(&self) -> Vec<String> {
        Vec::new()
    }

    /// Manifest IDs of schema-valid retained artifact inventories.
    fn artifact_manifest_ids(&self) -> Vec<String> {
        Vec::new()
    }

    /// Occurrence IDs in schema-valid retained artifact inventory pages.
    fn artifact_occurrence_ids(&self) -> Vec<String> {
        Vec::new()
    }

    /// IDs of the current heads of unresolved residual unknowns.
    fn residual_unknown_ids(&self) -> Vec<String> {
        Vec::new()
    }

    /// Occurrence IDs in the schema-valid retained pages of the inventory `manifest_id`.
    fn artifact_occurrence_ids_in(&self, manifest_id: &str) -> Vec<String> {
        let _ = manifest_id;
        Vec::new()
    }

    /// Handles of the open binary sessions the client may name, in the order it first named
    /// them. A session alone knows none; [`ClientView`] adds a client's.
    fn session_handles(&self) -> Vec<String> {
        Vec::new()
    }

    /// The investigator's effective labels of `document` (docs/CONTRACT.md section 17), as
    /// (canonical address, label), ordered by address then label; Procedure completion offers
    /// them beside the provider's names ([`Procedures::candidates_with_labels`]).
    ///
    /// [`Procedures::candidates_with_labels`]: crate::core::Procedures::candidates_with_labels
    fn labels_of(&self, document: &str) -> Vec<(String, String)> {
        let _ = document;
        Vec::new()
    }
}

/// The labels of `document` among a session's `labels`, ordered by address then label.
fn labels_in(labels: &crate::annotations::Labels, document: &str) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = labels
        .iter()
        .filter(|((of, _), _)| of == document)
        .map(|((_, address), label)| (address.clone(), label.clone()))
        .collect();
    found.sort_unstable();
    found
}

/// What completion reads for one client: the session a request names (or the client's own;
/// `None` when there is none, which completes like a session with no binary open) and the
/// handles of the sessions the client knows.
#[derive(Clone, Copy, Debug)]
pub struct ClientView<'a> {
    /// The session the request works in.
    pub session: Option<&'a Session>,
    /// Handles the client opened or named that are still open.
    pub handles: &'a [String],
}

impl SessionView for ClientView<'_> {
    fn provider_ids(&self) -> Vec<String> {
        self.session.map(Session::provider_ids).unwrap_or_default()
    }

    fn provider(&self, id: Option<&str>) -> Option<Arc<dyn Provider>> {
        Session::provider(self.session?, id).ok()
    }

    fn current_document(&self) -> Option<String> {
        self.session.and_then(Session::current_document)
    }

    fn evidence_ids(&self) -> Arc<[String]> {
        self.session
            .map_or_else(|| Arc::from(Vec::new()), Session::evidence_id_snapshot)
    }

    fn complete_evidence(&self, prefix: &Prefix) -> Option<Completion> {
        match self.session {
            Some(session) => SessionView::complete_evidence(session, prefix),
            None => Some(Completion::empty()),
        }
    }

    fn process_capture_ids(&self) -> Vec<String> {
        self.session
            .map(Session::process_capture_ids)
            .unwrap_or_default()
    }

    fn artifact_manifest_ids(&self) -> Vec<String> {
        self.session
            .map(Session::artifact_manifest_ids)
            .unwrap_or_default()
    }

    fn artifact_occurrence_ids(&self) -> Vec<String> {
        self.session
            .map(Session::artifact_occurrence_ids)
            .unwrap_or_default()
    }

    fn residual_unknown_ids(&self) -> Vec<String> {
        self.session
            .map(Session::unresolved_unknown_ids)
            .unwrap_or_default()
    }

    fn artifact_occurrence_ids_in(&self, manifest_id: &str) -> Vec<String> {
        self.session
            .map(|session| session.artifact_occurrence_ids_in(manifest_id))
            .unwrap_or_default()
    }

    fn session_handles(&self) -> Vec<String> {
        self.handles.to_vec()
    }

    fn labels_of(&self, document: &str) -> Vec<(String, String)> {
        self.session
            .map(|session| SessionView::labels_of(session, document))
            .unwrap_or_default()
    }
}

impl SessionView for Session {
    fn provider_ids(&self) -> Vec<String> {
        Session::provider_ids(self)
    }

    fn provider(&self, id: Option<&str>) -> Option<Arc<dyn Provider>> {
        Session::provider(self, id).ok()
    }

    fn current_document(&self) -> Option<String> {
        Session::current_document(self)
    }

    fn evidence_ids(&self) -> Arc<[String]> {
        Session::evidence_id_snapshot(self)
    }

    fn complete_evidence(&self, prefix: &Prefix) -> Option<Completion> {
        Session::complete_evidence_ids(self, prefix)
    }

    fn process_capture_ids(&self) -> Vec<String> {
        Session::process_capture_ids(self)
    }

    fn artifact_manifest_ids(&self) -> Vec<String> {
        Session::artifact_manifest_ids(self)
    }

    fn artifact_occurrence_ids(&self) -> Vec<String> {
        Session::artifact_occurrence_ids(self)
    }

    fn residual_unknown_ids(&self) -> Vec<String> {
        Session::unresolved_unknown_ids(self)
    }

    fn artifact_occurrence_ids_in(&self, manifest_id: &str) -> Vec<String> {
        Session::artifact_occurrence_ids_in(self, manifest_id)
    }

    fn labels_of(&self, document: &str) -> Vec<(String, String)> {
        labels_in(&Session::labels(self), document)
    }
}

/// Completes an argument of `family` (docs/CONTRACT.md sections 4 to 6).
///
/// `context` holds the other arguments already given (`context.arguments` of the MCP
/// request); an empty value counts as absent. For Document and Procedure, a `provider`
/// argument selects that declared provider (an undeclared one gives no candidates); for
/// Procedure, a `document` argument is forwarded to discovery (else the current document).
///
/// [`complete_argument`] gathers the candidates of an argument family from a [`SessionView`]
/// in source order and hands them to [`complete_prefix`]. There is no cache: every request
/// reads the live session. Nothing here records Evidence or changes state. Every provider call
/// runs on a small process-wide pool of threads, bounded by [`SourceConfig::provider_timeout`]
/// (see [`PROVIDER_THREADS`](crate::session::PROVIDER_THREADS)); a provider error, an unsupported
/// operation, malformed output, a time-out, or a provider whose previous call is still overrunning
/// gives [`Completion::empty`].
///
/// ```
/// use std::collections::BTreeMap;
/// use rea::core::{Family, Prefix};
/// use rea::session::{SourceConfig, complete_argument};
/// use rea::session::{Observation, Session};
/// use serde_json::json;
///
/// let session = Session::new();
/// session.record_evidence(Observation::unbound("list_providers", json!({}), json!([]))).unwrap();
/// let done = complete_argument(
///     &session,
///     Family::Evidence,
///     &Prefix::new("ev-").unwrap(),
///     &BTreeMap::new(),
///     &SourceConfig::default(),
/// );
/// assert_eq!(done.values, session.evidence_ids());
/// ```
pub fn complete_argument(
    view: &dyn SessionView,
    family: Family,
    prefix: &Prefix,
    context: &BTreeMap<String, String>,
    config: &SourceConfig,
) -> Completion {
    match candidates(view, family, prefix, context, &Access::Call(config)) {
        Ok(candidates) => complete_candidates(prefix, candidates),
        // `Access::Call` may call any provider, so every source is at hand.
        Err(NotAtHand) => Completion::empty(),
    }
}

/// [`complete_argument`] when every candidate is at hand: in the session's own stores
/// (Evidence, providers, residual unknowns) or in tables a provider already holds in memory
/// ([`Provider::ready_document_names`], [`Provider::ready_discovery`]). `None` when a
/// provider would have to be called or retained documents parsed: then call
/// [`complete_argument`] where waiting is allowed. Either way the answer projects the live
/// session; nothing is reused between requests.
///
/// ```
/// use std::collections::BTreeMap;
/// use rea::core::{Family, Prefix};
/// use rea::session::{Session, complete_argument_at_hand};
///
/// let session = Session::new();
/// let prefix = Prefix::new("").unwrap();
/// let done = complete_argument_at_hand(&session, Family::Evidence, &prefix, &BTreeMap::new());
/// assert_eq!(done.map(|done| done.total), Some(0));
/// ```
pub fn complete_argument_at_hand(
    view: &dyn SessionView,
    family: Family,
    prefix: &Prefix,
    context: &BTreeMap<String, String>,
) -> Option<Completion> {
    let candidates = candidates(view, family, prefix, context, &Access::AtHand).ok()?;
    Some(complete_candidates(prefix, candidates))
}

/// Completes the candidates gathered: from their index when the immutable table they come
/// from has one (the built-in providers' documents and discovered procedures), else by
/// [`complete_prefix`]'s scan. Both answer the same.
fn complete_candidates(prefix: &Prefix, candidates: Option<Candidates>) -> Completion {
    match candidates {
        Some(Candidates::Listed(values)) => complete_prefix(prefix, values.iter()),
        Some(Candidates::Shared(values)) => complete_prefix(prefix, values.iter()),
        Some(Candidates::Documents(names)) => match names.index() {
            Some(index) => index.complete(prefix),
            None => complete_prefix(prefix, names.as_slice().iter()),
        },
        // Completed where they lie, without copying up to 5,000 strings.
        Some(Candidates::Discovered(outcome)) => match outcome.as_ref() {
            Outcome::Found(procedures) => match procedures.index() {
                Some(index) => index.complete(prefix),
                None => complete_prefix(prefix, procedures.candidates()),
            },
            Outcome::Malformed(_) => Completion::empty(),
        },
        Some(Candidates::Labelled(outcome, labels)) => match outcome.as_ref() {
            Outcome::Found(procedures) => {
                complete_prefix(prefix, procedures.candidates_with_labels(&labels))
            }
            Outcome::Malformed(_) => Completion::empty(),
        },
        Some(Candidates::Completed(done)) => done,
        None => Completion::empty(),
    }
}

/// How [`candidates`] may reach providers.
enum Access<'a> {
    /// Only what is at hand; anything else is [`NotAtHand`].
    AtHand,
    /// Call providers on the bounded pool, within the configured time.
    Call(&'a SourceConfig),
}

/// A source is not at hand: answering needs a provider call or parsing retained documents.
struct NotAtHand;

/// The candidates of one request, in source order.
enum Candidates {
    /// A list read from the session or a provider.
    Listed(Vec<String>),
    /// A snapshot the session shares (the Evidence IDs), read without copying.
    Shared(Arc<[String]>),
    /// A provider's checked document names, shared.
    Documents(DocumentNames),
    /// The outcome of bounded procedure discovery (always [`Outcome::Found`]), possibly
    /// shared by the provider.
    Discovered(Arc<Outcome>),
    /// Discovered procedures and the investigator's labels of their document, completed
    /// together ([`crate::core::Procedures::candidates_with_labels`]).
    Labelled(Arc<Outcome>, Vec<(String, String)>),
    /// Already completed by the store that holds them ([`SessionView::complete_evidence`]).
    Completed(Completion),
}

/// The candidates of `family`, or `None` when the source failed.
fn candidates(
    view: &dyn SessionView,
    family: Family,
    prefix: &Prefix,
    context: &BTreeMap<String, String>,
    access: &Access<'_>,
) -> Result<Option<Candidates>, NotAtHand> {
    let listed = match family {
        Family::Evidence => {
            return Ok(Some(match view.complete_evidence(prefix) {
                Some(done) => Candidates::Completed(done),
                None => Candidates::Shared(view.evidence_ids()),
            }));
        }
        Family::Document => {
            let Some(provider) = selected_provider(view, context) else {
                return Ok(None);
            };
            let names = match access {
                Access::AtHand => Some(provider.ready_document_names().ok_or(NotAtHand)?),
                Access::Call(config) => document_names(provider, config),
            };
            return Ok(names.map(Candidates::Documents));
        }
        Family::Procedure => {
            let Some(provider) = selected_provider(view, context) else {
                return Ok(None);
            };
            let Some(document) = argument(context, DOCUMENT_ARGUMENT)
                .map(str::to_owned)
                .or_else(|| view.current_document())
            else {
                return Ok(None);
            };
            let labels = view.labels_of(&document);
            let procedures = match access {
                Access::AtHand => Some(provider.ready_discovery(&document).ok_or(NotAtHand)?),
                Access::Call(config) => discover_procedures(provider, document, config),
            };
            return Ok(procedures.map(|outcome| {
                if labels.is_empty() {
                    Candidates::Discovered(outcome)
                } else {
                    Candidates::Labelled(outcome, labels)
                }
            }));
        }
        Family::Provider => view.provider_ids(),
        Family::ResidualUnknown => view.residual_unknown_ids(),
        Family::Session => view.session_handles(),
        // These parse retained documents: not at hand.
        Family::ProcessCapture | Family::ArtifactManifest | Family::ArtifactOccurrence
            if matches!(access, Access::AtHand) =>
        {
            return Err(NotAtHand);
        }
        Family::ProcessCapture => view.process_capture_ids(),
        Family::ArtifactManifest => view.artifact_manifest_ids(),
        Family::ArtifactOccurrence => match argument(context, MANIFEST_ARGUMENT) {
            Some(manifest_id) => view.artifact_occurrence_ids_in(manifest_id),
            None => view.artifact_occurrence_ids(),
        },
    };
    Ok(Some(Candidates::Listed(listed)))
}

fn argument<'a>(context: &'a BTreeMap<String, String>, name: &str) -> Option<&'a str> {
    context
        .get(name)
        .map(String::as_str)
        .filter(|value| !value.is_empty())
}

fn selected_provider(
    view: &dyn SessionView,
    context: &BTreeMap<String, String>,
) -> Option<Arc<dyn Provider>> {
    view.provider(argument(context, PROVIDER_ARGUMENT))
}

/// Document names, or `None` on failure, time-out, or a list that repeats or has empty names
/// (the [`DocumentNames`] a provider hands out are checked when built).
fn document_names(provider: Arc<dyn Provider>, config: &SourceConfig) -> Option<DocumentNames> {
    if !provider.supports(Operation::ListDocuments) {
        return None;
    }
    let call = Arc::clone(&provider);
    call_provider(&provider, config.provider_timeout, move || {
        call.document_names()
    })?
    .ok()
}

/// Bounded discovery (docs/CONTRACT.md section 6), or `None` on failure, time-out or malformed
/// pages.
fn discover_procedures(
    provider: Arc<dyn Provider>,
    document: String,
    config: &SourceConfig,
) -> Option<Arc<Outcome>> {
    if !provider.supports(Operation::ListProcedures) {
        return None;
    }
    let call = Arc::clone(&provider);
    let outcome = call_provider(&provider, config.provider_timeout, move || {
        // A provider whose tables never change shares one discovery per document.
        match call.shared_discovery(&document) {
            Some(shared) => shared,
            None => discover(|request| {
                call.list_procedures(&document, request.cursor.as_deref(), request.limit)
            })
            .map(Arc::new),
        }
    })?
    .ok()?;
    match outcome.as_ref() {
        Outcome::Found(_) => Some(outcome),
        Outcome::Malformed(_) => None,
    }
}
