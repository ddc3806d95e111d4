//! The code analysis of one document: computed once, on the first tool call that needs it,
//! and shared by `disassemble`, `xrefs_to`, `callers` and `callees`.
//!
//! From the procedure starts the provider knows (symbols, exports, unwind and function-start
//! tables), each procedure is decoded up to the next procedure start, the end of its section
//! or its known size; a document without procedures has each code section decoded from its
//! start. Every call and jump target, every RIP-relative operand (x86-64), absolute memory
//! operand, operand relative to the register holding the GOT's address (x86) and `adrp` +
//! `add`/load pair (AArch64) is a reference, and so is a 32-bit immediate (x86) of at least
//! 64 KiB in the image, except in a position-independent ELF file where the loader does not
//! relocate it (such code reaches its data relative to the GOT: the immediate is a number);
//! so is every pointer in
//! a data section (or written there by a `RELATIVE` relocation) to a procedure start or into a
//! string. In a position-independent ELF file whose dynamic relocations are all `REL`,
//! `RELA` or packed `RELR` (no compact `CREL`), only a word the loader writes can be a
//! pointer: an integer elsewhere that equals an address (a table of constants in a small
//! program) is not taken for one. References are indexed by target and by origin.
//!
//! ELF PLT stubs (`.plt`, `.plt.sec`, `.plt.got`) are named `symbol@plt` after the import slot
//! they jump through (from `.rela.plt` and the `GLOB_DAT` relocations; a 32-bit x86
//! position-independent stub jumps relative to `ebx`, which the caller loaded with the GOT's
//! address), so calls through them name the imported symbol; a call through the slot itself names the symbol. For comparing
//! versions, a call through a stub or slot of a function the file itself defines (an exported
//! function its own code calls through the PLT) is a call to that function: the fingerprints
//! have the call graph of a build with hidden visibility. PE import thunks
//! (`jmp [IAT slot]`) and IAT slots, and Mach-O `__stubs` entries and lazy or non-lazy
//! pointers, are named by the imported symbol as `list_imports` gives it (`ExitProcess`,
//! `_printf`, as `llvm-objdump` names Mach-O stubs), so a direct call to a thunk or stub and an
//! indirect `call [slot]` name the import alike.
//!
//! # Bounds
//!
//! One analysis decodes at most [`MAX_INSTRUCTIONS`] instructions, keeps at most
//! [`MAX_REFERENCES`] references (24 bytes each plus a 4-byte index: at most ~110 MiB) and
//! stops after [`MAX_ANALYSIS_TIME`]; whatever it collected by then is kept, and every result
//! says which bound cut it short ([`AnalysisStatus`]).

mod arm64;
mod decode;
mod discover;
mod fingerprint;
mod imports;
mod query;
mod strings;
mod sweep;
mod x86;

use std::collections::HashMap;
use std::time::{Duration, Instant};

pub(crate) use self::decode::Isa;
use self::decode::{Flow, Next, Step};
pub(crate) use self::discover::call_targets;
pub use self::discover::{MAX_DISCOVERED_STARTS, MAX_DISCOVERY_INSTRUCTIONS, MAX_DISCOVERY_TIME};
use self::sweep::{sweep, sweep_stubs};
use super::region::Region;
use crate::providers::table::ProcedureTable;
use crate::session::{AnalysisLimit, AnalysisStatus, Import, ReferenceKind};

/// Most instructions one analysis decodes (a 10 MB x86-64 binary has about 3 million).
pub const MAX_INSTRUCTIONS: u64 = 20_000_000;

/// Most references one analysis keeps.
pub const MAX_REFERENCES: usize = 4_000_000;

/// Longest one analysis runs.
pub const MAX_ANALYSIS_TIME: Duration = Duration::from_secs(10);

/// Instructions decoded between two looks at the clock.
const CLOCK_EVERY: u64 = 4_096;

/// Sections whose words are not program data: symbol, string, hash, relocation, version,
/// note, dynamic, unwind and debug tables, and the GOT (filled by the loader).
const NOT_DATA: [&str; 16] = [
    ".dynsym",
    ".dynstr",
    ".symtab",
    ".strtab",
    ".eh_frame",
    ".gnu.hash",
    ".hash",
    ".rela.",
    ".rel.",
    ".gnu.version",
    ".note",
    ".dynamic",
    ".interp",
    ".gcc_except_table",
    ".debug",
    ".got",
];

/// What the analysis reads: the image bytes, its regions and its procedures.
pub(crate) struct Input<'a> {
    /// The image's bytes.
    pub(crate) image: &'a [u8],
    /// Its regions, sorted by address.
    pub(crate) regions: &'a [Region],
    /// Its procedures.
    pub(crate) procedures: &'a ProcedureTable,
    /// Its imports, with the stub and slot addresses the code uses.
    pub(crate) imports: &'a [Import],
}

