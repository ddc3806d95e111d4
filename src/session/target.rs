//! [`Target`]: the provider and document one tool call works on, and procedure lookup.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::Value;

use super::address::Address;
use super::error::SessionError;
use super::evidence::{Binding, Observation};
use super::provider::{NameMatch, Operation, ProcedureQuery, Provider, ProviderError};
use crate::core::PROCEDURE_PAGE_SIZE;

/// Most candidates an ambiguous-name error lists.
const MAX_LISTED_CANDIDATES: usize = 100;

/// Most pages a lookup by name reads from a provider without `search_procedures`
/// (10 million procedures at [`PROCEDURE_PAGE_SIZE`]); a provider that pages on beyond that
/// is treated as malformed.
const MAX_LOOKUP_PAGES: usize = 20_000;

/// The provider and document a tool call works on, taken from [`crate::session::Session::target`].
///
/// Provider calls go through [`Target::query`] (errors name the provider); observations made
/// with [`Target::observation`] are recorded only while the same binary session is open.
#[derive(Clone)]
pub struct Target {
    pub(crate) epoch: u64,
    pub(crate) provider_id: String,
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) document: Option<String>,
    /// The session's annotated names when the target was taken.
    pub(crate) labels: crate::annotations::Labels,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("epoch", &self.epoch)
            .field("provider", &self.provider_id)
            .field("document", &self.document)
            .finish()
    }
}

impl Target {
    /// The provider's identity.
    pub fn provider_id(&self) -> &str {
        &self.provider_id
    }

    /// The provider.
    pub fn provider(&self) -> &Arc<dyn Provider> {
        &self.provider
    }

    /// The document, or [`SessionError::NoDocument`] when none was given and none is current.
    pub fn document(&self) -> Result<&str, SessionError> {
        self.document.as_deref().ok_or(SessionError::NoDocument)
    }

    /// The investigator's label of the procedure or address `address` (canonical) of this
    /// target's document, if one is effective.
    pub fn label(&self, address: &str) -> Option<String> {
        let document = self.document.as_deref()?;
        self.labels
            .get(&(document.to_owned(), address.to_owned()))
            .cloned()
    }

    /// The labels of this target's document, by canonical address.
    pub fn labels(&self) -> impl Iterator<Item = (&str, &str)> {
        let document = self.document.as_deref();
        self.labels
            .iter()
            .filter(move |((doc, _), _)| Some(doc.as_str()) == document)
            .map(|((_, address), label)| (address.as_str(), label.as_str()))
    }

    /// Calls the provider, naming it in any error.
    pub fn query<T>(
        &self,
        call: impl FnOnce(&dyn Provider) -> Result<T, ProviderError>,
    ) -> Result<T, SessionError> {
        call(self.provider.as_ref()).map_err(|source| self.provider_error(source))
    }

    /// Calls the provider on the document, naming the provider in any error.
    pub fn query_document<T>(
        &self,
        call: impl FnOnce(&dyn Provider, &str) -> Result<T, ProviderError>,
    ) -> Result<T, SessionError> {
        let document = self.document()?;
        self.query(|provider| call(provider, document))
    }

    /// An observation of this provider and document, to pass to
    /// [`crate::session::Session::record_evidence`].
    pub fn observation(
        &self,
        operation: impl Into<String>,
        arguments: Value,
        result: Value,
    ) -> Observation {
        Observation {
            operation: operation.into(),
            arguments,
            result,
            binding: Some(Binding {
                epoch: self.epoch,
                provider: self.provider_id.clone(),
                document: self.document.clone(),
            }),
        }
    }

    /// Resolves a procedure argument (docs/CONTRACT.md section 11): an address (`0x` + lowercase
    /// hex) is taken as it is; anything else must be the display or raw name, or the
    /// investigator's label, of exactly one procedure of the document (provider names and
    /// labels together). An ambiguous name is an error listing the candidate addresses.
    pub fn resolve_procedure(&self, procedure: &str) -> Result<Address, SessionError> {
        if let Ok(address) = Address::parse(procedure) {
            return Ok(address);
        }
        let document = self.document()?;
        let (mut addresses, mut more) = if self.provider.supports(Operation::SearchProcedures) {
            let query = ProcedureQuery::new(procedure, NameMatch::Exact);
            let found = self.query(|p| p.search_procedures(document, &query))?;
            let addresses = found.procedures.iter().map(|p| p.address).collect();
            (addresses, found.truncated)
        } else {
            (self.addresses_named(document, procedure)?, false)
        };
        addresses.extend(
            self.labels()
                .filter(|&(_, label)| label == procedure)
                .filter_map(|(address, _)| Address::parse(address).ok()),
        );
        addresses.sort_unstable();
        addresses.dedup();
        if addresses.len() > MAX_LISTED_CANDIDATES {
            addresses.truncate(MAX_LISTED_CANDIDATES);
            more = true;
        }
        match addresses.as_slice() {
            [] => Err(SessionError::UnknownProcedure {
                name: procedure.into(),
                document: document.into(),
            }),
            [address] if !more => Ok(*address),
            _ => Err(SessionError::AmbiguousProcedure {
                name: procedure.into(),
                document: document.into(),
                candidates: addresses,
                more,
            }),
        }
    }

    /// Addresses of the listed procedures named `name`, reading every page.
    fn addresses_named(&self, document: &str, name: &str) -> Result<Vec<Address>, SessionError> {
        let mut found = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen_cursors = HashSet::new();
        for _ in 0..MAX_LOOKUP_PAGES {
            let page = self
                .query(|p| p.list_procedures(document, cursor.as_deref(), PROCEDURE_PAGE_SIZE))?;
            for entry in &page.entries {
                if entry.name.as_deref() == Some(name) {
                    let address = Address::parse(&entry.address)
                        .map_err(|error| self.malformed(error.to_string()))?;
                    found.push(address);
                }
            }
            match page.next_cursor {
                None => return Ok(found),
                Some(next) if !seen_cursors.insert(next.clone()) => {
                    return Err(self.malformed(format!("list_procedures repeated cursor {next:?}")));
                }
                Some(next) => cursor = Some(next),
            }
        }
        Err(self.malformed(format!(
            "list_procedures did not end within {MAX_LOOKUP_PAGES} pages"
        )))
    }

    fn malformed(&self, reason: String) -> SessionError {
        self.provider_error(ProviderError::Malformed { reason })
    }

    fn provider_error(&self, source: ProviderError) -> SessionError {
        SessionError::Provider {
            provider: self.provider_id.clone(),
            source,
        }
    }
}
