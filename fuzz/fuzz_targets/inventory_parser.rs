//! Fuzz target `inventory_parser`: the invariants live in `tests/it/support/fuzz_checks/inventory_parser.rs`, which the plain test
//! suite also runs on every saved input in `fuzz/regressions/inventory_parser/`.

#![no_main]

#[path = "../../tests/it/support/fuzz_checks/inventory_parser.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
