//! Fingerprints of a document's procedures, for `compare_procedures`: each procedure decoded
//! again (trailing padding dropped, and the nops inside left out of its instructions), its
//! masked instruction hashes, its exact bytes, and from the finished analysis its callees,
//! imports called and strings referred to, the slots of the tables of procedure pointers in
//! data that hold it, and the records in data that name it.

use std::collections::BTreeSet;
use std::time::Instant;

use super::decode::{Isa, Next};
use super::strings::starts_string;
use super::sweep::sweep;
use super::{Analysis, Input};
use crate::core::diff::{Fingerprint, Label, MAX_TABLE_SLOTS, Slot};
use crate::session::{CompareLimit, FingerprintBounds, Fingerprints, ProviderError, ReferenceKind};

/// Smallest immediate kept as a constant: smaller ones (counts, offsets, flags) say little.
const MIN_CONSTANT: u64 = 0x100;

/// Procedures fingerprinted between two looks at the clock.
const CLOCK_EVERY: usize = 64;

/// Longest run of empty words inside one table of procedure pointers (the null entries of a
/// dispatch table).
const MAX_EMPTY_SLOTS: u64 = 8;

/// Most table slots, and most record labels, kept for one procedure.
const MAX_SLOTS_PER_PROCEDURE: usize = 16;

/// Farthest apart two consecutive named records of one table lie (a record of a few words:
/// a name, a function, flags, a description).
const MAX_RECORD_BYTES: u64 = 128;

/// Most words read of a table of string pointers that a procedure's code refers to (a
/// `names[]` it indexes): its strings count as the procedure's own.
const MAX_TABLE_STRINGS: u64 = 16;

/// Fixed bytes of one fingerprint, besides its lists.
const FINGERPRINT_BYTES: usize = std::mem::size_of::<Fingerprint>();

impl Analysis {
    /// The fingerprints of the document's procedures, within `bounds`.
    pub(crate) fn fingerprints(
        &self,
        input: &Input<'_>,
        document: &str,
        bounds: &FingerprintBounds,
    ) -> Result<Fingerprints, ProviderError> {
        let isa = self.isa(document)?;
        let total = self.procedures.len();
        let mut cut_short_by = (total > bounds.max_procedures).then_some(CompareLimit::Procedures);
        let count = total.min(bounds.max_procedures);
        let mut procedures = Vec::with_capacity(count);
        // The data words that point to procedures: table slots, and named records.
        let words = self.procedure_words(input, count);
        let (mut slots, mut tables) = self.table_slots(input, isa, &words, count);
        let mut labels = self.record_labels(input, isa, &words, count);
        let mut bytes_used = 0usize;
        for index in 0..count {
            if index % CLOCK_EVERY == 0 && Instant::now() > bounds.deadline {
                cut_short_by = Some(CompareLimit::Time);
                break;
            }
            let mut fingerprint = self.fingerprint(input, isa, index, count);
            fingerprint.slots = std::mem::take(&mut slots[index]);
            fingerprint.tables = std::mem::take(&mut tables[index]);
            fingerprint.labels = std::mem::take(&mut labels[index]);
            bytes_used = bytes_used.saturating_add(cost(&fingerprint));
            if bytes_used > bounds.max_bytes {
                cut_short_by = Some(CompareLimit::Memory);
                break;
            }
            procedures.push(fingerprint);
        }
        // Callees past a cut are not in the list.
        let kept = procedures.len() as u32;
        for fingerprint in &mut procedures {
            fingerprint.callees.retain(|&callee| callee < kept);
        }
        if cut_short_by.is_none() && !self.status.complete {
            cut_short_by = Some(CompareLimit::Analysis);
        }
        Ok(Fingerprints {
            architecture: self.architecture.clone(),
            procedures,
            total,
            cut_short_by,
            analysis: self.status,
        })
    }

