//! x86 and x86-64 with `iced-x86`: direct call and branch targets, calls and jumps through
//! memory slots, RIP-relative operands (x86-64) and absolute memory operands (x86).

use iced_x86::{
    Decoder, DecoderOptions, FlowControl, Formatter, Instruction, IntelFormatter, OpKind, Register,
};

use super::decode::{Flow, Next, Step, Text, masked_hash};
use crate::session::ReferenceKind;

pub(super) fn sweep(
    bitness: u32,
    bytes: &[u8],
    address: u64,
    text: bool,
    visit: &mut dyn FnMut(Step, Option<Text>) -> Next,
) {
    let mut decoder = Decoder::with_ip(bitness, bytes, address, DecoderOptions::NONE);
    let mut formatter = text.then(formatter);
    let mut instruction = Instruction::default();
    while decoder.can_decode() {
        decoder.decode_out(&mut instruction);
        let reference = reference(&instruction, bitness);
        let start = usize::try_from(instruction.ip().wrapping_sub(address)).unwrap_or(0);
        let encoding = bytes
            .get(start..start.saturating_add(instruction.len()))
            .unwrap_or(&[]);
        let mut masked = 0u32;
        let mut constant = None;
        let offsets = decoder.get_constant_offsets(&instruction);
        if reference.is_some() {
            masked |= span(offsets.displacement_offset(), offsets.displacement_size());
            masked |= span(offsets.immediate_offset(), offsets.immediate_size());
        } else if offsets.has_immediate() {
            constant = (0..instruction.op_count()).find_map(|op| {
                matches!(
                    instruction.op_kind(op),
                    OpKind::Immediate8
                        | OpKind::Immediate16
                        | OpKind::Immediate32
                        | OpKind::Immediate64
                        | OpKind::Immediate8to16
                        | OpKind::Immediate8to32
                        | OpKind::Immediate8to64
                        | OpKind::Immediate32to64
                )
                .then(|| instruction.immediate(op))
            });
        }
        let step = Step {
            address: instruction.ip(),
            length: instruction.len().max(1),
            reference,
            flow: flow(&instruction),
            shape: masked_hash(encoding, masked, u32::from(reference.is_some())),
            mnemonic: instruction.mnemonic() as u16,
            constant,
        };
        let text = formatter.as_mut().map(|formatter| {
            let mut text = Text::default();
            if instruction.is_invalid() {
                text.mnemonic = "(bad)".to_owned();
            } else {
                formatter.format_mnemonic(&instruction, &mut text.mnemonic);
                formatter.format_all_operands(&instruction, &mut text.operands);
            }
            text
        });
        if visit(step, text) == Next::Stop {
            return;
        }
    }
}

/// The bits of the bytes `offset .. offset + size` of an encoding.
fn span(offset: usize, size: usize) -> u32 {
    (offset..offset + size)
        .filter(|&index| index < 32)
        .fold(0, |bits, index| bits | (1 << index))
}

/// Where execution goes after `instruction`.
fn flow(instruction: &Instruction) -> Flow {
    if instruction.is_invalid() {
        return Flow::End;
    }
    match instruction.flow_control() {
        FlowControl::Next | FlowControl::Call | FlowControl::IndirectCall => Flow::Next,
        FlowControl::ConditionalBranch | FlowControl::XbeginXabortXend => Flow::Conditional,
        FlowControl::UnconditionalBranch => Flow::Unconditional,
        // `jmp [slot]` goes where the slot points: an import, for the code that follows.
        FlowControl::IndirectBranch if instruction.op0_kind() == OpKind::Memory => {
            Flow::Unconditional
        }
        FlowControl::IndirectBranch
        | FlowControl::Return
        | FlowControl::Interrupt
        | FlowControl::Exception => Flow::End,
    }
}

fn formatter() -> IntelFormatter {
    let mut formatter = IntelFormatter::new();
    let options = formatter.options_mut();
    options.set_hex_prefix("0x");
    options.set_hex_suffix("");
    options.set_uppercase_hex(false);
    options.set_rip_relative_addresses(false);
    options.set_branch_leading_zeros(false);
    options.set_leading_zeros(false);
    options.set_space_after_operand_separator(true);
    formatter
}

/// The address an instruction calls, jumps to or refers to.
fn reference(instruction: &Instruction, bitness: u32) -> Option<(u64, ReferenceKind)> {
    if instruction.is_invalid() {
        return None;
    }
    let branch_kind = match instruction.flow_control() {
        FlowControl::Call | FlowControl::IndirectCall => Some(ReferenceKind::Call),
        FlowControl::UnconditionalBranch
        | FlowControl::ConditionalBranch
        | FlowControl::IndirectBranch => Some(ReferenceKind::Jump),
        _ => None,
    };
    let near_branch = matches!(
        instruction.op0_kind(),
        OpKind::NearBranch16 | OpKind::NearBranch32 | OpKind::NearBranch64
    );
    if let (Some(kind), true) = (branch_kind, near_branch) {
        return Some((instruction.near_branch_target(), kind));
    }
    let memory = memory_address(instruction, bitness);
    if let Some(address) = memory {
        return Some((address, branch_kind.unwrap_or(ReferenceKind::Data)));
    }
    if bitness == 32 && branch_kind.is_none() {
        for operand in 0..instruction.op_count() {
            if instruction.op_kind(operand) == OpKind::Immediate32 {
                return Some((u64::from(instruction.immediate32()), ReferenceKind::Data));
            }
        }
    }
    None
}

/// The address of a memory operand that does not depend on registers: RIP-relative on
/// x86-64, absolute on x86.
fn memory_address(instruction: &Instruction, bitness: u32) -> Option<u64> {
    if instruction.is_ip_rel_memory_operand() {
        return Some(instruction.ip_rel_memory_address());
    }
    let has_memory =
        (0..instruction.op_count()).any(|op| instruction.op_kind(op) == OpKind::Memory);
    let absolute =
        instruction.memory_base() == Register::None && instruction.memory_index() == Register::None;
    (bitness == 32 && has_memory && absolute).then(|| instruction.memory_displacement64())
}
