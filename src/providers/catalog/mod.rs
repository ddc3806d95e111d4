//! The built-in `catalog` provider: documents and procedures loaded from a JSON file, so
//! function lists exported from Ghidra, IDA or Hopper can be used without the binary.
//!
//! The format is published as a JSON Schema (2020-12) in `src/providers/catalog/catalog-v1.schema.json`
//! ([`CATALOG_SCHEMA`]). A catalog is checked against the schema, then against the rules the
//! schema cannot state: document names unique in the file, procedure addresses unique in a
//! document (compared by value: `0x10` and `0x010` repeat each other), segment names unique in
//! a document, a procedure's `segment` declared in its document, sizes that fit 64 bits.
//! Invalid catalogs are rejected with a [`CatalogError`] naming the field as a JSON pointer.
//!
//! ```
//! use rea::providers::catalog::CatalogProvider;
//! use rea::session::Provider;
//!
//! let catalog = CatalogProvider::from_json(br#"{
//!     "schema": "rea.catalog",
//!     "version": 1,
//!     "producer": "ghidra-export",
//!     "documents": [{
//!         "name": "app",
//!         "segments": [{ "name": ".text", "address": "0x1000", "size": 4096, "permissions": "r-x" }],
//!         "procedures": [
//!             { "address": "0x1040", "name": "helper" },
//!             { "address": "0x1000", "name": "main", "size": 64 }
//!         ]
//!     }]
//! }"#).unwrap();
//! let page = catalog.list_procedures("app", None, 10).unwrap();
//! assert_eq!(page.entries[0].address, "0x1000");
//! assert_eq!(page.entries[1].name.as_deref(), Some("helper"));
//!
//! let error = CatalogProvider::from_json(br#"{"schema": "rea.catalog", "version": 1,
//!     "documents": [{"name": "app", "procedures": [{"address": "0X10"}]}]}"#).err().unwrap();
//! assert!(error.to_string().contains("/documents/0/procedures/0/address"));
//! ```

mod parse;
mod stream;

use std::path::Path;
use std::sync::Arc;

pub use self::parse::{CATALOG_SCHEMA, CatalogError, MAX_CATALOG_BYTES};
use self::parse::{Catalog, CatalogDocument};
use self::stream::parse_catalog;
use super::table::ProcedureTable;
use crate::base::files::{CheckedFile, Confinement, FileLimit};
use crate::core::{Outcome, ProcedurePage};
use crate::session::{
    Address, DocumentInfo, DocumentNames, Operation, ProcedureInfo, ProcedureMatches,
    ProcedureQuery, Provider, ProviderError, Segment,
};

/// The identity of the catalog provider.
pub const CATALOG_PROVIDER_ID: &str = "catalog";

struct Document {
    info: DocumentInfo,
    segments: Vec<Segment>,
    procedures: ProcedureTable,
}

/// The `catalog` provider over one catalog file (see the [module documentation](self)).
pub struct CatalogProvider {
    documents: Vec<Document>,
    /// The document names, checked once (the catalog validates their uniqueness).
    names: DocumentNames,
}

impl CatalogProvider {
    /// Reads (a checked regular file of at most [`MAX_CATALOG_BYTES`], see
    /// [`crate::base::files`]) and validates the catalog file at `path`.
    pub fn open(path: &Path) -> Result<CatalogProvider, CatalogError> {
        CatalogProvider::open_confined(path, &Confinement::unrestricted())
    }

    /// [`CatalogProvider::open`] under `confinement`.
    pub fn open_confined(
        path: &Path,
        confinement: &Confinement,
    ) -> Result<CatalogProvider, CatalogError> {
        let file = CheckedFile::open(path, confinement, FileLimit::CATALOG)?;
        CatalogProvider::from_json_bytes(file.read_all()?)
    }

    /// Validates catalog JSON held in memory.
    pub fn from_json(text: &[u8]) -> Result<CatalogProvider, CatalogError> {
        CatalogProvider::from_catalog(parse_catalog(text)?)
    }

