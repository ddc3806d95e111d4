//! ELF dynamic linking details the generic `object` interface does not give: symbol versions
//! (`memcpy@GLIBC_2.2.5` beside the default `memcpy@@GLIBC_2.14`), named PLT stubs
//! (`printf@plt`, as `objdump -d` labels them) and the imported symbols with their GOT slots.

use std::collections::HashMap;
use std::ops::Range;

use object::elf;
use object::read::elf::{Dyn, ElfFile, FileHeader, ProgramHeader, Rel, Rela, SectionHeader, Sym};
use object::{Endianness, FileKind};

const EM_386: u16 = elf::EM_386.0;
const EM_X86_64: u16 = elf::EM_X86_64.0;
const EM_AARCH64: u16 = elf::EM_AARCH64.0;

/// One undefined dynamic symbol.
pub(crate) struct ElfImport {
    /// The symbol's name, without version.
    pub(crate) name: String,
    /// Its version requirement, e.g. `GLIBC_2.2.5`.
    pub(crate) version: Option<String>,
    /// The file of the version requirement (a `DT_NEEDED` library).
    pub(crate) library: Option<String>,
    /// The PLT stub that jumps through `slot`.
    pub(crate) stub: Option<u64>,
    /// The GOT entry of its `JUMP_SLOT` (else `GLOB_DAT`) relocation.
    pub(crate) slot: Option<u64>,
}

/// What [`read`] finds.
#[derive(Default)]
pub(crate) struct ElfDetails {
    /// Dynamic symbol index to the versioned name of a defined symbol whose version is not
    /// the default one (`memcpy@GLIBC_2.2.5`), as `nm -D` shows it.
    pub(crate) compat_names: HashMap<usize, String>,
    /// `(address, name)` of the same symbols, to rename the exports `object` derives from
    /// the dynamic symbol table (unless a default version has the same address and name).
    pub(crate) compat_exports: HashMap<(u64, String), String>,
    /// PLT stubs: address and raw name of the target symbol.
    pub(crate) stubs: Vec<(u64, String)>,
    /// Undefined dynamic symbols in symbol-table order.
    pub(crate) imports: Vec<ElfImport>,
}

/// Reads the details of an ELF image (empty for other kinds or unreadable tables).
pub(crate) fn read(data: &[u8], kind: FileKind) -> ElfDetails {
    match kind {
        FileKind::Elf32 => read_elf::<elf::FileHeader32<Endianness>>(data),
        FileKind::Elf64 => read_elf::<elf::FileHeader64<Endianness>>(data),
        _ => None,
    }
    .unwrap_or_default()
}

