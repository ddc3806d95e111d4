//! Arbitrary bytes loaded as a catalog: rejections name a field or a JSON position; accepted
//! catalogs list consistently and survive a round trip through their own export.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    rea::fuzzing::providers::check_catalog(bytes);
});