    fn fingerprint(&self, input: &Input<'_>, isa: Isa, index: usize, count: usize) -> Fingerprint {
        let procedure = &self.procedures[index];
        let (start, end) = (procedure.start, procedure.end);
        let code = input
            .bytes_at(start)
            .map(|(bytes, _)| {
                let length = usize::try_from(end - start).unwrap_or(usize::MAX);
                &bytes[..length.min(bytes.len())]
            })
            .unwrap_or(&[]);
        let mut tokens = Vec::new();
        let mut mnemonics = Vec::new();
        let mut constants = Vec::new();
        let mut immediates = Vec::new();
        let mut addends = Vec::new();
        // Bytes up to the last instruction that is not padding; instructions without the
        // padding inside too (the nops that align a loop: how many depends on the address
        // where the procedure starts, on AArch64 where procedures are aligned less than loops).
        let mut kept_bytes = 0;
        sweep(isa, code, start, false, &mut |step, _| {
            let offset = usize::try_from(step.address - start).unwrap_or(0);
            let encoding = code.get(offset..offset + step.length).unwrap_or(&[]);
            if !is_padding(isa, encoding) {
                tokens.push(step.shape);
                mnemonics.push(step.mnemonic);
                kept_bytes = offset + step.length;
                if let Some(value) = self.constant_of(&step, input) {
                    let operation = u64::from(step.mnemonic);
                    immediates.push(fnv64([operation, value].into_iter()) as u32);
                    if value >= MIN_CONSTANT {
                        constants.push(value);
                    }
                }
                if let Some(value) = step.addend.filter(|&value| value >= MIN_CONSTANT) {
                    addends.push(value);
                }
            }
            Next::Continue
        });
        let code = &code[..kept_bytes.min(code.len())];
        let shape = fnv64(tokens.iter().map(|&token| u64::from(token)));
        let exact = fnv64(code.iter().map(|&byte| u64::from(byte)));
        let Anchors {
            callees,
            imports,
            strings,
        } = self.anchors(input, isa, start..end, count);
        tokens.sort_unstable();
        mnemonics.sort_unstable();
        constants.sort_unstable();
        constants.dedup();
        addends.sort_unstable();
        addends.dedup();
        immediates.sort_unstable();
        Fingerprint {
            address: start,
            name: procedure.name.clone(),
            size: code.len() as u64,
            bytes: exact,
            shape,
            tokens,
            mnemonics,
            callees,
            imports,
            strings,
            constants,
            immediates,
            addends,
            slots: Vec::new(),
            tables: Vec::new(),
            labels: Vec::new(),
        }
    }

    /// The table slots of each of the first `count` procedures: runs of pointer-sized data
    /// `words` that each point to a procedure start, or are empty (zero, no relocation) for at
    /// most [`MAX_EMPTY_SLOTS`] in a row, with at least two procedures; a word that something
    /// refers to begins a new table; numbered in address order, cut every [`MAX_TABLE_SLOTS`]
    /// slots. Also the tables whose first word each procedure's code refers to.
    fn table_slots(
        &self,
        input: &Input<'_>,
        isa: Isa,
        words: &[(u64, u32)],
        count: usize,
    ) -> (Vec<Vec<Slot>>, Vec<Vec<u32>>) {
        let width = word_width(isa);
        let empty = |at: u64| {
            input.bytes_at(at).is_some_and(|(bytes, _)| {
                bytes.len() >= width as usize && bytes[..width as usize].iter().all(|&b| b == 0)
            })
        };
        // Code names a table by its start: a word something refers to begins a table, so two
        // arrays laid out one after the other stay apart.
        let referenced = |at: u64| self.is_referenced(at);
        let mut slots = vec![Vec::new(); count];
        let mut referrers: Vec<Vec<u32>> = vec![Vec::new(); count];
        let mut run: Vec<(u64, u32)> = Vec::new();
        let mut table = 0u32;
        let mut close = |run: &mut Vec<(u64, u32)>, slots: &mut Vec<Vec<Slot>>| {
            if run.len() >= 2 {
                let start = run[0].0;
                let first = self.references.partition_point(|r| r.to < start);
                for reference in self.references[first..]
                    .iter()
                    .take_while(|reference| reference.to == start)
                {
                    if let Some(procedure) = self.procedure_containing(reference.from)
                        && let Ok(index) = self
                            .procedures
                            .binary_search_by_key(&procedure.start, |p| p.start)
                        && index < count
                        && referrers[index].len() < MAX_SLOTS_PER_PROCEDURE
                    {
                        referrers[index].push(table);
                    }
                }
                for &(at, procedure) in run.iter() {
                    let index = ((at - start) / width) as u32;
                    let held = &mut slots[procedure as usize];
                    if held.len() < MAX_SLOTS_PER_PROCEDURE {
                        held.push(Slot { table, index });
                    }
                }
                table += 1;
            }
            run.clear();
        };
        for &(at, procedure) in words {
            let continues = run.last().is_some_and(|&(last, _)| {
                let gap = at - last;
                let start = run[0].0;
                gap % width == 0
                    && gap / width <= MAX_EMPTY_SLOTS + 1
                    && (at - start) / width < u64::from(MAX_TABLE_SLOTS)
                    && (1..gap / width).all(|step| {
                        let between = last + step * width;
                        empty(between) && !referenced(between)
                    })
                    && !referenced(at)
            });
            if !continues {
                close(&mut run, &mut slots);
            }
            run.push((at, procedure));
        }
        close(&mut run, &mut slots);
        for held in &mut slots {
            held.sort_unstable();
        }
        for named in &mut referrers {
            named.sort_unstable();
            named.dedup();
        }
        (slots, referrers)
    }

