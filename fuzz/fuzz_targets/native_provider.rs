//! Arbitrary bytes opened as a binary by the native provider; every operation on every
//! document: no panic, valid canonical addresses, bounded ordered pages, well-formed discovery,
//! lookups consistent with the listing, reads and strings within their bounds.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    rea::fuzzing::providers::check_native(bytes);
});
