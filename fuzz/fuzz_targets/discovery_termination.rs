//! Bounded procedure discovery (docs/CONTRACT.md section 6) against an endless adversarial
//! provider: terminates within the page bound and obeys every rule. See `discovery_pages` for the
//! input layout.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(violation) = rea::fuzzing::core::check_discovery_bytes(data) {
        panic!("{violation}");
    }
});
