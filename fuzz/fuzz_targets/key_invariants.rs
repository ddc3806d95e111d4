//! The matching key and prefix relation (docs/CONTRACT.md section 3): idempotence, NFKD and fold
//! stability, no default ignorables, invariance under normal forms and case, fast path ==
//! general path, `matches` == its definition. The input is two strings split at 0xFF.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(violation) = rea::fuzzing::core::check_key_bytes(data) {
        panic!("{violation}");
    }
});
