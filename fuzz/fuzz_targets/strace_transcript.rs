//! Fuzz target `strace_transcript`: the invariants are `rea::fuzzing::session::check_transcript`,
//! which `cargo test` also runs on every saved input in `fuzz/regressions/strace_transcript/`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rea::fuzzing::session::check_transcript(data));
