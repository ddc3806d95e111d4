//! Fuzz target `capture_parser`: the invariants are `rea::fuzzing::session::check_capture`, which
//! `cargo test` also runs on every saved input in `fuzz/regressions/capture_parser/`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rea::fuzzing::session::check_capture(data));
