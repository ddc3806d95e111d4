//! Generated programs with real code for the code-analysis tests, the fuzz seeds and the
//! benchmark: an x86-64 ELF executable with a lazy PLT stub for `printf` (`.plt`,
//! `.got.plt`, `.rela.plt`), a call through the import slot, a RIP-relative string operand,
//! a data pointer and a `RELATIVE`-relocated pointer; and an AArch64 ELF executable with
//! `bl`, `adrp` + `add` and `ret`. Written with `object::write::elf::Writer`; every address is
//! computed before the code that refers to it is assembled by hand.
use object::write::elf::{FileHeader, ProgramHeader, SectionHeader, Sym, Writer};
use object::{Endianness, elf};

/// Load address of the single `PT_LOAD` segment (file offset 0).
pub const BASE: u64 = 0x40_0000;

/// The string both programs refer to.
pub const GREETING: &str = "Hello from the analysis fixture";

/// Where things are in a generated program.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub bytes: Vec<u8>,
    pub main: u64,
    pub helper: u64,
    pub greeting: u64,
    /// x86-64 only: the `printf@plt` stub, its `.got.plt` slot, and the data pointers.
    pub printf_stub: u64,
    pub printf_slot: u64,
    pub data_pointer: u64,
    pub relocated_pointer: u64,
    /// Call instructions in `main`: (address, target).
    pub calls: Vec<(u64, u64)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Code,
    ReadOnly,
    Data,
    Rela,
}

struct Layout {
    name: &'static str,
    kind: Kind,
    size: usize,
    align: u64,
    entsize: u64,
}

