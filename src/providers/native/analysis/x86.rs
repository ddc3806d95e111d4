//! x86 and x86-64 with `iced-x86`: direct call and branch targets, calls and jumps through
//! memory slots, RIP-relative operands (x86-64), and absolute memory operands and operands
//! relative to the GOT (x86).

use std::collections::HashMap;

use iced_x86::{
    Decoder, DecoderOptions, FlowControl, Formatter, Instruction, IntelFormatter, Mnemonic, OpKind,
    Register,
};

use super::decode::{Flow, Next, Step, Text, masked_hash};
use crate::session::ReferenceKind;

pub(super) fn sweep(
    bitness: u32,
    got: Option<u64>,
    bytes: &[u8],
    address: u64,
    text: bool,
    visit: &mut dyn FnMut(Step, Option<Text>) -> Next,
) {
    sweep_holding(bitness, GotHolder::new(got), bytes, address, text, visit);
}

/// [`sweep`] of 32-bit PLT stubs, which jump through a slot relative to `ebx`: the ABI has
/// the caller load the GOT's address (`got`) into it (`jmp *0xc(%ebx)`).
pub(super) fn sweep_plt(
    got: u64,
    bytes: &[u8],
    address: u64,
    visit: &mut dyn FnMut(Step, Option<Text>) -> Next,
) {
    let mut holder = GotHolder::new(Some(got));
    (holder.holder, holder.loaded) = (Some(Register::EBX), Some(Register::EBX));
    sweep_holding(32, holder, bytes, address, false, visit);
}

