//! Fuzz target `inventory_parser`: the invariants are `rea::fuzzing::session::check_inventory_page`, which
//! `cargo test` also runs on every saved input in `fuzz/regressions/inventory_parser/`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rea::fuzzing::session::check_inventory_page(data));
