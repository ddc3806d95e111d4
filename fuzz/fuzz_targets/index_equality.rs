//! The prefix index (docs/CONTRACT.md section 4): `PrefixIndex` built from a table answers
//! exactly what `complete()` answers over it, with each way of picking the values, and an
//! ordered table answers by binary search what `complete()` answers. Same input layout as
//! `complete_invariants` (see `CompleteCase::from_bytes`).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(violation) = rea::fuzzing::core::check_index_bytes(data) {
        panic!("{violation}");
    }
});
