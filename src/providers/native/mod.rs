//! The built-in `native` provider: ELF, Mach-O (fat binaries included) and PE files read with
//! the `object` crate.
//!
//! **The provider analyses a private in-memory copy.** Opening reads the whole file (a checked
//! regular file of at most [`crate::base::files::MAX_BINARY_BYTES`], see
//! [`crate::base::files`]) into memory; nothing is memory-mapped. A file rebuilt, truncated
//! or rewritten on disk while it is open therefore never crashes the server (no `SIGBUS`): the
//! session keeps analysing the bytes it read, and `open_binary` again picks up the new file.
//!
//! - **Documents**: one per file, named by the file name; a fat Mach-O gives one document per
//!   slice, named `<file>[<arch>]` (e.g. `tool[arm64]`, `tool[x86_64]`), with `#2`, `#3`
//!   appended to repeated architectures.
//! - **Procedures**, one per address in address order: defined function symbols of the symbol
//!   table and the dynamic symbol table, exports, and the function starts of unwind and
//!   function-start tables (ELF/Mach-O `.eh_frame`, Mach-O `LC_FUNCTION_STARTS`, PE `.pdata`),
//!   which give addresses without names; a PE without `.pdata` entries (every 32-bit one) adds
//!   its entry point and the direct call targets the disassembler finds from the entry point
//!   and the exports (bounded by [`MAX_DISCOVERY_INSTRUCTIONS`], [`MAX_DISCOVERED_STARTS`] and
//!   [`MAX_DISCOVERY_TIME`]), named where a symbol or export names them; and the ELF PLT entries named after their target as
//!   `objdump -d` labels them (`printf@plt`). ELF `STT_GNU_IFUNC` symbols are functions; a
//!   dynamic symbol of a non-default version is named with it (`memcpy@GLIBC_2.2.5`), so the
//!   bare name is the default version. An ELF file without section headers is read through
//!   `PT_DYNAMIC` (dynamic symbols) and `PT_GNU_EH_FRAME` (unwind table). PE exports are read
//!   entry by entry (a malformed forwarder drops only itself). Only addresses inside
//!   executable regions are kept. Names are demangled (Rust, Itanium C++ as `c++filt` prints
//!   it, MSVC) with the raw name kept; when several names share an address, global symbols
//!   win over dynamic symbols, exports, local symbols and PLT names, and the others are
//!   aliases. A listed name longer than [`crate::core::MAX_VALUE_CHARS`]
//!   characters is replaced by the raw name, or left out.
//! - **Segments**: allocated sections (Mach-O as `__SEGMENT,__section`, with the permissions
//!   its segment is mapped with, `initprot`), or the segments when the file has no section
//!   headers. Relocatable objects keep their section-relative
//!   addresses.
//! - **Strings**: runs of printable ASCII or UTF-8 in file-backed, non-code regions.
//! - **Bytes**: at most [`crate::session::MAX_READ_BYTES`] from a file-backed region.
//! - **Imports**: ELF undefined dynamic symbols (library and version from the version
//!   requirements, PLT stub and GOT slot from the `JUMP_SLOT`/`GLOB_DAT` relocations), PE
//!   import descriptors (DLL, hint or ordinal, IAT slot, `jmp [slot]` thunk), Mach-O undefined
//!   external symbols (dylib ordinal and install name, `__stubs` entry and lazy or non-lazy
//!   pointer through the indirect symbol table).
//!
//! Parsing happens once, at open; every operation afterwards reads the parsed tables. Arbitrary
//! bytes never panic: malformed files are rejected or yield what can be read.
//!
//! ```
//! use rea::providers::native::NativeProvider;
//! use rea::session::Provider;
//!
//! let not_a_binary = NativeProvider::from_bytes("notes.txt", b"hello".to_vec());
//! assert!(not_a_binary.is_err());
//! ```

mod analysis;
mod demangle;
mod eh_frame;
mod elf;
mod image;
mod imports;
mod macho;
mod pe;
mod region;
mod starts;
mod strings;

use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use object::FileKind;
use object::read::macho::{FatArch, MachOFatFile32, MachOFatFile64};