    /// The labels of each of the first `count` procedures: the records in data that hold a
    /// pointer to it right after a pointer to a string (a method table's `{"flush",
    /// reader_flush, …}`, a command table's `{"quit", do_quit}`), the string hashed. Records
    /// at most [`MAX_RECORD_BYTES`] apart, each as far from the one before as the second is
    /// from the first, make one table, numbered in address order: the end marker of one array
    /// (`{NULL, NULL, 0, NULL}`) puts the next array's first record twice as far, and a record
    /// whose string word something refers to (an array's start) begins a new one too.
    fn record_labels(
        &self,
        input: &Input<'_>,
        isa: Isa,
        words: &[(u64, u32)],
        count: usize,
    ) -> Vec<Vec<Label>> {
        let width = word_width(isa);
        let mut labels = vec![Vec::new(); count];
        let mut table = 0u32;
        // The last record of the table, and the distance between its records.
        let mut last: Option<u64> = None;
        let mut stride: Option<u64> = None;
        for &(at, procedure) in words {
            let Some(name_word) = at.checked_sub(width) else {
                continue;
            };
            let Some(name) = self.string_at_word(input, name_word) else {
                continue;
            };
            if let Some(last) = last {
                let gap = at - last;
                let continues = gap <= MAX_RECORD_BYTES
                    && stride.is_none_or(|stride| stride == gap)
                    && !self.is_referenced(name_word);
                if continues {
                    stride = Some(gap);
                } else {
                    (table, stride) = (table + 1, None);
                }
            }
            last = Some(at);
            let held = &mut labels[procedure as usize];
            if held.len() < MAX_SLOTS_PER_PROCEDURE {
                held.push(Label { table, name });
            }
        }
        for held in &mut labels {
            held.sort_unstable();
            held.dedup();
        }
        labels
    }

    /// The data words (outside code) that point to the start of one of the first `count`
    /// procedures, with its index: in address order, one per word.
    fn procedure_words(&self, input: &Input<'_>, count: usize) -> Vec<(u64, u32)> {
        let mut words: Vec<(u64, u32)> = self
            .references
            .iter()
            .filter(|reference| reference.kind == ReferenceKind::Data)
            .filter_map(|reference| {
                let procedure = self
                    .procedures
                    .binary_search_by_key(&reference.to, |p| p.start)
                    .ok()
                    .filter(|&index| index < count)?;
                let (_, region) = input.bytes_at(reference.from)?;
                (!region.code).then_some((reference.from, procedure as u32))
            })
            .collect();
        words.sort_unstable();
        words.dedup_by_key(|(at, _)| *at);
        words
    }

    /// Whether anything refers to `at`.
    fn is_referenced(&self, at: u64) -> bool {
        let first = self
            .references
            .partition_point(|reference| reference.to < at);
        self.references
            .get(first)
            .is_some_and(|reference| reference.to == at)
    }

    /// The hash of the string that the data word at `word` points to, if it points to one.
    fn string_at_word(&self, input: &Input<'_>, word: u64) -> Option<u64> {
        let origin = |index: &u32| self.references[*index as usize].from;
        let first = self.by_origin.partition_point(|i| origin(i) < word);
        self.by_origin[first..]
            .iter()
            .map(|&index| self.references[index as usize])
            .take_while(|reference| reference.from == word)
            .filter(|reference| reference.kind == ReferenceKind::Data)
            .find_map(|reference| {
                let (bytes, region) = input.bytes_at(reference.to)?;
                if region.code {
                    None
                } else {
                    string_hash(bytes)
                }
            })
    }