/// Lays out the sections (and symbol tables) and writes the file; `fill` gets each section's
/// address by name and returns the contents of every section, in order.
#[allow(clippy::type_complexity)] // the callbacks take the address lookup; aliases lose its lifetime
fn write_elf(
    machine: elf::Machine,
    layouts: &[Layout],
    functions: &[(&str, u64, u64)],
    imports: &[&str],
    addresses: &mut dyn FnMut(&dyn Fn(&str) -> u64) -> Vec<Vec<u8>>,
    entry_of: &dyn Fn(&dyn Fn(&str) -> u64) -> u64,
) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut writer = Writer::new(Endianness::Little, true, &mut bytes);
    writer.reserve_file_header();
    writer.reserve_program_headers(1);
    let names: Vec<_> = layouts
        .iter()
        .map(|l| writer.add_section_name(l.name.as_bytes()))
        .collect();
    writer.reserve_null_section_index();
    let mut placed = Vec::new();
    for layout in layouts {
        let index = writer.reserve_section_index();
        let offset = writer.reserve(layout.size as u64, layout.align);
        placed.push((index, offset));
    }
    let text_index = placed[0].0;
    let symbol_names: Vec<_> = functions
        .iter()
        .map(|(name, _, _)| writer.add_string(name.as_bytes()))
        .collect();
    let import_names: Vec<_> = imports
        .iter()
        .map(|name| writer.add_dynamic_string(name.as_bytes()))
        .collect();
    writer.reserve_null_symbol_index();
    for _ in functions {
        writer.reserve_symbol_index(Some(text_index));
    }
    writer.reserve_symtab();
    writer.reserve_symtab_section_index();
    writer.reserve_strtab().unwrap();
    writer.reserve_strtab_section_index();
    writer.reserve_null_dynamic_symbol_index();
    for _ in imports {
        writer.reserve_dynamic_symbol_index();
    }
    let dynsym_offset = writer.reserve_dynsym();
    let dynsym_index = writer.reserve_dynsym_section_index();
    let dynstr_offset = writer.reserve_dynstr().unwrap();
    writer.reserve_dynstr_section_index();
    writer.reserve_shstrtab_section_index();
    writer.reserve_shstrtab().unwrap();
    writer.reserve_section_headers();
    let file_len = writer.reserved_len();

    let address = |name: &str| -> u64 {
        let index = layouts.iter().position(|l| l.name == name).unwrap();
        BASE + placed[index].1
    };
    let contents = addresses(&address);
    let entry = entry_of(&address);
    writer
        .write_file_header(&FileHeader {
            os_abi: elf::ELFOSABI_SYSV,
            abi_version: 0,
            e_type: elf::ET_EXEC,
            e_machine: machine,
            e_entry: entry,
            e_flags: elf::FileFlags(0),
        })
        .unwrap();
    writer.write_align_program_headers();
    writer.write_program_header(&ProgramHeader {
        p_type: elf::PT_LOAD,
        p_flags: elf::ProgramFlags(elf::PF_R.0 | elf::PF_W.0 | elf::PF_X.0),
        p_offset: 0,
        p_vaddr: BASE,
        p_paddr: BASE,
        p_filesz: file_len,
        p_memsz: file_len,
        p_align: 0x1000,
    });
    for (layout, content) in layouts.iter().zip(&contents) {
        assert_eq!(content.len(), layout.size, "size of {}", layout.name);
        writer.write_align(layout.align);
        writer.write(content);
    }
    writer.write_null_symbol();
    for ((_, value, size), name) in functions.iter().zip(&symbol_names) {
        let st_name = writer.string_offset(Some(*name));
        writer.write_symbol(&Sym {
            section: Some(text_index.0),
            st_name,
            st_info: elf::SymbolInfo::new(elf::STB_GLOBAL, elf::STT_FUNC),
            st_other: elf::SymbolOther(elf::STV_DEFAULT.0),
            st_shndx: elf::SymbolSection(0),
            st_value: *value,
            st_size: *size,
        });
    }
    writer.write_strtab();
    writer.write_null_dynamic_symbol();
    for name in &import_names {
        let st_name = writer.dynamic_string_offset(Some(*name));
        writer.write_dynamic_symbol(&Sym {
            section: None,
            st_name,
            st_info: elf::SymbolInfo::new(elf::STB_GLOBAL, elf::STT_FUNC),
            st_other: elf::SymbolOther(elf::STV_DEFAULT.0),
            st_shndx: elf::SymbolSection(0),
            st_value: 0,
            st_size: 0,
        });
    }
    writer.write_dynstr();
    writer.write_shstrtab();
    writer.write_null_section_header();
    for ((layout, name), (_, offset)) in layouts.iter().zip(&names).zip(&placed) {
        let alloc = elf::SHF_ALLOC.0;
        let (sh_type, flags, link, info) = match layout.kind {
            Kind::Code => (elf::SHT_PROGBITS, alloc | elf::SHF_EXECINSTR.0, 0, 0),
            Kind::ReadOnly => (elf::SHT_PROGBITS, alloc, 0, 0),
            Kind::Data => (elf::SHT_PROGBITS, alloc | elf::SHF_WRITE.0, 0, 0),
            Kind::Rela => (
                elf::SHT_RELA,
                alloc | elf::SHF_INFO_LINK.0,
                dynsym_index.0,
                0,
            ),
        };
        writer.write_section_header(&SectionHeader {
            sh_name: writer.section_name_offset(Some(*name)),
            sh_type: elf::SectionType(sh_type.0),
            sh_flags: elf::SectionFlags(flags),
            sh_addr: BASE + offset,
            sh_offset: *offset,
            sh_size: layout.size as u64,
            sh_link: link,
            sh_info: info,
            sh_addralign: layout.align,
            sh_entsize: layout.entsize,
        });
    }
    writer.write_symtab_section_header(1);
    writer.write_strtab_section_header();
    writer.write_dynsym_section_header(BASE + dynsym_offset, 1);
    writer.write_dynstr_section_header(BASE + dynstr_offset);
    writer.write_shstrtab_section_header();
    drop(writer);
    bytes
}

fn rel32(from_end: u64, to: u64) -> [u8; 4] {
    (to.wrapping_sub(from_end) as i64 as i32).to_le_bytes()
}