use self::analysis::{Analysis, Input};
pub use self::analysis::{
    MAX_ANALYSIS_TIME, MAX_DISCOVERED_STARTS, MAX_DISCOVERY_INSTRUCTIONS, MAX_DISCOVERY_TIME,
    MAX_INSTRUCTIONS, MAX_REFERENCES,
};
use self::image::{Image, read_image, unrecognized};
use self::strings::ScanRegion;
use crate::base::files::{CheckedFile, Confinement, FileLimit};
use crate::core::{Outcome, ProcedurePage};
use crate::session::{
    Address, CallGraph, CodeScope, Disassembly, DocumentInfo, DocumentNames, FingerprintBounds,
    Fingerprints, ImportPage, Operation, ProcedureInfo, ProcedureMatches, ProcedureQuery, Provider,
    ProviderError, ReadLength, References, Segment, StringMatches, StringQuery,
};

/// The identity of the native provider.
pub const NATIVE_PROVIDER_ID: &str = "native";

/// One document: an image within the file.
struct Document {
    info: DocumentInfo,
    /// The image's bytes within the file.
    range: Range<usize>,
    image: Image,
    /// The code analysis, computed on first use.
    analysis: OnceLock<Analysis>,
}

/// The `native` provider over one file (see the [module documentation](self)).
pub struct NativeProvider {
    /// The private copy of the file's bytes (shared with the companion providers).
    bytes: Arc<Vec<u8>>,
    documents: Vec<Document>,
    /// The document names (unique by construction), built once.
    names: DocumentNames,
}

impl NativeProvider {
    /// Opens the file at `path` (a checked regular file, see [`crate::base::files`]), reads
    /// it into memory and parses it. Documents are named after the file's name.
    pub fn open(path: &Path) -> Result<NativeProvider, ProviderError> {
        NativeProvider::open_confined(path, &Confinement::unrestricted())
    }

    /// [`NativeProvider::open`] under `confinement`.
    pub fn open_confined(
        path: &Path,
        confinement: &Confinement,
    ) -> Result<NativeProvider, ProviderError> {
        let file = CheckedFile::open(path, confinement, FileLimit::BINARY)?;
        if file.size() == 0 {
            return Err(ProviderError::Malformed {
                reason: format!("{} is empty", path.display()),
            });
        }
        NativeProvider::parse(file_label(path), file.read_all()?)
    }

    /// Parses `bytes` held in memory; documents are named after `name`.
    pub fn from_bytes(
        name: impl Into<String>,
        bytes: Vec<u8>,
    ) -> Result<NativeProvider, ProviderError> {
        NativeProvider::parse(name.into(), bytes)
    }

    fn parse(name: String, bytes: Vec<u8>) -> Result<NativeProvider, ProviderError> {
        let data: &[u8] = &bytes;
        let documents = match FileKind::parse(data).map_err(|_| unrecognized())? {
            FileKind::MachOFat32 => {
                fat_documents(&name, data, fat_slices::<MachOFatFile32>(data)?)?
            }
            FileKind::MachOFat64 => {
                fat_documents(&name, data, fat_slices::<MachOFatFile64>(data)?)?
            }
            _ => {
                let image = read_image(data)?;
                vec![Document {
                    info: image.info(&name),
                    range: 0..data.len(),
                    image,
                    analysis: OnceLock::new(),
                }]
            }
        };
        // The documents never change: Document completion answers from an index.
        let names =
            DocumentNames::new(documents.iter().map(|d| d.info.name.clone()).collect())?.indexed();
        Ok(NativeProvider {
            bytes: Arc::new(bytes),
            documents,
            names,
        })
    }

    fn document(&self, name: &str) -> Result<&Document, ProviderError> {
        self.documents
            .iter()
            .find(|document| document.info.name == name)
            .ok_or_else(|| ProviderError::UnknownDocument {
                document: name.into(),
            })
    }

    /// The whole file as read (the private copy every document is parsed from).
    pub(crate) fn file_bytes(&self) -> &Arc<Vec<u8>> {
        &self.bytes
    }

    fn image_bytes(&self, document: &Document) -> &[u8] {
        &self.bytes[document.range.clone()]
    }

