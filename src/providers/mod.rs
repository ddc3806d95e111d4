//! Built-in providers, the layer above [`crate::session`]: [`native`] for ELF, Mach-O and PE
//! files, and [`catalog`] for function lists exported as JSON. [`load_path`] picks one by
//! content; [`open_path`] opens the file it loads as a binary session. The session only knows
//! the [`Provider`] trait, never these providers.

pub mod catalog;
pub mod external;
pub mod loader;
pub mod native;
mod table;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use self::catalog::{CatalogError, CatalogProvider, MAX_CATALOG_BYTES};
use self::native::{NativeProvider, file_label};
use crate::base::files::{CheckedFile, Confinement, FileError, FileLimit};
use crate::session::durable::StoredBinary;
use crate::session::{
    Cancel, Cancelled, Companions, DurableError, Opened, Provenance, Provider, ProviderError,
    Reopened, Session, SessionError, SessionStore,
};
use crate::text::Quoted;

/// Why [`open_path`] could not open a file as a binary session.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The file could not be loaded as a binary or a catalog.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The session refused the provider, or the request was cancelled.
    #[error(transparent)]
    Session(#[from] SessionError),
}

/// Opens the file at `path` in `session` as a binary session with one provider: a catalog
/// (JSON) or a binary (see [`load_path`]), under the session's [`Confinement`]. The label is
/// the path as given.
pub fn open_path(session: &Session, path: &Path) -> Result<Opened, OpenError> {
    open_path_unless(session, path, &Cancel::never())
}

/// [`open_path`], unless `cancel` is set before the binary session is committed (see
/// [`Session::open_providers_unless`]).
pub fn open_path_unless(
    session: &Session,
    path: &Path,
    cancel: &Cancel,
) -> Result<Opened, OpenError> {
    let companions = session.companions();
    let keep = session.keeps_binaries();
    let loaded = match load_located(path, &session.confinement(), companions, keep, cancel) {
        Err(LoadError::Cancelled { .. }) => return Err(SessionError::from(Cancelled).into()),
        loaded => loaded?,
    };
    cancel.check().map_err(SessionError::from)?;
    let mut providers = vec![loaded.provider];
    providers.extend(loaded.companions);
    Ok(session.open_provenance_unless(
        path.display().to_string(),
        loaded.origin,
        Some(loaded.provenance),
        providers,
        cancel,
    )?)
}

/// The real path and SHA-256 of the file at `path` (read under `confinement`), to find the
/// open session of the same file that `open_binary` resumes.
pub fn identify(path: &Path, confinement: &Confinement) -> Result<(PathBuf, String), LoadError> {
    let file = CheckedFile::open(path, confinement, FileLimit::BINARY)?;
    let origin = file.real_path().unwrap_or_else(|| path.to_owned());
    let bytes = file.read_all()?;
    Ok((origin, sha256_hex(&bytes)))
}

/// The SHA-256 of `bytes` as 64 lowercase hexadecimal digits.
fn sha256_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    Sha256::digest(bytes)
        .iter()
        .flat_map(|byte| [byte >> 4, byte & 0x0f])
        .map(|digit| char::from(DIGITS[usize::from(digit)]))
        .collect()
}

