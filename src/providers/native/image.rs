//! Reading one image (an ELF, Mach-O or PE file, or one slice of a fat Mach-O) into what the
//! native provider serves: its regions and its procedures.

use std::borrow::Cow;
use std::collections::HashSet;

use object::{
    BinaryFormat, FileKind, Object, ObjectSection, ObjectSegment, ObjectSymbol, SectionFlags,
    SectionKind, SymbolKind, elf, pe,
};

use super::analysis::{Isa, call_targets};
use super::demangle::demangle;
use super::eh_frame::{FrameLayout, fde_starts};
use super::elf::ElfDetails;
use super::region::Region;
use super::starts::{macho_function_starts, pe_runtime_functions};
use crate::providers::table::{FoundName, ProcedureTable, TableBuilder};
use crate::session::{
    Address, DocumentInfo, Import, Permissions, ProcedureName, ProcedureSource, ProviderError,
    Segment,
};

/// Preference of names at one address: globals of the symbol table first, then dynamic
/// symbols, exports, and local symbols last.
const RANK_GLOBAL: u8 = 0;
const RANK_DYNAMIC: u8 = 1;
const RANK_EXPORT: u8 = 2;
const RANK_LOCAL: u8 = 3;
const RANK_STUB: u8 = 4;

/// What one image yields.
pub(crate) struct Image {
    pub(crate) format: &'static str,
    pub(crate) architecture: String,
    pub(crate) regions: Vec<Region>,
    pub(crate) procedures: ProcedureTable,
    /// The imported symbols, in the format's order.
    pub(crate) imports: Vec<Import>,
}

impl Image {
    /// The document description of this image under `name`.
    pub(crate) fn info(&self, name: &str) -> DocumentInfo {
        DocumentInfo {
            name: name.to_owned(),
            format: Some(self.format.to_owned()),
            architecture: Some(self.architecture.clone()),
        }
    }
}

/// Parses one (non-fat) image.
pub(crate) fn read_image(data: &[u8]) -> Result<Image, ProviderError> {
    let kind = FileKind::parse(data).map_err(|_| unrecognized())?;
    let file = object::File::parse(data).map_err(|error| ProviderError::Malformed {
        reason: error.to_string(),
    })?;
    let regions = regions(&file, data, kind);
    let mut elf = super::elf::read(data, kind);
    let segments: Vec<Segment> = regions.iter().map(|r| r.segment.clone()).collect();
    let mut builder = TableBuilder::default();
    let executable = |address: u64| {
        crate::providers::table::segment_containing(&segments, address)
            .is_some_and(|segment| segment.permissions.execute)
    };
    collect_symbols(&file, &elf, &mut builder, &executable);
    collect_exports(&file, data, kind, &elf, &mut builder, &executable);
    let unwind_starts = collect_unwind_starts(&file, data, kind, &mut builder, &executable);
    if file.format() == BinaryFormat::Elf && file.sections().all(|section| section.size() == 0) {
        collect_sectionless(&file, data, kind, &mut elf, &mut builder, &executable);
    }
    for (address, raw) in &elf.stubs {
        if executable(*address) {
            let display = demangle(raw).unwrap_or_else(|| raw.clone());
            let name = FoundName {
                rank: RANK_STUB,
                name: ProcedureName {
                    name: format!("{display}@plt"),
                    raw_name: format!("{raw}@plt"),
                },
            };
            builder.add(*address, ProcedureSource::ImportStubs, Some(name), None);
        }
    }
    let imports = super::imports::collect(data, kind, elf);
    if matches!(kind, FileKind::Pe32 | FileKind::Pe64) && unwind_starts == 0 {
        collect_call_targets(&file, data, kind, &regions, &imports, &mut builder);
    }
    Ok(Image {
        format: format_name(file.format()),
        architecture: format!("{:?}", file.architecture()).to_lowercase(),
        procedures: builder.finish(&segments)?,
        imports,
        regions,
    })
}

