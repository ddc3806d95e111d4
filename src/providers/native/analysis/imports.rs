//! What the dynamic relocations of an ELF file say: the import slots (GOT entries) the code
//! calls through, named by their symbol, the pointers the loader writes (`RELATIVE`), and,
//! for a position-independent file, where any pointer in its data can be at all (its `REL`
//! and `RELA` relocations and its packed `RELR` ones).

use std::collections::HashMap;

use object::read::elf::{ElfFile, FileHeader, SectionHeader};
use object::{
    Object, ObjectSection, ObjectSymbol, ObjectSymbolTable, RelocationFlags, RelocationTarget,
    SymbolFlags, elf,
};

/// Import slots and loader-written pointers of one image.
#[derive(Default)]
pub(super) struct Relocated {
    /// Slot address to imported symbol name.
    pub(super) slots: HashMap<u64, String>,
    /// Slot address to the function the file itself defines under the slot's symbol (an
    /// exported function its own code calls through the PLT: a library built without hidden
    /// visibility).
    pub(super) definitions: HashMap<u64, u64>,
    /// (address of the pointer, value the loader writes there).
    pub(super) pointers: Vec<(u64, u64)>,
    /// Where the loader writes anything, when that is the only place a pointer can be: a
    /// position-independent ELF file whose dynamic relocations are all in `REL`, `RELA` or
    /// `RELR` sections. A word elsewhere that happens to hold an address (a table of integers
    /// in a small program) is then not a pointer. `None` when any word may be one (a file
    /// loaded at a fixed address, one without section headers, compact `CREL` relocations, a
    /// `RELR` section that cannot be read). Sorted and distinct (8 bytes a relocation: a set
    /// would hold twice that while analysing).
    pub(super) sites: Option<Vec<u64>>,
    /// Whether the file is position-independent and all its relocations were read: then
    /// the loader writes only where a relocation says (`sites`; none when it has none).
    pub(super) position_independent: bool,
}

/// The import slots and `RELATIVE` pointers of an ELF file; empty for other formats.
/// `image_words` (the words the file's image holds) bounds the relocation sites kept.
pub(super) fn relocated(
    file: &object::File<'_>,
    read: &dyn Fn(u64, usize) -> Option<u64>,
    image_words: usize,
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
                let symbol = (symbols.as_ref()).and_then(|table| table.symbol_by_index(index).ok());
                let name = (symbol.as_ref())
                    .and_then(|symbol| symbol.name().ok().map(str::to_owned))
                    .filter(|name| !name.is_empty());
                if let Some(name) = name {
                    found.slots.insert(offset, name);
                }
                // A function, not an IFUNC (whose address is its resolver's).
                let defined_function = symbol.filter(|symbol| {
                    symbol.is_definition()
                        && matches!(symbol.flags(), SymbolFlags::Elf { st_info, .. } if st_info.st_type() == elf::STT_FUNC)
                });
                if let Some(symbol) = defined_function {
                    found.definitions.insert(offset, symbol.address());
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
    // Only a position-independent file has its every pointer written by the loader.
    if file.kind() != object::ObjectKind::Dynamic {
        return found;
    }
    let packed = match file {
        object::File::Elf64(elf) => packed_sites(elf, image_words),
        object::File::Elf32(elf) => packed_sites(elf, image_words),
        _ => None,
    };
    if let Some(packed) = packed {
        found.position_independent = true;
        // The packed sites are `RELATIVE` pointers whose value is the word itself: the data
        // scan reads them, so they only need to be known as sites.
        sites.extend(packed);
        if !sites.is_empty() {
            sites.sort_unstable();
            sites.dedup();
            found.sites = Some(sites);
        }
    }
    found
}

/// The sites of an ELF file's packed relative relocations (`SHT_RELR`), which
/// [`object::Object::dynamic_relocations`] does not list. `None` when the file has
/// relocations this does not read either (`SHT_CREL`), a `SHT_RELR` section that cannot be
/// read, or more packed sites than `limit`: a bit mask can name 63 words, so a malformed file
/// repeating its masks could otherwise make the list many times larger than the file.
fn packed_sites<Elf: FileHeader>(elf: &ElfFile<'_, Elf>, limit: usize) -> Option<Vec<u64>> {
    let endian = elf.endian();
    let mut sites = Vec::new();
    for header in elf.elf_section_table().iter() {
        match header.sh_type(endian) {
            elf::SHT_CREL => return None,
            elf::SHT_RELR => {
                let packed = header.relr(endian, elf.data()).ok()??;
                collect_bounded(packed.map(Into::into), &mut sites, limit)?;
            }
            _ => {}
        }
    }
    Some(sites)
}

/// Appends `sites` to `into`; `None` once `into` would hold more than `limit`.
fn collect_bounded(
    sites: impl Iterator<Item = u64>,
    into: &mut Vec<u64>,
    limit: usize,
) -> Option<()> {
    for site in sites {
        if into.len() >= limit {
            return None;
        }
        into.push(site);
    }
    Some(())
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

#[cfg(test)]
mod tests {
    use object::LittleEndian;
    use object::elf::{FileHeader64, Relr64};
    use object::read::elf::RelrIterator;

    use super::collect_bounded;

    fn relr(words: &[u64]) -> Vec<Relr64<LittleEndian>> {
        words.iter().map(|&word| Relr64(word.into())).collect()
    }

    #[test]
    fn packed_sites_are_an_address_then_the_words_a_mask_names() {
        // 0x1000, then bits 1 and 3 of the mask: the 1st and 3rd words after it.
        let entries = relr(&[0x1000, 0b1011]);
        let mut sites = Vec::new();
        let packed = RelrIterator::<FileHeader64<LittleEndian>>::new(LittleEndian, &entries);
        assert_eq!(collect_bounded(packed, &mut sites, 10), Some(()));
        assert_eq!(sites, [0x1000, 0x1008, 0x1018]);
    }

    #[test]
    fn masks_repeated_past_the_limit_give_up_rather_than_grow() {
        // Each all-ones mask names 63 words: 1,000 of them would name 63,000 sites.
        let mut words = vec![0x1000];
        words.extend([u64::MAX; 1_000]);
        let entries = relr(&words);
        let mut sites = Vec::new();
        let packed = RelrIterator::<FileHeader64<LittleEndian>>::new(LittleEndian, &entries);
        assert_eq!(collect_bounded(packed, &mut sites, 5_000), None);
        assert_eq!(sites.len(), 5_000);
    }
}