    /// [`CatalogProvider::from_json`], dropping the text as soon as it is read, before the
    /// procedure tables are merged: the peak holds the text or the merge, not both.
    pub fn from_json_bytes(text: Vec<u8>) -> Result<CatalogProvider, CatalogError> {
        let catalog = parse_catalog(&text)?;
        drop(text);
        CatalogProvider::from_catalog(catalog)
    }

    fn from_catalog(catalog: Catalog) -> Result<CatalogProvider, CatalogError> {
        let documents = catalog
            .documents
            .into_iter()
            .enumerate()
            .map(|(index, source)| {
                document(source).map_err(|error| CatalogError::Field {
                    field: format!("/documents/{index}/procedures").into(),
                    message: error.to_string(),
                })
            })
            .collect::<Result<Vec<Document>, _>>()?;
        let names = DocumentNames::new(documents.iter().map(|d| d.info.name.clone()).collect())
            .map_err(|error| CatalogError::Field {
                field: "/documents".into(),
                message: error.to_string(),
            })?
            // The documents never change: Document completion answers from an index.
            .indexed();
        Ok(CatalogProvider { documents, names })
    }

    fn document(&self, name: &str) -> Result<&Document, ProviderError> {
        self.documents
            .iter()
            .find(|document| document.info.name == name)
            .ok_or_else(|| ProviderError::UnknownDocument {
                document: name.into(),
            })
    }
}

fn document(source: CatalogDocument) -> Result<Document, ProviderError> {
    let mut segments: Vec<Segment> = source
        .segments
        .into_iter()
        .map(|segment| Segment {
            name: segment.name,
            address: segment.address,
            size: segment.size,
            file_offset: None,
            file_size: 0,
            permissions: segment.permissions,
        })
        .collect();
    segments.sort_by(|a, b| (a.address, &a.name).cmp(&(b.address, &b.name)));
    Ok(Document {
        info: DocumentInfo {
            name: source.name,
            format: source.format,
            architecture: source.architecture,
        },
        procedures: source.procedures.finish(&segments)?,
        segments,
    })
}

impl Provider for CatalogProvider {
    fn id(&self) -> &str {
        CATALOG_PROVIDER_ID
    }

    // What it performs, named: an operation added later is unsupported until a catalog can
    // answer it (a catalog holds names and segments, no bytes).
    fn supports(&self, operation: Operation) -> bool {
        Operation::FROM_NAMES.contains(&operation)
    }

    fn list_documents(&self) -> Result<Vec<DocumentInfo>, ProviderError> {
        Ok(self.documents.iter().map(|d| d.info.clone()).collect())
    }

    fn document_names(&self) -> Result<DocumentNames, ProviderError> {
        Ok(self.names.clone())
    }

    fn shared_discovery(&self, document: &str) -> Option<Result<Arc<Outcome>, ProviderError>> {
        Some(
            self.document(document)
                .and_then(|document| document.procedures.discovery()),
        )
    }

    fn ready_document_names(&self) -> Option<DocumentNames> {
        Some(self.names.clone())
    }

    fn ready_discovery(&self, document: &str) -> Option<Arc<Outcome>> {
        self.document(document)
            .ok()
            .and_then(|document| document.procedures.ready_discovery())
    }

    fn list_procedures(
        &self,
        document: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<ProcedurePage, ProviderError> {
        self.document(document)?.procedures.page(cursor, limit)
    }

    fn procedure_info(
        &self,
        document: &str,
        address: Address,
    ) -> Result<ProcedureInfo, ProviderError> {
        self.document(document)?.procedures.info(document, address)
    }

    fn search_procedures(
        &self,
        document: &str,
        query: &ProcedureQuery,
    ) -> Result<ProcedureMatches, ProviderError> {
        Ok(self.document(document)?.procedures.search(query))
    }

    fn list_segments(&self, document: &str) -> Result<Vec<Segment>, ProviderError> {
        Ok(self.document(document)?.segments.clone())
    }
}