impl Input<'_> {
    /// The file-backed bytes from `address` to the end of the first region holding it, and
    /// that region.
    fn bytes_at(&self, address: u64) -> Option<(&[u8], &Region)> {
        self.regions.iter().find_map(|region| {
            let offset = address.checked_sub(region.segment.address.value())?;
            let bytes = region.bytes(self.image);
            let rest = bytes.get(usize::try_from(offset).ok()?..)?;
            (!rest.is_empty()).then_some((rest, region))
        })
    }

    /// The region containing `address` (in memory, file-backed or not).
    fn region_at(&self, address: u64) -> Option<&Region> {
        self.regions.iter().find(|region| {
            address
                .checked_sub(region.segment.address.value())
                .is_some_and(|offset| offset < region.segment.size)
        })
    }
}

/// One procedure as the analysis sees it: its extent and display name.
struct Procedure {
    start: u64,
    end: u64,
    name: Option<String>,
}

/// One reference: `from` refers to `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Ref {
    to: u64,
    from: u64,
    kind: ReferenceKind,
    /// A jump that does not fall through (`jmp`, `b`): a tail call when it leaves its
    /// procedure for the start of another.
    unconditional: bool,
}

/// The analysis of one document (see the [module documentation](self)).
pub(crate) struct Analysis {
    isa: Option<Isa>,
    architecture: String,
    procedures: Vec<Procedure>,
    /// Stub address (ELF PLT entry, PE import thunk, Mach-O `__stubs` entry) to imported
    /// symbol.
    stubs: HashMap<u64, String>,
    /// What follows the symbol in a stub's name: `@plt` for ELF, nothing otherwise.
    stub_suffix: &'static str,
    /// Import slot address to imported symbol.
    slots: HashMap<u64, String>,
    /// Stub or slot address to the function the file defines under its symbol (see
    /// [`imports::Relocated::definitions`]): the fingerprints call that function.
    definitions: HashMap<u64, u64>,
    /// Sorted by (to, from, kind).
    references: Vec<Ref>,
    /// Indices into `references`, sorted by (from, to).
    by_origin: Vec<u32>,
    /// Where an x86 (32-bit) immediate can be an address in a position-independent ELF
    /// file: the sites its loader writes (see [`Analysis::reference_of`]); `None` elsewhere.
    immediate_sites: Option<Vec<u64>>,
    status: AnalysisStatus,
}

/// Collects references within the bounds.
struct Collector {
    deadline: Instant,
    instructions: u64,
    references: Vec<Ref>,
    cut_short_by: Option<AnalysisLimit>,
}

impl Collector {
    /// Counts `step` and keeps the `reference` it makes, if any.
    fn step(&mut self, step: Step, reference: Option<(u64, ReferenceKind)>) -> Next {
        self.instructions += 1;
        if self.instructions > MAX_INSTRUCTIONS {
            self.cut_short_by = Some(AnalysisLimit::Instructions);
            return Next::Stop;
        }
        if self.instructions.is_multiple_of(CLOCK_EVERY) && Instant::now() > self.deadline {
            self.cut_short_by = Some(AnalysisLimit::Time);
            return Next::Stop;
        }
        match reference {
            Some((to, kind)) => self.keep(Ref {
                to,
                from: step.address,
                kind,
                unconditional: kind == ReferenceKind::Jump && step.flow == Flow::Unconditional,
            }),
            _ => Next::Continue,
        }
    }

    fn keep(&mut self, reference: Ref) -> Next {
        if self.references.len() >= MAX_REFERENCES {
            self.cut_short_by = Some(AnalysisLimit::References);
            return Next::Stop;
        }
        self.references.push(reference);
        Next::Continue
    }
}