    /// The document's code analysis (computed on first use) and what it reads.
    fn analysed(&self, name: &str) -> Result<(&Analysis, Input<'_>), ProviderError> {
        let document = self.document(name)?;
        let input = Input {
            image: self.image_bytes(document),
            regions: &document.image.regions,
            procedures: &document.image.procedures,
            imports: &document.image.imports,
        };
        Ok((
            document.analysis.get_or_init(|| Analysis::build(&input)),
            input,
        ))
    }
}

/// The document name for a file: its file name, or `binary`.
pub(crate) fn file_label(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "binary".to_owned())
}

/// A slice of a fat file: architecture name and byte range.
struct Slice {
    architecture: String,
    range: Range<usize>,
}

/// Fat headers whose arch type `Fat` is given by the file type.
trait FatFile<'data>: Sized {
    type Arch: FatArch;
    fn parse(data: &'data [u8]) -> object::read::Result<Self>;
    fn arches(&self) -> &'data [Self::Arch];
}

impl<'data> FatFile<'data> for MachOFatFile32<'data> {
    type Arch = object::macho::FatArch32;
    fn parse(data: &'data [u8]) -> object::read::Result<Self> {
        MachOFatFile32::parse(data)
    }
    fn arches(&self) -> &'data [Self::Arch] {
        MachOFatFile32::arches(self)
    }
}

impl<'data> FatFile<'data> for MachOFatFile64<'data> {
    type Arch = object::macho::FatArch64;
    fn parse(data: &'data [u8]) -> object::read::Result<Self> {
        MachOFatFile64::parse(data)
    }
    fn arches(&self) -> &'data [Self::Arch] {
        MachOFatFile64::arches(self)
    }
}

fn fat_slices<'data, Fat: FatFile<'data>>(data: &'data [u8]) -> Result<Vec<Slice>, ProviderError> {
    let fat = Fat::parse(data).map_err(|error| ProviderError::Malformed {
        reason: error.to_string(),
    })?;
    fat.arches()
        .iter()
        .map(|arch| {
            let (offset, size) = arch.file_range();
            let start = usize::try_from(offset).ok();
            let end = start
                .zip(usize::try_from(size).ok())
                .and_then(|(s, n)| s.checked_add(n));
            match (start, end) {
                (Some(start), Some(end)) if end <= data.len() => Ok(Slice {
                    architecture: arch_name(arch.cputype().0, arch.cpusubtype().0),
                    range: start..end,
                }),
                _ => Err(ProviderError::Malformed {
                    reason: format!(
                        "fat slice at offset {offset} of {size} bytes exceeds the file"
                    ),
                }),
            }
        })
        .collect()
}

fn fat_documents(
    name: &str,
    data: &[u8],
    slices: Vec<Slice>,
) -> Result<Vec<Document>, ProviderError> {
    let mut documents: Vec<Document> = Vec::with_capacity(slices.len());
    for slice in slices {
        let image = read_image(&data[slice.range.clone()])?;
        let mut document_name = format!("{name}[{}]", slice.architecture);
        let mut repeat = 1;
        while documents.iter().any(|d| d.info.name == document_name) {
            repeat += 1;
            document_name = format!("{name}[{}#{repeat}]", slice.architecture);
        }
        documents.push(Document {
            info: image.info(&document_name),
            range: slice.range,
            image,
            analysis: OnceLock::new(),
        });
    }
    Ok(documents)
}

/// The conventional name of a Mach-O CPU type and subtype.
fn arch_name(cputype: u32, cpusubtype: u32) -> String {
    use object::macho;
    let subtype = cpusubtype & !macho::CPU_SUBTYPE_MASK;
    let name = match macho::CpuType(cputype) {
        macho::CPU_TYPE_X86_64 if subtype == macho::CPU_SUBTYPE_X86_64_H.0 => "x86_64h",
        macho::CPU_TYPE_X86_64 => "x86_64",
        macho::CPU_TYPE_X86 => "i386",
        macho::CPU_TYPE_ARM64 if subtype == macho::CPU_SUBTYPE_ARM64E.0 => "arm64e",
        macho::CPU_TYPE_ARM64 => "arm64",
        macho::CPU_TYPE_ARM64_32 => "arm64_32",
        macho::CPU_TYPE_ARM => "arm",
        macho::CPU_TYPE_POWERPC => "ppc",
        macho::CPU_TYPE_POWERPC64 => "ppc64",
        _ => return format!("cpu{cputype:x}"),
    };
    name.to_owned()
}