fn read_elf<Elf: FileHeader<Endian = Endianness>>(data: &[u8]) -> Option<ElfDetails> {
    let file = ElfFile::<Elf, &[u8]>::parse(data).ok()?;
    let endian = file.endian();
    let sections = file.elf_section_table();
    let dynamic = file.elf_dynamic_symbol_table();
    let strings = dynamic.strings();
    let versions = sections.versions(endian, data).ok().flatten();
    let machine = file.elf_header().e_machine(endian).0;
    let is_mips64el = file.elf_header().is_mips64el(endian);

    // GOT slots of the dynamic symbols, from the JUMP_SLOT and GLOB_DAT relocations.
    let (jump_slot, glob_dat, irelative) = match machine {
        EM_X86_64 => (
            elf::R_X86_64_JUMP_SLOT.0,
            elf::R_X86_64_GLOB_DAT.0,
            elf::R_X86_64_IRELATIVE.0,
        ),
        EM_386 => (
            elf::R_386_JMP_SLOT.0,
            elf::R_386_GLOB_DAT.0,
            elf::R_386_IRELATIVE.0,
        ),
        EM_AARCH64 => (
            elf::R_AARCH64_JUMP_SLOT.0,
            elf::R_AARCH64_GLOB_DAT.0,
            elf::R_AARCH64_IRELATIVE.0,
        ),
        _ => (u32::MAX, u32::MAX, u32::MAX),
    };
    let mut jump_slots: HashMap<usize, u64> = HashMap::new();
    let mut data_slots: HashMap<usize, u64> = HashMap::new();
    let mut slot_symbols: HashMap<u64, usize> = HashMap::new();
    // Slots of IRELATIVE relocations (local IFUNCs): objdump names their PLT entries after
    // the resolver's address, `*ABS*+0x9f550@plt`.
    let mut slot_resolvers: HashMap<u64, u64> = HashMap::new();
    let dynsym_index = dynamic.section().0;
    for section in sections.iter() {
        if dynsym_index == 0 || section.sh_link(endian) as usize != dynsym_index {
            continue;
        }
        let mut note = |offset: u64, symbol: u32, kind: u32, addend: Option<i64>| {
            if kind == irelative {
                if let Some(addend) = addend {
                    slot_resolvers.entry(offset).or_insert(addend as u64);
                }
                return;
            }
            let symbol = symbol as usize;
            if symbol == 0 {
                return;
            }
            let map = if kind == jump_slot {
                &mut jump_slots
            } else if kind == glob_dat {
                &mut data_slots
            } else {
                return;
            };
            map.entry(symbol).or_insert(offset);
            slot_symbols.entry(offset).or_insert(symbol);
        };
        match section.sh_type(endian) {
            elf::SHT_RELA => {
                let Ok(relocations) = section.data_as_array::<Elf::Rela, _>(endian, data) else {
                    continue;
                };
                for relocation in relocations {
                    note(
                        relocation.r_offset(endian).into(),
                        relocation.r_sym(endian, is_mips64el),
                        relocation.r_type(endian, is_mips64el).0,
                        Some(relocation.r_addend(endian).into()),
                    );
                }
            }
            elf::SHT_REL => {
                let Ok(relocations) = section.data_as_array::<Elf::Rel, _>(endian, data) else {
                    continue;
                };
                for relocation in relocations {
                    note(
                        relocation.r_offset(endian).into(),
                        relocation.r_sym(endian),
                        relocation.r_type(endian).0,
                        None,
                    );
                }
            }
            _ => {}
        }
    }

    let name_of = |index: usize| -> Option<String> {
        let symbol = dynamic.symbol(object::SymbolIndex(index)).ok()?;
        let name = symbol.name(endian, strings).ok()?;
        (!name.is_empty()).then(|| String::from_utf8_lossy(name).into_owned())
    };

    // x86 PIC entries jump relative to the GOT base in %ebx: `.got.plt`, else `.got`.
    let section_address = |wanted: &[u8]| {
        sections.iter().find_map(|section| {
            (sections.section_name(endian, section).ok()? == wanted)
                .then(|| section.sh_addr(endian).into())
        })
    };
    let got_base: Option<u64> = section_address(b".got.plt").or_else(|| section_address(b".got"));
    // PLT stubs: each entry jumps through a GOT slot; the slot's relocation names it.
    let mut stubs: Vec<(u64, usize)> = Vec::new();
    let mut resolver_stubs: Vec<(u64, String)> = Vec::new();
    for section in sections.iter() {
        let Ok(name) = sections.section_name(endian, section) else {
            continue;
        };
        if !matches!(name, b".plt" | b".plt.sec" | b".plt.got") {
            continue;
        }
        let Ok(bytes) = section.data(endian, data) else {
            continue;
        };
        let address: u64 = section.sh_addr(endian).into();
        for (offset, slot) in plt_jumps(machine, bytes, address, got_base) {
            if let Some(&symbol) = slot_symbols.get(&slot) {
                stubs.push((address + offset, symbol));
            } else if let Some(&resolver) = slot_resolvers.get(&slot) {
                resolver_stubs.push((address + offset, format!("*ABS*+{resolver:#x}")));
            }
        }
    }
    stubs.sort_unstable();
    stubs.dedup_by_key(|(address, _)| *address);
    let mut stub_of: HashMap<usize, u64> = HashMap::new();
    for &(address, symbol) in &stubs {
        stub_of.entry(symbol).or_insert(address);
    }

    let mut named_stubs: Vec<(u64, String)> = stubs
        .iter()
        .filter_map(|&(address, symbol)| Some((address, name_of(symbol)?)))
        .chain(resolver_stubs)
        .collect();
    named_stubs.sort();
    named_stubs.dedup_by_key(|(address, _)| *address);
    let mut details = ElfDetails {
        stubs: named_stubs,
        ..ElfDetails::default()
    };
    let mut defaults: Vec<(u64, String)> = Vec::new();
    for (index, symbol) in dynamic.enumerate() {
        let index = index.0;
        let Some(name) = name_of(index) else { continue };
        let version = versions.as_ref().and_then(|table| {
            let versym = table.version_index(endian, object::SymbolIndex(index));
            let version = table.version(versym.index()).ok().flatten()?;
            Some((
                String::from_utf8_lossy(version.name()).into_owned(),
                version
                    .file()
                    .map(|f| String::from_utf8_lossy(f).into_owned()),
                versym.is_hidden(),
            ))
        });
        if symbol.is_undefined(endian) {
            let slot = jump_slots
                .get(&index)
                .or_else(|| data_slots.get(&index))
                .copied();
            let (version, library) = match version {
                Some((version, library, _)) => (Some(version), library),
                None => (None, None),
            };
            details.imports.push(ElfImport {
                name,
                version,
                library,
                stub: stub_of.get(&index).copied(),
                slot,
            });
        } else if let Some((version, _, true)) = version {
            let versioned = format!("{name}@{version}");
            let address: u64 = symbol.st_value(endian).into();
            details.compat_names.insert(index, versioned.clone());
            details.compat_exports.insert((address, name), versioned);
        } else {
            defaults.push((symbol.st_value(endian).into(), name));
        }
    }
    for key in defaults {
        details.compat_exports.remove(&key);
    }
    Some(details)
}