pub(crate) fn unrecognized() -> ProviderError {
    ProviderError::Malformed {
        reason: "unrecognized file format (expected ELF, Mach-O, PE or a fat Mach-O)".to_owned(),
    }
}

fn format_name(format: BinaryFormat) -> &'static str {
    match format {
        BinaryFormat::Elf => "elf",
        BinaryFormat::MachO => "macho",
        BinaryFormat::Pe => "pe",
        BinaryFormat::Coff => "coff",
        BinaryFormat::Xcoff => "xcoff",
        _ => "other",
    }
}

/// Allocated sections in address order; the segments when there are no section headers.
fn regions(file: &object::File<'_>, data: &[u8], kind: FileKind) -> Vec<Region> {
    // Mach-O sections take the permissions their segment is mapped with (`initprot`).
    let segment_permissions = super::macho::segment_permissions(data, kind);
    let mut regions: Vec<Region> = file
        .sections()
        .filter_map(|section| {
            let (allocated, permissions) = match section.flags() {
                SectionFlags::Elf { sh_flags, .. } => (
                    sh_flags.0 & elf::SHF_ALLOC.0 != 0,
                    Permissions {
                        read: true,
                        write: sh_flags.0 & elf::SHF_WRITE.0 != 0,
                        execute: sh_flags.0 & elf::SHF_EXECINSTR.0 != 0,
                    },
                ),
                SectionFlags::Coff { characteristics } => (
                    true,
                    Permissions {
                        read: characteristics.0 & pe::IMAGE_SCN_MEM_READ.0 != 0,
                        write: characteristics.0 & pe::IMAGE_SCN_MEM_WRITE.0 != 0,
                        execute: characteristics.0 & pe::IMAGE_SCN_MEM_EXECUTE.0 != 0,
                    },
                ),
                _ => {
                    let segment = section.segment_name().ok().flatten().unwrap_or("");
                    let permissions = segment_permissions
                        .iter()
                        .find(|(name, _)| name == segment)
                        .map(|(_, p)| *p)
                        .unwrap_or(Permissions {
                            read: true,
                            write: false,
                            execute: section.kind() == SectionKind::Text,
                        });
                    (true, permissions)
                }
            };
            if !allocated || section.size() == 0 {
                return None;
            }
            let name = section_name(file.format(), &section);
            Some(region(
                name,
                section.address(),
                section.size(),
                section.file_range(),
                permissions,
                section.kind() == SectionKind::Text,
                data,
            ))
        })
        .collect();
    if regions.is_empty() {
        regions = file
            .segments()
            .enumerate()
            .filter(|(_, segment)| segment.size() > 0)
            .map(|(index, segment)| {
                let name = match segment.name() {
                    Ok(Some(name)) if !name.is_empty() => name.to_owned(),
                    _ => format!("segment{index}"),
                };
                let permissions = permissions(segment.permissions());
                let (offset, size) = segment.file_range();
                let file_range = (size > 0).then_some((offset, size));
                region(
                    name,
                    segment.address(),
                    segment.size(),
                    file_range,
                    permissions,
                    permissions.execute,
                    data,
                )
            })
            .collect();
    }
    regions.sort_by(|a, b| {
        (a.segment.address, &a.segment.name).cmp(&(b.segment.address, &b.segment.name))
    });
    regions
}

fn section_name(format: BinaryFormat, section: &object::Section<'_, '_>) -> String {
    let name = String::from_utf8_lossy(section.name_bytes().unwrap_or(b"")).into_owned();
    match section.segment_name() {
        Ok(Some(segment)) if format == BinaryFormat::MachO => format!("{segment},{name}"),
        _ => name,
    }
}

fn permissions(permissions: object::Permissions) -> Permissions {
    Permissions {
        read: permissions.readable(),
        write: permissions.writable(),
        execute: permissions.executable(),
    }
}

