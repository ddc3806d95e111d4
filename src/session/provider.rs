//! The provider trait: what a source of documents and procedures offers the session.

use std::fmt;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;

use super::address::Address;
use super::decompile::{Decompilation, DecompileBound, DecompileNames};
use crate::core::{PrefixIndex, ProcedurePage};
use crate::text::Quoted;

pub use super::code::{
    AnalysisLimit, AnalysisStatus, CallEdge, CallGraph, CallKind, CodeScope, CompareLimit,
    Disassembly, FingerprintBounds, Fingerprints, Instruction, MAX_CODE_PAGE,
    MAX_DISASSEMBLY_BYTES, NamedAddress, Reference, ReferenceKind, References,
};

/// Most bytes one [`Provider::read_bytes`] call returns (docs/CONTRACT.md section 11).
pub const MAX_READ_BYTES: usize = 4_096;

/// Most matches one [`Provider::search_strings`] or [`Provider::search_procedures`] call
/// returns.
pub const MAX_SEARCH_RESULTS: usize = 500;

/// An operation a provider may support. The names are the tool names (docs/CONTRACT.md
/// section 11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// [`Provider::list_documents`].
    ListDocuments,
    /// [`Provider::list_procedures`].
    ListProcedures,
    /// [`Provider::procedure_info`].
    ProcedureInfo,
    /// [`Provider::search_procedures`].
    SearchProcedures,
    /// [`Provider::list_segments`].
    ListSegments,
    /// [`Provider::search_strings`].
    SearchStrings,
    /// [`Provider::read_bytes`].
    ReadBytes,
    /// [`Provider::list_imports`].
    ListImports,
    /// [`Provider::disassemble`].
    Disassemble,
    /// [`Provider::xrefs_to`].
    XrefsTo,
    /// [`Provider::callers`].
    Callers,
    /// [`Provider::callees`].
    Callees,
    /// [`Provider::decompile`].
    Decompile,
    /// [`Provider::fingerprints`], what `compare_procedures` compares.
    CompareProcedures,
}

impl Operation {
    /// Every operation, in declaration order.
    pub const ALL: [Operation; 14] = [
        Operation::ListDocuments,
        Operation::ListProcedures,
        Operation::ProcedureInfo,
        Operation::SearchProcedures,
        Operation::ListSegments,
        Operation::SearchStrings,
        Operation::ReadBytes,
        Operation::ListImports,
        Operation::Disassemble,
        Operation::XrefsTo,
        Operation::Callers,
        Operation::Callees,
        Operation::Decompile,
        Operation::CompareProcedures,
    ];

    /// The operations answered from names and segments alone: what a catalog performs.
    pub const FROM_NAMES: [Operation; 5] = [
        Operation::ListDocuments,
        Operation::ListProcedures,
        Operation::ProcedureInfo,
        Operation::SearchProcedures,
        Operation::ListSegments,
    ];

    /// The operations that read a binary's bytes and code, short of decompiling: what the
    /// native analysis performs beside [`Operation::FROM_NAMES`].
    pub const FROM_CODE: [Operation; 8] = [
        Operation::SearchStrings,
        Operation::ReadBytes,
        Operation::ListImports,
        Operation::Disassemble,
        Operation::XrefsTo,
        Operation::Callers,
        Operation::Callees,
        Operation::CompareProcedures,
    ];

    /// The operation's name, which is also the name of the tool that performs it.
    pub fn name(self) -> &'static str {
        match self {
            Operation::ListDocuments => "list_documents",
            Operation::ListProcedures => "list_procedures",
            Operation::ProcedureInfo => "procedure_info",
            Operation::SearchProcedures => "search_procedures",
            Operation::ListSegments => "list_segments",
            Operation::SearchStrings => "search_strings",
            Operation::ReadBytes => "read_bytes",
            Operation::ListImports => "list_imports",
            Operation::Disassemble => "disassemble",
            Operation::XrefsTo => "xrefs_to",
            Operation::Callers => "callers",
            Operation::Callees => "callees",
            Operation::Decompile => "decompile",
            Operation::CompareProcedures => "compare_procedures",
        }
    }

    /// The operation whose [`Operation::name`] is `name`.
    pub fn from_name(name: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|op| op.name() == name)
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The names of a provider's documents, in the provider's order: none empty, none repeated
/// (the constructor checks). Cloning shares them. A provider whose documents never change
/// can attach a [`PrefixIndex`] once ([`DocumentNames::indexed`]); Document completion then
/// answers from it instead of scanning the names.
///
/// ```
/// use rea::session::DocumentNames;
/// let names = DocumentNames::new(vec!["app".into(), "lib".into()]).unwrap();
/// assert_eq!(names.as_slice(), ["app", "lib"]);
/// assert!(DocumentNames::new(vec!["app".into(), "app".into()]).is_err());
/// assert!(DocumentNames::new(vec![String::new()]).is_err());
/// ```
#[derive(Clone, Debug)]
pub struct DocumentNames {
    names: Arc<[String]>,
    /// Built from `names` by [`DocumentNames::indexed`].
    index: Option<Arc<PrefixIndex>>,
}

