//! [`sweep`]: decoding with the decoder of the instruction set. The decoders and this
//! dispatcher share the types of `decode`; the decoders do not import the dispatcher.

use super::decode::{Isa, Next, Step, Text};
use super::{arm64, x86};

/// Decodes `bytes` as code at `address`, calling `visit` for every instruction in order
/// until it says [`Next::Stop`]; with `text`, each step comes with its text.
pub(crate) fn sweep(
    isa: Isa,
    bytes: &[u8],
    address: u64,
    text: bool,
    visit: &mut dyn FnMut(Step, Option<Text>) -> Next,
) {
    match isa {
        Isa::X86 { got } => x86::sweep(32, got, bytes, address, text, visit),
        Isa::X86_64 => x86::sweep(64, None, bytes, address, text, visit),
        Isa::Arm64 => arm64::sweep(bytes, address, text, visit),
    }
}

/// [`sweep`] of the PLT stubs of a position-independent file: on x86, they address their
/// slots relative to the GOT that the caller loaded into `ebx`.
pub(crate) fn sweep_stubs(
    isa: Isa,
    bytes: &[u8],
    address: u64,
    visit: &mut dyn FnMut(Step, Option<Text>) -> Next,
) {
    match isa {
        Isa::X86 { got: Some(got) } => x86::sweep_plt(got, bytes, address, visit),
        _ => sweep(isa, bytes, address, false, visit),
    }
}
