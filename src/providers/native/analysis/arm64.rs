//! AArch64 with `yaxpeax-arm`: `bl`, branches, `adr`, PC-relative loads, and `adrp` paired
//! with a later `add` or load/store on the same register.

use yaxpeax_arch::{Decoder, U8Reader};
use yaxpeax_arm::armv8::a64::{InstDecoder, Instruction, Opcode, Operand};

use super::decode::{Flow, Next, Step, Text, masked_hash};
use crate::session::ReferenceKind;

/// The page an `adrp` put in each general register, while no later instruction overwrote it.
type Pages = [Option<u64>; 32];

pub(super) fn sweep(
    bytes: &[u8],
    address: u64,
    text: bool,
    visit: &mut dyn FnMut(Step, Option<Text>) -> Next,
) {
    let decoder = InstDecoder::default();
    let mut pages: Pages = [None; 32];
    for (index, word) in bytes.chunks_exact(4).enumerate() {
        let pc = address.wrapping_add(4 * index as u64);
        let mut reader = U8Reader::new(word);
        let decoded = decoder.decode(&mut reader).ok();
        let reference = decoded
            .as_ref()
            .and_then(|instruction| reference(instruction, pc, &mut pages));
        let text = text.then(|| match &decoded {
            Some(instruction) => instruction_text(instruction, pc),
            None => Text {
                mnemonic: ".inst".to_owned(),
                operands: format!(
                    "{:#010x}",
                    u32::from_le_bytes([word[0], word[1], word[2], word[3]])
                ),
            },
        });
        let encoding = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
        let kept = if reference.is_some() {
            encoding & fixed_bits(encoding)
        } else {
            encoding
        };
        let step = Step {
            address: pc,
            length: 4,
            reference,
            flow: decoded.as_ref().map_or(Flow::End, flow),
            shape: masked_hash(&kept.to_le_bytes(), 0, u32::from(reference.is_some())),
            mnemonic: decoded
                .as_ref()
                .map_or(0, |instruction| mnemonic(&instruction.opcode)),
            constant: decoded
                .as_ref()
                .filter(|_| reference.is_none())
                .and_then(constant),
            addend: None,
        };
        if visit(step, text) == Next::Stop {
            return;
        }
    }
}