fn rela(offset: u64, symbol: u64, r_type: u32, addend: i64) -> Vec<u8> {
    [
        offset.to_le_bytes(),
        ((symbol << 32) | u64::from(r_type)).to_le_bytes(),
        addend.to_le_bytes(),
    ]
    .concat()
}

/// Size of the x86-64 `.text`: `helper` (16 bytes) then `main` (32 bytes).
const X86_TEXT: usize = 48;

/// The x86-64 program (see the module documentation).
pub fn x86_64() -> Program {
    let greeting = format!("{GREETING}\0").into_bytes();
    let layouts = [
        Layout {
            name: ".text",
            kind: Kind::Code,
            size: X86_TEXT,
            align: 16,
            entsize: 0,
        },
        Layout {
            name: ".plt",
            kind: Kind::Code,
            size: 32,
            align: 16,
            entsize: 16,
        },
        Layout {
            name: ".rodata",
            kind: Kind::ReadOnly,
            size: greeting.len(),
            align: 1,
            entsize: 0,
        },
        Layout {
            name: ".got.plt",
            kind: Kind::Data,
            size: 32,
            align: 8,
            entsize: 8,
        },
        Layout {
            name: ".data",
            kind: Kind::Data,
            size: 8,
            align: 8,
            entsize: 0,
        },
        Layout {
            name: ".data.rel.ro",
            kind: Kind::Data,
            size: 8,
            align: 8,
            entsize: 0,
        },
        Layout {
            name: ".rela.dyn",
            kind: Kind::Rela,
            size: 24,
            align: 8,
            entsize: 24,
        },
        Layout {
            name: ".rela.plt",
            kind: Kind::Rela,
            size: 24,
            align: 8,
            entsize: 24,
        },
    ];
    let mut program = Program::default();
    let functions_at = |text: u64| [("helper", text, 16u64), ("main", text + 16, 32u64)];
    let mut fill = |at: &dyn Fn(&str) -> u64| -> Vec<Vec<u8>> {
        let text = at(".text");
        let plt = at(".plt");
        let got = at(".got.plt");
        let string = at(".rodata");
        let (helper, main) = (text, text + 16);
        let stub = plt + 16;
        let slot = got + 24;
        let mut code = Vec::new();
        // helper: lea rax, [rip + greeting]; ret; int3 padding.
        code.extend([0x48, 0x8d, 0x05]);
        code.extend(rel32(helper + 7, string));
        code.push(0xc3);
        code.resize(16, 0xcc);
        // main: push rbx; call helper; lea rdi, [rip + greeting]; call printf@plt;
        // call [rip + slot]; test eax, eax; je +1; nop; pop rbx; ret; padding.
        let mut calls = Vec::new();
        code.push(0x53);
        calls.push((text + code.len() as u64, helper));
        code.push(0xe8);
        code.extend(rel32(text + code.len() as u64 + 4, helper));
        code.extend([0x48, 0x8d, 0x3d]);
        code.extend(rel32(text + code.len() as u64 + 4, string));
        calls.push((text + code.len() as u64, stub));
        code.push(0xe8);
        code.extend(rel32(text + code.len() as u64 + 4, stub));
        calls.push((text + code.len() as u64, slot));
        code.extend([0xff, 0x15]);
        code.extend(rel32(text + code.len() as u64 + 4, slot));
        code.extend([0x85, 0xc0, 0x74, 0x01, 0x90, 0x5b, 0xc3]);
        code.resize(X86_TEXT, 0xcc);
        // PLT0: push [rip + got+8]; jmp [rip + got+16]; nop dword [rax+0].
        let mut plt_code = vec![0xff, 0x35];
        plt_code.extend(rel32(plt + 6, got + 8));
        plt_code.extend([0xff, 0x25]);
        plt_code.extend(rel32(plt + 12, got + 16));
        plt_code.extend([0x0f, 0x1f, 0x40, 0x00]);
        // PLT1: jmp [rip + slot]; push 0; jmp PLT0.
        plt_code.extend([0xff, 0x25]);
        plt_code.extend(rel32(stub + 6, slot));
        plt_code.extend([0x68, 0, 0, 0, 0, 0xe9]);
        plt_code.extend(rel32(stub + 16, plt));
        let mut got_plt = vec![0u8; 24];
        got_plt.extend((stub + 6).to_le_bytes());
        program = Program {
            main,
            helper,
            greeting: string,
            printf_stub: stub,
            printf_slot: slot,
            data_pointer: at(".data"),
            relocated_pointer: at(".data.rel.ro"),
            calls,
            ..Program::default()
        };
        vec![
            code,
            plt_code,
            greeting.clone(),
            got_plt,
            helper.to_le_bytes().to_vec(),
            vec![0; 8],
            rela(
                at(".data.rel.ro"),
                0,
                elf::R_X86_64_RELATIVE.0,
                string as i64,
            ),
            rela(slot, 1, elf::R_X86_64_JUMP_SLOT.0, 0),
        ]
    };
    let text_at = |at: &dyn Fn(&str) -> u64| at(".text") + 16;
    let bytes = {
        let text_probe = std::cell::Cell::new(0);
        let functions_placeholder = functions_at(0);
        // Symbol values need the text address, which the layout fixes: lay out once to learn
        // it (the layout does not depend on the values), then write for real.
        write_elf(
            elf::EM_X86_64,
            &layouts,
            &functions_placeholder,
            &["printf"],
            &mut |at| {
                text_probe.set(at(".text"));
                layouts.iter().map(|l| vec![0; l.size]).collect()
            },
            &text_at,
        );
        let functions = functions_at(text_probe.get());
        write_elf(
            elf::EM_X86_64,
            &layouts,
            &functions,
            &["printf"],
            &mut fill,
            &text_at,
        )
    };
    program.bytes = bytes;
    program
}

