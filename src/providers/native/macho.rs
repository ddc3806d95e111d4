//! Mach-O details the generic `object` interface does not give: segment permissions from
//! `initprot` (what is mapped, not the `maxprot` ceiling) and the imported symbols with their
//! dylib ordinal, `__stubs` entry and lazy or non-lazy pointer.

use std::collections::HashMap;

use object::macho;
use object::read::macho::{LoadCommandVariant, MachHeader, MachOFile, Nlist, Section, Segment};
use object::{Endianness, FileKind, Object};

use crate::session::Permissions;

/// One undefined external symbol.
pub(crate) struct MachOImport {
    /// The raw symbol name (with the leading underscore of C names).
    pub(crate) name: String,
    /// The library ordinal of the two-level namespace (1 is the first `LC_LOAD_DYLIB`).
    pub(crate) ordinal: u32,
    /// The install name of that dylib, when the ordinal names one.
    pub(crate) library: Option<String>,
    /// The first `__stubs` entry for the symbol.
    pub(crate) stub: Option<u64>,
    /// The first lazy or non-lazy pointer for the symbol.
    pub(crate) slot: Option<u64>,
}

/// Segment name and its `initprot` permissions, per segment.
pub(crate) fn segment_permissions(data: &[u8], kind: FileKind) -> Vec<(String, Permissions)> {
    fn read<Mach: MachHeader<Endian = Endianness>>(data: &[u8]) -> Vec<(String, Permissions)> {
        let Ok(file) = MachOFile::<Mach, &[u8]>::parse(data) else {
            return Vec::new();
        };
        let endian = file.endian();
        let mut found = Vec::new();
        let Ok(mut commands) = file.macho_load_commands() else {
            return found;
        };
        while let Ok(Some(command)) = commands.next() {
            let Ok(Some((segment, _))) = Mach::Segment::from_command(command) else {
                continue;
            };
            let protection = segment.initprot(endian);
            let name = String::from_utf8_lossy(segment.name()).into_owned();
            found.push((
                name,
                Permissions {
                    read: protection.contains(macho::VM_PROT_READ),
                    write: protection.contains(macho::VM_PROT_WRITE),
                    execute: protection.contains(macho::VM_PROT_EXECUTE),
                },
            ));
        }
        found
    }
    match kind {
        FileKind::MachO32 => read::<macho::MachHeader32<Endianness>>(data),
        FileKind::MachO64 => read::<macho::MachHeader64<Endianness>>(data),
        _ => Vec::new(),
    }
}

/// The imported symbols, in symbol-table order.
pub(crate) fn imports(data: &[u8], kind: FileKind) -> Vec<MachOImport> {
    match kind {
        FileKind::MachO32 => read_imports::<macho::MachHeader32<Endianness>>(data),
        FileKind::MachO64 => read_imports::<macho::MachHeader64<Endianness>>(data),
        _ => None,
    }
    .unwrap_or_default()
}

fn read_imports<Mach: MachHeader<Endian = Endianness>>(data: &[u8]) -> Option<Vec<MachOImport>> {
    let file = MachOFile::<Mach, &[u8]>::parse(data).ok()?;
    let endian = file.endian();
    let symbols = file.macho_symbol_table();
    let mut libraries: Vec<String> = Vec::new();
    let mut indirect: &[object::U32<Endianness>] = &[];
    let mut commands = file.macho_load_commands().ok()?;
    while let Ok(Some(command)) = commands.next() {
        match command.variant() {
            Ok(LoadCommandVariant::Dylib(dylib)) => {
                let name = command.string(endian, dylib.dylib.name).unwrap_or(b"");
                libraries.push(String::from_utf8_lossy(name).into_owned());
            }
            Ok(LoadCommandVariant::Dysymtab(dysymtab)) => {
                let offset = u64::from(dysymtab.indirectsymoff.get(endian));
                let count = dysymtab.nindirectsyms.get(endian) as usize;
                indirect = object::ReadRef::read_slice_at(data, offset, count).unwrap_or(&[]);
            }
            _ => {}
        }
    }
    // Stub and pointer addresses per symbol index, through the indirect symbol table.
    let mut stubs: HashMap<u32, u64> = HashMap::new();
    let mut slots: HashMap<u32, u64> = HashMap::new();
    for section in file.sections() {
        let raw = section.macho_section();
        let kind = raw.flags(endian).typ();
        let entry_size: u64 =
            match kind {
                macho::S_SYMBOL_STUBS => u64::from(raw.reserved2(endian)),
                macho::S_LAZY_SYMBOL_POINTERS | macho::S_NON_LAZY_SYMBOL_POINTERS => {
                    if file.is_64() { 8 } else { 4 }
                }
                _ => continue,
            };
        if entry_size == 0 {
            continue;
        }
        let address: u64 = raw.addr(endian).into();
        let size: u64 = raw.size(endian).into();
        let first = raw.reserved1(endian) as usize;
        let map = if kind == macho::S_SYMBOL_STUBS {
            &mut stubs
        } else {
            &mut slots
        };
        for entry in 0..size / entry_size {
            let Some(symbol) = indirect.get(first.saturating_add(entry as usize)) else {
                break;
            };
            let symbol = symbol.get(endian);
            if symbol & (macho::INDIRECT_SYMBOL_LOCAL.0 | macho::INDIRECT_SYMBOL_ABS.0) == 0 {
                map.entry(symbol).or_insert(address + entry * entry_size);
            }
        }
    }
    let strings = symbols.strings();
    let mut imports = Vec::new();
    for (index, symbol) in symbols.iter().enumerate() {
        // Not a debugging entry, undefined, external.
        let n_type = symbol.n_type().0;
        if n_type & 0xe0 != 0 || n_type & 0x0e != 0 || n_type & 0x01 == 0 {
            continue;
        }
        let Ok(name) = symbol.name(endian, strings) else {
            continue;
        };
        if name.is_empty() {
            continue;
        }
        let ordinal = u32::from(symbol.n_desc(endian).0 >> 8);
        let index = index as u32;
        imports.push(MachOImport {
            name: String::from_utf8_lossy(name).into_owned(),
            ordinal,
            library: (ordinal as usize)
                .checked_sub(1)
                .and_then(|i| libraries.get(i))
                .cloned(),
            stub: stubs.get(&index).copied(),
            slot: slots.get(&index).copied(),
        });
    }
    Some(imports)
}
