//! ELF dynamic linking details the generic `object` interface does not give: symbol versions
//! (`memcpy@GLIBC_2.2.5` beside the default `memcpy@@GLIBC_2.14`), named PLT stubs
//! (`printf@plt`, as `objdump -d` labels them) and the imported symbols with their GOT slots.

use std::collections::HashMap;

use object::elf;
use object::read::elf::{ElfFile, FileHeader, Rel, Rela, SectionHeader, Sym};
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
        for (offset, slot) in plt_jumps(machine, bytes, address) {
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

/// `(offset, slot)` of each PLT entry of `bytes` (at `address`) that jumps through a slot.
fn plt_jumps(machine: u16, bytes: &[u8], address: u64) -> Vec<(u64, u64)> {
    let mut jumps = Vec::new();
    match machine {
        EM_X86_64 | EM_386 => {
            // Entries are 8 or 16 bytes; a jump through memory may follow `endbr64`/`endbr32`
            // and a `bnd` prefix: `ff 25 <disp32>` (RIP-relative on x86-64, absolute on x86).
            for start in (0..bytes.len()).step_by(8) {
                let mut at = start;
                if bytes.get(at..at + 3) == Some(&[0xf3, 0x0f, 0x1e][..]) {
                    at += 4;
                }
                if bytes.get(at) == Some(&0xf2) {
                    at += 1;
                }
                if bytes.get(at..at + 2) != Some(&[0xff, 0x25][..]) {
                    continue;
                }
                let Some(field) = bytes.get(at + 2..at + 6) else {
                    continue;
                };
                let field = i32::from_le_bytes([field[0], field[1], field[2], field[3]]);
                let slot = if machine == EM_X86_64 {
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
