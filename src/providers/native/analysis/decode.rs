//! What the decoders report for one instruction, independent of the instruction set.

use crate::session::ReferenceKind;

/// The instruction sets the analysis decodes, with what their decoders need of the image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isa {
    /// 32-bit x86.
    X86 {
        /// The address of an ELF file's GOT (`_GLOBAL_OFFSET_TABLE_`: `.got.plt`, else
        /// `.got`), which position-independent code loads into a register to reach its data.
        got: Option<u64>,
    },
    /// x86-64.
    X86_64,
    /// AArch64 (A64).
    Arm64,
}

impl Isa {
    /// The instruction set of `file`, if the analysis decodes it.
    pub(crate) fn of(file: &object::File<'_>) -> Option<Isa> {
        use object::{Object, ObjectSection};
        match file.architecture() {
            object::Architecture::I386 => {
                let section = |name| file.section_by_name(name).map(|section| section.address());
                let got = section(".got.plt").or_else(|| section(".got"));
                Some(Isa::X86 { got })
            }
            object::Architecture::X86_64 | object::Architecture::X86_64_X32 => Some(Isa::X86_64),
            object::Architecture::Aarch64 => Some(Isa::Arm64),
            _ => None,
        }
    }
}

/// One decoded instruction, as the sweep reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Step {
    /// Address of its first byte.
    pub(crate) address: u64,
    /// Its length in bytes (at least 1).
    pub(crate) length: usize,
    /// The address it calls, jumps to or refers to, and how.
    pub(crate) reference: Option<(u64, ReferenceKind)>,
    /// Where execution goes after it.
    pub(crate) flow: Flow,
    /// A hash of its encoding with every address-dependent field masked (the displacement
    /// and immediate of an instruction that has a `reference`), so the same instruction at
    /// another address, or referring to a moved target, hashes alike.
    pub(crate) shape: u32,
    /// Its operation without operands (the mnemonic, as a number the decoder gives it), for
    /// a likeness of code that register allocation and moved data do not change.
    pub(crate) mnemonic: u16,
    /// An immediate operand that is not an address, for comparing constants. On x86 (32-bit)
    /// a 32-bit immediate may be either: it is this and the `reference` both, and the
    /// analysis, which knows the image, tells which.
    pub(crate) constant: Option<u64>,
    /// A constant added to a register without an immediate operand (x86's `lea`): a
    /// constant of the function, but also how it takes a structure member's address, which
    /// moves with the structure's layout, so it stays out of the likeness.
    pub(crate) addend: Option<u64>,
}

/// FNV-1a over `bytes`, skipping the bytes whose bit in `masked` is set, then mixing `extra`.
pub(crate) fn masked_hash(bytes: &[u8], masked: u32, extra: u32) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for (index, &byte) in bytes.iter().enumerate() {
        let byte = if index < 32 && masked & (1 << index) != 0 {
            0
        } else {
            byte
        };
        hash = (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193);
    }
    (hash ^ extra).wrapping_mul(0x0100_0193)
}

/// Where execution goes after one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// On to the next instruction (calls included).
    Next,
    /// To the branch target or on to the next instruction.
    Conditional,
    /// To the branch target only (`jmp`, `b`, direct or through memory).
    Unconditional,
    /// Nowhere the decoder can follow: a return, a jump through a register, a trap or an
    /// undecodable instruction.
    End,
}

/// The text of one instruction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Text {
    pub(crate) mnemonic: String,
    pub(crate) operands: String,
}

/// Whether a sweep goes on after a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    Continue,
    Stop,
}