fn sweep_holding(
    bitness: u32,
    mut got: GotHolder,
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
        got.arrive(&instruction);
        // The distance to the GOT moves with the layout: it is no number and no reference.
        let loads_the_got = got.is_loaded_by(&instruction);
        let reference = (!loads_the_got)
            .then(|| reference(&instruction, bitness, &got))
            .flatten();
        got.follow(&instruction, loads_the_got);
        let start = usize::try_from(instruction.ip().wrapping_sub(address)).unwrap_or(0);
        let encoding = bytes
            .get(start..start.saturating_add(instruction.len()))
            .unwrap_or(&[]);
        let mut masked = 0u32;
        let mut constant = None;
        let mut addend = None;
        let offsets = decoder.get_constant_offsets(&instruction);
        if loads_the_got {
            masked |= span(offsets.immediate_offset(), offsets.immediate_size());
        } else if reference.is_some() {
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
fn reference(
    instruction: &Instruction,
    bitness: u32,
    got: &GotHolder,
) -> Option<(u64, ReferenceKind)> {
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
    let memory = memory_address(instruction, bitness).or_else(|| got.address(instruction));
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
/// (code loaded at a fixed address names data that way), unless it is below
/// [`LOWEST_ADDRESS`].
fn immediate_address(instruction: &Instruction, bitness: u32) -> Option<u64> {
    let immediate = (0..instruction.op_count())
        .any(|operand| instruction.op_kind(operand) == OpKind::Immediate32);
    let value = u64::from(instruction.immediate32());
    (bitness == 32 && immediate && value >= LOWEST_ADDRESS).then_some(value)
}

/// Below this no system loads code or data (Linux's `vm.mmap_min_addr`, the first 64 KiB
/// Windows reserves), so a smaller immediate is a number (`test esi, 0xe3` has a 32-bit one).
const LOWEST_ADDRESS: u64 = 0x1_0000;

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

/// Which register holds the GOT's address in x86 position-independent code: the one a call's
/// return address (popped, or returned by a thunk) plus the distance to the GOT is added to
/// (`call 1f; 1: pop %ebx; add $_GLOBAL_OFFSET_TABLE_+(.-1b), %ebx`, or `call
/// __x86.get_pc_thunk.bx; add $_GLOBAL_OFFSET_TABLE_, %ebx`), until something else is
/// written to it, or a call changes it (`eax`, `ecx` and `edx` are the callee's to change).
/// The code after a return or a jump is reached from elsewhere: it holds what the first
/// forward branch to it left there, or else the register loaded last holds it again (an
/// early return's epilogue restores `ebx` before the code that a branch skipped it to),
/// unless the code gave that register another value since (a function that keeps the GOT
/// on its stack, where it is followed too, and `ebx` for its own data).
struct GotHolder {
    got: Option<u64>,
    return_address: Option<u64>,
    holder: Option<Register>,
    loaded: Option<Register>,
    /// Whether the register loaded last was since given another value than the GOT (other
    /// than by a `pop`, an epilogue's, or a reload from the stack): the code uses it for
    /// something else, so what follows a jump may see that.
    reused: bool,
    /// Where the code stored the GOT's address on the stack.
    spills: Spills,
    /// The state the first branch to each address leaves there.
    at_branch: HashMap<u64, AtBranch>,
    /// Whether the last instruction was a return or a jump: what follows is reached from
    /// elsewhere.
    after_transfer: bool,
}

/// The stack slots holding the GOT's address (a function that needs `ebx` for its own data
/// stores it, and loads it again before a call through the PLT), as offsets from the stack
/// pointer at the procedure's start; and the stack pointer's offset now, as `push`, `pop`,
/// `add`, `sub` and `lea` move it, or at the branches to an instruction after a return or a
/// jump (unknown when nothing tells).
struct Spills {
    esp: Option<i64>,
    slots: Vec<i64>,
}

/// What a forward branch leaves at its target: the stack pointer's offset and the holder.
#[derive(Clone, Copy)]
struct AtBranch {
    esp: Option<i64>,
    holder: Option<Register>,
}

impl Spills {
    /// The stack offset that a memory operand of `instruction` relative to `esp` names.
    fn slot(&self, instruction: &Instruction) -> Option<i64> {
        (instruction.memory_base() == Register::ESP && instruction.memory_index() == Register::None)
            .then(|| {
                self.esp
                    .map(|esp| esp + instruction.memory_displacement32() as i32 as i64)
            })
            .flatten()
    }

    /// Follows how `instruction` moves the stack pointer.
    fn follow(&mut self, instruction: &Instruction) {
        let Some(esp) = self.esp else { return };
        let writes_esp = instruction.op_count() > 0
            && instruction.op0_kind() == OpKind::Register
            && instruction.op0_register() == Register::ESP;
        let immediate = || match instruction.op1_kind() {
            OpKind::Immediate8to32 | OpKind::Immediate32 | OpKind::Immediate8 => {
                Some(instruction.immediate(1) as i32 as i64)
            }
            _ => None,
        };
        self.esp = match instruction.mnemonic() {
            Mnemonic::Push
                if instruction.op0_kind() != OpKind::Register
                    || instruction.op0_register().size() == 4 =>
            {
                Some(esp - 4)
            }
            Mnemonic::Pop if !writes_esp => Some(esp + 4),
            Mnemonic::Sub if writes_esp => immediate().map(|k| esp - k),
            Mnemonic::Add if writes_esp => immediate().map(|k| esp + k),
            Mnemonic::Lea
                if writes_esp
                    && instruction.memory_base() == Register::ESP
                    && instruction.memory_index() == Register::None =>
            {
                Some(esp + instruction.memory_displacement32() as i32 as i64)
            }
            Mnemonic::Leave => None,
            _ if writes_esp => None,
            _ => Some(esp),
        };
    }
}

impl GotHolder {
    fn new(got: Option<u64>) -> GotHolder {
        GotHolder {
            got,
            return_address: None,
            holder: None,
            loaded: None,
            reused: false,
            spills: Spills {
                esp: Some(0),
                slots: Vec::new(),
            },
            at_branch: HashMap::new(),
            after_transfer: false,
        }
    }

    /// Takes the state that a branch to `instruction` left there, after a return or a jump
    /// (and the padding after it), or when no register holds the GOT.
    fn arrive(&mut self, instruction: &Instruction) {
        if self.got.is_none() {
            return;
        }
        if (self.after_transfer || self.holder.is_none())
            && let Some(state) = self.at_branch.get(&instruction.ip())
        {
            if self.after_transfer {
                self.spills.esp = state.esp.or(self.spills.esp);
            }
            self.holder = state.holder.or(self.holder);
        }
        let pads = matches!(instruction.mnemonic(), Mnemonic::Nop | Mnemonic::Int3)
            || is_padding_lea(instruction)
            || (instruction.mnemonic() == Mnemonic::Xchg
                && instruction.op0_kind() == OpKind::Register
                && instruction.op1_kind() == OpKind::Register
                && instruction.op0_register() == instruction.op1_register());
        if !pads {
            self.after_transfer = false;
        }
    }

    /// The address a memory operand relative to the holder names.
    fn address(&self, instruction: &Instruction) -> Option<u64> {
        let (got, holder) = (self.got?, self.holder?);
        let memory =
            (0..instruction.op_count()).any(|op| instruction.op_kind(op) == OpKind::Memory);
        (memory && instruction.memory_base() == holder)
            .then(|| u64::from((got as u32).wrapping_add(instruction.memory_displacement32())))
    }

    /// Whether `instruction` adds the distance to the GOT to a call's return address.
    fn is_loaded_by(&self, instruction: &Instruction) -> bool {
        let (Some(got), Some(back)) = (self.got, self.return_address) else {
            return false;
        };
        instruction.mnemonic() == Mnemonic::Add
            && instruction.op0_kind() == OpKind::Register
            && instruction.op0_register().full_register32() != Register::ESP
            && instruction.op1_kind() == OpKind::Immediate32
            && (back as u32).wrapping_add(instruction.immediate32()) == got as u32
    }

    /// Follows what `instruction` does to the holder (`loads` it: [`GotHolder::is_loaded_by`]).
    fn follow(&mut self, instruction: &Instruction, loads: bool) {
        if self.got.is_none() {
            return;
        }
        let spills = &mut self.spills;
        // A store of the holder to the stack, or of something else over such a slot.
        let stored = (instruction.op_count() == 2 && instruction.op0_kind() == OpKind::Memory)
            .then(|| spills.slot(instruction))
            .flatten();
        if let Some(slot) = stored {
            spills.slots.retain(|&held| held != slot);
            let stores_holder = instruction.mnemonic() == Mnemonic::Mov
                && instruction.op1_kind() == OpKind::Register
                && Some(instruction.op1_register()) == self.holder;
            if stores_holder {
                spills.slots.push(slot);
            }
        }
        // A load of the holder back from its slot.
        let reloads = instruction.mnemonic() == Mnemonic::Mov
            && instruction.op0_kind() == OpKind::Register
            && instruction.op0_register().size() == 4
            && instruction.op1_kind() == OpKind::Memory
            && spills
                .slot(instruction)
                .is_some_and(|slot| spills.slots.contains(&slot));
        let branches = matches!(
            instruction.flow_control(),
            FlowControl::ConditionalBranch | FlowControl::UnconditionalBranch
        ) && matches!(
            instruction.op0_kind(),
            OpKind::NearBranch32 | OpKind::NearBranch16
        );
        if branches && instruction.near_branch_target() > instruction.ip() {
            let state = AtBranch {
                esp: spills.esp,
                holder: self.holder,
            };
            self.at_branch
                .entry(instruction.near_branch_target())
                .or_insert(state);
        }
        spills.follow(instruction);
        match instruction.flow_control() {
            // An epilogue moved the stack pointer; the code after it was reached from before.
            FlowControl::Return => {
                spills.esp = None;
                self.after_transfer = true;
            }
            // A block of the body, as far down the stack as the jump (compilers keep the
            // stack pointer where the prologue left it, between calls).
            FlowControl::UnconditionalBranch | FlowControl::IndirectBranch => {
                self.after_transfer = true;
            }
            _ => {}
        }
        if reloads {
            let register = instruction.op0_register();
            (self.holder, self.loaded, self.reused) = (Some(register), Some(register), false);
            return;
        }
        match instruction.flow_control() {
            FlowControl::Call | FlowControl::IndirectCall => {
                self.return_address = Some(instruction.next_ip());
                let scratch = [Register::EAX, Register::ECX, Register::EDX];
                self.holder = self.holder.filter(|holder| !scratch.contains(holder));
                return;
            }
            FlowControl::Return
            | FlowControl::UnconditionalBranch
            | FlowControl::IndirectBranch => {
                self.holder = self.loaded.filter(|_| !self.reused);
                return;
            }
            _ => {}
        }
        let written = (instruction.op_count() > 0 && instruction.op0_kind() == OpKind::Register)
            .then(|| instruction.op0_register().full_register32())
            .filter(|_| !reads_only_its_first_operand(instruction.mnemonic()))
            .filter(|_| !is_padding_lea(instruction));
        let Some(written) = written else { return };
        if loads {
            self.holder = Some(written);
            self.loaded = Some(written);
            self.reused = false;
        } else {
            if self.holder == Some(written) {
                self.holder = None;
            }
            if self.loaded == Some(written) && instruction.mnemonic() != Mnemonic::Pop {
                self.reused = true;
            }
        }
    }
}

/// Whether `instruction` is the `lea` that pads between blocks, changing nothing
/// (`lea esi, [esi+eiz*1+0x0]`, `lea edi, [edi+0x0]`): GCC's 32-bit code aligns loops with it.
fn is_padding_lea(instruction: &Instruction) -> bool {
    instruction.mnemonic() == Mnemonic::Lea
        && instruction.op1_kind() == OpKind::Memory
        && instruction.memory_base().full_register32()
            == instruction.op0_register().full_register32()
        && instruction.memory_index() == Register::None
        && instruction.memory_displacement64() == 0
}

/// Whether an instruction only reads its first operand (a register it names is not changed).
fn reads_only_its_first_operand(mnemonic: Mnemonic) -> bool {
    matches!(
        mnemonic,
        Mnemonic::Push | Mnemonic::Cmp | Mnemonic::Test | Mnemonic::Bt | Mnemonic::Jmp
    )
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
        steps_with_got(bitness, None, bytes)
    }

    /// The steps of `bytes` at 0x1000, with the GOT at `got`.
    fn steps_with_got(bitness: u32, got: Option<u64>, bytes: &[u8]) -> Vec<Step> {
        let mut steps = Vec::new();
        sweep(bitness, got, bytes, 0x1000, false, &mut |step, _| {
            steps.push(step);
            Next::Continue
        });
        steps
    }

    #[test]
    fn position_independent_32_bit_code_refers_relative_to_the_register_holding_the_got() {
        let got = 0x3000;
        let bytes = [
            0xe8, 0x00, 0x00, 0x00, 0x00, // 1000: call 1005
            0x5b, // 1005: pop ebx
            0x81, 0xc3, 0xfb, 0x1f, 0x00,
            0x00, // 1006: add ebx, 0x1ffb (1005 + 1ffb: the GOT)
            0x8d, 0x83, 0x00, 0xff, 0xff, 0xff, // lea eax, [ebx-0x100]
            0x5b, // pop ebx (an early return's epilogue)
            0x8d, 0x83, 0x00, 0xff, 0xff, 0xff, // lea eax, [ebx-0x100]
            0xc3, // ret
            0x8d, 0x43,
            0x10, // lea eax, [ebx+0x10] (reached by a branch that skipped the pop)
        ];
        let steps = steps_with_got(32, Some(got), &bytes);
        let [_, _, load, before, _, popped, _, after] = steps[..] else {
            panic!("eight steps: {steps:?}");
        };
        assert_eq!(
            (load.reference, load.constant),
            (None, None),
            "the distance is neither"
        );
        assert_eq!(before.reference, Some((got - 0x100, ReferenceKind::Data)));
        assert_eq!(popped.reference, None, "ebx was written");
        assert_eq!(after.reference, Some((got + 0x10, ReferenceKind::Data)));
        // Without the GOT's address nothing is relative to it.
        assert_eq!(steps_of(32, &bytes)[3].reference, None);
    }

    #[test]
    fn the_got_is_followed_through_its_stack_slot_and_to_the_targets_of_branches() {
        let got = 0x3000;
        let bytes = [
            0xe8, 0x00, 0x00, 0x00, 0x00, // 1000: call 1005
            0x5b, // 1005: pop ebx
            0x81, 0xc3, 0xfb, 0x1f, 0x00, 0x00, // 1006: add ebx, 0x1ffb (the GOT)
            0x56, // 100c: push esi
            0x89, 0x5c, 0x24, 0x08, // 100d: mov [esp+0x8], ebx (the slot 4 above the start)
            0x85, 0xc0, // 1011: test eax, eax
            0x74, 0x18, // 1013: je 102d (ebx holds the GOT there)
            0x8b, 0x19, // 1015: mov ebx, [ecx]
            0x8d, 0x83, 0x00, 0xff, 0xff, 0xff, // 1017: lea eax, [ebx-0x100]: data
            0x50, // 101d: push eax
            0x8b, 0x5c, 0x24, 0x0c, // 101e: mov ebx, [esp+0xc] (the slot: the GOT again)
            0x8d, 0x83, 0x00, 0xff, 0xff, 0xff, // 1022: lea eax, [ebx-0x100]
            0x8b, 0x19, // 1028: mov ebx, [ecx]
            0xff, 0xe3, // 102a: jmp ebx
            0x90, // 102c: nop
            0x8d, 0x43, 0x10, // 102d: lea eax, [ebx+0x10] (from the je)
            0x8b, 0x19, // 1030: mov ebx, [ecx]
            0xc3, // 1032: ret
            0x8d, 0x43, 0x20, // 1033: lea eax, [ebx+0x20] (no branch here; ebx was reused)
        ];
        let steps: Vec<_> = (steps_with_got(32, Some(got), &bytes).iter())
            .map(|step| step.reference)
            .collect();
        assert_eq!(steps.len(), 19, "{steps:?}");
        let data = |address| Some((address, ReferenceKind::Data));
        assert_eq!(steps[8], None, "ebx holds data");
        assert_eq!(steps[11], data(got - 0x100), "reloaded from its slot");
        assert_eq!(steps[15], data(got + 0x10), "as the branch left it");
        assert_eq!(
            steps[18], None,
            "after a return, ebx given other values is not the GOT"
        );
    }

    #[test]
    fn the_lea_that_pads_between_blocks_leaves_the_got_in_its_register() {
        let got = 0x3000;
        let bytes = [
            0xe8, 0x00, 0x00, 0x00, 0x00, // 1000: call 1005
            0x5e, // 1005: pop esi
            0x81, 0xc6, 0xfb, 0x1f, 0x00, 0x00, // 1006: add esi, 0x1ffb (the GOT)
            0x8d, 0xb4, 0x26, 0x00, 0x00, 0x00, 0x00, // lea esi, [esi+eiz*1+0x0]
            0x8d, 0x76, 0x00, // lea esi, [esi+0x0]
            0x8d, 0x86, 0x00, 0xff, 0xff, 0xff, // lea eax, [esi-0x100]
            0x8d, 0x76, 0x04, // lea esi, [esi+0x4]: a write
            0x8d, 0x86, 0x00, 0xff, 0xff, 0xff, // lea eax, [esi-0x100]
        ];
        let steps = steps_with_got(32, Some(got), &bytes);
        let [_, _, _, _, _, padded, _, written] = steps[..] else {
            panic!("eight steps: {steps:?}");
        };
        assert_eq!(padded.reference, Some((got - 0x100, ReferenceKind::Data)));
        assert_eq!(written.reference, None, "esi moved on");
    }

    #[test]
    fn a_32_bit_immediate_is_an_address_and_a_number_until_the_image_tells() {
        let bytes = [
            0xb9, 0x25, 0x49, 0x92, 0x24, // mov ecx, 0x24924925
            0x83, 0xc0, 0x7f, // add eax, 0x7f
            0xa1, 0x00, 0x20, 0x00, 0x00, // mov eax, [0x2000]
            0xf7, 0xc6, 0xe3, 0x00, 0x00, 0x00, // test esi, 0xe3
        ];
        let [mov, add, load, test] = steps_of(32, &bytes)[..] else {
            panic!("four steps");
        };
        assert_eq!(
            (test.reference, test.constant),
            (None, Some(0xe3)),
            "below any address"
        );
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
