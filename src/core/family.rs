//! Argument families: which session source completes a prompt argument.

use std::fmt;

/// The kind of identifier a prompt argument takes, which selects its completion source
/// (docs/CONTRACT.md section 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Document names from the current provider's `list_documents`.
    Document,
    /// Procedure addresses (and unique names after exhaustive discovery).
    Procedure,
    /// Provider identities declared by the current binary session.
    Provider,
    /// Evidence IDs retained in the session ledger, oldest first.
    Evidence,
    /// Evidence IDs of retained, schema-valid Process Capture v4 documents.
    ProcessCapture,
    /// Manifest IDs of schema-valid retained artifact inventories.
    ArtifactManifest,
    /// Occurrence IDs in schema-valid retained artifact inventory pages.
    ArtifactOccurrence,
    /// Current, unresolved residual-unknown heads.
    ResidualUnknown,
    /// Handles of the open binary sessions the client opened or named.
    Session,
}

impl Family {
    /// Every family, in declaration order.
    pub const ALL: [Family; 9] = [
        Family::Document,
        Family::Procedure,
        Family::Provider,
        Family::Evidence,
        Family::ProcessCapture,
        Family::ArtifactManifest,
        Family::ArtifactOccurrence,
        Family::ResidualUnknown,
        Family::Session,
    ];

    /// A short human-readable name, as used in documentation and argument descriptions.
    pub fn label(self) -> &'static str {
        match self {
            Family::Document => "Document",
            Family::Procedure => "Procedure",
            Family::Provider => "Provider",
            Family::Evidence => "Evidence",
            Family::ProcessCapture => "Process capture",
            Family::ArtifactManifest => "Artifact manifest",
            Family::ArtifactOccurrence => "Artifact occurrence",
            Family::ResidualUnknown => "Residual unknown",
            Family::Session => "Binary session",
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}