/// The AArch64 program: `helper` is `ret`; `main` is `stp`, `bl helper`, `adrp x0` +
/// `add x0, x0` (the greeting), `ldp`, `ret`.
pub fn aarch64() -> Program {
    let greeting = format!("{GREETING}\0").into_bytes();
    let layouts = [
        Layout {
            name: ".text",
            kind: Kind::Code,
            size: 32,
            align: 16,
            entsize: 0,
        },
        Layout {
            name: ".rodata",
            kind: Kind::ReadOnly,
            size: greeting.len(),
            align: 1,
            entsize: 0,
        },
    ];
    let functions_at = |text: u64| [("helper", text, 8u64), ("main", text + 8, 24u64)];
    let mut program = Program::default();
    let mut fill = |at: &dyn Fn(&str) -> u64| -> Vec<Vec<u8>> {
        let text = at(".text");
        let string = at(".rodata");
        let (helper, main) = (text, text + 8);
        let bl_at = main + 4;
        let bl = 0x9400_0000 | ((helper.wrapping_sub(bl_at) as i64 >> 2) as u32 & 0x03ff_ffff);
        let adrp_at = main + 8;
        let pages = ((string >> 12) as i64 - (adrp_at >> 12) as i64) as u32;
        let adrp = 0x9000_0000 | ((pages & 3) << 29) | (((pages >> 2) & 0x7ffff) << 5);
        let add = 0x9100_0000 | (((string & 0xfff) as u32) << 10);
        let words: [u32; 8] = [
            0xd65f_03c0, // helper: ret
            0xd503_201f, // nop
            0xa9bf_7bfd, // main: stp x29, x30, [sp, #-16]!
            bl,
            adrp,
            add,
            0xa8c1_7bfd, // ldp x29, x30, [sp], #16
            0xd65f_03c0, // ret
        ];
        program = Program {
            main,
            helper,
            greeting: string,
            calls: vec![(bl_at, helper)],
            ..Program::default()
        };
        vec![
            words.iter().flat_map(|w| w.to_le_bytes()).collect(),
            greeting.clone(),
        ]
    };
    let (bytes, _) = write_aarch64(
        &layouts,
        &|text| functions_at(text).to_vec(),
        &mut fill,
        &|at| at(".text") + 8,
    );
    program.bytes = bytes;
    program
}

