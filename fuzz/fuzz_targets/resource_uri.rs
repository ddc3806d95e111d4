//! Fuzz target `resource_uri`: the invariants are `rea::fuzzing::resources::check_resource_uri`, which
//! `cargo test` also runs on every saved input in `fuzz/regressions/resource_uri/`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rea::fuzzing::resources::check_resource_uri(data));
