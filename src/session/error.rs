//! Errors of session operations.

use super::address::Address;
use super::evidence::EvidenceIdError;
use super::provider::ProviderError;
use crate::text::Quoted;

/// Why a session operation failed. Messages name the offending provider, document, procedure
/// or Evidence ID and are meant to be shown to the agent as they are; every name a caller may
/// have sent is held as [`Quoted`] (cut to 64 characters).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// No binary is open.
    #[error("no binary is open; open one with open_binary first")]
    NotOpen,
    /// The open binary's file lies outside the roots the client allows now.
    #[error(
        "the open binary {label:?} lies outside the roots the client allows now; it cannot be \
         read until the roots include it again (or open another binary, or close_binary)"
    )]
    OutsideRoots {
        /// The open binary's label (its path as given), cut to 64 characters.
        label: Quoted,
    },
    /// The request was cancelled before it committed; nothing changed.
    #[error("the request was cancelled before it changed anything")]
    Cancelled(#[from] crate::base::Cancelled),
    /// The Evidence ledger refused the record (full, too large, too deep).
    #[error(transparent)]
    Ledger(#[from] super::evidence::LedgerError),
    /// The residual-unknown registry refused (unknown ID, not a head, missing Evidence, ...).
    #[error(transparent)]
    Unknown(#[from] crate::unknowns::UnknownError),
    /// The annotations refused (a bad edit, an unknown ID, ...).
    #[error(transparent)]
    Annotation(#[from] crate::annotations::AnnotationError),
    /// The store could not commit the change; nothing changed.
    #[error(transparent)]
    Store(Box<super::durable::DurableError>),
    /// A session needs at least one provider.
    #[error("a binary session needs at least one provider")]
    NoProviders,
    /// Two declared providers share an identity.
    #[error("provider {id:?} is declared twice")]
    DuplicateProvider {
        /// The repeated identity.
        id: Quoted,
    },
    /// A provider identity is empty or longer than the value bound.
    #[error("provider identity {id:?} must be 1 to 4096 characters long")]
    InvalidProviderId {
        /// The rejected identity.
        id: Quoted,
    },
    /// The named provider is not declared by the open binary session.
    #[error("provider {id:?} is not declared in this session (declared: {})", declared.join(", "))]
    UnknownProvider {
        /// The requested identity.
        id: Quoted,
        /// The declared identities.
        declared: Vec<String>,
    },
    /// The provider does not list this document.
    #[error("provider {provider:?} has no document named {document:?}")]
    UnknownDocument {
        /// The provider asked.
        provider: String,
        /// The requested document.
        document: Quoted,
    },
    /// The call needs a document and none was given or is current.
    #[error("no document was given and no document is current")]
    NoDocument,
    /// The binary session was closed or replaced while the call ran.
    #[error("the open binary changed while the call ran; repeat it")]
    SessionChanged,
    /// The binary session was closed while the call ran (its Evidence is discarded): what the
    /// call would have recorded is refused, so no answer names an ID no session holds.
    #[error("the binary session was closed while the call ran; nothing was recorded")]
    ClosedWhileRunning,
    /// A provider operation failed.
    #[error("provider {provider:?} failed: {source}")]
    Provider {
        /// The provider's identity.
        provider: String,
        /// The provider's error.
        #[source]
        source: ProviderError,
    },
    /// No procedure has this name.
    #[error("no procedure named {name:?} in document {document:?}")]
    UnknownProcedure {
        /// The requested name.
        name: Quoted,
        /// The document searched.
        document: Quoted,
    },
    /// The name belongs to several procedures.
    #[error(
        "procedure name {name:?} is ambiguous in document {document:?}: it names {} (pass one of these addresses instead)",
        list_addresses(candidates, *more)
    )]
    AmbiguousProcedure {
        /// The requested name.
        name: Quoted,
        /// The document searched.
        document: Quoted,
        /// Addresses of procedures with that name, in address order.
        candidates: Vec<Address>,
        /// Whether further procedures with that name exist beyond `candidates`.
        more: bool,
    },
    /// Text that should be an Evidence ID is not one.
    #[error(transparent)]
    InvalidEvidenceId(#[from] EvidenceIdError),
    /// No retained Evidence has this ID (it never existed or its session was closed).
    #[error("no Evidence with ID {id:?} is retained in this session")]
    UnknownEvidence {
        /// The requested ID.
        id: Quoted,
    },
}

fn list_addresses(candidates: &[Address], more: bool) -> String {
    let listed: Vec<String> = candidates.iter().map(Address::to_string).collect();
    let count = if more { "at least " } else { "" };
    format!(
        "{count}{} procedures: {}",
        candidates.len(),
        listed.join(", ")
    )
}

impl From<super::durable::DurableError> for SessionError {
    fn from(error: super::durable::DurableError) -> SessionError {
        SessionError::Store(Box::new(error))
    }
}