/// Names are compared; whether they are indexed does not change what they complete to.
impl PartialEq for DocumentNames {
    fn eq(&self, other: &DocumentNames) -> bool {
        self.names == other.names
    }
}

impl Eq for DocumentNames {}

impl DocumentNames {
    /// Checks `names`: an empty or repeated name is [`ProviderError::Malformed`].
    pub fn new(names: Vec<String>) -> Result<DocumentNames, ProviderError> {
        let mut seen = hashbrown::HashSet::with_capacity(names.len());
        let offending = names
            .iter()
            .find(|name| name.is_empty() || !seen.insert(name.as_str()));
        if let Some(name) = offending {
            return Err(ProviderError::Malformed {
                reason: format!(
                    "document name {} is empty or repeated",
                    serde_json::Value::String(crate::text::cut(name))
                ),
            });
        }
        drop(seen);
        Ok(DocumentNames {
            names: names.into(),
            index: None,
        })
    }

    /// The names, in the provider's order.
    pub fn as_slice(&self) -> &[String] {
        &self.names
    }

    /// These names with their [`PrefixIndex`] built, for a provider whose documents never
    /// change: built once here (about 48 bytes per name plus a copy of the text, for the
    /// first [`SCAN_LIMIT`](crate::core::SCAN_LIMIT) names only) and shared by every clone.
    ///
    /// ```
    /// use rea::core::Prefix;
    /// use rea::session::DocumentNames;
    /// let names = DocumentNames::new(vec!["App".into(), "lib".into()]).unwrap().indexed();
    /// let index = names.index().unwrap();
    /// assert_eq!(index.complete(&Prefix::new("a").unwrap()).values, ["App"]);
    /// ```
    pub fn indexed(self) -> DocumentNames {
        let index = PrefixIndex::new(self.names.iter());
        DocumentNames {
            index: Some(Arc::new(index)),
            ..self
        }
    }

    /// The index built by [`DocumentNames::indexed`], if any.
    pub fn index(&self) -> Option<&PrefixIndex> {
        self.index.as_deref()
    }
}

/// A document a provider offers: a binary, one slice of a fat binary, or one catalog program.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DocumentInfo {
    /// Document name, unique within its provider.
    // And stable while the provider is open.
    pub name: String,
    /// Container format (`elf`, `macho`, `pe`, ...), when known.
    pub format: Option<String>,
    /// Architecture (`x86_64`, `arm64`, ...), when known.
    pub architecture: Option<String>,
}

impl DocumentInfo {
    /// A document known only by name.
    pub fn named(name: impl Into<String>) -> DocumentInfo {
        DocumentInfo {
            name: name.into(),
            format: None,
            architecture: None,
        }
    }
}

/// Where a procedure's address (or name) was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProcedureSource {
    /// The static symbol table (ELF `.symtab`, Mach-O `LC_SYMTAB`, COFF symbols).
    SymbolTable,
    /// The dynamic symbol table (ELF `.dynsym`).
    DynamicSymbols,
    /// The export table or export trie.
    Exports,
    /// An unwind table: ELF `.eh_frame` FDEs or PE `.pdata` entries (addresses only).
    UnwindTable,
    /// Mach-O `LC_FUNCTION_STARTS` (addresses only).
    FunctionStarts,
    /// Import stubs named after the imported symbol (ELF PLT entries such as `printf@plt`).
    ImportStubs,
    /// The entry point of the image (PE without `.pdata`).
    EntryPoint,
    /// A direct call target the disassembler found from the known starts (PE without
    /// `.pdata`).
    CallTargets,
    /// A loaded catalog file.
    Catalog,
    /// An external tool's own analysis, through its adapter (e.g. angr's control-flow graph).
    Adapter,
}