/// `(offset, slot)` of each PLT entry of `bytes` (at `address`) that jumps through a slot;
/// `got_base` is what x86 PIC entries address relative to.
fn plt_jumps(machine: u16, bytes: &[u8], address: u64, got_base: Option<u64>) -> Vec<(u64, u64)> {
    let mut jumps = Vec::new();
    match machine {
        EM_X86_64 | EM_386 => {
            // Entries are 8 or 16 bytes; a jump through memory may follow `endbr64`/`endbr32`
            // and a `bnd` prefix: `ff 25 <disp32>` (RIP-relative on x86-64, absolute on x86)
            // or, in x86 PIC code, `ff a3 <disp32>` (relative to the GOT base in %ebx).
            for start in (0..bytes.len()).step_by(8) {
                let mut at = start;
                if bytes.get(at..at + 3) == Some(&[0xf3, 0x0f, 0x1e][..]) {
                    at += 4;
                }
                if bytes.get(at) == Some(&0xf2) {
                    at += 1;
                }
                let relative_to_got = match bytes.get(at..at + 2) {
                    Some([0xff, 0x25]) => false,
                    Some([0xff, 0xa3]) if machine == EM_386 => true,
                    _ => continue,
                };
                let Some(field) = bytes.get(at + 2..at + 6) else {
                    continue;
                };
                let field = i32::from_le_bytes([field[0], field[1], field[2], field[3]]);
                let slot = if relative_to_got {
                    let Some(base) = got_base else { continue };
                    base.wrapping_add_signed(i64::from(field))
                } else if machine == EM_X86_64 {
                    address
                        .wrapping_add((at + 6) as u64)
                        .wrapping_add_signed(i64::from(field))
                } else {
                    u64::from(field as u32)
                };
                jumps.push((start as u64, slot));
            }
        }
        EM_AARCH64 => {
            // `adrp x16, page; ldr x17, [x16, #offset]` (after an optional `bti c`).
            let word = |at: usize| {
                bytes
                    .get(at..at + 4)
                    .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            };
            let mut at = 0;
            while let (Some(first), Some(second)) = (word(at), word(at + 4)) {
                let is_adrp_x16 = first & 0x9f00_001f == 0x9000_0010;
                let is_ldr_x17 = second & 0xffc0_03ff == 0xf940_0211;
                if is_adrp_x16 && is_ldr_x17 {
                    let immediate = ((first >> 29) & 3) | (((first >> 5) & 0x7_ffff) << 2);
                    // Sign-extend the 21-bit page count.
                    let pages = (i64::from(immediate) << 43) >> 43;
                    let pc = address.wrapping_add(at as u64);
                    let page = (pc & !0xfff).wrapping_add_signed(pages << 12);
                    let slot = page.wrapping_add(u64::from((second >> 10) & 0xfff) * 8);
                    let start = if at >= 4 && word(at - 4) == Some(0xd503_245f) {
                        at - 4
                    } else {
                        at
                    };
                    jumps.push((start as u64, slot));
                    at += 16;
                } else {
                    at += 4;
                }
            }
        }
        _ => {}
    }
    jumps
}