/// A region whose file range is clamped to the bytes that exist.
fn region(
    name: String,
    address: u64,
    size: u64,
    file_range: Option<(u64, u64)>,
    permissions: Permissions,
    code: bool,
    data: &[u8],
) -> Region {
    let available = data.len() as u64;
    let file_range = file_range
        .filter(|&(offset, _)| offset < available)
        .map(|(offset, length)| (offset, length.min(available - offset).min(size)))
        .filter(|&(_, length)| length > 0);
    Region {
        segment: Segment {
            name,
            address: Address::new(address),
            size,
            file_offset: file_range.map(|(offset, _)| offset),
            file_size: file_range.map_or(0, |(_, length)| length),
            permissions,
        },
        code,
    }
}

fn found_name(raw: Cow<'_, str>, rank: u8) -> Option<FoundName> {
    if raw.is_empty() {
        return None;
    }
    let display = demangle(&raw).unwrap_or_else(|| raw.clone().into_owned());
    Some(FoundName {
        rank,
        name: ProcedureName {
            name: display,
            raw_name: raw.into_owned(),
        },
    })
}

fn collect_symbols(
    file: &object::File<'_>,
    elf: &ElfDetails,
    builder: &mut TableBuilder,
    executable: &dyn Fn(u64) -> bool,
) {
    let tables = [
        (file.symbols(), ProcedureSource::SymbolTable),
        (file.dynamic_symbols(), ProcedureSource::DynamicSymbols),
    ];
    for (symbols, source) in tables {
        for symbol in symbols {
            // `is_definition` leaves out ELF `STT_GNU_IFUNC` symbols, which are functions
            // (glibc's `strlen`, `memcpy`); any defined text symbol is one.
            let defined = symbol.is_definition()
                || (file.format() == BinaryFormat::Elf
                    && !symbol.is_undefined()
                    && !symbol.is_common());
            if symbol.kind() != SymbolKind::Text || !defined || !executable(symbol.address()) {
                continue;
            }
            let rank = match source {
                ProcedureSource::DynamicSymbols => RANK_DYNAMIC,
                _ if symbol.is_global() => RANK_GLOBAL,
                _ => RANK_LOCAL,
            };
            // A symbol of a non-default version is named with it (`memcpy@GLIBC_2.2.5`), so
            // that the bare name designates the default version, as the linker binds it.
            let compat = match source {
                ProcedureSource::DynamicSymbols => elf.compat_names.get(&symbol.index().0),
                _ => None,
            };
            let raw = match compat {
                Some(name) => Cow::Borrowed(name.as_str()),
                None => String::from_utf8_lossy(symbol.name_bytes().unwrap_or(b"")),
            };
            let size = Some(symbol.size());
            builder.add(symbol.address(), source, found_name(raw, rank), size);
        }
    }
}

fn collect_exports(
    file: &object::File<'_>,
    data: &[u8],
    kind: FileKind,
    elf: &ElfDetails,
    builder: &mut TableBuilder,
    executable: &dyn Fn(u64) -> bool,
) {
    if matches!(kind, FileKind::Pe32 | FileKind::Pe64) {
        // Entry by entry: a malformed forwarder drops only itself.
        for export in super::pe::exports(data, kind) {
            if executable(export.address) {
                let name = export
                    .name
                    .and_then(|name| found_name(Cow::Owned(name), RANK_EXPORT));
                builder.add(export.address, ProcedureSource::Exports, name, None);
            }
        }
        return;
    }
    let Ok(exports) = file.exports() else { return };
    for export in exports.map_while(Result::ok) {
        let object::ExportTarget::Address { address } = export.target() else {
            continue;
        };
        if !executable(address) {
            continue;
        }
        let name = match export.name() {
            object::NameOrOrdinal::Name(bytes) => {
                let raw = String::from_utf8_lossy(bytes);
                let raw = match elf.compat_exports.get(&(address, raw.clone().into_owned())) {
                    Some(versioned) => Cow::Owned(versioned.clone()),
                    None => raw,
                };
                found_name(raw, RANK_EXPORT)
            }
            object::NameOrOrdinal::Ordinal(_) => None,
        };
        builder.add(address, ProcedureSource::Exports, name, None);
    }
}