/// Writes an AArch64 file twice: with empty sections, to learn where `.text` goes, then with
/// `functions_at` that address and `fill`'s contents. Returns the file and that address.
#[allow(clippy::type_complexity)] // the callbacks take the address lookup, as `write_elf`'s
fn write_aarch64<'a>(
    layouts: &[Layout],
    functions_at: &dyn Fn(u64) -> Vec<(&'a str, u64, u64)>,
    fill: &mut dyn FnMut(&dyn Fn(&str) -> u64) -> Vec<Vec<u8>>,
    entry_of: &dyn Fn(&dyn Fn(&str) -> u64) -> u64,
) -> (Vec<u8>, u64) {
    let text = std::cell::Cell::new(0);
    write_elf(
        elf::EM_AARCH64,
        layouts,
        &functions_at(0),
        &[],
        &mut |at| {
            text.set(at(".text"));
            layouts.iter().map(|l| vec![0; l.size]).collect()
        },
        entry_of,
    );
    let bytes = write_elf(
        elf::EM_AARCH64,
        layouts,
        &functions_at(text.get()),
        &[],
        fill,
        entry_of,
    );
    (bytes, text.get())
}

/// An AArch64 executable whose entry, `main`, calls each of `bodies` with `bl`, in order
/// (`stp`, the calls, `ldp`, `ret`); the bodies follow it back to back, as given (no body may
/// refer to an address outside itself), named `{prefix}{index}` (other names than another
/// build's, so that no two pair by name). Returns the file and each body's address.
pub fn aarch64_calling(prefix: &str, bodies: &[Vec<u32>]) -> (Vec<u8>, Vec<u64>) {
    let main_words = bodies.len() + 3;
    let size = 4 * (main_words + bodies.iter().map(Vec::len).sum::<usize>());
    let layouts = [Layout {
        name: ".text",
        kind: Kind::Code,
        size,
        align: 16,
        entsize: 0,
    }];
    let starts = |text: u64| -> Vec<u64> {
        let mut at = text + 4 * main_words as u64;
        (bodies.iter())
            .map(|body| {
                let start = at;
                at += 4 * body.len() as u64;
                start
            })
            .collect()
    };
    let names: Vec<String> = (0..bodies.len()).map(|k| format!("{prefix}{k}")).collect();
    let functions_at = |text: u64| -> Vec<(&str, u64, u64)> {
        let mut functions = vec![("main", text, 4 * main_words as u64)];
        for ((name, start), body) in names.iter().zip(starts(text)).zip(bodies) {
            functions.push((name, start, 4 * body.len() as u64));
        }
        functions
    };
    let mut fill = |at: &dyn Fn(&str) -> u64| -> Vec<Vec<u8>> {
        let text = at(".text");
        let mut words = vec![0xa9bf_7bfd]; // stp x29, x30, [sp, #-16]!
        for (k, start) in starts(text).into_iter().enumerate() {
            let bl_at = text + 4 * (1 + k as u64);
            words
                .push(0x9400_0000 | ((start.wrapping_sub(bl_at) as i64 >> 2) as u32 & 0x03ff_ffff));
        }
        words.extend([0xa8c1_7bfd, 0xd65f_03c0]); // ldp x29, x30, [sp], #16; ret
        words.extend(bodies.iter().flatten());
        vec![words.iter().flat_map(|w| w.to_le_bytes()).collect()]
    };
    let (bytes, text) = write_aarch64(&layouts, &functions_at, &mut fill, &|at| at(".text"));
    (bytes, starts(text))
}
