//! Fuzz target `store_rows`: the invariants are `rea::fuzzing::session::check_store_rows`,
//! which `cargo test` also runs on every saved input in `fuzz/regressions/store_rows/`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rea::fuzzing::session::check_store_rows(data));
