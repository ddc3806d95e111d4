//! Fuzz target `zip_reader`: the invariants live in `tests/it/support/fuzz_checks/zip_reader.rs`, which the plain test
//! suite also runs on every saved input in `fuzz/regressions/zip_reader/`.

#![no_main]

#[path = "../../tests/it/support/fuzz_checks/zip_reader.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