impl Provider for NativeProvider {
    fn id(&self) -> &str {
        NATIVE_PROVIDER_ID
    }

    // What it performs, named: an operation added later is unsupported until the native
    // analysis answers it (decompiling is the angr adapter's).
    fn supports(&self, operation: Operation) -> bool {
        Operation::FROM_NAMES.contains(&operation) || Operation::FROM_CODE.contains(&operation)
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
                .and_then(|document| document.image.procedures.discovery()),
        )
    }

    fn ready_document_names(&self) -> Option<DocumentNames> {
        Some(self.names.clone())
    }

    fn ready_discovery(&self, document: &str) -> Option<Arc<Outcome>> {
        self.document(document)
            .ok()
            .and_then(|document| document.image.procedures.ready_discovery())
    }

    fn list_procedures(
        &self,
        document: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<ProcedurePage, ProviderError> {
        self.document(document)?
            .image
            .procedures
            .page(cursor, limit)
    }

    fn procedure_info(
        &self,
        document: &str,
        address: Address,
    ) -> Result<ProcedureInfo, ProviderError> {
        self.document(document)?
            .image
            .procedures
            .info(document, address)
    }

    fn search_procedures(
        &self,
        document: &str,
        query: &ProcedureQuery,
    ) -> Result<ProcedureMatches, ProviderError> {
        Ok(self.document(document)?.image.procedures.search(query))
    }

    fn list_segments(&self, document: &str) -> Result<Vec<Segment>, ProviderError> {
        let document = self.document(document)?;
        Ok(document
            .image
            .regions
            .iter()
            .map(|r| r.segment.clone())
            .collect())
    }

    fn search_strings(
        &self,
        document: &str,
        query: &StringQuery,
    ) -> Result<StringMatches, ProviderError> {
        let document = self.document(document)?;
        let image = self.image_bytes(document);
        let regions = document
            .image
            .regions
            .iter()
            .filter(|region| !region.code)
            .map(|region| ScanRegion {
                name: &region.segment.name,
                address: region.segment.address.value(),
                bytes: region.bytes(image),
            });
        Ok(strings::search(regions, query))
    }

    fn list_imports(
        &self,
        document: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<ImportPage, ProviderError> {
        imports::page(&self.document(document)?.image.imports, cursor, limit)
    }

    fn read_bytes(
        &self,
        document: &str,
        address: Address,
        length: ReadLength,
    ) -> Result<Vec<u8>, ProviderError> {
        let found = self.document(document)?;
        let image = self.image_bytes(found);
        for region in &found.image.regions {
            let bytes = region.bytes(image);
            let Some(offset) = address.value().checked_sub(region.segment.address.value()) else {
                continue;
            };
            let rest = usize::try_from(offset)
                .ok()
                .and_then(|o| bytes.get(o..))
                .unwrap_or(&[]);
            if !rest.is_empty() {
                return Ok(rest[..rest.len().min(length.get())].to_vec());
            }
        }
        Err(ProviderError::Unmapped {
            document: document.into(),
            address,
        })
    }

    fn disassemble(
        &self,
        document: &str,
        scope: CodeScope,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<Disassembly, ProviderError> {
        let (analysis, input) = self.analysed(document)?;
        analysis.disassemble(&input, document, scope, cursor, limit)
    }

    fn xrefs_to(
        &self,
        document: &str,
        address: Address,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<References, ProviderError> {
        let (analysis, input) = self.analysed(document)?;
        analysis.xrefs_to(&input, document, address, cursor, limit)
    }

    fn callers(
        &self,
        document: &str,
        procedure: Address,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<CallGraph, ProviderError> {
        let (analysis, _) = self.analysed(document)?;
        analysis.callers(document, procedure, cursor, limit)
    }

    fn callees(
        &self,
        document: &str,
        procedure: Address,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<CallGraph, ProviderError> {
        let (analysis, _) = self.analysed(document)?;
        analysis.callees(document, procedure, cursor, limit)
    }

    fn fingerprints(
        &self,
        document: &str,
        bounds: &FingerprintBounds,
    ) -> Result<Fingerprints, ProviderError> {
        let (analysis, input) = self.analysed(document)?;
        analysis.fingerprints(&input, document, bounds)
    }
}
