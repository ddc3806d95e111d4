//! Fuzz target `zip_reader`: the invariants are `rea::fuzzing::session::check_zip`, which
//! `cargo test` also runs on every saved input in `fuzz/regressions/zip_reader/`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rea::fuzzing::session::check_zip(data));