impl Analysis {
    /// Analyses one image (see the [module documentation](self)).
    pub(crate) fn build(input: &Input<'_>) -> Analysis {
        let file = object::File::parse(input.image).ok();
        let isa = file.as_ref().and_then(Isa::of);
        let architecture = file.as_ref().map_or_else(
            || "unknown".to_owned(),
            |file| format!("{:?}", object::Object::architecture(file)).to_lowercase(),
        );
        let procedures = procedures(input);
        let mut analysis = Analysis {
            isa,
            architecture,
            procedures,
            stubs: HashMap::new(),
            stub_suffix: "",
            slots: HashMap::new(),
            definitions: HashMap::new(),
            references: Vec::new(),
            by_origin: Vec::new(),
            immediate_sites: None,
            status: AnalysisStatus {
                complete: true,
                cut_short_by: None,
                instructions: 0,
                references: 0,
            },
        };
        let (Some(isa), Some(file)) = (isa, file) else {
            return analysis;
        };
        let read =
            |address: u64, size: usize| read_word(input, address, size, file_little_endian(&file));
        let relocated = imports::relocated(&file, &read, input.image.len() / 4);
        analysis.slots = relocated.slots;
        analysis.definitions = relocated.definitions;
        if matches!(isa, Isa::X86 { .. }) && relocated.position_independent {
            analysis.immediate_sites = Some(relocated.sites.clone().unwrap_or_default());
        }
        if matches!(file, object::File::Elf32(_) | object::File::Elf64(_)) {
            analysis.stub_suffix = "@plt";
        } else {
            // PE thunks and IAT slots, Mach-O stubs and pointers, as `list_imports` has them.
            for import in input.imports {
                let symbol = &import.symbol.raw_name;
                if let Some(stub) = import.stub {
                    analysis
                        .stubs
                        .entry(stub.value())
                        .or_insert_with(|| symbol.clone());
                }
                if let Some(slot) = import.slot {
                    analysis
                        .slots
                        .entry(slot.value())
                        .or_insert_with(|| symbol.clone());
                }
            }
        }
        let mapped = |address: u64| input.region_at(address).is_some();
        let mut collector = Collector {
            deadline: Instant::now() + MAX_ANALYSIS_TIME,
            instructions: 0,
            references: Vec::new(),
            cut_short_by: None,
        };
        // Code: each procedure, or each code region when there are none.
        let extents: Vec<(u64, u64)> = if analysis.procedures.is_empty() {
            input
                .regions
                .iter()
                .filter(|region| region.code)
                .map(|region| {
                    (
                        region.segment.address.value(),
                        region
                            .segment
                            .address
                            .value()
                            .saturating_add(region.segment.file_size),
                    )
                })
                .collect()
        } else {
            analysis
                .procedures
                .iter()
                .map(|p| (p.start, p.end))
                .collect()
        };
        for (start, end) in extents {
            let Some((bytes, _)) = input.bytes_at(start) else {
                continue;
            };
            let length = usize::try_from(end - start)
                .unwrap_or(usize::MAX)
                .min(bytes.len());
            sweep(isa, &bytes[..length], start, false, &mut |step, _| {
                let reference = analysis.reference_of(&step, input);
                collector.step(step, reference.filter(|&(to, _)| mapped(to)))
            });
            if collector.cut_short_by.is_some() {
                break;
            }
        }
        // PLT stubs, named after the slot they go through.
        for (name, entry_size) in imports::stub_sections(&file) {
            let Some(region) = input
                .regions
                .iter()
                .find(|region| region.segment.name == name)
            else {
                continue;
            };
            let base = region.segment.address.value();
            sweep_stubs(isa, region.bytes(input.image), base, &mut |step, _| {
                if let Some((to, _)) = step.reference
                    && let Some(symbol) = analysis.slots.get(&to)
                {
                    let stub = base + (step.address - base) / entry_size * entry_size;
                    analysis.stubs.entry(stub).or_insert_with(|| symbol.clone());
                    if let Some(&definition) = analysis.definitions.get(&to) {
                        analysis.definitions.entry(stub).or_insert(definition);
                    }
                }
                Next::Continue
            });
        }
        // Data: pointers to procedure starts, stubs or strings.
        if collector.cut_short_by.is_none() {
            let pointer_size = if object::Object::is_64(&file) { 8 } else { 4 };
            let mut pointers = relocated.pointers;
            for region in input.regions.iter().filter(|region| is_data(region)) {
                let base = region.segment.address.value();
                let bytes = region.bytes(input.image);
                let skip = usize::try_from(base.wrapping_neg() % pointer_size as u64).unwrap_or(0);
                for (index, word) in bytes
                    .get(skip..)
                    .unwrap_or(&[])
                    .chunks_exact(pointer_size)
                    .enumerate()
                {
                    let value = word_value(word, file_little_endian(&file));
                    // A malformed file may place a region at the very top of the address space.
                    let at = base.checked_add((skip + index * pointer_size) as u64);
                    let possible = |at: &u64| {
                        relocated
                            .sites
                            .as_ref()
                            .is_none_or(|s| s.binary_search(at).is_ok())
                    };
                    if let (Some(at), true) = (at.filter(possible), value != 0) {
                        pointers.push((at, value));
                    }
                }
            }
            for (at, value) in pointers {
                if analysis.is_pointer_target(input, value)
                    && collector.keep(Ref {
                        to: value,
                        from: at,
                        kind: ReferenceKind::Data,
                        unconditional: false,
                    }) == Next::Stop
                {
                    break;
                }
            }
        }
        let mut references = collector.references;
        references.sort_unstable();
        references.dedup();
        let mut by_origin: Vec<u32> = (0..references.len() as u32).collect();
        by_origin.sort_unstable_by_key(|&index| {
            let reference = references[index as usize];
            (reference.from, reference.to)
        });
        analysis.status = AnalysisStatus {
            complete: collector.cut_short_by.is_none(),
            cut_short_by: collector.cut_short_by,
            instructions: collector.instructions.min(MAX_INSTRUCTIONS),
            references: references.len() as u64,
        };
        analysis.references = references;
        analysis.by_origin = by_origin;
        analysis
    }

