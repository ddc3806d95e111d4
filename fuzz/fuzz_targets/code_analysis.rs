//! Arbitrary bytes opened as a binary by the native provider, then analysed: the analysis
//! terminates within its bounds and never panics; disassembly pages are contiguous and inside
//! their procedure; callees and callers agree; call sites are call references.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    rea::fuzzing::providers::check_code_analysis(bytes);
});