/// One name of a procedure: as displayed (demangled) and as stored in the binary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ProcedureName {
    /// Display name (demangled when the raw name is mangled).
    // Rust, Itanium C++ and MSVC manglings are demangled.
    pub name: String,
    /// The name exactly as the binary or catalog stores it; `#<ordinal>` for a PE import by
    /// ordinal.
    pub raw_name: String,
}

/// What a provider knows about one procedure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ProcedureInfo {
    /// Start address, lowercase `0x`-prefixed hexadecimal.
    #[schemars(with = "String")]
    pub address: Address,
    /// The primary name, or null when none is known.
    // The name `list_procedures` shows.
    pub name: Option<ProcedureName>,
    /// Other names at the same address.
    // In a deterministic order.
    pub aliases: Vec<ProcedureName>,
    /// Size in bytes, when known.
    pub size: Option<u64>,
    /// The segment containing the start address, when known.
    pub segment: Option<String>,
    /// Where the procedure was found.
    // Sorted.
    pub sources: Vec<ProcedureSource>,
}

/// How [`ProcedureQuery`] text is compared with procedure names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NameMatch {
    /// The display name or the raw name equals the text exactly.
    Exact,
    /// The matching key (docs/CONTRACT.md section 3) of the display or raw name contains the key of
    /// the text.
    Contains,
}

/// A search over procedure names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcedureQuery {
    text: String,
    matching: NameMatch,
    limit: usize,
}

impl ProcedureQuery {
    /// Searches for `text` with `matching`, returning at most [`MAX_SEARCH_RESULTS`] results.
    pub fn new(text: impl Into<String>, matching: NameMatch) -> ProcedureQuery {
        ProcedureQuery {
            text: text.into(),
            matching,
            limit: MAX_SEARCH_RESULTS,
        }
    }

    /// Returns at most `limit` results, clamped to `1..=MAX_SEARCH_RESULTS`.
    pub fn with_limit(mut self, limit: usize) -> ProcedureQuery {
        self.limit = limit.clamp(1, MAX_SEARCH_RESULTS);
        self
    }

    /// The searched text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// How names are compared.
    pub fn matching(&self) -> NameMatch {
        self.matching
    }

    /// Most results to return.
    pub fn limit(&self) -> usize {
        self.limit
    }
}

/// Procedures found by [`Provider::search_procedures`], by address.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ProcedureMatches {
    /// The matching procedures in address order, at most the query's limit.
    pub procedures: Vec<ProcedureInfo>,
    /// Whether more procedures matched than were returned.
    pub truncated: bool,
}

/// Read, write and execute permissions of a segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Permissions {
    /// Readable.
    pub read: bool,
    /// Writable.
    pub write: bool,
    /// Executable.
    pub execute: bool,
}

impl fmt::Display for Permissions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let flag = |on: bool, c: char| if on { c } else { '-' };
        write!(
            f,
            "{}{}{}",
            flag(self.read, 'r'),
            flag(self.write, 'w'),
            flag(self.execute, 'x')
        )
    }
}

impl Serialize for Permissions {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A mapped region of a document (a section where the format has them, else a segment).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Segment {
    /// Name, e.g. `.text` or `__TEXT,__text`.
    pub name: String,
    /// Start address.
    #[schemars(with = "String")]
    pub address: Address,
    /// Size in memory, in bytes.
    pub size: u64,
    /// Offset of its bytes in the file, if it has any.
    pub file_offset: Option<u64>,
    /// Bytes backed by the file (0 for zero-fill regions).
    // Such as `.bss`.
    pub file_size: u64,
    /// Permissions as `rwx` with `-` for absent ones, e.g. `r-x`.
    #[schemars(with = "String")]
    pub permissions: Permissions,
}

/// A search for printable strings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StringQuery {
    contains: String,
    min_chars: usize,
    limit: usize,
}

impl StringQuery {
    /// Shortest run reported unless [`StringQuery::with_min_chars`] says otherwise.
    pub const DEFAULT_MIN_CHARS: usize = 4;