    /// What `step` refers to. An x86 (32-bit) immediate that may be a number too
    /// ([`Step::constant`]) is an address only when it is in the image and, in a
    /// position-independent ELF file, only where the loader writes it (such code reaches its
    /// data relative to the GOT, so an immediate without a relocation is a number).
    fn reference_of(&self, step: &Step, input: &Input<'_>) -> Option<(u64, ReferenceKind)> {
        let (to, _) = step.reference?;
        if step.constant != Some(to) {
            return step.reference;
        }
        let relocated = |sites: &Vec<u64>| {
            let first = sites.partition_point(|&site| site < step.address);
            let end = step.address.saturating_add(step.length as u64);
            sites.get(first).is_some_and(|&site| site < end)
        };
        let address =
            input.region_at(to).is_some() && self.immediate_sites.as_ref().is_none_or(relocated);
        step.reference.filter(|_| address)
    }

    /// The immediate `step` holds that is a number, not an address ([`Analysis::reference_of`]).
    fn constant_of(&self, step: &Step, input: &Input<'_>) -> Option<u64> {
        step.constant
            .filter(|_| self.reference_of(step, input).is_none())
    }

    /// Whether a pointer in data to `value` is worth a reference: a procedure start, a stub,
    /// or a string in a non-code region.
    fn is_pointer_target(&self, input: &Input<'_>, value: u64) -> bool {
        if self.stubs.contains_key(&value) || self.procedure_at(value).is_some() {
            return true;
        }
        match input.bytes_at(value) {
            Some((bytes, region)) if !region.code => strings::starts_string(bytes),
            _ => false,
        }
    }

    /// The procedure starting exactly at `address`.
    fn procedure_at(&self, address: u64) -> Option<&Procedure> {
        self.procedures
            .binary_search_by_key(&address, |p| p.start)
            .ok()
            .map(|index| &self.procedures[index])
    }

    /// The procedure whose extent holds `address`.
    fn procedure_containing(&self, address: u64) -> Option<&Procedure> {
        let after = self.procedures.partition_point(|p| p.start <= address);
        let procedure = self.procedures[..after].last()?;
        (address < procedure.end).then_some(procedure)
    }
}

fn file_little_endian(file: &object::File<'_>) -> bool {
    object::Object::is_little_endian(file)
}

fn word_value(word: &[u8], little_endian: bool) -> u64 {
    let mut value = 0u64;
    for (index, byte) in word.iter().enumerate() {
        let shift = if little_endian {
            index
        } else {
            word.len() - 1 - index
        };
        value |= u64::from(*byte) << (8 * shift);
    }
    value
}

fn read_word(input: &Input<'_>, address: u64, size: usize, little_endian: bool) -> Option<u64> {
    let (bytes, _) = input.bytes_at(address)?;
    bytes
        .get(..size)
        .map(|word| word_value(word, little_endian))
}

/// Whether the words of `region` are program data worth scanning for pointers.
fn is_data(region: &Region) -> bool {
    !region.code
        && region.segment.file_size > 0
        && !NOT_DATA
            .iter()
            .any(|prefix| region.segment.name.starts_with(prefix))
}

/// The procedures' extents: from each start to the next start, the end of the code region
/// holding it, or its known size, whichever comes first.
fn procedures(input: &Input<'_>) -> Vec<Procedure> {
    let outlines: Vec<(u64, Option<u64>, Option<&str>)> = input.procedures.outlines().collect();
    outlines
        .iter()
        .enumerate()
        .filter_map(|(index, &(start, size, name))| {
            let region = input.regions.iter().find(|region| {
                region.code
                    && start
                        .checked_sub(region.segment.address.value())
                        .is_some_and(|offset| offset < region.segment.file_size)
            })?;
            let mut end = region.segment.address.value() + region.segment.file_size;
            if let Some(&(next, _, _)) = outlines.get(index + 1) {
                end = end.min(next);
            }
            if let Some(size) = size {
                end = end.min(start.saturating_add(size));
            }
            Some(Procedure {
                start,
                end,
                name: name.map(str::to_owned),
            })
        })
        .collect()
}
