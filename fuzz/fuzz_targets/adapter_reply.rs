//! Arbitrary bytes as an external adapter's answer (the first byte picks the method): accepted
//! replies keep the protocol's bounds and canonical addresses, and survive a round trip.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    rea::fuzzing::providers::check_adapter_reply(bytes);
});