/// An ELF image without section headers: the dynamic symbols through `PT_DYNAMIC`, the
/// unwind table through `PT_GNU_EH_FRAME`, and the undefined dynamic symbols as imports.
fn collect_sectionless(
    file: &object::File<'_>,
    data: &[u8],
    kind: FileKind,
    elf: &mut ElfDetails,
    builder: &mut TableBuilder,
    executable: &dyn Fn(u64) -> bool,
) {
    let found = super::elf::sectionless(data, kind);
    for (address, size, raw) in found.functions {
        if executable(address) {
            let name = found_name(Cow::Owned(raw), RANK_DYNAMIC);
            builder.add(address, ProcedureSource::DynamicSymbols, name, Some(size));
        }
    }
    if let Some((address, range)) = found.eh_frame {
        let layout = FrameLayout {
            section_address: address,
            little_endian: file.is_little_endian(),
            address_size: if file.is_64() { 8 } else { 4 },
        };
        for start in fde_starts(&data[range], layout) {
            if executable(start.address) {
                builder.add(
                    start.address,
                    ProcedureSource::UnwindTable,
                    None,
                    start.size,
                );
            }
        }
    }
    elf.imports.extend(
        found
            .undefined
            .into_iter()
            .map(|name| super::elf::ElfImport {
                name,
                version: None,
                library: None,
                stub: None,
                slot: None,
            }),
    );
}

/// A PE without `.pdata` entries: the entry point, and the direct call targets found from it
/// and the exports (see [`super::analysis::call_targets`]); import thunks and slots are not
/// procedures.
fn collect_call_targets(
    file: &object::File<'_>,
    data: &[u8],
    kind: FileKind,
    regions: &[Region],
    imports: &[Import],
    builder: &mut TableBuilder,
) {
    let Some(isa) = Isa::of(file) else {
        return;
    };
    let entry = file.entry();
    let mut known: Vec<u64> = super::pe::exports(data, kind)
        .iter()
        .map(|export| export.address)
        .collect();
    let import_addresses: HashSet<u64> = imports
        .iter()
        .flat_map(|import| [import.stub, import.slot])
        .flatten()
        .map(|address| address.value())
        .collect();
    let executable = |address: u64| {
        regions.iter().any(|region| {
            region.segment.permissions.execute
                && address
                    .checked_sub(region.segment.address.value())
                    .is_some_and(|offset| offset < region.segment.file_size)
        })
    };
    if entry != 0 && executable(entry) && !import_addresses.contains(&entry) {
        builder.add(entry, ProcedureSource::EntryPoint, None, None);
        known.push(entry);
    }
    let excluded = |address: u64| import_addresses.contains(&address);
    for address in call_targets(isa, data, regions, &known, &excluded) {
        builder.add(address, ProcedureSource::CallTargets, None, None);
    }
}

/// Adds the starts of unwind and function-start tables; returns how many there were.
fn collect_unwind_starts(
    file: &object::File<'_>,
    data: &[u8],
    kind: FileKind,
    builder: &mut TableBuilder,
    executable: &dyn Fn(u64) -> bool,
) -> usize {
    let mut count = 0;
    let mut add = |address: u64, source: ProcedureSource, size: Option<u64>| {
        count += 1;
        if executable(address) {
            builder.add(address, source, None, size);
        }
    };
    for section in file.sections() {
        let name = section.name_bytes().unwrap_or(b"");
        if name != b".eh_frame" && name != b"__eh_frame" {
            continue;
        }
        let Ok(bytes) = section.data() else { continue };
        let layout = FrameLayout {
            section_address: section.address(),
            little_endian: file.is_little_endian(),
            address_size: if file.is_64() { 8 } else { 4 },
        };
        for start in fde_starts(bytes, layout) {
            add(start.address, ProcedureSource::UnwindTable, start.size);
        }
    }
    for start in macho_function_starts(data, kind) {
        add(start, ProcedureSource::FunctionStarts, None);
    }
    for start in pe_runtime_functions(data, kind) {
        add(start.address, ProcedureSource::UnwindTable, start.size);
    }
    count
}