/// A number for the operation of `opcode` (its variant, whatever the condition or fields it
/// carries): FNV-1a of the enum's discriminant, since `Opcode` has no integer conversion.
fn mnemonic(opcode: &Opcode) -> u16 {
    struct Fnv(u64);
    impl std::hash::Hasher for Fnv {
        fn finish(&self) -> u64 {
            self.0
        }
        fn write(&mut self, bytes: &[u8]) {
            for &byte in bytes {
                self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
    }
    let mut hasher = Fnv(0xcbf2_9ce4_8422_2325);
    std::hash::Hash::hash(&std::mem::discriminant(opcode), &mut hasher);
    let hash = std::hash::Hasher::finish(&hasher);
    (hash ^ (hash >> 16) ^ (hash >> 32) ^ (hash >> 48)) as u16
}

/// The immediate operand of an instruction that refers to no address (`mov`, `movz`, `movk`,
/// `cmp`, arithmetic and logical immediates), shifted into place.
fn constant(instruction: &Instruction) -> Option<u64> {
    instruction
        .operands
        .iter()
        .find_map(|operand| match *operand {
            Operand::Immediate(value) => Some(u64::from(value)),
            Operand::Imm64(value) => Some(value),
            Operand::Imm16(value) => Some(u64::from(value)),
            Operand::ImmShift(value, shift) | Operand::ImmShiftMSL(value, shift) => {
                u64::from(value).checked_shl(u32::from(shift))
            }
            _ => None,
        })
}

/// The bits of an instruction that refers to an address which do not encode that address:
/// the opcode and registers, without the immediate.
fn fixed_bits(word: u32) -> u32 {
    match word >> 26 {
        // B, BL: imm26.
        0b000101 | 0b100101 => 0xfc00_0000,
        _ => match (word >> 24) & 0x1f {
            // ADR, ADRP: immlo and immhi.
            0b10000 => 0x9f00_001f,
            _ if word >> 24 == 0x54 => 0xff00_001f,
            // CBZ, CBNZ (imm19), TBZ, TBNZ (imm14), literal loads (imm19).
            0b10100 | 0b10101 | 0b11000 | 0b11100 => 0xff00_001f,
            // ADD (immediate), loads and stores (unsigned offset): imm12.
            _ => 0xffc0_03ff,
        },
    }
}

/// Where execution goes after `instruction`.
fn flow(instruction: &Instruction) -> Flow {
    match instruction.opcode {
        Opcode::B => Flow::Unconditional,
        Opcode::Bcc(_) | Opcode::CBZ | Opcode::CBNZ | Opcode::TBZ | Opcode::TBNZ => {
            Flow::Conditional
        }
        Opcode::BR | Opcode::RET | Opcode::BRK | Opcode::UDF | Opcode::HLT | Opcode::Invalid => {
            Flow::End
        }
        _ => Flow::Next,
    }
}

fn pc_offset(instruction: &Instruction) -> Option<i64> {
    instruction
        .operands
        .iter()
        .find_map(|operand| match operand {
            Operand::PCOffset(offset) => Some(*offset),
            _ => None,
        })
}

fn register(operand: &Operand) -> Option<usize> {
    match operand {
        Operand::Register(_, n) | Operand::RegisterOrSP(_, n) => Some(usize::from(*n) & 31),
        _ => None,
    }
}

fn page_of(pc: u64, offset: i64) -> u64 {
    (pc & !0xfff).wrapping_add_signed(offset)
}

fn reference(
    instruction: &Instruction,
    pc: u64,
    pages: &mut Pages,
) -> Option<(u64, ReferenceKind)> {
    let operands = &instruction.operands;
    let found = match instruction.opcode {
        Opcode::BL => {
            let target = pc_offset(instruction).map(|offset| pc.wrapping_add_signed(offset));
            *pages = [None; 32];
            return target.map(|target| (target, ReferenceKind::Call));
        }
        Opcode::B | Opcode::Bcc(_) | Opcode::CBZ | Opcode::CBNZ | Opcode::TBZ | Opcode::TBNZ => {
            let target = pc_offset(instruction).map(|offset| pc.wrapping_add_signed(offset));
            if instruction.opcode == Opcode::B {
                *pages = [None; 32];
            }
            return target.map(|target| (target, ReferenceKind::Jump));
        }
        Opcode::BR | Opcode::BLR | Opcode::RET => {
            *pages = [None; 32];
            return None;
        }
        Opcode::ADRP => {
            if let (Some(rd), Some(offset)) = (register(&operands[0]), pc_offset(instruction)) {
                pages[rd] = Some(page_of(pc, offset));
            }
            return None;
        }
        Opcode::ADD => match (register(&operands[1]), &operands[2]) {
            (Some(rn), Operand::Immediate(imm)) => {
                pages[rn].map(|page| page.wrapping_add(u64::from(*imm)))
            }
            (Some(rn), Operand::ImmShift(imm, shift)) => pages[rn].map(|page| {
                page.wrapping_add(u64::from(*imm).checked_shl(u32::from(*shift)).unwrap_or(0))
            }),
            _ => None,
        },
        _ => {
            let based = operands.iter().find_map(|operand| match operand {
                Operand::RegPreIndex(rn, offset, false) => pages[usize::from(*rn) & 31]
                    .map(|page| page.wrapping_add_signed(i64::from(*offset))),
                _ => None,
            });
            based.or_else(|| pc_offset(instruction).map(|offset| pc.wrapping_add_signed(offset)))
        }
    };
    let stores = matches!(
        instruction.opcode,
        Opcode::STR
            | Opcode::STRB
            | Opcode::STRH
            | Opcode::STP
            | Opcode::STUR
            | Opcode::STURB
            | Opcode::STURH
    );
    if !stores && let Some(rd) = register(&operands[0]) {
        pages[rd] = None;
    }
    found.map(|target| (target, ReferenceKind::Data))
}

/// The mnemonic and operands, with PC-relative operands written as absolute addresses.
fn instruction_text(instruction: &Instruction, pc: u64) -> Text {
    let full = instruction.to_string();
    let (mnemonic, operands) = full.split_once(' ').unwrap_or((full.as_str(), ""));
    let operands = match (operands.find('$'), pc_offset(instruction)) {
        (Some(at), Some(offset)) => {
            let target = if instruction.opcode == Opcode::ADRP {
                page_of(pc, offset)
            } else {
                pc.wrapping_add_signed(offset)
            };
            let end = operands[at..]
                .find([',', ' '])
                .map_or(operands.len(), |length| at + length);
            format!("{}{target:#x}{}", &operands[..at], &operands[end..])
        }
        _ => operands.to_owned(),
    };
    Text {
        mnemonic: mnemonic.to_owned(),
        operands,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The steps of the little-endian words `words` at 0x1000.
    fn steps(words: &[u32]) -> Vec<Step> {
        let bytes: Vec<u8> = words.iter().flat_map(|word| word.to_le_bytes()).collect();
        let mut steps = Vec::new();
        sweep(&bytes, 0x1000, false, &mut |step, _| {
            steps.push(step);
            Next::Continue
        });
        steps
    }

    #[test]
    fn immediates_are_constants_and_addresses_are_not() {
        let [movz, movk, cmp, bl, movz_other] = steps(&[
            0xd282_4680, // movz x0, #0x1234
            0xf2aa_cf00, // movk x0, #0x5678, lsl #16
            0x7104_8c3f, // cmp w1, #0x123
            0x9400_0002, // bl 0x1014
            0xd280_0021, // movz x1, #0x1
        ])[..] else {
            panic!("five steps");
        };
        assert_eq!(movz.constant, Some(0x1234));
        assert_eq!(movk.constant, Some(0x5678 << 16));
        assert_eq!(cmp.constant, Some(0x123));
        assert_eq!(bl.constant, None, "an address is not a constant");
        assert_eq!(bl.reference, Some((0x1014, ReferenceKind::Call)));
        // The operation, whatever its registers and immediate.
        assert_eq!(movz.mnemonic, movz_other.mnemonic);
        assert_ne!(movz.mnemonic, movk.mnemonic);
        assert_ne!(movz.mnemonic, cmp.mnemonic);
    }
}