    /// The callees (indices below `count`), imports called and string hashes of the
    /// procedure spanning `span`: the strings its code refers to, and those of a table of
    /// string pointers it refers to ([`Analysis::table_strings`]).
    fn anchors(
        &self,
        input: &Input<'_>,
        isa: Isa,
        span: std::ops::Range<u64>,
        count: usize,
    ) -> Anchors {
        let (start, end) = (span.start, span.end);
        let origin = |index: &u32| self.references[*index as usize].from;
        let first = self.by_origin.partition_point(|i| origin(i) < start);
        let last = self.by_origin.partition_point(|i| origin(i) < end);
        let (mut callees, mut imports, mut strings) = (Vec::new(), Vec::new(), Vec::new());
        for index in &self.by_origin[first..last] {
            let reference = self.references[*index as usize];
            if self.call_kind(&reference).is_some() {
                // A call through the PLT to a function the file defines calls that function,
                // as it would in a build with hidden visibility.
                let definition = self.definitions.get(&reference.to).copied();
                if let Some(import) = self
                    .import_of(reference.to)
                    .filter(|_| definition.is_none())
                {
                    imports.push(import);
                } else if let Ok(callee) = self
                    .procedures
                    .binary_search_by_key(&definition.unwrap_or(reference.to), |p| p.start)
                    && callee < count
                {
                    callees.push(callee as u32);
                }
            } else if reference.kind == ReferenceKind::Data
                && let Some((bytes, region)) = input.bytes_at(reference.to)
                && !region.code
            {
                match string_hash(bytes) {
                    Some(hash) => strings.push(hash),
                    None => self.table_strings(input, isa, reference.to, &mut strings),
                }
            }
        }
        // In the order of their first call (the references are in address order).
        let mut seen = BTreeSet::new();
        callees.retain(|&callee| seen.insert(callee));
        imports.sort_unstable();
        imports.dedup();
        strings.sort_unstable();
        strings.dedup();
        Anchors {
            callees,
            imports,
            strings,
        }
    }
}

impl Analysis {
    /// The strings of the table of string pointers at `at`, if it is one: the words from
    /// `at` on, up to [`MAX_TABLE_STRINGS`], while each holds a pointer to a string. Two
    /// procedures with the same code that index different tables of names (`weekday_name`
    /// and `weekday_abbrev`) are then told apart by their strings.
    fn table_strings(&self, input: &Input<'_>, isa: Isa, at: u64, strings: &mut Vec<u64>) {
        let width = word_width(isa);
        for slot in 0..MAX_TABLE_STRINGS {
            let Some(word) = at.checked_add(slot * width) else {
                return;
            };
            match self.string_at_word(input, word) {
                Some(hash) => strings.push(hash),
                None => return,
            }
        }
    }
}

/// What a procedure's code refers to, as [`Fingerprint`] keeps it.
struct Anchors {
    callees: Vec<u32>,
    imports: Vec<String>,
    strings: Vec<u64>,
}

/// The hash of the string `bytes` start with, if they start one.
fn string_hash(bytes: &[u8]) -> Option<u64> {
    if !starts_string(bytes) {
        return None;
    }
    let text = bytes.split(|&byte| byte == 0).next().unwrap_or(&[]);
    Some(fnv64(text.iter().map(|&byte| u64::from(byte))))
}

/// The bytes of a pointer in data.
fn word_width(isa: Isa) -> u64 {
    if matches!(isa, Isa::X86 { .. }) { 4 } else { 8 }
}

/// FNV-1a over a sequence of values.
fn fnv64(values: impl Iterator<Item = u64>) -> u64 {
    values.fold(0xcbf2_9ce4_8422_2325, |hash, value| {
        (hash ^ value).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Whether an instruction is padding between procedures: `int3`, a `nop` form, or on
/// AArch64 `nop` and the zero word.
fn is_padding(isa: Isa, encoding: &[u8]) -> bool {
    match isa {
        Isa::Arm64 => matches!(encoding, [0x1f, 0x20, 0x03, 0xd5] | [0, 0, 0, 0]),
        Isa::X86 { .. } | Isa::X86_64 => {
            let body: Vec<u8> = encoding
                .iter()
                .copied()
                .skip_while(|&byte| matches!(byte, 0x66 | 0x2e | 0x3e | 0x40..=0x4f))
                .collect();
            matches!(body.as_slice(), [0x90] | [0xcc] | [0x0f, 0x1f, ..])
                || (!encoding.is_empty() && encoding.iter().all(|&byte| byte == 0xcc))
        }
    }
}

/// Estimated bytes one fingerprint takes.
fn cost(fingerprint: &Fingerprint) -> usize {
    FINGERPRINT_BYTES
        + fingerprint.tokens.len() * 4
        + fingerprint.mnemonics.len() * 2
        + fingerprint.callees.len() * 4
        + fingerprint.strings.len() * 8
        + fingerprint.addends.len() * 8
        + fingerprint.constants.len() * 8
        + fingerprint.immediates.len() * 4
        + fingerprint.slots.len() * 8
        + fingerprint.tables.len() * 4
        + fingerprint.labels.len() * std::mem::size_of::<Label>()
        + fingerprint
            .imports
            .iter()
            .map(|import| import.len() + 24)
            .sum::<usize>()
        + fingerprint.name.as_ref().map_or(0, String::len)
}
