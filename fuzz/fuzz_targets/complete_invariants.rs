//! `complete()` (docs/CONTRACT.md section 4): output sorted, deduplicated, bounded, consistent,
//! equal to filter/sort/dedup/truncate, unchanged by permutation and duplication; an over-long
//! prefix is the typed error. See `CompleteCase::from_bytes` for the input layout.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(violation) = rea::fuzzing::core::check_complete_bytes(data) {
        panic!("{violation}");
    }
});
