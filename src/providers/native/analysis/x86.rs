//! x86 and x86-64 with `iced-x86`: direct call and branch targets, calls and jumps through
//! memory slots, RIP-relative operands (x86-64) and absolute memory operands (x86).

use iced_x86::{
    Decoder, DecoderOptions, FlowControl, Formatter, Instruction, IntelFormatter, Mnemonic, OpKind,
    Register,
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
        let mut addend = None;
        let offsets = decoder.get_constant_offsets(&instruction);
        if reference.is_some() {
            masked |= span(offsets.displacement_offset(), offsets.displacement_size());
            masked |= span(offsets.immediate_offset(), offsets.immediate_size());
            // x86 code holds addresses and numbers alike in 32-bit immediates: one that
            // may be a number is a constant too, for the reader that knows the image (an
            // address is mapped, most numbers are not).
            constant = reference
                .filter(|&(target, _)| immediate_address(&instruction, bitness) == Some(target))
                .map(|(target, _)| target);
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
        } else {
            addend = lea_addend(&instruction);
        }
        let step = Step {
            address: instruction.ip(),
            length: instruction.len().max(1),
            reference,
            flow: flow(&instruction),
            shape: masked_hash(encoding, masked, u32::from(reference.is_some())),
            mnemonic: instruction.mnemonic() as u16,
            constant,
            addend,
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

/// The displacement of a `lea` that adds a constant to a register (`lea -0x88e8(%rdi), %rcx`
/// is `rcx = rdi - 35048`): compilers write `x + k` that way, so it is a constant of the
/// function as much as an `add`'s immediate; they also take a structure member's address
/// that way, which moves with the layout (so it is a [`Step::addend`], not an immediate).
/// Stack and frame offsets are not (they move when the frame's layout does), nor are
/// absolute or RIP-relative addresses.
fn lea_addend(instruction: &Instruction) -> Option<u64> {
    if instruction.mnemonic() != Mnemonic::Lea {
        return None;
    }
    let base = instruction.memory_base();
    let frame = [Register::RSP, Register::RBP, Register::ESP, Register::EBP];
    let displacement = instruction.memory_displacement64();
    (base.is_gpr() && !frame.contains(&base) && displacement != 0).then_some(displacement)
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
    if branch_kind.is_none() {
        return immediate_address(instruction, bitness)
            .map(|address| (address, ReferenceKind::Data));
    }
    None
}

/// The 32-bit immediate of an x86 (32-bit) instruction, which may be an absolute address
/// (code loaded at a fixed address names data that way).
fn immediate_address(instruction: &Instruction, bitness: u32) -> Option<u64> {
    let immediate = (0..instruction.op_count())
        .any(|operand| instruction.op_kind(operand) == OpKind::Immediate32);
    (bitness == 32 && immediate).then(|| u64::from(instruction.immediate32()))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The steps of x86-64 `bytes` at 0x1000.
    fn steps(bytes: &[u8]) -> Vec<Step> {
        steps_of(64, bytes)
    }

    /// The steps of `bytes` at 0x1000, decoded with `bitness`.
    fn steps_of(bitness: u32, bytes: &[u8]) -> Vec<Step> {
        let mut steps = Vec::new();
        sweep(bitness, bytes, 0x1000, false, &mut |step, _| {
            steps.push(step);
            Next::Continue
        });
        steps
    }

    #[test]
    fn a_32_bit_immediate_is_an_address_and_a_number_until_the_image_tells() {
        let bytes = [
            0xb9, 0x25, 0x49, 0x92, 0x24, // mov ecx, 0x24924925
            0x83, 0xc0, 0x7f, // add eax, 0x7f
            0xa1, 0x00, 0x20, 0x00, 0x00, // mov eax, [0x2000]
        ];
        let [mov, add, load] = steps_of(32, &bytes)[..] else {
            panic!("three steps");
        };
        let either = Some((0x2492_4925, ReferenceKind::Data));
        assert_eq!((mov.reference, mov.constant), (either, Some(0x2492_4925)));
        assert_eq!((add.reference, add.constant), (None, Some(0x7f)));
        let absolute = Some((0x2000, ReferenceKind::Data));
        assert_eq!(
            (load.reference, load.constant),
            (absolute, None),
            "only an address"
        );
        // The same `mov` in 64-bit code is a number alone.
        let [mov] = steps_of(64, &bytes[..5])[..] else {
            panic!("one step");
        };
        assert_eq!((mov.reference, mov.constant), (None, Some(0x2492_4925)));
    }

    #[test]
    fn a_lea_that_adds_a_constant_to_a_register_holds_an_addend() {
        let [minus, plus, stack, rip, scaled, add] = steps(&[
            0x48, 0x8d, 0x8f, 0x18, 0x77, 0xff, 0xff, // lea -0x88e8(%rdi),%rcx
            0x48, 0x8d, 0x86, 0xa6, 0x47, 0x00, 0x00, // lea 0x47a6(%rsi),%rax
            0x48, 0x8d, 0x44, 0x24, 0x10, // lea 0x10(%rsp),%rax
            0x48, 0x8d, 0x15, 0xbb, 0x2d, 0x00, 0x00, // lea 0x2dbb(%rip),%rdx
            0x48, 0x8d, 0x04, 0x80, // lea (%rax,%rax,4),%rax
            0x48, 0x05, 0x1c, 0x65, 0x00, 0x00, // add $0x651c,%rax
        ])[..] else {
            panic!("six steps");
        };
        assert_eq!(minus.addend, Some(0x88e8_u64.wrapping_neg()));
        assert_eq!(plus.addend, Some(0x47a6));
        assert_eq!(stack.addend, None, "a stack offset moves with the frame");
        assert_eq!(rip.addend, None, "an address is not a constant");
        assert!(rip.reference.is_some());
        assert_eq!(scaled.addend, None, "nothing added");
        assert_eq!((add.constant, add.addend), (Some(0x651c), None));
        // An addend is not an immediate: the likeness reads immediates alone.
        assert!([minus, plus].iter().all(|step| step.constant.is_none()));
    }
}