/// What an ELF image without section headers yields through its program headers.
#[derive(Default)]
pub(crate) struct Sectionless {
    /// Defined function symbols of the dynamic symbol table: address, size, raw name.
    pub(crate) functions: Vec<(u64, u64, String)>,
    /// Names of the undefined dynamic symbols, in table order.
    pub(crate) undefined: Vec<String>,
    /// The `.eh_frame` bytes found through `PT_GNU_EH_FRAME`, with their address.
    pub(crate) eh_frame: Option<(u64, Range<usize>)>,
}

/// Most dynamic symbols read through `PT_DYNAMIC` (a bound on a corrupt hash table's count).
const MAX_DYNAMIC_SYMBOLS: usize = 1 << 20;

/// Reads the dynamic symbol table through `PT_DYNAMIC` (`DT_SYMTAB`, `DT_STRTAB`, and
/// `DT_HASH` or `DT_GNU_HASH` for the count) and locates `.eh_frame` through
/// `PT_GNU_EH_FRAME`, for an ELF image whose section headers are gone.
pub(crate) fn sectionless(data: &[u8], kind: FileKind) -> Sectionless {
    match kind {
        FileKind::Elf32 => read_sectionless::<elf::FileHeader32<Endianness>>(data),
        FileKind::Elf64 => read_sectionless::<elf::FileHeader64<Endianness>>(data),
        _ => None,
    }
    .unwrap_or_default()
}