/// Why a kept binary could not be opened again at resume.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReopenError {
    /// The store keeps no bytes of it and its file is missing or changed.
    #[error(
        "the binary {label} (SHA-256 {sha256}) is not kept in the store and its file is missing \
         or no longer has that SHA-256"
    )]
    Missing {
        /// The binary's label.
        label: Quoted,
        /// Its SHA-256.
        sha256: String,
    },
    /// The store failed while reading the bytes.
    #[error(transparent)]
    Store(#[from] DurableError),
    /// The bytes no longer load (a provider of another version refuses them).
    #[error(transparent)]
    Load(#[from] LoadError),
}

/// The providers (and real path) of a binary the store keeps, from its kept bytes, or from
/// its file when the store keeps none and the file still has the SHA-256 it had.
pub fn reopen(binary: &StoredBinary, store: &SessionStore) -> Result<Reopened, ReopenError> {
    let missing = || ReopenError::Missing {
        label: binary.label.as_str().into(),
        sha256: binary.sha256.clone().unwrap_or_default(),
    };
    let sha256 = binary.sha256.as_deref().ok_or_else(missing)?;
    let bytes = match store.durable().binary(sha256)? {
        Some(bytes) => bytes,
        None => {
            let path = binary.path.as_deref().ok_or_else(missing)?;
            let file = CheckedFile::open(path, &Confinement::unrestricted(), FileLimit::BINARY)
                .map_err(|_| missing())?;
            file.read_all().map_err(|_| missing())?
        }
    };
    if sha256_hex(&bytes) != sha256 {
        return Err(missing());
    }
    let label = Path::new(&binary.label);
    let catalog = looks_like_json(&bytes);
    let companions = store.companions();
    let (provider, declared) = from_bytes(label, bytes, catalog, companions.as_deref())?;
    let mut providers = vec![provider];
    providers.extend(declared);
    Ok((binary.path.clone(), providers))
}

/// Opens every session `store`'s [`Durable`](crate::session::Durable) keeps (see
/// [`SessionStore::resume`]), reopening their binaries with [`reopen`]; a binary that cannot be
/// reopened leaves its session with its ledger and unknowns but no binary, with a warning in
/// the log. Returns how many sessions were opened.
pub fn resume(store: &SessionStore) -> Result<usize, SessionError> {
    let snapshot = store.durable().load()?;
    store.set_reopen(reopen_or_warn);
    store.resume(snapshot, |binary| reopen_or_warn(binary, store))
}

/// [`reopen`], or `None` with a warning in the log: the session then goes on with its ledger
/// and unknowns but no binary.
fn reopen_or_warn(binary: &StoredBinary, store: &SessionStore) -> Option<Reopened> {
    match reopen(binary, store) {
        Ok(opened) => Some(opened),
        Err(error) => {
            tracing::warn!("a kept session resumes without its binary: {error}");
            None
        }
    }
}

/// A loaded provider, where its file was found (the opened descriptor's path), the
/// companion providers declared beside it (see [`Companions`]), and the file's provenance.
struct Located {
    provider: Arc<dyn Provider>,
    origin: Option<PathBuf>,
    companions: Vec<Arc<dyn Provider>>,
    provenance: Provenance,
}

/// Why a file could not be loaded as a provider.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The file was refused (not a regular file, one of the server's own streams, too large,
    /// outside the allowed roots) or could not be read.
    #[error(transparent)]
    File(#[from] FileError),
    /// The file is not a binary the native provider can read.
    #[error("cannot open {path} as a binary: {source}")]
    Binary {
        /// The file, cut to 64 characters.
        path: Quoted,
        /// The native provider's error.
        source: ProviderError,
    },
    /// The file's first bytes are neither a catalog's nor those of a binary format the native
    /// provider reads; nothing past them was read.
    #[error(
        "cannot open {path}: its first bytes are not those of a format rea reads (ELF, Mach-O, fat \
         Mach-O, PE, COFF or XCOFF binaries, or a JSON catalog starting with `{{`)"
    )]
    Unrecognized {
        /// The file, cut to 64 characters.
        path: Quoted,
    },
    /// The request was cancelled while the load waited for its turn on the [`loader`]
    /// thread.
    #[error("the request was cancelled while {path} waited to be loaded")]
    Cancelled {
        /// The file, cut to 64 characters.
        path: Quoted,
    },
    /// The file looks like a catalog (JSON) but is not a valid one.
    #[error("cannot load {path} as a catalog: {source}")]
    Catalog {
        /// The file, cut to 64 characters.
        path: Quoted,
        /// The catalog error.
        source: CatalogError,
    },
}

/// Loads `path` with the provider its content calls for: a file whose first non-blank
/// character is `{` is a catalog ([`CatalogProvider`]); a file that starts with the magic
/// bytes of a format the native provider reads is a binary ([`NativeProvider`]); anything else
/// is refused ([`LoadError::Unrecognized`]) after reading only its first 4 KiB. Any readable
/// path may be opened; see [`load_path_confined`].
pub fn load_path(path: &Path) -> Result<Arc<dyn Provider>, LoadError> {
    load_path_confined(path, &Confinement::unrestricted())
}

/// [`load_path`] under `confinement`. The file is opened once and checked (see
/// [`crate::base::files`]): its first bytes choose the provider, then the rest is read
/// under that provider's size bound, from the same descriptor, on the [`loader`] thread (one
/// load at a time in the process).
pub fn load_path_confined(
    path: &Path,
    confinement: &Confinement,
) -> Result<Arc<dyn Provider>, LoadError> {
    load_path_unless(path, confinement, &Cancel::never())
}

/// [`load_path_confined`], giving up with [`LoadError::Cancelled`] if `cancel` is set while
/// the load waits for its turn on the [`loader`] thread.
pub fn load_path_unless(
    path: &Path,
    confinement: &Confinement,
    cancel: &Cancel,
) -> Result<Arc<dyn Provider>, LoadError> {
    Ok(load_located(path, confinement, None, false, cancel)?.provider)
}

