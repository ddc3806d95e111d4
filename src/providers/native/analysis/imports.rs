//! What the dynamic relocations of an ELF file say: the import slots (GOT entries) the code
//! calls through, named by their symbol, the pointers the loader writes (`RELATIVE`), and,
//! for a position-independent file, where any pointer in its data can be at all.

use std::collections::HashMap;

use object::read::elf::SectionHeader;
use object::{
    Object, ObjectSection, ObjectSymbol, ObjectSymbolTable, RelocationFlags, RelocationTarget, elf,
};

/// Import slots and loader-written pointers of one image.
#[derive(Default)]
pub(super) struct Relocated {
    /// Slot address to imported symbol name.
    pub(super) slots: HashMap<u64, String>,
    /// (address of the pointer, value the loader writes there).
    pub(super) pointers: Vec<(u64, u64)>,
    /// Where the loader writes anything, when that is the only place a pointer can be: a
    /// position-independent ELF file whose dynamic relocations are all in `REL` or `RELA`
    /// sections. A word elsewhere that happens to hold an address (a table of integers in a
    /// small program) is then not a pointer. `None` when any word may be one (a file loaded
    /// at a fixed address, one without section headers, packed `RELR` relocations). Sorted
    /// and distinct (8 bytes a relocation: a set would hold twice that while analysing).
    pub(super) sites: Option<Vec<u64>>,
}

/// The import slots and `RELATIVE` pointers of an ELF file; empty for other formats.
pub(super) fn relocated(
    file: &object::File<'_>,
    read: &dyn Fn(u64, usize) -> Option<u64>,
) -> Relocated {
    let mut found = Relocated::default();
    let Some(relocations) = file.dynamic_relocations() else {
        return found;
    };
    let mut sites = Vec::new();
    let symbols = file.dynamic_symbol_table();
    let machine = file.architecture();
    let pointer_size = if file.is_64() { 8 } else { 4 };
    for (offset, relocation) in relocations {
        sites.push(offset);
        let RelocationFlags::Elf { r_type } = relocation.flags() else {
            continue;
        };
        match classify(machine, r_type) {
            Some(Kind::Slot) => {
                let RelocationTarget::Symbol(index) = relocation.target() else {
                    continue;
                };
                let name = symbols
                    .as_ref()
                    .and_then(|table| table.symbol_by_index(index).ok())
                    .and_then(|symbol| symbol.name().ok().map(str::to_owned))
                    .filter(|name| !name.is_empty());
                if let Some(name) = name {
                    found.slots.insert(offset, name);
                }
            }
            Some(Kind::Relative) => {
                let value = if relocation.has_implicit_addend() {
                    read(offset, pointer_size)
                } else {
                    Some(relocation.addend() as u64)
                };
                if let Some(value) = value {
                    found.pointers.push((offset, value));
                }
            }
            None => {}
        }
    }
    let relocatable = file.kind() == object::ObjectKind::Dynamic;
    if relocatable && !sites.is_empty() && !has_packed_relocations(file) {
        sites.sort_unstable();
        sites.dedup();
        found.sites = Some(sites);
    }
    found
}

/// Whether an ELF file has relocations that [`object::Object::dynamic_relocations`] does
/// not list: `SHT_RELR` (packed relative) or `SHT_CREL` (compact) sections.
fn has_packed_relocations(file: &object::File<'_>) -> bool {
    let packed = |kind: elf::SectionType| kind == elf::SHT_RELR || kind == elf::SHT_CREL;
    match file {
        object::File::Elf64(elf) => {
            let endian = elf.endian();
            (elf.elf_section_table().iter()).any(|header| packed(header.sh_type(endian)))
        }
        object::File::Elf32(elf) => {
            let endian = elf.endian();
            (elf.elf_section_table().iter()).any(|header| packed(header.sh_type(endian)))
        }
        _ => false,
    }
}

enum Kind {
    Slot,
    Relative,
}

fn classify(machine: object::Architecture, r_type: elf::RelocationType) -> Option<Kind> {
    use object::Architecture as A;
    match (machine, r_type) {
        (A::X86_64 | A::X86_64_X32, elf::R_X86_64_JUMP_SLOT | elf::R_X86_64_GLOB_DAT) => {
            Some(Kind::Slot)
        }
        (A::X86_64 | A::X86_64_X32, elf::R_X86_64_RELATIVE) => Some(Kind::Relative),
        (A::I386, elf::R_386_JMP_SLOT | elf::R_386_GLOB_DAT) => Some(Kind::Slot),
        (A::I386, elf::R_386_RELATIVE) => Some(Kind::Relative),
        (A::Aarch64, elf::R_AARCH64_JUMP_SLOT | elf::R_AARCH64_GLOB_DAT) => Some(Kind::Slot),
        (A::Aarch64, elf::R_AARCH64_RELATIVE) => Some(Kind::Relative),
        _ => None,
    }
}

/// The names of the ELF sections that hold PLT stubs, with their entry sizes (16 when the
/// section header does not say).
pub(super) fn stub_sections(file: &object::File<'_>) -> Vec<(String, u64)> {
    let entry_size = |name: &[u8]| -> Option<u64> {
        match file {
            object::File::Elf64(elf) => {
                let endian = elf.endian();
                let header = elf.elf_section_table().section_by_name(endian, name)?.1;
                Some(header.sh_entsize(endian))
            }
            object::File::Elf32(elf) => {
                let endian = elf.endian();
                let header = elf.elf_section_table().section_by_name(endian, name)?.1;
                Some(u64::from(header.sh_entsize(endian)))
            }
            _ => None,
        }
    };
    file.sections()
        .filter_map(|section| {
            let name = section.name().ok()?;
            if !matches!(name, ".plt" | ".plt.sec" | ".plt.got") {
                return None;
            }
            let size = entry_size(name.as_bytes())
                .filter(|&size| (4..=64).contains(&size))
                .unwrap_or(16);
            Some((name.to_owned(), size))
        })
        .collect()
}