fn read_sectionless<Elf: FileHeader<Endian = Endianness>>(data: &[u8]) -> Option<Sectionless> {
    let header = Elf::parse(data).ok()?;
    let endian = header.endian().ok()?;
    let segments = header.program_headers(endian, data).ok()?;
    // File offset of a virtual address, and the file bytes left in its segment.
    let offset_of = |address: u64| -> Option<Range<usize>> {
        segments.iter().find_map(|segment| {
            if segment.p_type(endian) != elf::PT_LOAD {
                return None;
            }
            let start: u64 = segment.p_vaddr(endian).into();
            let file_size: u64 = segment.p_filesz(endian).into();
            let delta = address.checked_sub(start).filter(|&d| d < file_size)?;
            let offset: u64 = segment.p_offset(endian).into();
            let begin = usize::try_from(offset.checked_add(delta)?).ok()?;
            let end = usize::try_from(offset.checked_add(file_size)?).ok()?;
            (begin <= end && end <= data.len()).then_some(begin..end)
        })
    };
    let mut found = Sectionless::default();

    if let Some(header) = segments
        .iter()
        .find(|segment| segment.p_type(endian) == elf::PT_GNU_EH_FRAME)
    {
        let address: u64 = header.p_vaddr(endian).into();
        if let Some(range) = offset_of(address) {
            let bytes = &data[range];
            // version, eh_frame_ptr encoding, then the encoded pointer at offset 4.
            if bytes.len() >= 8 && bytes[0] == 1 {
                let field = bytes.get(4..12).unwrap_or(&bytes[4..8]);
                let pointer = match bytes[1] {
                    // DW_EH_PE_pcrel | DW_EH_PE_sdata4, what linkers write.
                    0x1b => {
                        let raw = read_u32(field, header_little_endian(data))?;
                        Some((address + 4).wrapping_add_signed(i64::from(raw as i32)))
                    }
                    // DW_EH_PE_udata4 / DW_EH_PE_udata8 (absolute).
                    0x03 => read_u32(field, header_little_endian(data)).map(u64::from),
                    0x04 => read_u64(field, header_little_endian(data)),
                    _ => None,
                };
                if let Some(eh_frame) = pointer {
                    found.eh_frame = offset_of(eh_frame).map(|range| (eh_frame, range));
                }
            }
        }
    }

    let dynamic = segments
        .iter()
        .find_map(|segment| segment.dynamic(endian, data).ok().flatten());
    let Some(dynamic) = dynamic else {
        return Some(found);
    };
    let mut symtab = None;
    let mut strtab = None;
    let mut strsz = None;
    let mut hash = None;
    let mut gnu_hash = None;
    let mut versym = None;
    let mut verdef = None;
    let mut verdef_count = 0u64;
    for entry in dynamic {
        let value: u64 = entry.d_val(endian).into();
        match entry.d_tag(endian) {
            elf::DT_NULL => break,
            elf::DT_SYMTAB => symtab = Some(value),
            elf::DT_STRTAB => strtab = Some(value),
            elf::DT_STRSZ => strsz = Some(value),
            elf::DT_HASH => hash = Some(value),
            elf::DT_GNU_HASH => gnu_hash = Some(value),
            elf::DT_VERSYM => versym = Some(value),
            elf::DT_VERDEF => verdef = Some(value),
            elf::DT_VERDEFNUM => verdef_count = value,
            _ => {}
        }
    }
    let (Some(symtab), Some(strtab)) = (symtab, strtab) else {
        return Some(found);
    };
    let little = header_little_endian(data);
    let word_size = if header.is_type_64() { 8 } else { 4 };
    let count = match (hash, gnu_hash) {
        (Some(hash), _) => {
            let range = offset_of(hash)?;
            read_u32(data.get(range.start + 4..range.end)?, little).map(|n| n as usize)
        }
        (None, Some(gnu_hash)) => {
            let range = offset_of(gnu_hash)?;
            gnu_hash_count(&data[range], little, word_size)
        }
        (None, None) => None,
    }?
    .min(MAX_DYNAMIC_SYMBOLS);
    let symbols_range = offset_of(symtab)?;
    let strings_range = offset_of(strtab)?;
    let strings_end = match strsz.and_then(|size| usize::try_from(size).ok()) {
        Some(size) => strings_range
            .end
            .min(strings_range.start.saturating_add(size)),
        None => strings_range.end,
    };
    let strings = &data[strings_range.start..strings_end];
    let available = (symbols_range.end - symbols_range.start) / std::mem::size_of::<Elf::Sym>();
    let symbols: &[Elf::Sym] =
        object::pod::slice_from_bytes(&data[symbols_range], count.min(available))
            .ok()?
            .0;
    // Version definitions by index, for the names of non-default versions.
    let mut definitions: HashMap<u16, String> = HashMap::new();
    if let Some(range) = verdef.and_then(&offset_of) {
        let table = &data[range];
        let half = |at: usize| {
            let bytes: [u8; 2] = table.get(at..at + 2)?.try_into().ok()?;
            Some(if little {
                u16::from_le_bytes(bytes)
            } else {
                u16::from_be_bytes(bytes)
            })
        };
        let word = |at: usize| read_u32(table.get(at..)?, little);
        let mut at = 0usize;
        for _ in 0..verdef_count.min(u64::from(u16::MAX)) {
            let (Some(index), Some(aux), Some(next)) = (half(at + 4), word(at + 12), word(at + 16))
            else {
                break;
            };
            if let Some(name) = word(at + aux as usize)
                .and_then(|name| strings.get(name as usize..))
                .and_then(|rest| rest.split(|&b| b == 0).next())
            {
                definitions.insert(index, String::from_utf8_lossy(name).into_owned());
            }
            if next == 0 {
                break;
            }
            at = at.saturating_add(next as usize);
        }
    }
    let versions = versym.and_then(&offset_of).map(|range| &data[range]);
    let hidden_version = |index: usize| -> Option<&String> {
        let bytes: [u8; 2] = versions?.get(index * 2..index * 2 + 2)?.try_into().ok()?;
        let value = if little {
            u16::from_le_bytes(bytes)
        } else {
            u16::from_be_bytes(bytes)
        };
        // VERSYM_HIDDEN, then the version index.
        (value & 0x8000 != 0)
            .then(|| definitions.get(&(value & 0x7fff)))
            .flatten()
    };
    for (index, symbol) in symbols.iter().enumerate().skip(1) {
        let start = symbol.st_name(endian) as usize;
        let Some(name) = strings
            .get(start..)
            .and_then(|rest| rest.split(|&b| b == 0).next())
            .filter(|name| !name.is_empty())
        else {
            continue;
        };
        let name = String::from_utf8_lossy(name).into_owned();
        if symbol.st_shndx(endian) == elf::SHN_UNDEF {
            found.undefined.push(name);
        } else if matches!(symbol.st_type(), elf::STT_FUNC | elf::STT_GNU_IFUNC) {
            let name = match hidden_version(index) {
                Some(version) => format!("{name}@{version}"),
                None => name,
            };
            found.functions.push((
                symbol.st_value(endian).into(),
                symbol.st_size(endian).into(),
                name,
            ));
        }
    }
    Some(found)
}

