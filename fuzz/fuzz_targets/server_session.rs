//! The whole server driven by interleaved requests, cancellations, repeated ids, hostile paths
//! and junk, then end of input: every request neither cancelled nor repeated is answered
//! exactly once, and no id more often than it was sent.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    rea::fuzzing::mcp::check_session(bytes);
});