    /// Strings whose matching key contains the key of `contains` (all strings when empty), of
    /// at least [`StringQuery::DEFAULT_MIN_CHARS`] characters, at most [`MAX_SEARCH_RESULTS`].
    pub fn new(contains: impl Into<String>) -> StringQuery {
        StringQuery {
            contains: contains.into(),
            min_chars: StringQuery::DEFAULT_MIN_CHARS,
            limit: MAX_SEARCH_RESULTS,
        }
    }

    /// Reports only runs of at least `min_chars` characters, clamped to `1..=256`.
    pub fn with_min_chars(mut self, min_chars: usize) -> StringQuery {
        self.min_chars = min_chars.clamp(1, 256);
        self
    }

    /// Returns at most `limit` matches, clamped to `1..=MAX_SEARCH_RESULTS`.
    pub fn with_limit(mut self, limit: usize) -> StringQuery {
        self.limit = limit.clamp(1, MAX_SEARCH_RESULTS);
        self
    }

    /// The text a string must contain.
    pub fn contains(&self) -> &str {
        &self.contains
    }

    /// Shortest run reported, in characters.
    pub fn min_chars(&self) -> usize {
        self.min_chars
    }

    /// Most matches returned.
    pub fn limit(&self) -> usize {
        self.limit
    }
}

/// A string found in a document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct StringMatch {
    /// Address of the first byte.
    #[schemars(with = "String")]
    pub address: Address,
    /// The string (at most 4096 characters).
    // 4096 is `crate::core::MAX_VALUE_CHARS` (a doc comment is the published description).
    pub text: String,
    /// Whether the string in the file is longer than `text`.
    pub truncated: bool,
    /// The segment containing it.
    pub segment: String,
}

/// Strings found by [`Provider::search_strings`], in address order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StringMatches {
    /// The matches, at most the query's limit.
    pub matches: Vec<StringMatch>,
    /// Whether the search stopped early (limit or scan bound reached).
    pub truncated: bool,
}

/// One imported symbol of a document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Import {
    /// The symbol: display name (demangled) and raw name; a PE import by ordinal is named
    /// `#<ordinal>`.
    pub symbol: ProcedureName,
    /// The library the format binds the symbol to, when it says.
    // The ELF file of the symbol's version requirement, the PE import descriptor's DLL, the
    // Mach-O dylib of the ordinal.
    pub library: Option<String>,
    /// The ELF symbol version, e.g. `GLIBC_2.2.5`, when it has one.
    pub version: Option<String>,
    /// The PE import ordinal (or hint) or the Mach-O library ordinal.
    pub ordinal: Option<u32>,
    /// Address of the stub the code calls (PLT entry, import thunk, Mach-O stub), when known.
    #[schemars(with = "Option<String>")]
    pub stub: Option<Address>,
    /// Address of the slot holding the target (GOT, IAT, lazy pointer), when known.
    #[schemars(with = "Option<String>")]
    pub slot: Option<Address>,
}

/// One page of [`Provider::list_imports`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ImportPage {
    /// This page's imports, in the format's order.
    pub imports: Vec<Import>,
    /// Cursor of the next page; null on the last page.
    pub next_cursor: Option<String>,
}

/// A byte count for [`Provider::read_bytes`]: 1 to [`MAX_READ_BYTES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReadLength(usize);

/// A read length outside `1..=MAX_READ_BYTES`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("length {length} is out of range: read_bytes reads 1 to {MAX_READ_BYTES} bytes")]
pub struct ReadLengthError {
    /// The rejected length.
    pub length: u64,
}

impl ReadLength {
    /// Checks `1 <= length <= MAX_READ_BYTES`.
    pub fn new(length: u64) -> Result<ReadLength, ReadLengthError> {
        match usize::try_from(length) {
            Ok(n) if (1..=MAX_READ_BYTES).contains(&n) => Ok(ReadLength(n)),
            _ => Err(ReadLengthError { length }),
        }
    }

    /// The length in bytes.
    pub fn get(self) -> usize {
        self.0
    }
}