fn header_little_endian(data: &[u8]) -> bool {
    // `e_ident[EI_DATA]`.
    data.get(5) != Some(&elf::ELFDATA2MSB.0)
}

fn read_u32(bytes: &[u8], little: bool) -> Option<u32> {
    let bytes: [u8; 4] = bytes.get(..4)?.try_into().ok()?;
    Some(if little {
        u32::from_le_bytes(bytes)
    } else {
        u32::from_be_bytes(bytes)
    })
}

fn read_u64(bytes: &[u8], little: bool) -> Option<u64> {
    let bytes: [u8; 8] = bytes.get(..8)?.try_into().ok()?;
    Some(if little {
        u64::from_le_bytes(bytes)
    } else {
        u64::from_be_bytes(bytes)
    })
}

/// The number of dynamic symbols a `DT_GNU_HASH` table covers: one past the last symbol of
/// the longest-indexed chain.
fn gnu_hash_count(table: &[u8], little: bool, word_size: usize) -> Option<usize> {
    let word = |index: usize| read_u32(table.get(index * 4..)?, little);
    let buckets = word(0)? as usize;
    let symbol_offset = word(1)? as usize;
    let bloom_words = word(2)? as usize;
    let buckets_start = 16usize.checked_add(bloom_words.checked_mul(word_size)?)?;
    let chains_start = buckets_start.checked_add(buckets.checked_mul(4)?)?;
    let at = |offset: usize| read_u32(table.get(offset..)?, little);
    let mut last = 0usize;
    for bucket in 0..buckets {
        last = last.max(at(buckets_start + bucket * 4)? as usize);
    }
    if last < symbol_offset {
        return Some(symbol_offset);
    }
    for _ in 0..MAX_DYNAMIC_SYMBOLS {
        let chain = at(chains_start.checked_add((last - symbol_offset).checked_mul(4)?)?)?;
        if chain & 1 != 0 {
            return Some(last + 1);
        }
        last += 1;
    }
    None
}