/// [`load_path_unless`], with where the file was found.
fn load_located(
    path: &Path,
    confinement: &Confinement,
    companions: Option<Arc<dyn Companions>>,
    keep_bytes: bool,
    cancel: &Cancel,
) -> Result<Located, LoadError> {
    let mut file = CheckedFile::open(path, confinement, FileLimit::BINARY)?;
    let origin = file.real_path();
    let mut bytes = Vec::new();
    file.read_more(&mut bytes, SNIFF_BYTES)?;
    let catalog = looks_like_json(&bytes);
    if catalog && file.size() > MAX_CATALOG_BYTES {
        return Err(LoadError::from(FileError::TooLarge {
            path: path.into(),
            size: file.size(),
            limit: MAX_CATALOG_BYTES,
            purpose: FileLimit::CATALOG.purpose,
        }));
    }
    if !catalog && bytes.is_empty() {
        return Err(LoadError::Binary {
            path: path.into(),
            source: ProviderError::Malformed {
                reason: format!("{} is empty", path.display()),
            },
        });
    }
    if !catalog && !looks_native(&bytes) {
        return Err(LoadError::Unrecognized { path: path.into() });
    }
    let owned = path.to_owned();
    let (provider, companions, provenance) = loader::run(cancel, move || {
        load_rest(
            &owned,
            file,
            bytes,
            catalog,
            companions.as_deref(),
            keep_bytes,
        )
    })
    .map_err(|_| LoadError::Cancelled { path: path.into() })??;
    Ok(Located {
        provider,
        origin,
        companions,
        provenance,
    })
}

/// A loaded provider, its companions and the file's provenance.
type LoadedFile = (Arc<dyn Provider>, Vec<Arc<dyn Provider>>, Provenance);

/// A loaded provider and its companions.
type Loaded = (Arc<dyn Provider>, Vec<Arc<dyn Provider>>);

/// Reads the rest of `file` after its `head` and parses it as a catalog or a binary; a
/// binary gets the `companions` declared beside it (a catalog gets none: it has no code).
/// With the providers comes the file's provenance (its bytes too when `keep_bytes`).
fn load_rest(
    path: &Path,
    mut file: CheckedFile,
    mut bytes: Vec<u8>,
    catalog: bool,
    companions: Option<&dyn Companions>,
    keep_bytes: bool,
) -> Result<LoadedFile, LoadError> {
    file.read_more(&mut bytes, u64::MAX)?;
    let provenance = Provenance {
        sha256: sha256_hex(&bytes),
        size: bytes.len() as u64,
        bytes: keep_bytes.then(|| Arc::from(bytes.as_slice())),
    };
    let (provider, declared) = from_bytes(path, bytes, catalog, companions)?;
    Ok((provider, declared, provenance))
}

/// Parses `bytes` (the file at `path`) as a catalog or a binary, with the `companions`
/// declared beside a binary.
fn from_bytes(
    path: &Path,
    bytes: Vec<u8>,
    catalog: bool,
    companions: Option<&dyn Companions>,
) -> Result<Loaded, LoadError> {
    if catalog {
        let catalog =
            CatalogProvider::from_json_bytes(bytes).map_err(|source| LoadError::Catalog {
                path: path.into(),
                source,
            })?;
        return Ok((Arc::new(catalog), Vec::new()));
    }
    let native = NativeProvider::from_bytes(file_label(path), bytes).map_err(|source| {
        LoadError::Binary {
            path: path.into(),
            source,
        }
    })?;
    let first = native
        .list_documents()
        .ok()
        .and_then(|d| d.into_iter().next());
    let declared = match (companions, first) {
        (Some(companions), Some(document)) => {
            companions.companions(&document.name, native.file_bytes())
        }
        _ => Vec::new(),
    };
    Ok((Arc::new(native), declared))
}

/// Bytes read to choose the provider.
const SNIFF_BYTES: u64 = 4096;

/// Whether the first character after an optional byte-order mark and blanks is `{`.
fn looks_like_json(head: &[u8]) -> bool {
    let text = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    text.iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{')
}

/// Whether `head` starts like a file the native provider reads: ELF, Mach-O (thin or fat),
/// PE (`MZ`, whose PE header may lie past the head), COFF or XCOFF.
fn looks_native(head: &[u8]) -> bool {
    use object::FileKind;
    head.starts_with(b"MZ")
        || matches!(
            FileKind::parse(head),
            Ok(FileKind::Elf32
                | FileKind::Elf64
                | FileKind::MachO32
                | FileKind::MachO64
                | FileKind::MachOFat32
                | FileKind::MachOFat64
                | FileKind::Pe32
                | FileKind::Pe64
                | FileKind::Coff
                | FileKind::CoffBig
                | FileKind::Xcoff32
                | FileKind::Xcoff64)
        )
}
