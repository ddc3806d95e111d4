//! Built-in providers, part of the session layer: [`native`] for ELF, Mach-O and PE files, and
//! [`catalog`] for function lists exported as JSON. [`load_path`] picks one by content.

pub mod catalog;
pub mod fuzzing;
pub mod native;
mod table;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use self::catalog::{CatalogError, CatalogProvider};
use self::native::NativeProvider;
use crate::session::{Provider, ProviderError};

/// Why a file could not be loaded as a provider.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a binary the native provider can read.
    #[error("cannot open {} as a binary: {source}", path.display())]
    Binary {
        /// The file.
        path: PathBuf,
        /// The native provider's error.
        source: ProviderError,
    },
    /// The file looks like a catalog (JSON) but is not a valid one.
    #[error("cannot load {} as a catalog: {source}", path.display())]
    Catalog {
        /// The file.
        path: PathBuf,
        /// The catalog error.
        source: CatalogError,
    },
}

/// Loads `path` with the provider its content calls for: a file whose first non-blank
/// character is `{` is a catalog ([`CatalogProvider`]); anything else is a binary
/// ([`NativeProvider`]).
pub fn load_path(path: &Path) -> Result<Arc<dyn Provider>, LoadError> {
    if looks_like_json(path)? {
        let catalog = CatalogProvider::open(path).map_err(|source| LoadError::Catalog {
            path: path.to_owned(),
            source,
        })?;
        return Ok(Arc::new(catalog));
    }
    let native = NativeProvider::open(path).map_err(|source| LoadError::Binary {
        path: path.to_owned(),
        source,
    })?;
    Ok(Arc::new(native))
}

/// Whether the file's first character after an optional byte-order mark and blanks is `{`.
fn looks_like_json(path: &Path) -> Result<bool, LoadError> {
    let mut head = Vec::with_capacity(4096);
    std::fs::File::open(path)
        .and_then(|file| file.take(4096).read_to_end(&mut head))
        .map_err(|source| LoadError::Io {
            path: path.to_owned(),
            source,
        })?;
    let text = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&head);
    Ok(text
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{'))
}