/// Why a provider operation failed. Names a caller may have sent (documents, cursors, paths)
/// are held as [`Quoted`], cut to 64 characters.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// The provider does not implement the operation.
    #[error("the provider does not support {0}")]
    Unsupported(Operation),
    /// No document has this name.
    #[error("no document named {document:?}")]
    UnknownDocument {
        /// The requested document name.
        document: Quoted,
    },
    /// No procedure starts at this address.
    #[error("no procedure starts at {address} in document {document:?}")]
    NoProcedure {
        /// The document searched.
        document: Quoted,
        /// The requested address.
        address: Address,
    },
    /// The address is not in any file-backed region of the document.
    #[error("address {address} is not backed by file bytes in document {document:?}")]
    Unmapped {
        /// The document searched.
        document: Quoted,
        /// The requested address.
        address: Address,
    },
    /// The cursor was not issued by this provider for this listing.
    #[error("cursor {cursor:?} is not valid for this listing")]
    InvalidCursor {
        /// The rejected cursor.
        cursor: Quoted,
    },
    /// An argument is out of range.
    #[error("argument {argument:?} is invalid: {reason}")]
    InvalidArgument {
        /// The argument's name.
        argument: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The underlying data (a binary, a catalog, a database) is malformed.
    #[error("malformed input: {reason}")]
    Malformed {
        /// What is malformed.
        reason: String,
    },
    /// Reading a file failed.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: Quoted,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file was refused or could not be read (see [`crate::base::files`]).
    #[error(transparent)]
    File(#[from] crate::base::files::FileError),
    /// The document's instruction set is not one the code analysis decodes.
    #[error(
        "document {document:?} holds {architecture} code; code analysis decodes x86, x86-64 \
         and AArch64 only"
    )]
    UnsupportedArchitecture {
        /// The document.
        document: Quoted,
        /// Its architecture.
        architecture: String,
    },
    /// An integrator provider's own failure.
    #[error("provider failure: {0}")]
    Failed(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// A source of documents and procedures.
///
/// Implementations must be cheap to call concurrently from several threads: completion calls
/// them from a worker thread bounded by a time-out, while tools call them directly.
///
/// A provider answers for one opened target (a binary, a catalog, an integrator's database).
/// It lists *documents* (a binary file, or one slice of a fat Mach-O, or one program of a
/// catalog) and, per document, *procedures* by address, plus the static-analysis operations the
/// tools need. Every operation can fail with a typed [`ProviderError`]; operations a provider
/// does not implement answer [`ProviderError::Unsupported`] and [`Provider::supports`] says so.
///
/// # Writing a provider
///
/// Only [`Provider::id`], [`Provider::supports`], [`Provider::list_documents`] and
/// [`Provider::list_procedures`] must be written; the others default to `Unsupported`.
///
/// ```
/// use rea::core::{ProcedureEntry, ProcedurePage};
/// use rea::session::{DocumentInfo, Operation, Provider, ProviderError};
///
/// /// Procedures of one document, from an integrator's own database.
/// struct Database {
///     procedures: Vec<(u64, &'static str)>,
/// }
///
/// impl Provider for Database {
///     fn id(&self) -> &str {
///         "database"
///     }
///
///     fn supports(&self, operation: Operation) -> bool {
///         matches!(operation, Operation::ListDocuments | Operation::ListProcedures)
///     }
///
///     fn list_documents(&self) -> Result<Vec<DocumentInfo>, ProviderError> {
///         Ok(vec![DocumentInfo::named("app")])
///     }
///
///     fn list_procedures(
///         &self,
///         document: &str,
///         cursor: Option<&str>,
///         limit: usize,
///     ) -> Result<ProcedurePage, ProviderError> {
///         if document != "app" {
///             return Err(ProviderError::UnknownDocument { document: document.into() });
///         }
///         // The cursor is opaque to callers; here it is the index of the next entry.
///         let start = match cursor {
///             None => 0,
///             Some(text) => text
///                 .parse::<usize>()
///                 .ok()
///                 .filter(|&start| start <= self.procedures.len())
///                 .ok_or_else(|| ProviderError::InvalidCursor { cursor: text.into() })?,
///         };
///         let end = self.procedures.len().min(start + limit.max(1));
///         Ok(ProcedurePage {
///             entries: self.procedures[start..end]
///                 .iter()
///                 .map(|&(address, name)| ProcedureEntry::new(format!("{address:#x}"), Some(name)))
///                 .collect(),
///             next_cursor: (end < self.procedures.len()).then(|| end.to_string()),
///         })
///     }
/// }
///
/// let database = Database { procedures: vec![(0x1000, "main"), (0x1040, "helper")] };
/// let first = database.list_procedures("app", None, 1).unwrap();
/// assert_eq!(first.entries[0].address, "0x1000");
/// let second = database.list_procedures("app", first.next_cursor.as_deref(), 1).unwrap();
/// assert_eq!(second.entries[0].name.as_deref(), Some("helper"));
/// assert_eq!(second.next_cursor, None);
/// // Operations left to their defaults answer `Unsupported`.
/// assert!(matches!(
///     database.list_segments("app"),
///     Err(ProviderError::Unsupported(Operation::ListSegments))
/// ));
/// ```
pub trait Provider: Send + Sync + 'static {
    /// The provider's identity, unique among the providers declared in one session
    /// (e.g. `native`, `catalog`).
    fn id(&self) -> &str;

    /// Whether the provider implements `operation`. Must agree with the methods: an operation
    /// reported as unsupported answers [`ProviderError::Unsupported`].
    fn supports(&self, operation: Operation) -> bool;

    /// The documents, in a stable order.
    fn list_documents(&self) -> Result<Vec<DocumentInfo>, ProviderError>;

    /// The names of [`Provider::list_documents`], checked and shared: what Document completion
    /// reads on every request. The default lists and checks the documents on every call;
    /// a provider whose documents never change builds its [`DocumentNames`] once and hands out
    /// clones (a reference count, no copy).
    fn document_names(&self) -> Result<DocumentNames, ProviderError> {
        DocumentNames::new(self.list_documents()?.into_iter().map(|d| d.name).collect())
    }

    /// The outcome of bounded procedure discovery (docs/CONTRACT.md section 6) over this provider's
    /// own [`Provider::list_procedures`] pages, when the provider's tables never change and it can
    /// compute it once per document and share it. `None` (the default): completion pages through
    /// [`Provider::list_procedures`] on every request.
    fn shared_discovery(
        &self,
        document: &str,
    ) -> Option<Result<Arc<crate::core::Outcome>, ProviderError>> {
        let _ = document;
        None
    }

    /// The [`Provider::document_names`] this provider holds in memory, handed out at once
    /// (no I/O, no waiting, no computation). Completion then reads them where the request
    /// arrived, without a hop to the bounded provider pool. `None` (the default): completion
    /// calls [`Provider::document_names`] on the pool, within its time bound.
    fn ready_document_names(&self) -> Option<DocumentNames> {
        None
    }

    /// The [`Provider::shared_discovery`] of `document` when it is already computed and held
    /// in memory, handed out at once; `None` (the default) when it would have to be computed
    /// or the provider shares none.
    fn ready_discovery(&self, document: &str) -> Option<Arc<crate::core::Outcome>> {
        let _ = document;
        None
    }

    /// One page of the procedures of `document`, one entry per address, in a stable order.
    ///
    /// `cursor` is `None` for the first page, else the `next_cursor` of the previous page; it is
    /// opaque to callers. The page holds at most `limit` entries; `next_cursor` is `None` on the
    /// last page. Addresses are lowercase `0x`-prefixed hexadecimal.
    fn list_procedures(
        &self,
        document: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<ProcedurePage, ProviderError>;

    /// What is known about the procedure starting at `address`.
    fn procedure_info(
        &self,
        document: &str,
        address: Address,
    ) -> Result<ProcedureInfo, ProviderError> {
        let _ = (document, address);
        Err(ProviderError::Unsupported(Operation::ProcedureInfo))
    }

    /// Procedures whose names match `query`, in address order.
    fn search_procedures(
        &self,
        document: &str,
        query: &ProcedureQuery,
    ) -> Result<ProcedureMatches, ProviderError> {
        let _ = (document, query);
        Err(ProviderError::Unsupported(Operation::SearchProcedures))
    }

    /// The mapped regions of `document`, in address order.
    fn list_segments(&self, document: &str) -> Result<Vec<Segment>, ProviderError> {
        let _ = document;
        Err(ProviderError::Unsupported(Operation::ListSegments))
    }

    /// Printable strings of `document` matching `query`, in address order.
    fn search_strings(
        &self,
        document: &str,
        query: &StringQuery,
    ) -> Result<StringMatches, ProviderError> {
        let _ = (document, query);
        Err(ProviderError::Unsupported(Operation::SearchStrings))
    }

    /// Up to `length` bytes starting at `address`; fewer when the file-backed region ends first.
    fn read_bytes(
        &self,
        document: &str,
        address: Address,
        length: ReadLength,
    ) -> Result<Vec<u8>, ProviderError> {
        let _ = (document, address, length);
        Err(ProviderError::Unsupported(Operation::ReadBytes))
    }

    /// One page of the imported symbols of `document`, at most `limit` of them, in a stable
    /// order; `cursor` works as in [`Provider::list_procedures`].
    fn list_imports(
        &self,
        document: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<ImportPage, ProviderError> {
        let _ = (document, cursor, limit);
        Err(ProviderError::Unsupported(Operation::ListImports))
    }

    /// One page of the instructions of a procedure or of a bounded address range.
    ///
    /// `cursor` is `None` for the first page, else the `next_cursor` of the previous page;
    /// the page holds at most `limit` instructions (clamped to [`MAX_CODE_PAGE`]).
    fn disassemble(
        &self,
        document: &str,
        scope: CodeScope,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<Disassembly, ProviderError> {
        let _ = (document, scope, cursor, limit);
        Err(ProviderError::Unsupported(Operation::Disassemble))
    }

    /// One page of the code and data references to `address`, in referring-address order.
    fn xrefs_to(
        &self,
        document: &str,
        address: Address,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<References, ProviderError> {
        let _ = (document, address, cursor, limit);
        Err(ProviderError::Unsupported(Operation::XrefsTo))
    }

    /// One page of the procedures that call the procedure at `procedure` directly.
    fn callers(
        &self,
        document: &str,
        procedure: Address,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<CallGraph, ProviderError> {
        let _ = (document, procedure, cursor, limit);
        Err(ProviderError::Unsupported(Operation::Callers))
    }

    /// One page of what the procedure at `procedure` calls directly (through stubs and
    /// import slots too, named by the imported symbol).
    fn callees(
        &self,
        document: &str,
        procedure: Address,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<CallGraph, ProviderError> {
        let _ = (document, procedure, cursor, limit);
        Err(ProviderError::Unsupported(Operation::Callees))
    }

    /// Pseudo-C of the procedure starting at `procedure`, within `bound`, showing the
    /// investigator's `names` where the decompiler would show its own (the procedure's own
    /// name, call targets). A decompiler that ran but could not reconstruct all of it answers
    /// `Ok` with `complete: false` and its reason; a decompiler that could not run answers an
    /// error.
    fn decompile(
        &self,
        document: &str,
        procedure: Address,
        bound: DecompileBound,
        names: &DecompileNames,
    ) -> Result<Decompilation, ProviderError> {
        let _ = (document, procedure, bound, names);
        Err(ProviderError::Unsupported(Operation::Decompile))
    }

    /// What `compare_procedures` compares: a [`Fingerprint`](crate::core::diff::Fingerprint) of
    /// each procedure of `document`, in address order, within `bounds`.
    fn fingerprints(
        &self,
        document: &str,
        bounds: &FingerprintBounds,
    ) -> Result<Fingerprints, ProviderError> {
        let _ = (document, bounds);
        Err(ProviderError::Unsupported(Operation::CompareProcedures))
    }
}

/// Providers declared beside the one that opened a file (`rea serve --provider angr`): the
/// session keeps one and asks it each time a binary is opened from a file.
///
/// The session only holds it; the layer that opens files (`rea::providers`) calls it with
/// what it read.
pub trait Companions: Send + Sync + fmt::Debug + 'static {
    /// The providers to declare after the primary provider of a binary read from a file:
    /// `bytes` is the file as read (the primary provider's private copy), `document` the
    /// primary provider's first document. Called before the binary session is committed;
    /// none of the returned providers may have started work yet.
    fn companions(&self, document: &str, bytes: &Arc<Vec<u8>>) -> Vec<Arc<dyn Provider>>;

    /// The operations the companion providers support, before any binary is opened (what
    /// guided prompts may offer while no binary is open).
    fn operations(&self) -> Vec<Operation>;
}
