//! Fuzz target `annotation_prototype`: the invariants are `rea::fuzzing::session::check_prototype`,
//! which `cargo test` also runs on every saved input in `fuzz/regressions/annotation_prototype/`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rea::fuzzing::session::check_prototype(data));
